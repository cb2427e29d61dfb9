//! The `dead-flags` pass: removes writes of status flags that nothing can
//! read. The lifter computes all six flags of every arithmetic instruction;
//! most are overwritten by the next one before any `jcc`, `setcc` or
//! `cmovcc` reads them. A flag write is dead when, on every path from it,
//! the same flag is written again before it is read or the region is left.
//! At traps, indirect exits and syscalls every flag is live. At a direct
//! exit (`jump` or `call` to a known address) the pass lifts the guest
//! code at the target with the lifter, up to `lookahead` instructions
//! (following direct jumps and calls, as a superblock does), and asks that IR: a flag the target writes before
//! it reads it is dead at the exit. (Not a decoder's flag tables: a shift
//! by `cl` writes no flag when `cl` is 0, which the IR says and iced's
//! tables do not.) The bytes lifted become `dep` marks before the exit, so
//! the region is retranslated when they change. A block's last write of a flag that some path below one of its
//! branch targets does not read moves down into the targets that read it
//! (a loop's exit path, the miss side of a superblock's checked `ret`).
//! What computed a removed flag is left for `dce`, or `sink`.
//!
//! At an indirect exit (not a syscall) the flags the block writes last
//! are live only because the target is unknown. With `indirect` (on by
//! default) the block ends in `probe_indirect` instead, and those writes
//! move with the `exit_indirect` into a block of their own that the probe
//! falls back to: the JIT leaves straight for a cached target whose guest
//! code writes every status flag before it reads one (the same look at the
//! target as for a direct exit, made when the target is translated), and
//! computes the flags only for other targets and on a miss. `sink` then
//! takes what computes them along.
//!
//! With `abi_calls`, no status flag is live at a `call` or `ret` exit, as
//! the SysV ABI has it (FEX-Emu and box64 offer the same trade): code
//! that returns a result in the flags, which only hand-written assembly
//! does, then goes wrong. Off in the shipped policies.
//!
//! Like the removal inside a region, this trusts that the code at the
//! target runs next: a signal delivered at that boundary, or a fault before
//! the overwrite, shows its handler flags the x86 CPU would have had
//! different (the same trade FEX and box64 make; a handler that reads the
//! saved EFLAGS of an interrupted arithmetic sequence is not supported).

use crate::decode::Decode;
use crate::walk::preorder;
use aarchx_ir::region::BlockData;
use aarchx_ir::{ExitKind, Format, InstData, Opcode, Reg, Region, Type, Value};
use aarchx_pass::{OptionSpec, OptionValue, Options, Pass, PassContext, PassError, PassInfo, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "dead-flags",
    stage: Stage::Transform,
    doc: "Removes status-flag writes that are overwritten before any read, here or at a direct exit's target.",
    options: &[
        OptionSpec {
            name: "lookahead",
            default: || OptionValue::Int(LOOKAHEAD as i64),
            doc: "Guest instructions examined at a direct exit's target (0: every flag is live at exits).",
        },
        OptionSpec {
            name: "indirect",
            default: || OptionValue::Bool(true),
            doc: "At an indirect exit, compute the flags the block writes only when the target's code reads them \
                  or the target cache misses (probe_indirect).",
        },
        OptionSpec {
            name: "abi_calls",
            default: || OptionValue::Bool(false),
            doc: "Trust the SysV ABI at calls and returns: no status flag is live where a call or ret leaves \
                  the region (wrong for hand-written code that passes flags through a call or ret).",
        },
    ],
    create: |o| Box::new(DeadFlags::new(o)),
};

pub struct DeadFlags {
    pub lookahead: usize,
    /// Status flags dead at every `call` and `ret` exit (the `abi_calls`
    /// option).
    pub abi_calls: bool,
    /// Indirect exits probe the target cache before writing flags (the
    /// `indirect` option).
    pub indirect: bool,
}

impl DeadFlags {
    pub fn new(options: &Options) -> DeadFlags {
        DeadFlags {
            lookahead: options.int("lookahead").clamp(0, 1024) as usize,
            abi_calls: options.bool("abi_calls"),
            indirect: options.bool("indirect"),
        }
    }
}

