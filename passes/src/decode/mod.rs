//! The `decode` pass: the lifter. Decodes guest x86-64 code with iced-x86
//! and emits IR with exact x86 semantics, one guest instruction at a time,
//! until a control-flow instruction or the instruction limit ends the region.
//!
//! With `follow` on, a region is a superblock: a direct `jmp` or `call`
//! does not end it, decoding goes on at the target (unless the target is
//! already in the region, or not readable code), and a `ret` after a
//! followed `call` compares the popped address with that call's return
//! address: equal, decoding goes on there in the same region; different,
//! the region leaves through an indirect exit as an unfollowed `ret`
//! does; a conditional branch leaves for its taken target with a side
//! exit and decoding goes on at the fall-through. Indirect branches still
//! end the region.
//!
//! This is the one place x86 semantics are defined; the interpreter and the
//! JIT only execute the IR. An instruction the lifter does not implement
//! becomes `trap ill` at its address, so the guest gets SIGILL there.

mod alu;
mod bmi;
mod control;
mod flags;
mod lift;
mod muldiv;
mod operand;
mod sse;
mod string;
mod system;
mod x87;

use aarchx_ir::{Builder, ExitKind, IntCond, Region, TrapKind, Type, Value};
use aarchx_pass::{OptionSpec, OptionValue, Options, Pass, PassContext, PassError, PassInfo, Stage};
use iced_x86::{Decoder, DecoderOptions, Instruction};

pub use lift::Outcome;
pub use system::{AVX_AREA, XCR0, XSAVE_AREA, XSAVE_HEADER};

/// The pass's description.
pub static INFO: PassInfo = PassInfo {
    name: "decode",
    stage: Stage::Decode,
    doc: "Lifts guest x86-64 code into IR, up to the first control-flow instruction.",
    options: &[
        OptionSpec {
            name: "max_insns",
            default: || OptionValue::Int(64),
            doc: "Most guest instructions in one region (1 to 1024).",
        },
        OptionSpec {
            name: "follow",
            default: || OptionValue::Bool(true),
            doc: "Superblocks: go on decoding at the target of a direct jmp or call, after a conditional \
                  branch (its taken side an exit), and after a ret \
                  that returns to a followed call (checked), instead of ending the region.",
        },
        OptionSpec {
            name: "tier_up",
            default: || OptionValue::Int(256),
            doc: "With follow on: a region is first translated quickly, without following, and translated \
                  again as a superblock once the dispatcher has run it this many times (0: superblocks \
                  from the first translation). Cheap start-up for code that runs a few times.",
        },
    ],
    create: |o| Box::new(Decode::new(o)),
};

/// The lifter pass. Its `tier_up` option is the runtime's to read (see
/// [`tier_up`]); the runtime tells it through
/// [`aarchx_pass::TranslationConfig::superblocks`] which translation it
/// asks for.
pub struct Decode {
    pub max_insns: usize,
    /// Follow direct jumps, calls and their returns (superblocks).
    pub follow: bool,
}

/// Runs of a quick translation after which the runtime translates the
/// region again as a superblock, from the decode pass's options; 0 when
/// every region is a superblock at once (or none is, `follow` off).
pub fn tier_up(options: &Options) -> u32 {
    if options.bool("follow") {
        options.int("tier_up").clamp(0, i64::from(u32::MAX)) as u32
    } else {
        0
    }
}

impl Decode {
    pub fn new(options: &Options) -> Decode {
        Decode { max_insns: options.int("max_insns").clamp(1, 1024) as usize, follow: options.bool("follow") }
    }
}

/// Most followed calls awaiting their `ret` in one region.
const MAX_CALL_DEPTH: usize = 8;

/// What the decode loop follows: the instructions decoded so far and the
/// return addresses of the calls it followed, innermost last.
struct Trace {
    decoded: Vec<u64>,
    returns: Vec<u64>,
}

impl Trace {
    /// Whether decoding may go on at `target`: code not yet in the region
    /// that can be read (an unreadable target is the next region's fault).
    fn can_follow(&self, cx: &PassContext<'_>, target: u64) -> bool {
        !self.decoded.contains(&target) && cx.code.read(target, &mut [0u8; 1]) == 1
    }
}

