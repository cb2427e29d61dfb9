//! The `dce` pass: removes instructions whose values nothing uses.
//! Everything with an effect is a root (`Opcode::has_side_effect`), and so
//! are loads: a load can fault, and the guest must see that fault even when
//! it ignores the value.

use aarchx_ir::{Opcode, Region};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "dce",
    stage: Stage::Transform,
    doc: "Removes instructions whose results are unused.",
    options: &[],
    create: |_| Box::new(Dce),
};

pub struct Dce;

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
        while let Some(i) = work.pop() {
            for arg in region.insts[i].values() {
                if !live[arg.index()] {
                    live[arg.index()] = true;
                    work.push(arg.index());
                }
            }
        }
        for block in &mut region.blocks {
            block.insts.retain(|v| live[v.index()]);
        }
        Ok(())
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
}