/// The default `lookahead`.
const LOOKAHEAD: usize = 16;

/// Whether `region`, entered with the guest's flags, may read a status
/// flag before writing it: what a `probe_indirect` needs to know of its
/// target, asked by the JIT of the region it translates for that target.
pub fn reads_status_flags(region: &Region) -> bool {
    entry_live(region) & STATUS != 0
}

/// A set of flags, one bit per `Reg::as_flag` index.
type FlagSet = u8;
const ALL: FlagSet = 0x7f;
/// The six status flags (all but DF).
const STATUS: FlagSet = 0x3f;

fn flag_bit(reg: Reg) -> Option<FlagSet> {
    reg.as_flag().map(|f| 1 << f)
}

/// Flags `region` may read before writing them, every exit counting as a
/// read of every flag not yet written but those its `dead` mask names
/// (what this pass found at the exit's target).
fn entry_live(region: &Region) -> FlagSet {
    let exit_live: Vec<FlagSet> =
        region.blocks.iter().map(|b| ALL & !b.insts.last().map_or(0, |t| region.inst(*t).exit_dead_flags())).collect();
    fixed_point(region, &exit_live, 0, |acc, s| acc | s).first().copied().unwrap_or(ALL)
}

/// Flags live at guest address `addr`: read by the code there, as the
/// lifter defines it (at most `limit` instructions, following direct
/// jumps and calls as a superblock does: a loop head that calls a leaf
/// function before its first flag write learns from the callee), before
/// it writes them, and the guest byte ranges that answer depends on (none
/// when every flag is live). Whatever the look cannot see past (an
/// indirect branch, a syscall, unreadable or undecodable bytes, the
/// limit; anything in a translation without superblocks) counts as
/// reading every flag not yet written.
fn live_at(cx: &PassContext<'_>, addr: u64, limit: usize) -> (FlagSet, Vec<(u64, u64)>) {
    let mut ahead = Region::new(addr);
    let mut lift = Decode { max_insns: limit, follow: true };
    if lift.run(cx, &mut ahead).is_err() {
        return (ALL, Vec::new());
    }
    match entry_live(&ahead) {
        // Nothing learnt, nothing to depend on.
        ALL => (ALL, Vec::new()),
        live => (live, ahead.guest_ranges()),
    }
}

/// Flags live at the end of `block`, given the live-in sets of all blocks
/// (joined over its successors with `join`) and the flags live at each
/// block's exit target (`exit_live`).
fn live_out(
    region: &Region,
    block: usize,
    live_in: &[FlagSet],
    exit_live: &[FlagSet],
    join: fn(FlagSet, FlagSet) -> FlagSet,
) -> FlagSet {
    let Some(last) = region.blocks[block].insts.last() else { return ALL };
    let term = region.inst(*last);
    match term.op.format() {
        // A probe leaves only for code that reads no incoming status flag.
        Format::Jump | Format::Brif | Format::Probe => {
            let mut s = term.successors().iter().map(|s| live_in[*s as usize]);
            let first = s.next().unwrap_or(ALL);
            s.fold(first, join)
        }
        Format::Exit | Format::ExitIndirect => exit_live[block],
        _ => ALL,
    }
}

/// Walks `block` backward from the flags live at its end; returns the
/// flags live at its start and hands `keep` the instructions to keep (dead
/// flag writes dropped), last first. The fixed points call it with a
/// `keep` that does nothing: they want the sets only, many times over.
fn transfer(region: &Region, block: usize, mut live: FlagSet, mut keep: impl FnMut(Value)) -> FlagSet {
    for v in region.blocks[block].insts.iter().rev() {
        let d = region.inst(*v);
        if matches!(d.op, Opcode::Set | Opcode::Get) {
            if let Some(bit) = flag_bit(d.reg()) {
                if d.op == Opcode::Get {
                    live |= bit;
                } else if live & bit == 0 {
                    continue;
                } else {
                    live &= !bit;
                }
            }
        }
        keep(*v);
    }
    live
}

