//! The `dead-flags` pass: removes writes of status flags that nothing can
//! read. The lifter computes all six flags of every arithmetic instruction;
//! most are overwritten by the next one before any `jcc`, `setcc` or
//! `cmovcc` reads them. A flag write is dead when, on every path from it,
//! the same flag is written again before it is read or the region is left.
//! At exits and traps every flag is live (the next region, or a signal
//! handler, may read it). What computed a removed flag is left for `dce`.

use aarchx_ir::{Format, Opcode, Reg, Region, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "dead-flags",
    stage: Stage::Transform,
    doc: "Removes status-flag writes that are overwritten before any read.",
    options: &[],
    create: |_| Box::new(DeadFlags),
};

pub struct DeadFlags;

/// A set of flags, one bit per `Reg::as_flag` index.
type FlagSet = u8;
const ALL: FlagSet = 0x7f;

fn flag_bit(reg: Reg) -> Option<FlagSet> {
    reg.as_flag().map(|f| 1 << f)
}

/// Flags live at the end of `block`, given the live-in sets of all blocks.
fn live_out(region: &Region, block: usize, live_in: &[FlagSet]) -> FlagSet {
    let Some(last) = region.blocks[block].insts.last() else { return ALL };
    let term = region.inst(*last);
    match term.op.format() {
        Format::Jump | Format::Brif => term.successors().iter().fold(0, |acc, s| acc | live_in[*s as usize]),
        _ => ALL,
    }
}

/// Walks `block` backward from the flags live at its end; returns the
/// flags live at its start and the instructions to keep (dead flag writes
/// dropped), in order.
fn transfer(region: &Region, block: usize, mut live: FlagSet) -> (FlagSet, Vec<Value>) {
    let mut keep = Vec::with_capacity(region.blocks[block].insts.len());
    for v in region.blocks[block].insts.iter().rev() {
        let d = region.inst(*v);
        match (d.op, flag_bit(d.reg())) {
            (Opcode::Set, Some(bit)) if live & bit == 0 => continue,
            (Opcode::Set, Some(bit)) => live &= !bit,
            (Opcode::Get, Some(bit)) => live |= bit,
            _ => {}
        }
        keep.push(*v);
    }
    keep.reverse();
    (live, keep)
}

impl Pass for DeadFlags {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let n = region.blocks.len();
        // Backward dataflow to a fixed point (rep loops make cycles).
        let mut live_in = vec![0 as FlagSet; n];
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..n).rev() {
                let (live, _) = transfer(region, b, live_out(region, b, &live_in));
                if live != live_in[b] {
                    live_in[b] = live;
                    changed = true;
                }
            }
        }
        for b in 0..n {
            let (_, keep) = transfer(region, b, live_out(region, b, &live_in));
            region.blocks[b].insts = keep;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass;

    #[test]
    fn overwritten_flags_are_removed_and_read_ones_kept() {
        let out = run_pass(
            &mut DeadFlags,
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
  set cf, v3
  brif v4, block1, block2
block1:
  set cf, v2
  exit jump 0x2000
block2:
  exit jump 0x3000
"
        );
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
        assert_eq!(run_pass(&mut DeadFlags, text), text);
    }
}
