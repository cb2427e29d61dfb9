//! The IR interpreter: the portable reference executor of the IR, which the
//! arm64 JIT is checked against. It runs a region's blocks from block0 on a
//! [`GuestState`] and a [`Machine`] until an exit or a trap, keeping every
//! value as raw bits in a `u128` masked to its type's width (i1 is 0 or 1).
//!
//! This module owns the driver: the value array, block order and the
//! terminators, guest state, memory and helper calls, and the dispatch of
//! each opcode to its family: `int` (integer lane ops), `float` (x86 SSE
//! floating point) and `vector` (shape-changing vector ops), over the lane
//! helpers of `lanes`.

mod float;
mod int;
mod lanes;
#[cfg(test)]
mod testing;
mod vector;

use std::cell::Cell;

use aarchx_ir::cond::Helper;
use aarchx_ir::{ExitKind, FloatCond, GuestState, InstData, IntCond, Opcode, Region, RmwOp, TrapKind};

use crate::machine::Machine;

/// How a region was left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionExit {
    /// Left through `exit`/`exit_indirect`; state.rip already holds the target.
    Jump { kind: ExitKind },
    /// A `trap`: state.rip holds the faulting instruction's address.
    Trap { kind: TrapKind },
}

thread_local! {
    /// The value array of the last run on this thread, kept for its allocation.
    static SCRATCH: Cell<Vec<u128>> = const { Cell::new(Vec::new()) };
}

/// Runs `region` from block0 until it exits or traps. Loads and stores go
/// to `machine` in program order (the interpreter is sequentially
/// consistent). A syscall exit returns `Jump { kind: ExitKind::Syscall }`
/// with rip after the syscall; the caller performs it.
pub fn run_region<M: Machine>(region: &Region, state: &mut GuestState, machine: &mut M) -> RegionExit {
    let mut values = SCRATCH.take();
    values.clear();
    values.resize(region.insts.len(), 0);
    let exit = run_blocks(region, state, machine, &mut values);
    SCRATCH.set(values);
    exit
}

/// Executes blocks from block0, following `jump` and `brif`, with `values`
/// indexed by arena index.
fn run_blocks<M: Machine>(region: &Region, state: &mut GuestState, machine: &mut M, values: &mut [u128]) -> RegionExit {
    let mut block = 0;
    loop {
        let (last, body) = region.blocks[block].insts.split_last().expect("a block ends in a terminator");
        for &v in body {
            let result = eval(region, region.inst(v), state, machine, values);
            values[v.index()] = result & region.value_type(v).mask();
        }
        let d = region.inst(*last);
        match d.op {
            Opcode::Jump => block = d.args[0] as usize,
            Opcode::Brif => block = d.args[if values[d.arg(0).index()] & 1 != 0 { 1 } else { 2 }] as usize,
            Opcode::Exit | Opcode::ExitIndirect => {
                state.rip = if d.op == Opcode::Exit { d.imm64() } else { values[d.arg(0).index()] as u64 };
                return RegionExit::Jump { kind: ExitKind::from_u16(d.aux).expect("valid exit kind") };
            }
            Opcode::Trap => {
                state.rip = d.imm64();
                return RegionExit::Trap { kind: TrapKind::from_u16(d.aux).expect("valid trap kind") };
            }
            op => panic!("block{block} ends in {op}, not a terminator"),
        }
    }
}