impl Pass for DeadFlags {
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let n = region.blocks.len();
        // What is live at each block's exit, and the guest bytes looked at
        // to know it.
        let (exit_live, looked_at): (Vec<FlagSet>, Vec<Vec<(u64, u64)>>) = (0..n)
            .map(|b| {
                let term = region.blocks[b].insts.last().map(|v| region.inst(*v));
                match term {
                    // The ABI: flags carry nothing into a callee or back
                    // from one (DF is clear at both, but kept).
                    Some(d)
                        if self.abi_calls
                            && matches!(d.op, Opcode::Exit | Opcode::ExitIndirect)
                            && matches!(ExitKind::from_u16(d.aux), Some(ExitKind::Call | ExitKind::Ret)) =>
                    {
                        (ALL & !STATUS, Vec::new())
                    }
                    Some(d)
                        if d.op == Opcode::Exit
                            && self.lookahead > 0
                            && matches!(ExitKind::from_u16(d.aux), Some(ExitKind::Jump | ExitKind::Call)) =>
                    {
                        let (live, ranges) = live_at(cx, d.imm64(), self.lookahead);
                        (live & !d.exit_dead_flags(), ranges)
                    }
                    Some(d) => (ALL & !d.exit_dead_flags(), Vec::new()),
                    None => (ALL, Vec::new()),
                }
            })
            .unzip();
        for (b, ranges) in looked_at.into_iter().enumerate() {
            mark_dependencies(region, b, &ranges);
            // What was found at the target, for whoever asks the region
            // which flags it reads (`reads_status_flags`).
            if let Some(&t) = region.blocks[b].insts.last() {
                let d = &mut region.insts[t.index()];
                if d.op == Opcode::Exit {
                    d.args[2] = u32::from(ALL & !exit_live[b]);
                }
            }
        }
        let live_in = fixed_point(region, &exit_live, 0, |acc, s| acc | s);
        for b in 0..n {
            let mut keep = Vec::with_capacity(region.blocks[b].insts.len());
            transfer(region, b, live_out(region, b, &live_in, &exit_live, |acc, s| acc | s), |v| keep.push(v));
            keep.reverse();
            region.blocks[b].insts = keep;
        }
        // Flags read on every path from each block's start.
        let must_in = fixed_point(region, &exit_live, ALL, |acc, s| acc & s);
        sink_partly_live(region, &live_in, &must_in);
        if self.indirect {
            probe_before_flags(region);
        }
        Ok(())
    }
}

/// Records the guest byte `ranges` as dependencies of `region`, in
/// `block` before its terminator: a change to them retranslates it.
fn mark_dependencies(region: &mut Region, block: usize, ranges: &[(u64, u64)]) {
    let Some(term) = region.blocks[block].insts.pop() else { return };
    for &(start, end) in ranges {
        let len = u16::try_from(end - start).unwrap_or(u16::MAX);
        let dep = region.add_inst(InstData::mark(Opcode::Dep, start, len));
        region.blocks[block].insts.push(dep);
    }
    region.blocks[block].insts.push(term);
}

/// Backward dataflow over the blocks to a fixed point (rep loops and
/// back edges make cycles), from `init` in every block, joining the
/// successors' sets with `join`: union gives the flags live at each
/// block's start, intersection (from ALL down) the flags read on every
/// path. When every branch goes to a later block (a lifter's region
/// without a loop), one pass from the last block is the fixed point.
fn fixed_point(
    region: &Region,
    exit_live: &[FlagSet],
    init: FlagSet,
    join: fn(FlagSet, FlagSet) -> FlagSet,
) -> Vec<FlagSet> {
    let n = region.blocks.len();
    let mut sets = vec![init; n];
    let forward = region.blocks.iter().enumerate().all(|(b, block)| {
        block.insts.last().is_none_or(|t| region.inst(*t).successors().iter().all(|&s| s as usize > b))
    });
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            let set = transfer(region, b, live_out(region, b, &sets, exit_live, join), |_| {});
            if set != sets[b] {
                sets[b] = set;
                changed = !forward;
            }
        }
    }
    sets
}

