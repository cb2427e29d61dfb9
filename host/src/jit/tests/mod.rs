//! Tests of the arm64 backend, run under qemu-aarch64.
//!
//! [`check`] runs a region three ways from the same state and memory:
//! plain translated code, journaled translated code (then rolled back,
//! which must restore memory exactly), and the IR interpreter; all three
//! must end in the same exit, guest state and memory. Tests then compare
//! that outcome with values written by hand. Guest memory is a test
//! buffer whose host address is the guest address.

mod chain;
mod diff;
mod journal;
mod lifted;
mod ops;

use aarchx_ir::cond::Helper;
use aarchx_ir::parse::parse;
use aarchx_ir::verify::verify;
use aarchx_ir::{Builder, ExitKind, GuestState, Opcode, Reg, Region, Type, Value};

use super::{CompileOptions, Jit};
use crate::interp::{run_region, RegionExit};
use crate::machine::Machine;

/// A zeroed, 16-aligned guest memory buffer.
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

    pub fn read(&self, offset: usize, len: usize) -> u128 {
        let mut b = [0u8; 16];
        b[..len].copy_from_slice(&self.bytes()[offset..offset + len]);
        u128::from_le_bytes(b)
    }
}

/// What the test helpers do: `cpuid` stores 0x1234 in rbx, as the
/// interpreter's test machine does; every call is logged with the rip
/// it saw.
fn test_helper(log: &mut Vec<(Helper, u64)>, helper: Helper, state: &mut GuestState) {
    log.push((helper, state.rip));
    if helper == Helper::Cpuid {
        state.set(Reg::RBX, 0x1234);
    }
}

/// The interpreter's memory for these tests: host memory at the guest
/// address, like translated code.
struct RawMachine {
    helpers: Vec<(Helper, u64)>,
}

impl Machine for RawMachine {
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

/// The agreed outcome of a [`check`] run.
#[derive(Debug)]
pub struct Outcome {
    pub exit: RegionExit,
    pub state: GuestState,
    pub helpers: Vec<(Helper, u64)>,
}

/// Compiles `region` both ways on a fresh JIT and runs it from `state`
/// and `mem` through the JIT (plain, then journaled and rolled back) and
/// the interpreter; panics unless all agree. `mem` is left as the runs
/// left it.
pub fn check(region: &Region, state: &GuestState, mem: &mut GuestMem) -> Outcome {
    let mut jit = Jit::new().expect("JIT starts");
    let plain = jit.compile(region, CompileOptions::default()).unwrap_or_else(|e| panic!("declined: {e}"));
    let journaled = jit.compile(region, CompileOptions { journal: true }).unwrap_or_else(|e| panic!("declined: {e}"));
    check_compiled(&mut jit, plain, journaled, region, state, mem)
}

/// [`check`] with blocks already compiled on `jit`.
pub fn check_compiled(
    jit: &mut Jit,
    plain: super::BlockId,
    journaled: super::BlockId,
    region: &Region,
    state: &GuestState,
    mem: &mut GuestMem,
) -> Outcome {
    let initial = mem.bytes();

    let mut s1 = *state;
    let mut log1 = Vec::new();
    // SAFETY: the region only addresses `mem`.
    let out1 = unsafe { jit.run(plain, &mut s1, &mut |h, s| test_helper(&mut log1, h, s)) };
    let mem1 = mem.bytes();
    mem.set_bytes(&initial);

    let mut s2 = *state;
    let mut log2 = Vec::new();
    // SAFETY: as above.
    let out2 = unsafe { jit.run(journaled, &mut s2, &mut |h, s| test_helper(&mut log2, h, s)) };
    let mem2 = mem.bytes();
    // SAFETY: the journal holds addresses inside `mem`.
    unsafe { jit.rollback() };
    assert!(mem.bytes() == initial, "rollback restores memory");

    let mut s3 = *state;
    let mut machine = RawMachine { helpers: Vec::new() };
    let exit3 = run_region(region, &mut s3, &mut machine);
    let mem3 = mem.bytes();

    let text = aarchx_ir::print::print(region);
    assert_eq!(out1.exit, exit3, "JIT and interpreter exits differ\n{text}");
    assert_eq!(out2.exit, exit3, "journaled JIT and interpreter exits differ\n{text}");
    assert_eq!(s1, s3, "JIT and interpreter states differ from {state:x?}\n{text}");
    assert_eq!(s2, s3, "journaled JIT and interpreter states differ\n{text}");
    assert!(mem1 == mem3, "JIT and interpreter memory differs\n{text}");
    assert!(mem2 == mem3, "journaled JIT and interpreter memory differs\n{text}");
    assert_eq!(log1, machine.helpers, "helper calls differ\n{text}");
    assert_eq!(log2, machine.helpers, "journaled helper calls differ\n{text}");
    Outcome { exit: exit3, state: s3, helpers: machine.helpers }
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
    let mut mem = GuestMem::new();
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
    let out = check(&r, &state_with(regs), &mut mem);
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Jump });
    mem.read(0, (ty.bits() / 8) as usize)
}

/// The vector whose lanes of `bits` bits are `lanes`, lane 0 first.
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