/// The result of one non-terminator instruction (0 for those that define
/// no value), before masking to its type.
fn eval<M: Machine>(region: &Region, d: &InstData, state: &mut GuestState, machine: &mut M, values: &[u128]) -> u128 {
    let ty = d.ty;
    let arg = |i: usize| values[d.arg(i).index()];
    let arg_type = |i: usize| region.value_type(d.arg(i));
    let float_lane = ty.lane_type();
    match d.op {
        Opcode::Iconst => u128::from(d.imm64()),
        Opcode::Get => state.get(d.reg()),
        Opcode::Set => {
            state.set(d.reg(), arg(0));
            0
        }
        Opcode::Load => machine.load(arg(0) as u64, ty),
        Opcode::Store => {
            machine.store(arg(0) as u64, ty, arg(1));
            0
        }
        Opcode::AtomicRmw => {
            let (addr, x) = (arg(0) as u64, arg(1));
            let old = machine.load(addr, ty);
            let new = match RmwOp::from_u16(d.aux).expect("valid atomic op") {
                RmwOp::Add => old.wrapping_add(x),
                RmwOp::And => old & x,
                RmwOp::Or => old | x,
                RmwOp::Xor => old ^ x,
                RmwOp::Xchg => x,
            };
            machine.store(addr, ty, new & ty.mask());
            old
        }
        Opcode::AtomicCas => {
            let addr = arg(0) as u64;
            let old = machine.load(addr, ty);
            if old == arg(1) {
                machine.store(addr, ty, arg(2));
            }
            old
        }
        Opcode::Add
        | Opcode::Sub
        | Opcode::Mul
        | Opcode::Umulh
        | Opcode::Smulh
        | Opcode::Udiv
        | Opcode::Sdiv
        | Opcode::Urem
        | Opcode::Srem
        | Opcode::And
        | Opcode::Or
        | Opcode::Xor
        | Opcode::AndNot
        | Opcode::Umin
        | Opcode::Umax
        | Opcode::Smin
        | Opcode::Smax
        | Opcode::AvgU
        | Opcode::AddSatU
        | Opcode::AddSatS
        | Opcode::SubSatU
        | Opcode::SubSatS => lanes::zip(ty, arg(0), arg(1), |bits, a, b| int::binary(d.op, bits, a, b)),
        // One scalar amount for every lane.
        Opcode::Shl | Opcode::Lshr | Opcode::Ashr | Opcode::Rotl | Opcode::Rotr => {
            lanes::map(ty, arg(0), |bits, a| int::binary(d.op, bits, a, arg(1)))
        }
        Opcode::Not | Opcode::Neg | Opcode::Clz | Opcode::Ctz | Opcode::Popcnt | Opcode::Bswap | Opcode::Parity => {
            lanes::map(ty, arg(0), |bits, a| int::unary(d.op, bits, a))
        }
        Opcode::Zext | Opcode::Trunc | Opcode::Bitcast => arg(0),
        Opcode::Sext => lanes::sext(arg(0), arg_type(0).bits()) as u128,
        Opcode::Icmp => {
            let cond = IntCond::from_u16(d.aux).expect("valid condition");
            lanes::zip(ty, arg(0), arg(1), |bits, a, b| lanes::truth(ty, int::compare(cond, bits, a, b)))
        }
        Opcode::Select => {
            if arg(0) & 1 != 0 {
                arg(1)
            } else {
                arg(2)
            }
        }
        Opcode::Concat => (arg(0) << (ty.bits() / 2)) | arg(1),
        Opcode::Splat => vector::splat(ty, arg(0)),
        Opcode::ExtractLane => lanes::lane(arg(0), ty.lane_bits(), u32::from(d.aux)),
        Opcode::InsertLane => vector::insert_lane(ty, arg(0), arg(1), u32::from(d.aux)),
        Opcode::Movmsk => vector::movmsk(ty, arg(0)),
        Opcode::Shuffle => vector::shuffle(ty, arg(0), d.aux),
        Opcode::Shuffle2 => vector::shuffle2(ty, arg(0), arg(1), d.aux),
        Opcode::UnpackLo | Opcode::UnpackHi => vector::unpack(ty, arg(0), arg(1), d.op == Opcode::UnpackHi),
        Opcode::NarrowS | Opcode::NarrowU => vector::narrow(ty, arg(0), arg(1), d.op == Opcode::NarrowS),
        Opcode::ByteShl | Opcode::ByteShr => vector::byte_shift(arg(0), d.aux, d.op == Opcode::ByteShl),
        Opcode::MulAddPairs => vector::mul_add_pairs(ty, arg(0), arg(1)),
        Opcode::SumAbsDiff => vector::sum_abs_diff(ty, arg(0), arg(1)),
        Opcode::MulEvenU => vector::mul_even_u(ty, arg(0), arg(1)),
        Opcode::Fadd | Opcode::Fsub | Opcode::Fmul | Opcode::Fdiv | Opcode::Fmin | Opcode::Fmax => {
            lanes::zip(ty, arg(0), arg(1), |_, a, b| float::arith(d.op, float_lane, a, b))
        }
        Opcode::Fsqrt => lanes::map(ty, arg(0), |_, a| float::arith(d.op, float_lane, a, 0)),
        Opcode::Fcmp => {
            let cond = FloatCond::from_u16(d.aux).expect("valid condition");
            lanes::zip(ty, arg(0), arg(1), |_, a, b| lanes::truth(ty, float::compare(cond, float_lane, a, b)))
        }
        Opcode::FcvtToSint => float::to_sint(ty, arg_type(0), arg(0), d.aux),
        Opcode::SintToF => float::from_sint(ty, arg_type(0), arg(0)),
        Opcode::Fconvert => float::convert(ty, arg(0)),
        Opcode::Call => {
            machine.helper(Helper::from_u16(d.aux).expect("valid helper"), state);
            0
        }
        Opcode::Insn => {
            state.rip = d.imm64();
            0
        }
        Opcode::Jump | Opcode::Brif | Opcode::Exit | Opcode::ExitIndirect | Opcode::Trap => {
            panic!("terminator {} before the end of its block", d.op)
        }
    }
}

