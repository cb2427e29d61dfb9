//! The `store-forward` pass: a load from the address a store just wrote
//! takes the stored value instead of reading memory.
//!
//! Within a block and into successors that have it as their only
//! predecessor (the walk `state-forward` uses), a plain `store.T A, v`
//! makes `v` the known contents of `A` at type `T`, and a later plain
//! `load.T A` is replaced by `v` and removed: it reads what the store
//! wrote, and cannot fault where the store did not. Any other store, an
//! atomic or a helper call forgets what is known (it may write any
//! address). Addresses are compared as IR values, which `state-forward`
//! makes equal where the guest re-reads a register.
//!
//! What it is for: a followed `call` pushes its return address and the
//! callee's `ret` loads it back to check it against that address; with the
//! load forwarded the check compares two constants and `const-fold`
//! decides it, so an inlined call costs its push and no compare.
//!
//! Invariant: only loads are removed, and only when the same path stored
//! to the same address at the same type with nothing that may write memory
//! in between, so every load still reads what memory would hold.

use aarchx_ir::{MemFlags, Opcode, Region, Type, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

use crate::walk;

pub static INFO: PassInfo = PassInfo {
    name: "store-forward",
    stage: Stage::Transform,
    doc: "Replaces a load from the address the last store wrote by the stored value.",
    options: &[],
    create: |_| Box::new(StoreForward),
};

pub struct StoreForward;

/// The last store on the path: address, type and value.
type Known = Option<(Value, Type, Value)>;

impl Pass for StoreForward {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let mut replace: Vec<Option<Value>> = vec![None; region.insts.len()];
        walk::extended_blocks(region, |region: &mut Region, b, known: &mut Known| {
            for v in &region.blocks[b].insts {
                let d = region.inst(*v);
                let resolved = |a: Value| replace[a.index()].unwrap_or(a);
                let plain = MemFlags::from_u16(d.aux) == Some(MemFlags::Plain);
                match d.op {
                    Opcode::Store if plain => *known = Some((resolved(d.arg(0)), d.ty, resolved(d.arg(1)))),
                    Opcode::Load if plain => {
                        if let Some((addr, ty, value)) = *known {
                            if addr == resolved(d.arg(0)) && ty == d.ty {
                                replace[v.index()] = Some(value);
                            }
                        }
                    }
                    Opcode::Store | Opcode::AtomicRmw | Opcode::AtomicCas | Opcode::Call => *known = None,
                    _ => {}
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
    fn a_load_of_what_was_just_stored_is_the_stored_value() {
        // A followed call's push and its ret's load (forwarded, also into
        // block1, whose only predecessor is block0); then a load after
        // another store, one of another type, and one after a helper call
        // (all kept).
        let out = run_pass(
            &mut StoreForward,
            "\
region 0x1000
block0:
  v0 = get rsp
  v1 = iconst.i64 0x8
  v2 = sub.i64 v0, v1
  v3 = iconst.i64 0x401005
  store.i64 v2, v3
  v4 = load.i64 v2
  v5 = iconst.i64 0x401005
  v6 = icmp.i64 eq v4, v5
  brif v6, block1, block2
block1:
  v7 = load.i64 v2
  set rax, v7
  store.i64 v0, v7
  v8 = load.i64 v2
  v9 = load.i32 v0
  call cpuid
  v10 = load.i64 v0
  set rbx, v8
  set rcx, v10
  v11 = zext.i64 v9
  set rdx, v11
  exit jump 0x2000
block2:
  exit_indirect ret v4
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rsp
  v1 = iconst.i64 0x8
  v2 = sub.i64 v0, v1
  v3 = iconst.i64 0x401005
  store.i64 v2, v3
  v4 = iconst.i64 0x401005
  v5 = icmp.i64 eq v3, v4
  brif v5, block1, block2
block1:
  set rax, v3
  store.i64 v0, v3
  v6 = load.i64 v2
  v7 = load.i32 v0
  call cpuid
  v8 = load.i64 v0
  set rbx, v6
  set rcx, v8
  v9 = zext.i64 v7
  set rdx, v9
  exit jump 0x2000
block2:
  exit_indirect ret v3
"
        );
    }
}
