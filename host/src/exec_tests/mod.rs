//! The IR semantic tests, shared by both executors: hand-written inputs
//! and expected values for IR fixtures, run on every host through the
//! interpreter and, on aarch64, also through the JIT, plain and journaled.
//!
//! [`Prepared::check`] runs a region on every [`Executor`] from the same
//! state and memory; all must end in the same exit, guest state, memory
//! and helper calls, and the journaled run, rolled back, must restore
//! memory exactly. Tests then compare that agreed outcome with values
//! written by hand. Guest memory is a [`GuestMem`] buffer whose host
//! address is the guest address, for translated code and interpreter
//! alike.
//!
//! - [`int`]: scalar integer ops, compares, width changes, i128.
//! - [`float`]: scalar and vector float ops with x86 NaN rules.
//! - [`fenv`]: float ops under each rounding mode and FTZ with DAZ.
//! - [`half`]: the F16C conversions between f16 and f32.
//! - [`vector`]: integer vector lanes, shuffles, packs and lane moves.
//! - [`regions`]: whole regions: control flow, memory, atomics, state.
//! - [`count`]: instrumentation counters.
//! - [`crypto`]: the AES rounds and the carry-less multiply.

mod count;
mod crypto;
mod fenv;
mod float;
mod half;
mod int;
mod regions;
mod vector;

use aarchx_ir::cond::Helper;
use aarchx_ir::parse::parse;
use aarchx_ir::verify::verify;
use aarchx_ir::{Builder, ExitKind, GuestState, Opcode, Reg, Region, Type, Value};

use crate::interp::run_region;
#[cfg(target_arch = "aarch64")]
use crate::jit::{BlockId, CompileOptions, Jit};
use crate::machine::Machine;
use crate::machine::RegionExit;

/// MXCSR's denormal-operand flag.
const MXCSR_DE: u32 = 0x2;

/// A zeroed, 16-aligned 4 KiB guest memory buffer.
pub struct GuestMem {
    words: Box<[u128; 256]>,
}

impl GuestMem {
    pub fn new() -> GuestMem {
        GuestMem { words: Box::new([0; 256]) }
    }

    /// Guest (= host) address of the first byte.
    pub fn base(&self) -> u64 {
        self.words.as_ptr() as u64
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    pub fn set_bytes(&mut self, bytes: &[u8]) {
        for (w, chunk) in self.words.iter_mut().zip(bytes.chunks(16)) {
            *w = u128::from_le_bytes(chunk.try_into().expect("16-byte chunks"));
        }
    }

    /// The `len` bytes at `offset`, little-endian.
    pub fn read(&self, offset: usize, len: usize) -> u128 {
        let mut b = [0u8; 16];
        b[..len].copy_from_slice(&self.bytes()[offset..offset + len]);
        u128::from_le_bytes(b)
    }
}

/// What the test helpers do: `cpuid` stores 0x1234 in rbx so a test can
/// see that it ran on the state; `rdtsc` zeroes every V register a call
/// may clobber (on aarch64), as Rust code may; every call is logged with
/// the rip it saw.
fn test_helper(log: &mut Vec<(Helper, u64)>, helper: Helper, state: &mut GuestState) {
    log.push((helper, state.rip));
    match helper {
        Helper::Cpuid => state.set(Reg::RBX, 0x1234),
        #[cfg(target_arch = "aarch64")]
        // SAFETY: the registers written are declared clobbered; the
        // compiler keeps the low halves of v8-v15 for its own caller.
        Helper::Rdtsc => unsafe {
            std::arch::asm!(
                "movi v8.2d, #0", "movi v9.2d, #0", "movi v10.2d, #0", "movi v11.2d, #0",
                "movi v12.2d, #0", "movi v13.2d, #0", "movi v14.2d, #0", "movi v15.2d, #0",
                "movi v24.2d, #0", "movi v25.2d, #0", "movi v26.2d, #0", "movi v27.2d, #0",
                "movi v28.2d, #0", "movi v29.2d, #0", "movi v30.2d, #0", "movi v31.2d, #0",
                out("v8") _, out("v9") _, out("v10") _, out("v11") _, out("v12") _, out("v13") _,
                out("v14") _, out("v15") _, out("v24") _, out("v25") _, out("v26") _, out("v27") _,
                out("v28") _, out("v29") _, out("v30") _, out("v31") _,
            )
        },
        _ => {}
    }
}

/// The interpreter's memory: host memory at the guest address, as
/// translated code sees it.
struct HostMachine {
    helpers: Vec<(Helper, u64)>,
}

impl Machine for HostMachine {
    fn load(&mut self, addr: u64, ty: Type) -> u128 {
        let mut b = [0u8; 16];
        // SAFETY: the regions under test only address `GuestMem` buffers.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, b.as_mut_ptr(), (ty.bits() / 8) as usize) };
        u128::from_le_bytes(b)
    }