#[cfg(test)]
mod tests {
    use aarchx_ir::cond::Helper;
    use aarchx_ir::{ExitKind, GuestState, Reg, TrapKind};

    use super::testing::{run_text, state_with, TestMachine};
    use super::RegionExit;

    fn run(text: &str, state: &mut GuestState) -> (RegionExit, TestMachine) {
        let mut machine = TestMachine::default();
        let exit = run_text(text, state, &mut machine);
        (exit, machine)
    }

    /// rax = rcx + (rcx - 1) + ... + 1, counting rcx down to 0 around a
    /// loop of blocks.
    const SUM_LOOP: &str = "\
region 0x1000
block0:
  insn 0x1000, 3
  jump block1
block1:
  v0 = get rcx
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  brif v2, block3, block2
block2:
  insn 0x1003, 3
  v3 = get rax
  v4 = add.i64 v3, v0
  set rax, v4
  v5 = iconst.i64 0x1
  v6 = sub.i64 v0, v5
  set rcx, v6
  jump block1
block3:
  exit jump 0x2000
";

    #[test]
    fn counted_loop_over_blocks() {
        let mut state = state_with(&[("rcx", 5)]);
        let (exit, _) = run(SUM_LOOP, &mut state);
        assert_eq!(exit, RegionExit::Jump { kind: ExitKind::Jump });
        assert_eq!(state.gpr[0], 15);
        assert_eq!(state.gpr[1], 0);
        assert_eq!(state.rip, 0x2000);
        // Again with a zero count: the scratch values of the last run do not leak.
        let mut state = state_with(&[("rax", 7)]);
        run(SUM_LOOP, &mut state);
        assert_eq!(state.gpr[0], 7);
    }

    /// `div rcx`-like guard: trap when rcx is 0, else store rax / rcx.
    const GUARDED_DIV: &str = "\
region 0x1000
block0:
  insn 0x1000, 3
  v0 = get rcx
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  brif v2, block1, block2
block1:
  trap divzero 0x1000
block2:
  v3 = get rax
  v4 = udiv.i64 v3, v0
  set rax, v4
  exit jump 0x1003
";

    #[test]
    fn trap_leaves_rip_at_the_instruction() {
        let mut state = state_with(&[("rax", 10), ("rcx", 0)]);
        let (exit, _) = run(GUARDED_DIV, &mut state);
        assert_eq!(exit, RegionExit::Trap { kind: TrapKind::DivZero });
        assert_eq!(state.rip, 0x1000);
        assert_eq!(state.gpr[0], 10);
        let mut state = state_with(&[("rax", 10), ("rcx", 3)]);
        let (exit, _) = run(GUARDED_DIV, &mut state);
        assert_eq!(exit, RegionExit::Jump { kind: ExitKind::Jump });
        assert_eq!((state.gpr[0], state.rip), (3, 0x1003));
    }

    #[test]
    fn syscall_exit_leaves_rip_after_the_syscall() {
        let text = "\
region 0x1000
block0:
  insn 0x1000, 5
  v0 = iconst.i64 0x3c
  set rax, v0
  insn 0x1005, 2
  exit syscall 0x1007
";
        let mut state = GuestState::default();
        let (exit, _) = run(text, &mut state);
        assert_eq!(exit, RegionExit::Jump { kind: ExitKind::Syscall });
        assert_eq!((state.gpr[0], state.rip), (60, 0x1007));
    }

    #[test]
    fn ret_is_an_indirect_exit_through_memory() {
        let text = "\
region 0x1000
block0:
  insn 0x1000, 1
  v0 = get rsp
  v1 = load.i64 v0
  v2 = iconst.i64 0x8
  v3 = add.i64 v0, v2
  set rsp, v3
  exit_indirect ret v1
";
        let mut state = state_with(&[("rsp", 0x7000)]);
        let mut machine = TestMachine::default();
        machine.mem.extend((0..8).map(|i| (0x7000 + i, [0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0][i as usize])));
        let exit = run_text(text, &mut state, &mut machine);
        assert_eq!(exit, RegionExit::Jump { kind: ExitKind::Ret });
        assert_eq!((state.rip, state.gpr[4]), (0x1234_5678, 0x7008));
    }

