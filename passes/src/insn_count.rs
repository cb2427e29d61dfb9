//! The `insn-count` pass: instruments each region to count the guest
//! instructions it executes, and reports the total at exit as
//! `aarchx: insn-count: N guest instructions`.
//!
//! One counter (0) for everything. A guest instruction counts when it
//! starts, as valgrind's lackey counts: each IR block adds the number of
//! its `insn` marks, in one `count` per run of instructions that ends with
//! one that can fault (see `segments`), so a region left early (a
//! conditional exit, a `trap`, a memory fault delivered to a guest handler)
//! counts exactly the instructions it began. An IR loop (a branch to a block at or before its own: only `rep`
//! string instructions make them) adds 1 per iteration that goes round, so a
//! `rep` instruction counts once plus once per repeat, as valgrind counts
//! it (its VEX translation re-executes the instruction per iteration); the
//! `rep-iterations` option switches that off, counting each instruction
//! once per execution.
//!
//! This one source is a built-in pass (registered in `BUILTIN`, so a
//! statically linked aarchx runs it on the JIT) and the example plugin
//! `plugins/examples/insn-count`, which compiles this very file. It is
//! therefore `no_std` + `alloc` clean: no `std` path may appear here.

use alloc::boxed::Box;
use alloc::format;
use alloc::vec::Vec;

use aarchx_ir::{InstData, Opcode, Region, Type};
use aarchx_pass::{OptionSpec, OptionValue, Options, Pass, PassContext, PassError, PassInfo, Report, Stage};

pub static INFO: PassInfo = PassInfo {
    name: NAME,
    stage: Stage::Transform,
    doc: DOC,
    options: &[OptionSpec { name: REP_ITERATIONS, default: || OptionValue::Bool(true), doc: REP_ITERATIONS_DOC }],
    create: |o| Box::new(InsnCount::new(o)),
};

pub const NAME: &str = "insn-count";
pub const DOC: &str = "Counts executed guest instructions; prints the total at exit.";
pub const REP_ITERATIONS: &str = "rep-iterations";
pub const REP_ITERATIONS_DOC: &str = "count a rep string instruction once per iteration too, as valgrind does";

/// The pass: how it counts, and nothing else (the total is the counter).
pub struct InsnCount {
    rep_iterations: bool,
}

impl InsnCount {
    pub fn new(options: &Options) -> InsnCount {
        InsnCount { rep_iterations: options.bool(REP_ITERATIONS) }
    }
}

/// `count 0, amount` in the pass's own numbering.
fn count(amount: u32) -> InstData {
    InstData { op: Opcode::Count, ty: Type::I64, aux: 0, args: [0, amount, 0] }
}

impl Pass for InsnCount {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        for b in 0..region.blocks.len() {
            let mut counts = segments(region, b);
            let insts = &region.blocks[b].insts;
            let last = *insts.last().ok_or_else(|| PassError(format!("block{b} is empty")))?;
            let term = *region.inst(last);
            if self.rep_iterations {
                match term.op {
                    Opcode::Jump if term.args[0] as usize <= b => counts.push((insts.len() - 1, 1)),
                    // A loop edge of a two-way branch gets a block of its
                    // own that counts the iteration.
                    Opcode::Brif => {
                        for slot in [1, 2] {
                            if term.args[slot] as usize <= b {
                                let edge = split_edge(region, term.args[slot]);
                                region.insts[last.index()].args[slot] = edge;
                            }
                        }
                    }
                    _ => {}
                }
            }
            for (pos, amount) in counts.into_iter().rev() {
                let v = region.add_inst(count(amount));
                region.blocks[b].insts.insert(pos, v);
            }
        }
        Ok(())
    }

    fn finish(&mut self, counters: &[u64]) -> Result<Report, PassError> {
        let n = counters.first().copied().unwrap_or(0);
        Ok(Report { text: format!("aarchx: insn-count: {n} guest instructions\n"), file: None })
    }
}