/// Moves a block's last write of a flag into its branch targets when some
/// path from one of them does not read it: into the target that reads it,
/// or a copy into each when both do. The written value is defined in the
/// block, so it dominates targets whose single predecessor the block is
/// (the only ones taken). Blocks are visited parents first, so a write
/// goes on down to where the paths that need it split from those that do
/// not: a loop's back edge does not compute the flags its exit path needs,
/// and a superblock's hot path not those the miss side of a checked `ret`
/// needs.
fn sink_partly_live(region: &mut Region, live_in: &[FlagSet], must_in: &[FlagSet]) {
    let (order, parent) = preorder(region);
    for b in order {
        let Some(&last) = region.blocks[b].insts.last() else { continue };
        let term = *region.inst(last);
        if term.op != Opcode::Brif {
            continue;
        }
        let succs = [term.args[1] as usize, term.args[2] as usize];
        if succs.iter().any(|s| parent[*s] != Some(b)) {
            continue;
        }
        // Walk back from the terminator: the last write of each flag with
        // no read after it.
        let mut seen: FlagSet = 0;
        let mut moved: Vec<Value> = Vec::new();
        for v in region.blocks[b].insts.iter().rev() {
            let d = region.inst(*v);
            let Some(bit) = flag_bit(d.reg()).filter(|_| matches!(d.op, Opcode::Set | Opcode::Get)) else { continue };
            if d.op == Opcode::Set && seen & bit == 0 && succs.iter().any(|s| must_in[*s] & bit == 0) {
                moved.push(*v);
            }
            seen |= bit;
        }
        if moved.is_empty() {
            continue;
        }
        region.blocks[b].insts.retain(|v| !moved.contains(v));
        for s in succs {
            let mut front = Vec::new();
            for v in moved.iter().rev() {
                let d = *region.inst(*v);
                if live_in[s] & flag_bit(d.reg()).unwrap_or(0) != 0 {
                    // The first target takes the original, the second a copy.
                    let used = region.blocks.iter().any(|blk| blk.insts.contains(v));
                    front.push(if used { region.add_inst(d) } else { *v });
                }
            }
            front.extend(region.blocks[s].insts.iter().copied());
            region.blocks[s].insts = front;
        }
    }
}