    #[test]
    fn loads_and_stores_are_little_endian_and_sized() {
        let text = "\
region 0x1000
block0:
  v0 = get rdi
  v1 = get rax
  v2 = trunc.i32 v1
  store.i32 v0, v2
  v3 = load.i16 v0
  v4 = zext.i64 v3
  set rcx, v4
  v5 = get xmm0
  store.v128 ordered v0, v5
  v6 = iconst.i64 0xf
  v7 = add.i64 v0, v6
  v8 = load.i8 ordered v7
  v9 = zext.i64 v8
  set rdx, v9
  exit jump 0x0
";
        let mut state = state_with(&[("rdi", 0x500), ("rax", 0x1122_3344_5566_7788), ("xmm0", 0xab << 120)]);
        let (_, machine) = run(text, &mut state);
        assert_eq!(state.gpr[1], 0x7788);
        assert_eq!(state.gpr[2], 0xab);
        assert_eq!(machine.mem.len(), 16);
    }

    #[test]
    fn atomics_return_the_old_value() {
        let text = "\
region 0x1000
block0:
  v0 = get rdi
  v1 = get rax
  v2 = trunc.i32 v1
  v3 = atomic_rmw.i32 add v0, v2
  v4 = zext.i64 v3
  set rcx, v4
  v5 = get rsi
  v6 = trunc.i32 v5
  v7 = atomic_rmw.i32 xchg v0, v6
  v8 = atomic_cas.i32 v0, v6, v2
  v9 = atomic_cas.i32 v0, v6, v6
  v10 = zext.i64 v9
  set rdx, v10
  v11 = load.i32 v0
  v12 = zext.i64 v11
  set rbx, v12
  v13 = zext.i64 v7
  set rsi, v13
  v14 = zext.i64 v8
  set r8, v14
  exit jump 0x0
";
        // [rdi] = 0xffff_ffff; add 2 -> 1 (wraps at 32 bits); xchg 9 -> 9;
        // cas 9 -> 2 succeeds; cas 9 -> 9 fails, seeing 2.
        let mut state = state_with(&[("rdi", 0x800), ("rax", 2), ("rsi", 9)]);
        let mut machine = TestMachine::default();
        machine.mem.extend((0..4).map(|i| (0x800 + i, 0xff)));
        run_text(text, &mut state, &mut machine);
        assert_eq!(state.gpr[1], 0xffff_ffff); // add's old value
        assert_eq!(state.gpr[6], 1); // xchg's
        assert_eq!(state.gpr[8], 9); // the successful cas's
        assert_eq!(state.gpr[2], 2); // the failed cas's
        assert_eq!(state.gpr[3], 2); // memory at the end
        assert_eq!(machine.mem.get(&0x804), None);
    }

    #[test]
    fn helpers_run_on_the_state_at_their_instruction() {
        let text = "\
region 0x1000
block0:
  insn 0x1000, 2
  v0 = get rbx
  insn 0x1002, 2
  call cpuid
  set rcx, v0
  exit jump 0x1004
";
        let mut state = state_with(&[("rbx", 0x55)]);
        let (_, machine) = run(text, &mut state);
        assert_eq!(machine.helpers, [(Helper::Cpuid, 0x1002)]);
        assert_eq!(state.get(Reg::RBX), 0x1234);
        assert_eq!(state.gpr[1], 0x55);
    }

    #[test]
    fn flags_and_xmm_registers_through_get_and_set() {
        let text = "\
region 0x1000
block0:
  v0 = get rax
  v1 = trunc.i8 v0
  v2 = parity.i8 v1
  set pf, v2
  v3 = iconst.i64 0x0
  v4 = icmp.i64 eq v0, v3
  set zf, v4
  v5 = get xmm1
  set xmm2, v5
  v6 = get mxcsr
  v7 = zext.i64 v6
  set rdx, v7
  exit jump 0x0
";
        let mut state = state_with(&[("rax", 0x103), ("xmm1", u128::MAX - 1)]);
        run(text, &mut state);
        assert_eq!(state.flags[..4], [0, 1, 0, 0]);
        assert_eq!(state.xmm[2], u128::MAX - 1);
        assert_eq!(state.gpr[2], 0x1f80);
    }
}
