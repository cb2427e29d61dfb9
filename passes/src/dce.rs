//! The `dce` pass: removes instructions whose values nothing uses.
//! Everything with an effect is a root (`Opcode::has_side_effect`), and so
//! are loads: a load can fault, and the guest must see that fault even when
//! it ignores the value. So are the float ops (`Opcode::uses_mxcsr`): each
//! raises its exceptions into MXCSR's sticky flags whether or not its value
//! is used (glibc's `math_force_eval` computes a sum only to raise inexact),
//! but for a compare that has a twin, kept: another `fcmp` of the same two
//! values (in either order), type and signalling, in the same block with
//! nothing between that reads or writes MXCSR, calls out or can fault (a
//! load, store or atomic: a signal handler sees MXCSR there), raises the
//! same exceptions (the lifter's three compares of one `ucomisd`, which
//! loads its operand first, `cond-fusion`'s fused one). A twin later than
//! the compare it stands for raises an unmasked exception's trap at its own
//! guest instruction (the branch `cond-fusion` fused it into), not the
//! compare's: the JIT runs only with every exception masked, and the
//! interpreter, which runs the rest, sees the same IR.

use std::collections::HashSet;

use aarchx_ir::{FloatCond, Opcode, Reg, Region, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "dce",
    stage: Stage::Transform,
    doc: "Removes instructions whose results are unused (float ops only when a twin compare raises their exceptions).",
    options: &[],
    create: |_| Box::new(Dce),
};

pub struct Dce;

/// What makes two compares twins (see the module docs): the two values
/// (the lower first, so either order matches), the type, whether they
/// signal on a quiet NaN, and the stretch of the block they are in.
type Twin = (Value, Value, aarchx_ir::Type, bool, u32);

fn twin_of(region: &Region, v: Value, stretch: u32) -> Option<Twin> {
    let d = region.inst(v);
    if d.op != Opcode::Fcmp {
        return None;
    }
    let signals = FloatCond::from_u16(d.aux)?.signals_on_qnan();
    let (a, b) = (d.arg(0).min(d.arg(1)), d.arg(0).max(d.arg(1)));
    Some((a, b, d.ty, signals, stretch))
}

/// Whether `d` ends a stretch: it reads or writes MXCSR, calls out, or
/// can fault.
fn ends_stretch(d: &aarchx_ir::InstData) -> bool {
    match d.op {
        Opcode::Get | Opcode::Set => d.reg() == Reg::MXCSR,
        Opcode::Call | Opcode::Load | Opcode::Store | Opcode::AtomicRmw | Opcode::AtomicCas => true,
        _ => false,
    }
}

impl Pass for Dce {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let mut live = vec![false; region.insts.len()];
        let mut work: Vec<usize> = Vec::new();
        for block in &region.blocks {
            for v in &block.insts {
                let d = region.inst(*v);
                if d.op.has_side_effect() || d.op == Opcode::Load {
                    live[v.index()] = true;
                    work.push(v.index());
                }
            }
        }
        propagate(region, &mut live, &mut work);
        // The float ops nothing uses: roots, but for compares whose twin
        // is live or kept.
        let mut twins: HashSet<Twin> = HashSet::new();
        let mut stretch = 0u32;
        let mut float_ops: Vec<(Value, u32)> = Vec::new();
        for block in &region.blocks {
            stretch += 1;
            for &v in &block.insts {
                let d = region.inst(v);
                if ends_stretch(d) {
                    stretch += 1;
                } else if d.op.uses_mxcsr() {
                    float_ops.push((v, stretch));
                    if live[v.index()] {
                        twins.extend(twin_of(region, v, stretch));
                    }
                }
            }
        }
        for (v, stretch) in float_ops {
            if live[v.index()] {
                continue;
            }
            match twin_of(region, v, stretch) {
                Some(t) if !twins.insert(t) => continue,
                Some(_) => {}
                None => {}
            }
            live[v.index()] = true;
            work.push(v.index());
        }
        propagate(region, &mut live, &mut work);
        for block in &mut region.blocks {
            block.insts.retain(|v| live[v.index()]);
        }
        Ok(())
    }
}

/// Marks everything the instructions in `work` read, transitively.
fn propagate(region: &Region, live: &mut [bool], work: &mut Vec<usize>) {
    while let Some(i) = work.pop() {
        for arg in region.insts[i].values() {
            if !live[arg.index()] {
                live[arg.index()] = true;
                work.push(arg.index());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass;

    #[test]
    fn unused_values_go_and_effects_and_loads_stay() {
        let out = run_pass(
            &mut Dce,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x1
  v2 = add.i64 v0, v1
  v3 = mul.i64 v2, v2
  v4 = load.i64 v0
  v5 = sub.i64 v0, v1
  set rbx, v5
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
  v2 = load.i64 v0
  v3 = sub.i64 v0, v1
  set rbx, v3
  exit jump 0x2000
"
        );
    }

    #[test]
    fn unused_float_ops_stay_for_their_flags_but_twin_compares_go() {
        let out = run_pass(
            &mut Dce,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = bitcast.f64 v0
  v2 = iconst.i64 0x4350000000000000
  v3 = bitcast.f64 v2
  v4 = fadd.f64 v1, v3
  v5 = fcmp.f64 uno v1, v3
  v6 = fcmp.f64 eq v1, v3
  v7 = fcmp.f64 nle_q v3, v1
  v8 = fcmp.f64 lt v3, v1
  v9 = fcmp.f64 nle v3, v1
  set zf, v6
  v10 = get mxcsr
  v11 = fcmp.f64 uno v1, v3
  v12 = load.i64 v0
  v13 = fcmp.f64 uno_s v1, v3
  v14 = load.i64 v12
  v15 = fcmp.f64 eq_s v1, v3
  set rbx, v14
  set pf, v15
  set mxcsr, v10
  exit jump 0x2000
",
        );
        // The sum stays; the quiet compares have a live twin (eq), the
        // signalling ones keep one of them (lt); after the MXCSR read a
        // compare has no twin, nor across a load (which can fault).
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = bitcast.f64 v0
  v2 = iconst.i64 0x4350000000000000
  v3 = bitcast.f64 v2
  v4 = fadd.f64 v1, v3
  v5 = fcmp.f64 eq v1, v3
  v6 = fcmp.f64 lt v3, v1
  set zf, v5
  v7 = get mxcsr
  v8 = fcmp.f64 uno v1, v3
  v9 = load.i64 v0
  v10 = fcmp.f64 uno_s v1, v3
  v11 = load.i64 v9
  v12 = fcmp.f64 eq_s v1, v3
  set rbx, v11
  set pf, v12
  set mxcsr, v7
  exit jump 0x2000
"
        );
    }
}
