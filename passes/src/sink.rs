//! The `sink` pass: a pure computation whose every use is in one branch
//! target of its block moves into that target, so it runs only on the
//! path that needs it. After `dead-flags` has moved a loop's flag writes
//! onto its exit path, this takes the flag computations there too.
//!
//! Only into a target whose single predecessor is the block (the moved
//! instruction then still dominates its uses), and only instructions
//! without effects that cannot fault (no loads). Instructions keep their
//! relative order, so operands stay defined before their uses.

use aarchx_ir::{Opcode, Region, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "sink",
    stage: Stage::Transform,
    doc: "Moves pure computations used only on one branch path into that path.",
    options: &[],
    create: |_| Box::new(Sink),
};

pub struct Sink;

/// Where a value is used: nowhere yet, in one block, or in several.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Uses {
    None,
    Block(usize),
    Many,
}

impl Uses {
    fn add(self, block: usize) -> Uses {
        match self {
            Uses::None => Uses::Block(block),
            Uses::Block(b) if b == block => self,
            _ => Uses::Many,
        }
    }
}

impl Pass for Sink {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let n = region.blocks.len();
        let preds = region.predecessor_counts();
        // The block each instruction is in, and each value's users.
        let mut home = vec![usize::MAX; region.insts.len()];
        let mut users: Vec<Vec<Value>> = vec![Vec::new(); region.insts.len()];
        for (b, block) in region.blocks.iter().enumerate() {
            for v in &block.insts {
                home[v.index()] = b;
                for a in region.inst(*v).values() {
                    users[a.index()].push(*v);
                }
            }
        }
        for b in 0..n {
            let Some(&last) = region.blocks[b].insts.last() else { continue };
            let term = *region.inst(last);
            if term.op != Opcode::Brif {
                continue;
            }
            let succs = [term.args[1] as usize, term.args[2] as usize];
            if succs[0] == succs[1] || succs.iter().any(|s| *s == b || preds[*s] != 1) {
                continue;
            }
            // Backward: a value's users in this block are decided (moved or
            // not) before the value itself.
            let mut moved: [Vec<Value>; 2] = [Vec::new(), Vec::new()];
            for &v in region.blocks[b].insts.iter().rev() {
                let d = region.inst(v);
                if d.op.has_side_effect() || d.op == Opcode::Load || !d.op.format().has_result() {
                    continue;
                }
                let used_in = users[v.index()].iter().fold(Uses::None, |u, w| u.add(home[w.index()]));
                let Some(k) = succs.iter().position(|s| used_in == Uses::Block(*s)) else { continue };
                moved[k].push(v);
                home[v.index()] = succs[k];
            }
            for (k, s) in succs.into_iter().enumerate() {
                if moved[k].is_empty() {
                    continue;
                }
                region.blocks[b].insts.retain(|v| !moved[k].contains(v));
                let mut front: Vec<Value> = moved[k].iter().rev().copied().collect();
                front.extend(region.blocks[s].insts.iter().copied());
                region.blocks[s].insts = front;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass;

    #[test]
    fn computations_move_to_the_only_path_using_them() {
        let out = run_pass(
            &mut Sink,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x1
  v2 = add.i64 v0, v1
  v3 = icmp.i64 eq v2, v1
  v4 = xor.i64 v0, v2
  v5 = parity.i64 v4
  v6 = load.i64 v0
  brif v3, block1, block2
block1:
  set pf, v5
  exit jump 0x2000
block2:
  set rbx, v6
  set rcx, v2
  exit jump 0x3000
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
  v3 = icmp.i64 eq v2, v1
  v4 = load.i64 v0
  brif v3, block1, block2
block1:
  v5 = xor.i64 v0, v2
  v6 = parity.i64 v5
  set pf, v6
  exit jump 0x2000
block2:
  set rbx, v4
  set rcx, v2
  exit jump 0x3000
"
        );
    }
}