/// Ends the block at a `ret` to `target` that should come back to `ret`:
/// an indirect exit unless it does, then the block where decoding goes on.
fn check_return(b: &mut Builder<'_>, target: Value, ret: u64) {
    let expected = b.guest_addr(ret);
    let hit = b.icmp(IntCond::Eq, Type::I64, target, expected);
    let (cont, miss) = (b.create_block(), b.create_block());
    b.brif(hit, cont, miss);
    b.switch_to(miss);
    b.exit_indirect(ExitKind::Ret, target);
    b.switch_to(cont);
}

/// Lifts a `ret` at `at` into the builder's block: the return address
/// popped and left for (the end of a routine `leaf-inline` ran).
pub fn lift_ret(b: &mut Builder<'_>, at: u64) {
    let mut insn = Instruction::default();
    Decoder::with_ip(64, &[0xc3], at, DecoderOptions::NONE).decode_out(&mut insn);
    match lift::lift(b, &insn, aarchx_pass::CpuLevel::V1) {
        lift::Outcome::Ret(target) => b.exit_indirect(ExitKind::Ret, target),
        _ => unreachable!("ret lifts to a return"),
    }
}

/// Longest x86 instruction.
const MAX_INSN_LEN: usize = 15;

/// What the arena is first sized for, per guest instruction.
const IR_PER_INSN: usize = 20;

/// Guest code read ahead of the decoder, so that one read serves several
/// instructions.
struct Window {
    at: u64,
    len: usize,
    bytes: [u8; 64],
}

impl Window {
    /// The bytes at `pc`: an instruction's longest, or fewer where the
    /// readable code ends (what a read of `MAX_INSN_LEN` bytes at `pc`
    /// would give). Read again from `pc` unless they are all in the window
    /// (a window that came short ends where the code does).
    fn at(&mut self, cx: &PassContext<'_>, pc: u64) -> &[u8] {
        let off = pc.wrapping_sub(self.at);
        let inside = off < self.len as u64 && (off as usize + MAX_INSN_LEN <= self.len || self.len < self.bytes.len());
        if !inside {
            self.len = cx.code.read(pc, &mut self.bytes);
            self.at = pc;
        }
        let off = pc.wrapping_sub(self.at) as usize;
        &self.bytes[off.min(self.len)..(off + MAX_INSN_LEN).min(self.len)]
    }
}

impl Pass for Decode {
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let mut pc = region.entry;
        // About twenty IR instructions per guest instruction: the arena
        // grows rarely past this.
        region.insts.reserve(IR_PER_INSN * self.max_insns.min(16));
        let mut b = Builder::new(region);
        let mut insn = Instruction::default();
        let mut trace = Trace { decoded: Vec::new(), returns: Vec::new() };
        let follow = self.follow && cx.config.superblocks;
        let mut window = Window { at: 0, len: 0, bytes: [0; 64] };
        for n in 0..self.max_insns {
            trace.decoded.push(pc);
            let mut decoder = Decoder::with_ip(64, window.at(cx, pc), pc, DecoderOptions::NONE);
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
            match lift::lift(&mut b, &insn, cx.config.cpu_level) {
                Outcome::Next => pc = insn.next_ip(),
                Outcome::Jump(target) if follow && trace.can_follow(cx, target) => pc = target,
                Outcome::Jump(target) => {
                    b.exit(ExitKind::Jump, target);
                    return Ok(());
                }
                Outcome::Call { target, ret }
                    if follow && trace.returns.len() < MAX_CALL_DEPTH && trace.can_follow(cx, target) =>
                {
                    trace.returns.push(ret);
                    pc = target;
                }
                Outcome::Call { target, .. } => {
                    b.exit(ExitKind::Call, target);
                    return Ok(());
                }
                Outcome::Ret(target) => match trace.returns.pop() {
                    Some(ret) if !trace.decoded.contains(&ret) => {
                        check_return(&mut b, target, ret);
                        pc = ret;
                    }
                    _ => {
                        b.exit_indirect(ExitKind::Ret, target);
                        return Ok(());
                    }
                },
                Outcome::Branch if follow && trace.can_follow(cx, insn.next_ip()) => pc = insn.next_ip(),
                Outcome::Branch => {
                    b.exit(ExitKind::Jump, insn.next_ip());
                    return Ok(());
                }
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