/// Ends each block that leaves through `exit_indirect` (not a syscall)
/// after writing status flags with a `probe_indirect` instead: the block's
/// last write of each such flag (none read after it, none before a helper
/// call, which may read flags) moves with the `exit_indirect` into a new
/// block the probe falls back to.
fn probe_before_flags(region: &mut Region) {
    for b in 0..region.blocks.len() {
        let Some(&last) = region.blocks[b].insts.last() else { continue };
        let term = *region.inst(last);
        if term.op != Opcode::ExitIndirect || ExitKind::from_u16(term.aux) == Some(ExitKind::Syscall) {
            continue;
        }
        let mut seen: FlagSet = 0;
        let mut moved: Vec<Value> = Vec::new();
        for v in region.blocks[b].insts.iter().rev().skip(1) {
            let d = region.inst(*v);
            if d.op == Opcode::Call {
                break;
            }
            let Some(bit) = flag_bit(d.reg()).filter(|_| matches!(d.op, Opcode::Set | Opcode::Get)) else { continue };
            if d.op == Opcode::Set && seen & bit == 0 && bit & STATUS != 0 {
                moved.push(*v);
            }
            seen |= bit;
        }
        if moved.is_empty() {
            continue;
        }
        moved.reverse();
        region.blocks[b].insts.retain(|v| *v != last && !moved.contains(v));
        let tail = region.blocks.len() as u32;
        moved.push(last);
        region.blocks.push(BlockData { insts: moved });
        let probe = InstData { op: Opcode::ProbeIndirect, ty: Type::I64, aux: term.aux, args: [term.args[0], tail, 0] };
        let probe = region.add_inst(probe);
        region.blocks[b].insts.push(probe);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass;

    #[test]
    fn overwritten_flags_are_removed_read_ones_kept_and_moved_to_where_they_are_read() {
        let out = run_pass(
            &mut DeadFlags { lookahead: 16, abi_calls: false, indirect: false },
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  set zf, v2
  set cf, v2
  v3 = icmp.i64 ult v0, v1
  set zf, v3
  v4 = get zf
  set cf, v3
  brif v4, block1, block2
block1:
  set cf, v2
  exit jump 0x2000
block2:
  exit jump 0x3000
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  v3 = icmp.i64 ult v0, v1
  set zf, v3
  v4 = get zf
  brif v4, block1, block2
block1:
  set cf, v2
  exit jump 0x2000
block2:
  set cf, v3
  exit jump 0x3000
"
        );
    }

    #[test]
    fn a_write_read_only_on_miss_paths_goes_down_to_each_of_them() {
        // The shape of a superblock with two checked `ret`s: zf, written
        // first, is read on both miss paths (block2, block4) and
        // overwritten on the hot path (block3).
        let out = run_pass(
            &mut DeadFlags { lookahead: 16, abi_calls: false, indirect: false },
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  set zf, v2
  v3 = load.i64 v0
  v4 = icmp.i64 eq v3, v1
  brif v4, block1, block2
block1:
  v5 = load.i64 v3
  v6 = icmp.i64 eq v5, v1
  brif v6, block3, block4
block2:
  exit_indirect ret v3
block3:
  set zf, v6
  exit jump 0x2000
block4:
  exit_indirect ret v5
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  v3 = load.i64 v0
  v4 = icmp.i64 eq v3, v1
  brif v4, block1, block2
block1:
  v5 = load.i64 v3
  v6 = icmp.i64 eq v5, v1
  brif v6, block3, block4
block2:
  set zf, v2
  exit_indirect ret v3
block3:
  set zf, v6
  exit jump 0x2000
block4:
  set zf, v2
  exit_indirect ret v5
"
        );
    }

    #[test]
    fn a_write_every_path_reads_stays() {
        let text = "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  set zf, v2
  v3 = load.i64 v0
  v4 = icmp.i64 eq v3, v1
  brif v4, block1, block2
block1:
  v5 = load.i64 v3
  v6 = icmp.i64 eq v5, v1
  brif v6, block3, block4
block2:
  exit_indirect ret v3
block3:
  v7 = get zf
  set cf, v7
  set zf, v6
  exit jump 0x2000
block4:
  exit_indirect ret v5
";
        assert_eq!(run_pass(&mut DeadFlags { lookahead: 16, abi_calls: false, indirect: false }, text), text);
    }

    #[test]
    fn with_abi_calls_no_status_flag_is_live_at_a_ret_or_call() {
        let text = "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  set zf, v2
  set df, v2
  brif v2, block1, block2
block1:
  exit_indirect ret v0
block2:
  set cf, v2
  exit_indirect call v0
";
        let want = "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  set df, v2
  brif v2, block1, block2
block1:
  exit_indirect ret v0
block2:
  exit_indirect call v0
";
        assert_eq!(run_pass(&mut DeadFlags { lookahead: 16, abi_calls: true, indirect: false }, text), want);
        // Without the option every flag is live there.
        assert_eq!(run_pass(&mut DeadFlags { lookahead: 16, abi_calls: false, indirect: false }, text), text);
    }

    #[test]
    fn an_indirect_exit_probes_before_the_flags_it_writes_last() {
        // zf's first write is read (v3) before the last one; cf is written
        // before the helper call, which may read it; df is no status flag.
        let text = "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  set cf, v2
  call cpuid
  set zf, v2
  v3 = get zf
  v4 = icmp.i64 ult v0, v1
  set zf, v4
  set df, v4
  set sf, v2
  exit_indirect ret v0
";
        let want = "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  set cf, v2
  call cpuid
  set zf, v2
  v3 = get zf
  v4 = icmp.i64 ult v0, v1
  set df, v4
  probe_indirect ret v0, block1
block1:
  set zf, v4
  set sf, v2
  exit_indirect ret v0
";
        assert_eq!(run_pass(&mut DeadFlags { lookahead: 16, abi_calls: false, indirect: true }, text), want);
        assert_eq!(run_pass(&mut DeadFlags { lookahead: 16, abi_calls: false, indirect: false }, text), text);
    }

    #[test]
    fn flags_stay_live_around_a_loop() {
        // A write in the loop body is read on the next trip round the loop.
        let text = "\
region 0x1000
block0:
  jump block1
block1:
  v0 = get zf
  brif v0, block2, block3
block2:
  v1 = iconst.i1 0x0
  set zf, v1
  jump block1
block3:
  exit jump 0x2000
";
        assert_eq!(run_pass(&mut DeadFlags { lookahead: 16, abi_calls: false, indirect: false }, text), text);
    }

    /// Guest code at 0x2000 only.
    struct At2000(&'static [u8]);

    impl aarchx_pass::GuestCode for At2000 {
        fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
            let Some(src) = addr.checked_sub(0x2000).and_then(|o| self.0.get(o as usize..)) else { return 0 };
            let n = src.len().min(buf.len());
            buf[..n].copy_from_slice(&src[..n]);
            n
        }
    }

    fn flags_kept_before_exit(target_code: &'static [u8]) -> Vec<String> {
        let text = aarchx_ir::print::print(&exit_to_2000(target_code));
        text.lines().filter(|l| l.trim_start().starts_with("set ")).map(|l| l.trim().to_string()).collect()
    }

    /// A block that writes zf, sf, cf and of and leaves for 0x2000, after
    /// dead-flags looked at `target_code` there.
    fn exit_to_2000(target_code: &'static [u8]) -> Region {
        use aarchx_pass::{CpuLevel, MemoryModel, TranslationConfig};
        let mut region = aarchx_ir::parse::parse(
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  v3 = icmp.i64 slt v0, v1
  set zf, v2
  set sf, v3
  set cf, v2
  set of, v3
  exit jump 0x2000
",
        )
        .unwrap();
        let config = TranslationConfig {
            memory_model: MemoryModel::Plain,
            tso_vector: false,
            cpu_level: CpuLevel::V3,
            superblocks: true,
        };
        let cx = PassContext { code: &At2000(target_code), config: &config };
        DeadFlags { lookahead: 16, abi_calls: false, indirect: false }.run(&cx, &mut region).unwrap();
        region
    }

    #[test]
    fn flags_the_exit_target_overwrites_first_are_dead() {
        // add rax, 1: writes all six status flags and reads none.
        assert!(flags_kept_before_exit(&[0x48, 0x83, 0xc0, 0x01]).is_empty());
        // inc rax (keeps CF) then add: CF is read by nobody but survives inc,
        // and add overwrites it: all dead again.
        assert!(flags_kept_before_exit(&[0x48, 0xff, 0xc0, 0x48, 0x83, 0xc0, 0x01]).is_empty());
        // adc rax, 1 reads CF first.
        assert_eq!(flags_kept_before_exit(&[0x48, 0x83, 0xd0, 0x01]), ["set cf, v2"]);
        // jl reads SF and OF; what follows the branch is unknown.
        assert_eq!(flags_kept_before_exit(&[0x7c, 0x00]).len(), 4);
        // Unreadable target: everything stays.
        assert_eq!(flags_kept_before_exit(&[]).len(), 4);
    }

    #[test]
    fn a_shift_by_cl_may_write_no_flag() {
        // shl edx, cl; jz: with cl == 0 the shift leaves every flag as it
        // was, so the jz reads the zf written before the exit.
        let kept = flags_kept_before_exit(&[0xd3, 0xe2, 0x74, 0x00]);
        assert_eq!(kept.len(), 4, "{kept:?}");
        // sar edx, cl; jz / rol edx, cl; jc / shld edx, eax, cl; jz.
        assert!(flags_kept_before_exit(&[0xd3, 0xfa, 0x74, 0x00]).contains(&"set zf, v2".to_string()));
        assert!(flags_kept_before_exit(&[0xd3, 0xc2, 0x72, 0x00]).contains(&"set cf, v2".to_string()));
        assert!(flags_kept_before_exit(&[0x0f, 0xa5, 0xc2, 0x74, 0x00]).contains(&"set zf, v2".to_string()));
        // shl edx, 3 writes every status flag (AF cleared): all dead.
        assert!(flags_kept_before_exit(&[0xc1, 0xe2, 0x03, 0x74, 0x00]).is_empty());
    }

    /// A region that writes no flag and leaves for 0x2000: every flag it
    /// is entered with reaches the exit.
    fn pass_through_to_2000(target_code: &'static [u8]) -> Region {
        use aarchx_pass::{CpuLevel, MemoryModel, TranslationConfig};
        let mut region = aarchx_ir::parse::parse("region 0x1000\nblock0:\n  exit jump 0x2000\n").unwrap();
        let config = TranslationConfig {
            memory_model: MemoryModel::Plain,
            tso_vector: false,
            cpu_level: CpuLevel::V3,
            superblocks: true,
        };
        let cx = PassContext { code: &At2000(target_code), config: &config };
        DeadFlags { lookahead: 16, abi_calls: false, indirect: false }.run(&cx, &mut region).unwrap();
        region
    }

    #[test]
    fn an_exit_names_the_flags_dead_at_its_target_and_the_entry_reads_only_the_live_ones() {
        // Before the pass, an exit reads every flag: the region reads all.
        let before = aarchx_ir::parse::parse("region 0x1000\nblock0:\n  exit jump 0x2000\n").unwrap();
        assert!(reads_status_flags(&before));
        // add rax, 1 at the target writes the six status flags first.
        let region = pass_through_to_2000(&[0x48, 0x83, 0xc0, 0x01]);
        let exit = region.inst(*region.blocks[0].insts.last().unwrap());
        assert_eq!(exit.exit_dead_flags() & STATUS, STATUS, "{}", aarchx_ir::print::print(&region));
        assert!(!reads_status_flags(&region));
        // The mask survives the text form.
        let text = aarchx_ir::print::print(&region);
        assert!(text.contains("exit jump 0x2000 dead 0x"), "{text}");
        let again = aarchx_ir::parse::parse(&text).unwrap();
        assert_eq!(aarchx_ir::print::print(&again), text);
        assert!(!reads_status_flags(&again));
        // adc rax, 1 reads CF first: the entry's CF reaches it.
        let region = pass_through_to_2000(&[0x48, 0x83, 0xd0, 0x01]);
        let cf = flag_bit(Reg::CF).unwrap();
        assert_eq!(region.inst(*region.blocks[0].insts.last().unwrap()).exit_dead_flags() & cf, 0);
        assert!(reads_status_flags(&region));
        // Nothing readable there: nothing known, the entry reads all.
        let region = pass_through_to_2000(&[]);
        assert_eq!(region.inst(*region.blocks[0].insts.last().unwrap()).exit_dead_flags(), 0);
        assert!(reads_status_flags(&region));
    }

    #[test]
    fn the_bytes_looked_at_are_dependencies_of_the_region() {
        // add rax, 1; add rax, 1: both instructions were looked at.
        let region = exit_to_2000(&[0x48, 0x83, 0xc0, 0x01, 0x48, 0x83, 0xc0, 0x01]);
        assert!(region.guest_ranges().iter().any(|&(s, e)| s <= 0x2000 && e >= 0x2004), "{:?}", region.guest_ranges());
        // The second too: the look lifts up to `lookahead` instructions.
        assert!(region.guest_ranges().iter().any(|&(s, e)| s <= 0x2004 && e >= 0x2008));
    }
}
