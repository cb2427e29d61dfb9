//! Test support for the interpreter's unit tests: a byte-map guest memory
//! with recorded helper calls, and runners for IR text fixtures.

use std::collections::BTreeMap;

use aarchx_ir::cond::Helper;
use aarchx_ir::parse::parse;
use aarchx_ir::verify::verify;
use aarchx_ir::{Builder, ExitKind, GuestState, Opcode, Reg, Region, Type, Value};

use super::{run_region, RegionExit};
use crate::machine::Machine;

/// Guest memory as a sparse byte map (unwritten bytes read 0), and the
/// helpers called, in order, with the rip they saw. `cpuid` stores 0x1234
/// in rbx so a test can see that it ran on the state.
#[derive(Default)]
pub struct TestMachine {
    pub mem: BTreeMap<u64, u8>,
    pub helpers: Vec<(Helper, u64)>,
}

impl Machine for TestMachine {
    fn load(&mut self, addr: u64, ty: Type) -> u128 {
        (0..u64::from(ty.bits() / 8))
            .map(|i| u128::from(self.mem.get(&addr.wrapping_add(i)).copied().unwrap_or(0)) << (8 * i))
            .fold(0, |acc, byte| acc | byte)
    }

    fn store(&mut self, addr: u64, ty: Type, bits: u128) {
        for i in 0..u64::from(ty.bits() / 8) {
            self.mem.insert(addr.wrapping_add(i), (bits >> (8 * i)) as u8);
        }
    }

    fn helper(&mut self, helper: Helper, state: &mut GuestState) {
        self.helpers.push((helper, state.rip));
        if helper == Helper::Cpuid {
            state.set(Reg::RBX, 0x1234);
        }
    }
}

/// A state with the named registers set (`("rax", 5)`, `("xmm1", ...)`).
pub fn state_with(regs: &[(&str, u128)]) -> GuestState {
    let mut state = GuestState::default();
    for (name, bits) in regs {
        state.set(Reg::from_name(name).expect("register name"), *bits);
    }
    state
}

/// Verifies and runs `region`.
pub fn run(region: &Region, state: &mut GuestState, machine: &mut TestMachine) -> RegionExit {
    verify(region).expect("the fixture verifies");
    run_region(region, state, machine)
}

/// Parses and runs a whole-region fixture.
pub fn run_text(text: &str, state: &mut GuestState, machine: &mut TestMachine) -> RegionExit {
    run(&parse(text).expect("the fixture parses"), state, machine)
}

/// Where [`eval`] stores its result.
const RESULT_ADDR: u64 = 0x100;

/// Runs `body` (the instructions of one block, no terminator) with the
/// named registers set, and returns the value its last instruction
/// defines (an i1 as 0 or 1).
pub fn eval(regs: &[(&str, u128)], body: &str) -> u128 {
    let mut region = parse(&format!("region 0x1000\nblock0:\n{body}\n")).expect("the fixture parses");
    let mut result = Value(region.insts.len() as u32 - 1);
    let mut ty = region.value_type(result);
    let mut b = Builder::new(&mut region);
    if ty == Type::I1 {
        ty = Type::I8;
        result = b.unary(Opcode::Zext, ty, result);
    }
    let addr = b.iconst(Type::I64, RESULT_ADDR);
    b.store(ty, addr, result);
    b.exit(ExitKind::Jump, 0);
    let mut machine = TestMachine::default();
    run(&region, &mut state_with(regs), &mut machine);
    machine.load(RESULT_ADDR, ty)
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

/// `OP` applied to xmm0, xmm1, ... holding `args`. `op` is the op with its
/// type and condition (`icmp.i8x16 eq`), and any immediate after a comma
/// (`shuffle.i32x4, 0x1b`), which goes after the operands.
pub fn vop(op: &str, args: &[u128]) -> u128 {
    let (head, imm) = op.split_once(',').map_or((op, String::new()), |(h, i)| (h, format!(",{i}")));
    let regs: Vec<(&str, u128)> = ["xmm0", "xmm1"].into_iter().zip(args.iter().copied()).collect();
    let gets: String = (0..args.len()).map(|i| format!("v{i} = get xmm{i}\n")).collect();
    let operands = (0..args.len()).map(|i| format!("v{i}")).collect::<Vec<_>>().join(", ");
    eval(&regs, &format!("{gets}v{} = {head} {operands}{imm}", args.len()))
}