    fn store(&mut self, addr: u64, ty: Type, bits: u128) {
        let b = bits.to_le_bytes();
        // SAFETY: as in `load`.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), addr as *mut u8, (ty.bits() / 8) as usize) };
    }

    fn helper(&mut self, helper: Helper, state: &mut GuestState) {
        test_helper(&mut self.helpers, helper, state);
    }
}

/// One way of running a prepared region.
#[derive(Clone, Copy, Debug)]
pub enum Executor {
    /// The IR interpreter, its memory host memory at the guest address.
    Interpreter,
    /// A block compiled on the [`Prepared`] region's JIT; a journaled
    /// block is rolled back after its run.
    #[cfg(target_arch = "aarch64")]
    Jit { block: BlockId, journaled: bool },
}

/// The agreed outcome of a [`Prepared::check`] run.
#[derive(Debug)]
pub struct Outcome {
    pub exit: RegionExit,
    pub state: GuestState,
    pub helpers: Vec<(Helper, u64)>,
}

/// A region ready to run on every executor this host has: the
/// interpreter, and on aarch64 the JIT (a fresh one, with the region
/// compiled plain and journaled).
pub struct Prepared<'r> {
    region: &'r Region,
    executors: Vec<Executor>,
    #[cfg(target_arch = "aarch64")]
    jit: Jit,
}

impl<'r> Prepared<'r> {
    /// Prepares a verified `region`; panics if the JIT declines it.
    pub fn new(region: &'r Region) -> Prepared<'r> {
        #[allow(unused_mut)]
        let mut executors = vec![Executor::Interpreter];
        // A misaligned acquire/release access resumes through the SIGBUS
        // handler, as in aarchx itself.
        #[cfg(target_arch = "aarch64")]
        crate::signals::install_fault_handlers();
        #[cfg(target_arch = "aarch64")]
        let mut jit = Jit::new(crate::engine::nan_rules(crate::policy::AfpSetting::Auto)).expect("JIT starts");
        #[cfg(target_arch = "aarch64")]
        for journaled in [false, true] {
            let block = jit
                .compile(region, CompileOptions { journal: journaled, ..CompileOptions::default() }, true)
                .unwrap_or_else(|e| panic!("declined: {e}\n{}", aarchx_ir::print::print(region)));
            executors.push(Executor::Jit { block, journaled });
        }
        Prepared {
            region,
            executors,
            #[cfg(target_arch = "aarch64")]
            jit,
        }
    }

    /// Runs `executor` from `state` and `mem`, which holds `initial`. A
    /// journaled block is then rolled back, which must restore `initial`
    /// exactly; `mem` is left as the run left it.
    #[cfg_attr(not(target_arch = "aarch64"), allow(unused_variables))]
    fn run(
        &mut self,
        executor: Executor,
        state: &mut GuestState,
        mem: &mut GuestMem,
        initial: &[u8],
    ) -> (RegionExit, Vec<(Helper, u64)>) {
        match executor {
            Executor::Interpreter => {
                let mut machine = HostMachine { helpers: Vec::new() };
                let exit = run_region(self.region, state, &mut machine);
                (exit, machine.helpers)
            }
            #[cfg(target_arch = "aarch64")]
            Executor::Jit { block, journaled } => {
                let mut log = Vec::new();
                // SAFETY: the region only addresses `mem`.
                let out = unsafe { self.jit.run(block, state, &mut |h, s| test_helper(&mut log, h, s)) };
                if journaled {
                    let after = mem.bytes();
                    // SAFETY: the journal holds addresses inside `mem`.
                    unsafe { self.jit.rollback() };
                    assert!(mem.bytes() == initial, "rollback restores memory");
                    mem.set_bytes(&after);
                }
                (out.exit, log)
            }
        }
    }

    /// Runs the region on every executor from `state` and `mem`; panics
    /// unless all agree on the exit, state, memory and helper calls, or a
    /// journaled run's rollback leaves memory other than it found it.
    /// `mem` is left as the runs left it.
    pub fn check(&mut self, state: &GuestState, mem: &mut GuestMem) -> Outcome {
        let initial = mem.bytes();
        let text = aarchx_ir::print::print(self.region);
        let mut agreed: Option<(Outcome, Vec<u8>)> = None;
        for executor in self.executors.clone() {
            mem.set_bytes(&initial);
            let mut s = *state;
            let (exit, helpers) = self.run(executor, &mut s, mem, &initial);
            let out = (Outcome { exit, state: s, helpers }, mem.bytes());
            match &agreed {
                None => agreed = Some(out),
                Some((first, bytes)) => {
                    let name = format!("{executor:?} and {:?}", self.executors[0]);
                    assert_eq!(out.0.exit, first.exit, "{name} exits differ\n{text}");
                    // Translated code never raises DE, MXCSR's denormal-operand
                    // flag (docs/architecture.md, "SSE floating point").
                    let without_de = |s: &GuestState| GuestState { mxcsr: s.mxcsr & !MXCSR_DE, ..*s };
                    assert_eq!(
                        without_de(&out.0.state),
                        without_de(&first.state),
                        "{name} states differ from {state:x?}\n{text}"
                    );
                    assert!(out.1 == *bytes, "{name} memory differs\n{text}");
                    assert_eq!(out.0.helpers, first.helpers, "{name} helper calls differ\n{text}");
                }
            }
        }
        let (outcome, bytes) = agreed.expect("at least the interpreter");
        mem.set_bytes(&bytes);
        outcome
    }
}

/// Runs `region` from `state` and `mem` on every executor; see
/// [`Prepared::check`].
pub fn check(region: &Region, state: &GuestState, mem: &mut GuestMem) -> Outcome {
    Prepared::new(region).check(state, mem)
}

/// Parses and verifies a region.
pub fn region(text: &str) -> Region {
    let r = parse(text).unwrap_or_else(|e| panic!("fixture parses: {e}\n{text}"));
    verify(&r).unwrap_or_else(|e| panic!("fixture verifies: {e}\n{text}"));
    r
}

/// A state with the named registers set (`("rax", 5)`, `("xmm1", ...)`).
pub fn state_with(regs: &[(&str, u128)]) -> GuestState {
    let mut state = GuestState::default();
    for (name, bits) in regs {
        state.set(Reg::from_name(name).expect("register name"), *bits);
    }
    state
}

/// Runs `body` (the instructions of one block, no terminator) with the
/// named registers set, through [`check`], and returns the value its last
/// instruction defines (an i1 as 0 or 1).
pub fn eval(regs: &[(&str, u128)], body: &str) -> u128 {
    eval_from(&state_with(regs), body)
}

/// As [`eval`], from `state`.
pub fn eval_from(state: &GuestState, body: &str) -> u128 {
    let mut mem = GuestMem::new();
    let (r, ty) = storing_last(body, &mem);
    let out = check(&r, state, &mut mem);
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Jump });
    mem.read(0, (ty.bits() / 8) as usize)
}

