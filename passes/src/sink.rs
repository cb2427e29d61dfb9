//! The `sink` pass: a pure computation whose every use lies below one
//! branch of its block moves into that branch, so it runs only on the
//! paths that need it. When its uses lie below both branches (the flags a
//! superblock's checked `ret` needs on its miss path, and again on a later
//! one's), each branch gets its own copy: on any path at most one of them
//! runs. After `dead-flags` has pushed flag writes onto exit paths, this
//! takes their computations there too.
//!
//! "Below" follows single-predecessor links: a target whose only
//! predecessor is the block is dominated by it, and so is everything only
//! reachable through it; a value moved to the target's start still
//! dominates its uses. Blocks are visited parents first, so a moved value
//! is reconsidered in its new block and goes as deep as its uses allow.
//!
//! Only computations of operands (constants, integer arithmetic and
//! compares, selects; no float op, which raises its exceptions on every
//! path): no `get` (a later `set` could change what it reads), no loads
//! (they can fault), nothing with effects. Nothing moves from before a
//! helper call. Moved instructions keep their relative order,
//! so operands stay defined before their uses. A computation nothing uses
//! is dropped, so it does not hold its operands back.

use aarchx_ir::{Format, Opcode, Region, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

use crate::walk::{below, preorder};

pub static INFO: PassInfo = PassInfo {
    name: "sink",
    stage: Stage::Transform,
    doc: "Moves pure computations used only below one branch into it (a copy into each branch when both use them).",
    options: &[],
    create: |_| Box::new(Sink),
};

pub struct Sink;

/// Whether `op` only computes from its operands (a float op also raises
/// its exceptions: moved onto one path, or dropped, the other paths would
/// lose them).
fn movable(op: Opcode) -> bool {
    op != Opcode::AtomicCas
        && !op.uses_mxcsr()
        && matches!(
            op.format(),
            Format::Const
                | Format::Unary
                | Format::UnaryImm
                | Format::Binary
                | Format::BinaryImm
                | Format::IntCompare
                | Format::Ternary
                | Format::TernaryImm
        )
}

/// The arena's bookkeeping: the block each instruction is in, and each
/// value's users.
struct Uses {
    home: Vec<usize>,
    users: Vec<Vec<Value>>,
}

impl Uses {
    fn new(region: &Region) -> Uses {
        let mut u = Uses { home: vec![usize::MAX; region.insts.len()], users: vec![Vec::new(); region.insts.len()] };
        for (b, block) in region.blocks.iter().enumerate() {
            for v in &block.insts {
                u.home[v.index()] = b;
                for a in region.inst(*v).values() {
                    u.users[a.index()].push(*v);
                }
            }
        }
        u
    }

    /// A copy of `v` in the arena (placed in no block yet), taking over the
    /// users of `v` that `moves` says go with it.
    fn copy(&mut self, region: &mut Region, v: Value, block: usize, moves: impl Fn(&Uses, Value) -> bool) -> Value {
        let d = *region.inst(v);
        let c = region.add_inst(d);
        self.home.push(block);
        self.users.push(Vec::new());
        for a in d.values() {
            self.users[a.index()].push(c);
        }
        let (go, stay): (Vec<Value>, Vec<Value>) = self.users[v.index()].iter().partition(|w| moves(self, **w));
        for w in &go {
            let k = region.insts[w.index()].op.format().value_args();
            for a in &mut region.insts[w.index()].args[..k] {
                if *a == v.0 {
                    *a = c.0;
                }
            }
        }
        self.users[v.index()] = stay;
        self.users[c.index()] = go;
        c
    }
}

/// Whether `d` ends the stretch that may move: a helper call.
fn barrier(d: &aarchx_ir::InstData) -> bool {
    d.op == Opcode::Call
}

impl Pass for Sink {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let (order, parent) = preorder(region);
        let mut uses = Uses::new(region);
        let mut dead = vec![false; region.insts.len()];
        for b in order {
            let Some(&last) = region.blocks[b].insts.last() else { continue };
            let term = *region.inst(last);
            if !matches!(term.op, Opcode::Brif | Opcode::ProbeIndirect) {
                continue;
            }
            let succs: Vec<usize> = term.successors().iter().map(|s| *s as usize).collect();
            if succs.iter().any(|s| parent[*s] != Some(b)) {
                continue;
            }
            // Backward: a value's users in this block are decided (moved,
            // copied or not) before the value itself.
            let mut moved: Vec<Vec<Value>> = vec![Vec::new(); succs.len()];
            let insts = region.blocks[b].insts.clone();
            for &v in insts.iter().rev().skip(1) {
                let d = *region.inst(v);
                if barrier(&d) {
                    break;
                }
                if !movable(d.op) {
                    continue;
                }
                // Users already dropped do not hold a value here.
                let user_blocks: Vec<usize> =
                    uses.users[v.index()].iter().filter(|w| !dead[w.index()]).map(|w| uses.home[w.index()]).collect();
                if user_blocks.is_empty() {
                    // Dropped here: its operands may move away from it.
                    dead[v.index()] = true;
                    uses.home[v.index()] = usize::MAX;
                    continue;
                }
                let side = |u: usize| succs.iter().position(|s| below(&parent, u, *s));
                if user_blocks.iter().any(|u| side(*u).is_none()) {
                    continue;
                }
                let on = |k: usize| user_blocks.iter().any(|u| side(*u) == Some(k));
                if on(0) && on(1) {
                    let c = uses.copy(region, v, succs[1], |uses, w| side(uses.home[w.index()]) == Some(1));
                    dead.push(false);
                    moved[1].push(c);
                    moved[0].push(v);
                    uses.home[v.index()] = succs[0];
                } else {
                    let k = usize::from(on(1));
                    moved[k].push(v);
                    uses.home[v.index()] = succs[k];
                }
            }
            region.blocks[b].insts.retain(|v| uses.home[v.index()] == b);
            for (k, s) in succs.into_iter().enumerate() {
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
    fn computations_used_below_both_branches_get_a_copy_in_each() {
        // v2..v4 feed flag writes on two miss paths (block2, and block4
        // below block1); the hot path (block3) uses none of them, and v9
        // nothing at all.
        let out = run_pass(
            &mut Sink,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x1
  v2 = add.i64 v0, v1
  v3 = parity.i64 v2
  v4 = icmp.i64 eq v2, v1
  v5 = load.i64 v0
  v6 = icmp.i64 eq v5, v1
  v9 = xor.i64 v2, v1
  brif v6, block1, block2
block1:
  v7 = load.i64 v5
  v8 = icmp.i64 eq v7, v1
  brif v8, block3, block4
block2:
  set pf, v3
  set zf, v4
  exit_indirect ret v5
block3:
  exit jump 0x2000
block4:
  set zf, v4
  exit_indirect ret v7
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
  v3 = icmp.i64 eq v2, v1
  brif v3, block1, block2
block1:
  v4 = load.i64 v2
  v5 = icmp.i64 eq v4, v1
  brif v5, block3, block4
block2:
  v6 = add.i64 v0, v1
  v7 = parity.i64 v6
  v8 = icmp.i64 eq v6, v1
  set pf, v7
  set zf, v8
  exit_indirect ret v2
block3:
  exit jump 0x2000
block4:
  v9 = add.i64 v0, v1
  v10 = icmp.i64 eq v9, v1
  set zf, v10
  exit_indirect ret v4
"
        );
    }

    #[test]
    fn an_unused_computation_is_dropped_and_does_not_hold_its_operand_back() {
        let out = run_pass(
            &mut Sink,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x1
  v2 = add.i64 v0, v1
  v3 = xor.i64 v2, v1
  v4 = icmp.i64 eq v0, v1
  brif v4, block1, block2
block1:
  set rbx, v2
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
  v1 = iconst.i64 0x1
  v2 = icmp.i64 eq v0, v1
  brif v2, block1, block2
block1:
  v3 = add.i64 v0, v1
  set rbx, v3
  exit jump 0x2000
block2:
  exit jump 0x3000
"
        );
    }

    #[test]
    fn a_get_stays_before_the_set_it_would_pass() {
        let text = "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i64 0x1
  set rax, v1
  v2 = icmp.i64 eq v0, v1
  brif v2, block1, block2
block1:
  set rbx, v0
  exit jump 0x2000
block2:
  exit jump 0x3000
";
        assert_eq!(run_pass(&mut Sink, text), text);
    }

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
