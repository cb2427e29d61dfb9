//! The IR interpreter: the portable reference executor of the IR, which the
//! arm64 JIT is checked against. It runs a region's blocks from block0 on a
//! [`GuestState`] and a [`Machine`] until an exit or a trap, keeping every
//! value as raw bits in a `u128` masked to its type's width (i1 is 0 or 1).
//!
//! This module owns the driver: the value array, block order and the
//! terminators, guest state, memory and helper calls, and the dispatch of
//! each opcode to its family: `int` (integer lane ops), `float` (x86 SSE
//! floating point), `half` (the f16 conversions), `vector` (shape-changing
//! vector ops) and `crypto` (AES rounds, carry-less multiply), over the
//! lane helpers of `lanes`.
//!
//! A guest memory access that faults (see `crate::signal::probe`), by the
//! region or a helper it calls, stops the region at the faulting
//! instruction: the registers it had already set are put back, so the
//! state is the one before the instruction.

mod crypto;
mod float;
mod half;
mod lanes;
mod vector;

use aarchx_ir::eval as int;

use std::cell::Cell;

use aarchx_ir::cond::Helper;
use aarchx_ir::{ExitKind, FloatCond, GuestState, InstData, IntCond, Opcode, Reg, Region, RmwOp, TrapKind};

use crate::machine::{Machine, RegionExit};
use crate::signal::probe;

thread_local! {
    /// The value array of the last run on this thread, kept for its allocation.
    static SCRATCH: Cell<Vec<u128>> = const { Cell::new(Vec::new()) };
    /// The undo log of the last run on this thread, kept for its allocation.
    static UNDO: Cell<Vec<(Reg, u128)>> = const { Cell::new(Vec::new()) };
    /// Guest instructions this thread's interpreter has started (for the
    /// stats line: what share of a program ran interpreted).
    static INSNS: Cell<u64> = const { Cell::new(0) };
}

/// Guest instructions the interpreter has started on this thread: their
/// `insn` marks it reached.
pub fn insns_run() -> u64 {
    INSNS.get()
}

/// Runs `region` from block0 until it exits or traps. Loads and stores go
/// to `machine` in program order (the interpreter is sequentially
/// consistent). A syscall exit returns `Jump { kind: ExitKind::Syscall }`
/// with rip after the syscall; the caller performs it.
pub fn run_region<M: Machine>(region: &Region, state: &mut GuestState, machine: &mut M) -> RegionExit {
    let mut values = SCRATCH.take();
    values.clear();
    values.resize(region.insts.len(), 0);
    let mut undo = UNDO.take();
    let exit = run_blocks(region, state, machine, &mut values, &mut undo);
    SCRATCH.set(values);
    UNDO.set(undo);
    exit
}