/// The region of `body` that stores the value of its last instruction (an
/// i1 as a byte, 0 or 1) at the start of `mem` and exits, and that
/// value's type as stored.
pub fn storing_last(body: &str, mem: &GuestMem) -> (Region, Type) {
    let mut r = parse(&format!("region 0x1000\nblock0:\n{body}\n")).expect("the fixture parses");
    let mut result = Value(r.insts.len() as u32 - 1);
    let mut ty = r.value_type(result);
    let mut b = Builder::new(&mut r);
    if ty == Type::I1 {
        ty = Type::I8;
        result = b.unary(Opcode::Zext, ty, result);
    }
    let addr = b.iconst(Type::I64, mem.base());
    b.store(ty, addr, result);
    b.exit(ExitKind::Jump, 0);
    verify(&r).unwrap_or_else(|e| panic!("fixture verifies: {e}\n{body}"));
    (r, ty)
}

/// The vector whose lanes of `bits` bits are `lanes`, lane 0 first (test
/// inputs and expectations are written lane by lane).
pub fn pack<const N: usize>(bits: u32, lanes: [u128; N]) -> u128 {
    assert_eq!(bits as usize * N, 128, "a whole vector");
    lanes.iter().rev().fold(0, |acc, x| {
        assert!(*x >> bits == 0, "{x:#x} fits a lane");
        (acc << bits) | x
    })
}

/// `OP` applied to xmm0, xmm1, ... holding `args`. `op` is the op with
/// its type and condition (`icmp.i8x16 eq`), and any immediate after a
/// comma (`shuffle.i32x4, 0x1b`), which goes after the operands.
pub fn vop(op: &str, args: &[u128]) -> u128 {
    let (head, imm) = op.split_once(',').map_or((op, String::new()), |(h, i)| (h, format!(",{i}")));
    let names = ["xmm0", "xmm1", "xmm2"];
    let regs: Vec<(&str, u128)> = names.into_iter().zip(args.iter().copied()).collect();
    let gets: String = (0..args.len()).map(|i| format!("v{i} = get xmm{i}\n")).collect();
    let operands = (0..args.len()).map(|i| format!("v{i}")).collect::<Vec<_>>().join(", ");
    eval(&regs, &format!("{gets}v{} = {head} {operands}{imm}", args.len()))
}

/// Checks each row `(op, inputs, expected)` of a table with `run`, naming
/// the failing row.
pub fn table<I: std::fmt::Debug + Copy>(run: impl Fn(&str, I) -> u128, rows: &[(&str, I, u128)]) {
    for (op, inputs, expected) in rows {
        let got = run(op, *inputs);
        assert_eq!(got, *expected, "{op} {inputs:x?}: got {got:#x}, want {expected:#x}");
    }
}
