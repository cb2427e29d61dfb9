//! The `state-forward` pass: guest registers kept as IR values across a
//! region instead of being re-read from the state struct.
//!
//! Forwarding: a `get R` that follows a `set R, v` (or an earlier `get R`)
//! on every path is replaced by `v` (and removed), within a block and into successors
//! that have that block as their only predecessor. A `call` forgets the
//! registers its helper writes, and an SSE float op MXCSR (it raises
//! MXCSR's exception flags, see `Opcode::uses_mxcsr`).
//!
//! Redundant sets: a `set R, v` where `R` is known to hold `v` already (the
//! same value, or one `Region::same_value` proves equal, as the zero a VEX
//! instruction writes to a YMM upper half) is dropped; the state is the
//! same with it or without it.
//!
//! Dead sets: a `set R` of a GPR, XMM or special register is dropped when
//! the same block sets `R` again before anything could observe the state:
//! a read of `R`, a helper call, a memory access or atomic (which can
//! fault, and a fault hands the state to a signal handler), or leaving the
//! block. (An SSE float op traps only while MXCSR unmasks an exception,
//! and the dispatcher then runs the lifter's regions, unoptimised.) Flags are left to `dead-flags`, which knows their liveness
//! across blocks.
//!
//! Invariant: the pass only replaces uses by values that dominate them and
//! drops writes nobody can read, so the region computes the same state.
//! What becomes unused is left for `dce`.

use aarchx_ir::cond::Helper;
use aarchx_ir::{Format, Opcode, Reg, Region, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

use crate::walk;

pub static INFO: PassInfo = PassInfo {
    name: "state-forward",
    stage: Stage::Transform,
    doc: "Forwards guest register values from set/get to later gets and drops sets overwritten in the same block.",
    options: &[],
    create: |_| Box::new(StateForward),
};

pub struct StateForward;

/// Register numbers are below this bound (GPRs, flags, XMM, special).
const REGS: usize = Reg::SLOTS;

impl Pass for StateForward {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        forward(region);
        drop_dead_sets(region);
        Ok(())
    }
}

/// Replaces forwarded `get`s' uses (the `get`s themselves are removed)
/// and drops redundant `set`s.
fn forward(region: &mut Region) {
    let mut replace: Vec<Option<Value>> = vec![None; region.insts.len()];
    let mut redundant = vec![false; region.insts.len()];
    // The known value of each register, by register number (empty: none).
    walk::extended_blocks(region, |region: &mut Region, b, known: &mut Vec<Option<Value>>| {
        known.resize(REGS, None);
        for v in &region.blocks[b].insts {
            let d = region.inst(*v);
            match d.op {
                Opcode::Get => {
                    let r = usize::from(d.aux);
                    match known[r] {
                        Some(w) => replace[v.index()] = Some(w),
                        None => known[r] = Some(*v),
                    }
                }
                Opcode::Set => {
                    let arg = d.arg(0);
                    let value = replace[arg.index()].unwrap_or(arg);
                    let r = usize::from(d.aux);
                    if known[r].is_some_and(|k| region.same_value(k, value)) {
                        redundant[v.index()] = true;
                    } else {
                        known[r] = Some(value);
                    }
                }
                Opcode::Call => {
                    if let Some(h) = Helper::from_u16(d.aux) {
                        for r in h.writes() {
                            known[usize::from(r.0)] = None;
                        }
                    }
                }
                op if op.uses_mxcsr() => known[usize::from(Reg::MXCSR.0)] = None,
                _ => {}
            }
        }
    });
    region.replace_values(&replace);
    for block in &mut region.blocks {
        block.insts.retain(|v| !redundant[v.index()]);
    }
}

/// Whether `op` ends the window in which a later `set` hides an earlier one.
fn observes_state(op: Opcode) -> bool {
    matches!(op.format(), Format::Load | Format::Store | Format::AtomicRmw | Format::Call)
        || op == Opcode::AtomicCas
        || op.is_terminator()
}

