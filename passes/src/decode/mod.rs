//! The `decode` pass: the lifter. Decodes guest x86-64 code with iced-x86
//! and emits IR with exact x86 semantics, one guest instruction at a time,
//! until a control-flow instruction or the instruction limit ends the region.
//!
//! This is the one place x86 semantics are defined; the interpreter and the
//! JIT only execute the IR. An instruction the lifter does not implement
//! becomes `trap ill` at its address, so the guest gets SIGILL there.

mod alu;
mod control;
mod flags;
mod lift;
mod muldiv;
mod operand;
mod sse;
mod string;
mod system;
mod x87;

use aarchx_ir::{Builder, ExitKind, Region, TrapKind};
use aarchx_pass::{OptionSpec, OptionValue, Options, Pass, PassContext, PassError, PassInfo, Stage};
use iced_x86::{Decoder, DecoderOptions, Instruction};

pub use lift::Outcome;

/// The pass's description.
pub static INFO: PassInfo = PassInfo {
    name: "decode",
    stage: Stage::Decode,
    doc: "Lifts guest x86-64 code into IR, up to the first control-flow instruction.",
    options: &[OptionSpec {
        name: "max_insns",
        default: || OptionValue::Int(64),
        doc: "Most guest instructions in one region (1 to 1024).",
    }],
    create: |o| Box::new(Decode::new(o)),
};

/// The lifter pass.
pub struct Decode {
    pub max_insns: usize,
}

impl Decode {
    pub fn new(options: &Options) -> Decode {
        Decode { max_insns: options.int("max_insns").clamp(1, 1024) as usize }
    }
}

/// Longest x86 instruction.
const MAX_INSN_LEN: usize = 15;

impl Pass for Decode {
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let mut pc = region.entry;
        let mut b = Builder::new(region);
        let mut insn = Instruction::default();
        for n in 0..self.max_insns {
            let mut bytes = [0u8; MAX_INSN_LEN];
            let got = cx.code.read(pc, &mut bytes);
            let mut decoder = Decoder::with_ip(64, &bytes[..got], pc, DecoderOptions::NONE);
            decoder.decode_out(&mut insn);
            if insn.is_invalid() {
                let truncated = decoder.last_error() == iced_x86::DecoderError::NoMoreBytes;
                if truncated && n > 0 {
                    // Let the next region start here, so the fault is
                    // raised precisely at this instruction.
                    b.exit(ExitKind::Jump, pc);
                } else {
                    b.insn(pc, 1);
                    b.trap(if truncated { TrapKind::FetchFault } else { TrapKind::Ill }, pc);
                }
                return Ok(());
            }
            b.insn(pc, insn.len() as u16);
            let block = b.current();
            let mark = b.region.blocks[block.index()].insts.len();
            let nblocks = b.region.blocks.len();
            match lift::lift(&mut b, &insn) {
                Outcome::Next => pc = insn.next_ip(),
                Outcome::End => return Ok(()),
                Outcome::Unsupported => {
                    // Drop whatever was emitted for it: the guest state must
                    // be as before the instruction when SIGILL is raised.
                    b.region.blocks.truncate(nblocks);
                    b.switch_to(block);
                    b.region.blocks[block.index()].insts.truncate(mark);
                    b.trap(TrapKind::Ill, pc);
                    return Ok(());
                }
            }
        }
        b.exit(ExitKind::Jump, pc);
        Ok(())
    }
}