/// Executes blocks from block0, following `jump` and `brif`, with `values`
/// indexed by arena index. `undo` logs the registers the current guest
/// instruction has set, with their old values.
fn run_blocks<M: Machine>(
    region: &Region,
    state: &mut GuestState,
    machine: &mut M,
    values: &mut [u128],
    undo: &mut Vec<(Reg, u128)>,
) -> RegionExit {
    let mut block = 0;
    undo.clear();
    // A fault some access outside a region left behind is not this one's.
    probe::take_fault();
    loop {
        let (last, body) = region.blocks[block].insts.split_last().expect("a block ends in a terminator");
        for &v in body {
            let d = region.inst(v);
            match d.op {
                Opcode::Insn => {
                    undo.clear();
                    INSNS.set(INSNS.get() + 1);
                }
                Opcode::Set => undo.push((d.reg(), state.get(d.reg()))),
                _ => {}
            }
            let mut env = float::Env::new(state.mxcsr);
            let result = eval(region, d, state, machine, values, &mut env);
            // An unmasked SSE exception: the instruction writes nothing,
            // its flags stay in MXCSR.
            if d.op.uses_mxcsr() && env.finish(&mut state.mxcsr) {
                put_back(state, undo);
                return RegionExit::Trap { kind: TrapKind::SimdFp };
            }
            // Helpers (x87) access guest memory through the machine too.
            if matches!(d.op, Opcode::Load | Opcode::Store | Opcode::AtomicRmw | Opcode::AtomicCas | Opcode::Call) {
                if let Some(fault) = probe::take_fault() {
                    put_back(state, undo);
                    return RegionExit::Fault { fault };
                }
            }
            values[v.index()] = result & region.value_type(v).mask();
        }
        let d = region.inst(*last);
        match d.op {
            Opcode::Jump => block = d.args[0] as usize,
            Opcode::Brif => block = d.args[if values[d.arg(0).index()] & 1 != 0 { 1 } else { 2 }] as usize,
            // No target cache here: always the path that computes the flags.
            Opcode::ProbeIndirect => block = d.args[1] as usize,
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

/// The result of an integer op of [`aarchx_ir::eval`]; the match in
/// [`eval`] hands it only the ops it computes.
fn int_op(result: Option<u128>) -> u128 {
    result.expect("an op the integer evaluator computes")
}

/// Puts back the registers the current guest instruction has set.
fn put_back(state: &mut GuestState, undo: &[(Reg, u128)]) {
    for &(reg, old) in undo.iter().rev() {
        state.set(reg, old);
    }
}

/// The result of one non-terminator instruction (0 for those that define
/// no value), before masking to its type. SSE float ops run under `env`.
fn eval<M: Machine>(
    region: &Region,
    d: &InstData,
    state: &mut GuestState,
    machine: &mut M,
    values: &[u128],
    env: &mut float::Env,
) -> u128 {
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
            // A compare-and-swap loop: atomic against other threads.
            let (addr, x) = (arg(0) as u64, arg(1));
            let op = RmwOp::from_u16(d.aux).expect("valid atomic op");
            let mut old = machine.load(addr, ty);
            loop {
                let new = match op {
                    RmwOp::Add => old.wrapping_add(x),
                    RmwOp::And => old & x,
                    RmwOp::Or => old | x,
                    RmwOp::Xor => old ^ x,
                    RmwOp::Xchg => x,
                };
                // A faulting access returns 0, so the loop ends by the
                // second try with the fault kept.
                let seen = machine.cas(addr, ty, old, new & ty.mask());
                if seen == old {
                    break old;
                }
                old = seen;
            }
        }
        Opcode::AtomicCas => machine.cas(arg(0) as u64, ty, arg(1), arg(2)),
        Opcode::Add
        | Opcode::Sub
        | Opcode::Mul
        | Opcode::Umulh
        | Opcode::Smulh
        | Opcode::Pdep
        | Opcode::Pext
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
        | Opcode::SubSatS => lanes::zip(ty, arg(0), arg(1), |bits, a, b| int_op(int::binary(d.op, bits, a, b))),
        // Each lane by its own amount.
        Opcode::Shl | Opcode::Lshr | Opcode::Ashr if arg_type(1).is_vector() => {
            lanes::zip(ty, arg(0), arg(1), |bits, a, b| int_op(int::binary(d.op, bits, a, b)))
        }
        // One scalar amount for every lane.
        Opcode::Shl | Opcode::Lshr | Opcode::Ashr | Opcode::Rotl | Opcode::Rotr => {
            lanes::map(ty, arg(0), |bits, a| int_op(int::binary(d.op, bits, a, arg(1))))
        }
        Opcode::Not | Opcode::Neg | Opcode::Clz | Opcode::Ctz | Opcode::Popcnt | Opcode::Bswap | Opcode::Parity => {
            lanes::map(ty, arg(0), |bits, a| int_op(int::unary(d.op, bits, a)))
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
        Opcode::ShuffleBytes => vector::shuffle_bytes(arg(0), arg(1)),
        Opcode::Crc32c => u128::from(int::crc32c(arg(0) as u32, arg(1) as u64, d.aux)),
        Opcode::AesEnc | Opcode::AesEncLast => crypto::encrypt_round(arg(0), arg(1), d.op == Opcode::AesEncLast),
        Opcode::AesDec | Opcode::AesDecLast => crypto::decrypt_round(arg(0), arg(1), d.op == Opcode::AesDecLast),
        Opcode::AesImc => crypto::inverse_mix_columns(arg(0)),
        Opcode::AesKeygen => crypto::keygen_assist(arg(0), d.aux),
        Opcode::Clmul => crypto::carryless_multiply(arg(0), arg(1), d.aux),
        Opcode::Fadd | Opcode::Fsub | Opcode::Fmul | Opcode::Fdiv | Opcode::Fmin | Opcode::Fmax => {
            lanes::zip(ty, arg(0), arg(1), |_, a, b| float::arith(env, d.op, float_lane, a, b))
        }
        Opcode::Fma => lanes::zip3(ty, [arg(0), arg(1), arg(2)], |i, abc| float::fma(env, float_lane, abc, d.aux, i)),
        Opcode::Fsqrt => lanes::map(ty, arg(0), |_, a| float::arith(env, d.op, float_lane, a, 0)),
        Opcode::Fround => lanes::map(ty, arg(0), |_, a| float::round(env, float_lane, a, d.aux)),
        Opcode::Fcmp => {
            let cond = FloatCond::from_u16(d.aux).expect("valid condition");
            lanes::zip(ty, arg(0), arg(1), |_, a, b| lanes::truth(ty, float::compare(env, cond, float_lane, a, b)))
        }
        Opcode::FcvtToSint => float::to_sint(env, ty, arg_type(0), arg(0), d.aux),
        Opcode::SintToF => float::from_sint(env, ty, arg_type(0), arg(0)),
        Opcode::Fconvert => float::convert(env, ty, arg(0)),
        Opcode::FcvtFromF16 => half::from_f16(env, arg(0)),
        Opcode::FcvtToF16 => half::to_f16(env, arg(0), d.aux),
        Opcode::Call => {
            machine.helper(Helper::from_u16(d.aux).expect("valid helper"), state);
            0
        }
        Opcode::Insn => {
            state.rip = d.imm64();
            0
        }
        Opcode::Dep => 0,
        Opcode::Count => {
            crate::counters::add(d.args[0], u64::from(d.args[1]));
            0
        }
        Opcode::Jump | Opcode::Brif | Opcode::Exit | Opcode::ExitIndirect | Opcode::ProbeIndirect | Opcode::Trap => {
            panic!("terminator {} before the end of its block", d.op)
        }
    }
}
