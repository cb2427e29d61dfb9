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

use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

use aarchx_ir::{InstData, Opcode, Region, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

use crate::walk::{self, Scope};

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
        let mut replace: Vec<Option<Value>> = vec![None; region.insts.len()];
        // What the blocks up to this one have computed (it continues its
        // single predecessor's), with the keys each scope added, to take
        // them out again when the walk leaves it.
        let mut known: FxHashMap<InstData, Value> = FxHashMap::default();
        let mut added: Vec<InstData> = Vec::new();
        let mut scopes: Vec<usize> = Vec::new();
        walk::scoped_blocks(region, |region: &mut Region, scope| {
            let b = match scope {
                Scope::Enter { block, fresh } => {
                    if fresh {
                        known.clear();
                        added.clear();
                    }
                    scopes.push(added.len());
                    block
                }
                Scope::Leave => {
                    let start = scopes.pop().unwrap_or(0);
                    for d in added.drain(start..) {
                        known.remove(&d);
                    }
                    return;
                }
            };
            for i in 0..region.blocks[b].insts.len() {
                let v = region.blocks[b].insts[i];
                region.insts[v.index()].resolve_aliases(&replace);
                let d = region.insts[v.index()];
                if !d.op.format().has_result() || d.op.has_side_effect() || matches!(d.op, Opcode::Load | Opcode::Get) {
                    continue;
                }
                match known.entry(d) {
                    Entry::Occupied(w) => replace[v.index()] = Some(*w.get()),
                    Entry::Vacant(slot) => {
                        slot.insert(v);
                        added.push(d);
                    }
                }
            }
        });
        region.replace_values(&replace);
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