/// Where block `b` counts its guest instructions: (position, amount), in
/// order. A count covers a run of instructions and stands before the first;
/// a run ends with an instruction that can fault (a memory access, a
/// helper call), so a guest fault taken there, whose handler may never come
/// back, leaves every started instruction counted and no later one.
fn segments(region: &Region, b: usize) -> Vec<(usize, u32)> {
    let mut counts: Vec<(usize, u32)> = Vec::new();
    let mut closed = true;
    for (pos, v) in region.blocks[b].insts.iter().enumerate() {
        match region.inst(*v).op {
            Opcode::Insn => match counts.last_mut() {
                Some((_, amount)) if !closed => *amount += 1,
                _ => {
                    counts.push((pos, 1));
                    closed = false;
                }
            },
            Opcode::Load | Opcode::Store | Opcode::AtomicRmw | Opcode::AtomicCas | Opcode::Call => closed = true,
            _ => {}
        }
    }
    counts
}

/// A new block that counts 1 and jumps to `target`; returns its number.
fn split_edge(region: &mut Region, target: u32) -> u32 {
    let counted = region.add_inst(count(1));
    let jump = region.add_inst(InstData { op: Opcode::Jump, ty: Type::I64, aux: 0, args: [target, 0, 0] });
    region.blocks.push(aarchx_ir::region::BlockData { insts: Vec::from([counted, jump]) });
    region.blocks.len() as u32 - 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass;

    fn pass(rep_iterations: bool) -> InsnCount {
        let given = [(alloc::string::String::from(REP_ITERATIONS), OptionValue::Bool(rep_iterations))];
        InsnCount::new(&Options(given.into_iter().collect()))
    }

    /// Two instructions, then `rep stosb`-like: a loop of head and body
    /// blocks, leaving through `done`, which holds one more instruction.
    const REP: &str = "\
region 0x1000
block0:
  insn 0x1000, 3
  insn 0x1003, 2
  jump block1
block1:
  v0 = get rcx
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  brif v2, block3, block2
block2:
  v3 = iconst.i64 0x1
  v4 = sub.i64 v0, v3
  set rcx, v4
  v5 = get zf
  brif v5, block1, block3
block3:
  insn 0x1005, 1
  exit jump 0x1006
";

    #[test]
    fn counts_marks_per_block_and_loop_iterations() {
        let out = run_pass(&mut pass(true), REP);
        assert!(out.starts_with("region 0x1000\nblock0:\n  count 0, 2\n  insn 0x1000, 3\n"), "{out}");
        assert!(out.contains("  brif v5, block4, block3\n"), "{out}");
        assert!(out.contains("block3:\n  count 0, 1\n  insn 0x1005, 1\n"), "{out}");
        assert!(out.ends_with("block4:\n  count 0, 1\n  jump block1\n"), "{out}");
        assert_eq!(out.matches("count").count(), 3, "{out}");
    }

    #[test]
    fn without_rep_iterations_only_marks_count() {
        let out = run_pass(&mut pass(false), REP);
        assert!(out.contains("  brif v5, block1, block3\n"), "{out}");
        assert_eq!(out.matches("count").count(), 2, "{out}");
    }

    #[test]
    fn runs_of_instructions_end_at_ones_that_can_fault() {
        let out = run_pass(
            &mut pass(true),
            "region 0x10\nblock0:\n  insn 0x10, 3\n  v0 = get rsp\n  v1 = load.i64 v0\n  insn 0x13, 1\n  insn 0x14, 3\n  \
             store.i64 v0, v1\n  insn 0x17, 1\n  set rax, v1\n  exit jump 0x18\n",
        );
        assert_eq!(
            out,
            "region 0x10\nblock0:\n  count 0, 1\n  insn 0x10, 3\n  v0 = get rsp\n  v1 = load.i64 v0\n  count 0, 2\n  \
             insn 0x13, 1\n  insn 0x14, 3\n  store.i64 v0, v1\n  count 0, 1\n  insn 0x17, 1\n  set rax, v1\n  \
             exit jump 0x18\n"
        );
    }

    #[test]
    fn reports_the_total() {
        let r = pass(true).finish(&[1234]).unwrap();
        assert_eq!(r.text, "aarchx: insn-count: 1234 guest instructions\n");
        assert_eq!(pass(true).finish(&[]).unwrap().text, "aarchx: insn-count: 0 guest instructions\n");
    }
}
