//! The `cse` pass: common subexpression elimination. A pure instruction
//! that repeats an earlier one (same op, type, immediate and operands) in
//! the same block, or in a block the earlier one's block dominates along a
//! chain of single-predecessor blocks, is replaced by the earlier value.
//! The lifter recomputes addresses and constants per instruction (`mov
//! esi, [tbl + rcx*4]; ...; mov [tbl + rcx*4], esi` builds the address
//! twice); this computes it once.
//!
//! Loads and `get`s are never merged (memory or the state may change in
//! between; `state-forward` handles the registers), nor anything with an
//! effect. Operands are compared after earlier replacements, so
//! chains of equal computations collapse in one walk.

use std::collections::HashMap;

use aarchx_ir::{InstData, Opcode, Region, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "cse",
    stage: Stage::Transform,
    doc: "Replaces repeated pure computations by the first one.",
    options: &[],
    create: |_| Box::new(Cse),
};

pub struct Cse;

impl Pass for Cse {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let n = region.blocks.len();
        let mut preds = vec![0u32; n];
        for block in &region.blocks {
            if let Some(last) = block.insts.last() {
                for s in region.inst(*last).successors() {
                    preds[*s as usize] += 1;
                }
            }
        }
        let mut replace: Vec<Option<Value>> = vec![None; region.insts.len()];
        // From the entry along edges into single-predecessor blocks, each
        // block starting with what its predecessor had computed.
        let mut start: Vec<Option<HashMap<InstData, Value>>> = vec![None; n];
        let mut seen = vec![false; n];
        let mut work = vec![0usize];
        seen[0] = true;
        while let Some(b) = work.pop() {
            let mut known = start[b].take().unwrap_or_default();
            for &v in &region.blocks[b].insts {
                let mut d = region.insts[v.index()];
                let k = d.op.format().value_args();
                for a in &mut d.args[..k] {
                    if let Some(w) = replace[*a as usize] {
                        *a = w.0;
                    }
                }
                region.insts[v.index()] = d;
                if !d.op.format().has_result() || d.op.has_side_effect() || matches!(d.op, Opcode::Load | Opcode::Get) {
                    continue;
                }
                match known.get(&d) {
                    Some(&w) => replace[v.index()] = Some(w),
                    None => {
                        known.insert(d, v);
                    }
                }
            }
            let last = region.blocks[b].insts.last().map(|v| *region.inst(*v));
            let succs = last.as_ref().map_or(&[][..], |d| d.successors());
            for s in succs {
                let s = *s as usize;
                if !seen[s] {
                    seen[s] = true;
                    if preds[s] == 1 {
                        start[s] = Some(known.clone());
                    }
                    work.push(s);
                }
            }
        }
        for block in &mut region.blocks {
            block.insts.retain(|v| replace[v.index()].is_none());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass;

    #[test]
    fn repeated_addresses_are_computed_once_and_loads_stay() {
        let out = run_pass(
            &mut Cse,
            "\
region 0x1000
block0:
  v0 = get rcx
  v1 = iconst.i64 0x52a560
  v2 = iconst.i8 0x2
  v3 = shl.i64 v0, v2
  v4 = add.i64 v1, v3
  v5 = load.i32 v4
  v6 = iconst.i64 0x52a560
  v7 = iconst.i8 0x2
  v8 = shl.i64 v0, v7
  v9 = add.i64 v6, v8
  v10 = load.i32 v9
  store.i32 v9, v10
  exit jump 0x2000
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rcx
  v1 = iconst.i64 0x52a560
  v2 = iconst.i8 0x2
  v3 = shl.i64 v0, v2
  v4 = add.i64 v1, v3
  v5 = load.i32 v4
  v6 = load.i32 v4
  store.i32 v4, v6
  exit jump 0x2000
"
        );
    }
}
