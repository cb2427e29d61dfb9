//! The `memory-order` pass: lowers guest memory accesses for the policy's
//! memory model. Under x86-TSO (`memory_model: Ordered`) every scalar load
//! becomes an acquire and every scalar store a release, which is what x86
//! guarantees and arm64 does not; SSE accesses stay plain unless
//! `tso_vector` is set (the default FEX ships too: ordering them is costly
//! and x86 code that relies on it is rare). A leaf routine's `call`
//! (`leaf-inline`) becomes ordered as a whole: its accesses stay plain, but
//! none moves across the guest's accesses before or after it. Under the
//! plain model it does nothing.

use aarchx_ir::cond::Helper;
use aarchx_ir::{MemFlags, Opcode, Region};
use aarchx_pass::{MemoryModel, Pass, PassContext, PassError, PassInfo, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "memory-order",
    stage: Stage::Lowering,
    doc: "Marks guest loads and stores acquire/release under the ordered (x86-TSO) memory model.",
    options: &[],
    create: |_| Box::new(MemoryOrder),
};

pub struct MemoryOrder;

impl Pass for MemoryOrder {
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        if cx.config.memory_model != MemoryModel::Ordered {
            return Ok(());
        }
        for d in &mut region.insts {
            if matches!(d.op, Opcode::Load | Opcode::Store) && (!d.ty.is_vector() || cx.config.tso_vector) {
                d.aux = MemFlags::Ordered as u16;
            }
            if d.op == Opcode::Call && Helper::from_u16(d.aux).is_some_and(Helper::is_leaf) {
                d.args[0] = MemFlags::Ordered as u32;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass_with;
    use aarchx_pass::{CpuLevel, TranslationConfig};

    const INPUT: &str = "\
region 0x1000
block0:
  v0 = get rsp
  v1 = load.i64 v0
  store.i64 v0, v1
  v2 = load.v128 v0
  store.v128 v0, v2
  call memmove
  call x87
  exit jump 0x1004
";

    fn run(memory_model: MemoryModel, tso_vector: bool) -> String {
        run_pass_with(
            &mut MemoryOrder,
            INPUT,
            &TranslationConfig { memory_model, tso_vector, cpu_level: CpuLevel::V1, superblocks: true },
        )
    }

    #[test]
    fn plain_model_changes_nothing() {
        assert_eq!(run(MemoryModel::Plain, true), INPUT);
    }

    #[test]
    fn ordered_model_orders_scalar_accesses_only() {
        let out = run(MemoryModel::Ordered, false);
        assert!(out.contains("v1 = load.i64 ordered v0"), "{out}");
        assert!(out.contains("store.i64 ordered v0, v1"), "{out}");
        assert!(out.contains("v2 = load.v128 v0"), "{out}");
        assert!(out.contains("store.v128 v0, v2"), "{out}");
        assert!(out.contains("call memmove ordered\n"), "{out}");
        assert!(out.contains("call x87\n"), "{out}");
    }

    #[test]
    fn tso_vector_orders_vector_accesses_too() {
        let out = run(MemoryModel::Ordered, true);
        assert!(out.contains("v2 = load.v128 ordered v0"), "{out}");
        assert!(out.contains("store.v128 ordered v0, v2"), "{out}");
    }
}
