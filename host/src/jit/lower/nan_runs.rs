//! Batched NaN checks: finding the runs of a block whose float arithmetic
//! tests for a wrong NaN once, at the run's end, instead of after every op.
//!
//! arm64 and x86 give different NaN results only when an operation is
//! invalid (arm64's default NaN is positive, x86's negative) or has a
//! signalling NaN operand (arm64 propagates the signalling one, x86 the
//! first); both set arm64's cumulative Invalid Operation flag, FPSR.IOC.
//! Quiet NaN operands propagate alike (the first NaN operand, quieted;
//! for `fma` once its lowering has chosen the operands, see `float.rs`).
//! So the ops of a run are emitted without their checks, the run ends with
//! `mrs` + `tbnz` on IOC, and when IOC is set the run is executed again
//! out of line with the check after each op (see `mod.rs`), then FPSR is
//! cleared. A stale IOC (set by host code, or by a conversion outside any
//! run) only sends one run down the slow path, which is always right.
//!
//! Executing a run twice must give the values of executing it once, so a
//! run holds only instructions without effects (pure ops, `get`, `load`,
//! `insn`) and `set`s of guest registers that are not pinned and that it
//! does not `get`; pinned registers are neither set in it nor computed
//! into (the allocator is told, see `alloc.rs`), and the allocator keeps
//! every value defined before the run and read in it in its home until the
//! run's end, so nothing in the run overwrites what the run reads.

use aarchx_ir::{InstData, Opcode, Reg, Region};

use super::float::nan_checked;
use super::NanRules;
use crate::jit::regs::pinned;

/// Instructions of one run: block `block`, its instructions `first..=last`
/// (indices into the block's list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub block: usize,
    pub first: usize,
    pub last: usize,
}

/// What one NaN check costs when it follows its op: `fcmp` + `b.vc` for a
/// scalar, `fcmeq` + `uminv` + `fmov` + `cbnz` for a vector. A run's own
/// check is `mrs` + `tbnz`, so a run is worth batching only when its ops'
/// checks cost more than 2.
fn check_cost(d: &InstData) -> u32 {
    if d.ty.is_vector() {
        4
    } else {
        2
    }
}

/// The runs of `r` worth batching under `rules`, in layout order (none
/// under FEAT_AFP, which checks no op).
pub fn find(r: &Region, rules: NanRules) -> Vec<Run> {
    let mut runs = Vec::new();
    for (b, block) in r.blocks.iter().enumerate() {
        let mut i = 0;
        while i < block.insts.len() {
            if !nan_checked(r.inst(block.insts[i]), rules) {
                i += 1;
                continue;
            }
            // Extend from this checked op while instructions may run twice.
            let (mut gets, mut sets): (Vec<Reg>, Vec<Reg>) = (Vec::new(), Vec::new());
            let (mut last, mut cost) = (i, 0);
            let mut j = i;
            while j < block.insts.len() {
                let d = r.inst(block.insts[j]);
                let fits = match d.op {
                    Opcode::Get => !sets.contains(&d.reg()),
                    // Writing MXCSR clears FPSR, which the run's check reads.
                    Opcode::Set => pinned(d.reg()).is_none() && !gets.contains(&d.reg()) && d.reg() != Reg::MXCSR,
                    Opcode::Insn | Opcode::Dep => true,
                    op => !op.has_side_effect(),
                };
                if !fits {
                    break;
                }
                match d.op {
                    Opcode::Get => gets.push(d.reg()),
                    Opcode::Set => sets.push(d.reg()),
                    _ => {}
                }
                if nan_checked(d, rules) {
                    last = j;
                    cost += check_cost(d);
                }
                j += 1;
            }
            if cost > 2 {
                runs.push(Run { block: b, first: i, last });
            }
            i = last + 1;
        }
    }
    runs
}