/// Drops non-flag `set`s that a later `set` of the same register in the
/// same block hides.
fn drop_dead_sets(region: &mut Region) {
    for b in 0..region.blocks.len() {
        let mut hidden = [false; REGS];
        let mut keep = Vec::with_capacity(region.blocks[b].insts.len());
        for v in region.blocks[b].insts.iter().rev() {
            let d = region.inst(*v);
            match d.op {
                Opcode::Set if Reg(d.aux).as_flag().is_none() => {
                    let r = usize::from(d.aux);
                    if hidden[r] {
                        continue;
                    }
                    hidden[r] = true;
                }
                Opcode::Get => hidden[usize::from(d.aux)] = false,
                op if observes_state(op) => hidden = [false; REGS],
                _ => {}
            }
            keep.push(*v);
        }
        keep.reverse();
        region.blocks[b].insts = keep;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass;

    #[test]
    fn gets_take_the_last_set_value_and_hidden_sets_go() {
        let out = run_pass(
            &mut StateForward,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x1
  v2 = add.i64 v0, v1
  set rax, v2
  v4 = get rax
  v5 = get rbx
  v6 = add.i64 v4, v5
  set rax, v6
  v8 = get rbx
  set rcx, v8
  exit jump 0x2000
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x1
  v2 = add.i64 v0, v1
  v3 = get rbx
  v4 = add.i64 v2, v3
  set rax, v4
  set rcx, v3
  exit jump 0x2000
"
        );
    }

    #[test]
    fn memory_accesses_and_calls_keep_earlier_sets_and_calls_forget_what_they_write() {
        let out = run_pass(
            &mut StateForward,
            "\
region 0x1000
block0:
  v0 = get rbx
  set rax, v0
  v2 = load.i64 v0
  set rax, v2
  set rdx, v0
  call cpuid
  v6 = get rax
  v7 = get rdx
  set rdx, v7
  set rcx, v6
  exit jump 0x2000
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rbx
  set rax, v0
  v1 = load.i64 v0
  set rax, v1
  set rdx, v0
  call cpuid
  v2 = get rax
  v3 = get rdx
  set rcx, v2
  exit jump 0x2000
"
        );
    }

    #[test]
    fn sets_of_what_a_register_holds_go() {
        let out = run_pass(
            &mut StateForward,
            "\
region 0x1000
block0:
  v0 = iconst.i64 0x0
  v1 = splat.i64x2 v0
  set ymmh0, v1
  v3 = load.i64 v0
  v4 = iconst.i64 0x0
  v5 = splat.i64x2 v4
  set ymmh0, v5
  v7 = iconst.i64 0x1
  v8 = splat.i64x2 v7
  set ymmh0, v8
  v10 = get rax
  v11 = load.i64 v10
  set rax, v10
  set rbx, v11
  exit jump 0x2000
",
        );
        // The second zero is what ymmh0 holds (kept across the load, which
        // may fault: the state is the same); a one is not; rax is what was
        // read from it.
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = iconst.i64 0x0
  v1 = splat.i64x2 v0
  set ymmh0, v1
  v2 = load.i64 v0
  v3 = iconst.i64 0x0
  v4 = splat.i64x2 v3
  v5 = iconst.i64 0x1
  v6 = splat.i64x2 v5
  set ymmh0, v6
  v7 = get rax
  v8 = load.i64 v7
  set rbx, v8
  exit jump 0x2000
"
        );
    }

    #[test]
    fn values_flow_into_single_predecessor_blocks_only() {
        let out = run_pass(
            &mut StateForward,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = get cf
  brif v1, block1, block2
block1:
  v3 = get rax
  set rbx, v3
  jump block2
block2:
  v6 = get rax
  set rcx, v6
  exit jump 0x2000
",
        );
        assert!(out.contains("set rbx, v0"), "{out}");
        assert!(out.contains("v2 = get rax\n  set rcx, v2"), "{out}");
    }
}
