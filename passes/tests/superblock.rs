//! The `decode` pass's superblocks (`follow`): which guest instructions a
//! region holds and how it leaves, for direct jumps, calls and returns.
//! The expected addresses are the assembler's labels, not the pass's
//! output. (That superblocks run like the code they come from is checked
//! by the guest programs against native runs, `host/tests/guests.rs`.)

mod common;

use aarchx_ir::verify::verify;
use aarchx_ir::{ExitKind, Opcode, Region};
use aarchx_pass::{CpuLevel, MemoryModel, Pass, PassContext, TranslationConfig};
use aarchx_passes::decode::Decode;
use common::{Bytes, BASE};
use iced_x86::code_asm::*;
use iced_x86::BlockEncoderOptions;

/// Assembles `build` at `BASE`; returns the bytes and each label's address.
fn assemble(
    build: impl FnOnce(&mut CodeAssembler, &mut Vec<CodeLabel>) -> Result<(), IcedError>,
) -> (Vec<u8>, Vec<u64>) {
    let mut a = CodeAssembler::new(64).unwrap();
    let mut labels = Vec::new();
    build(&mut a, &mut labels).unwrap();
    let result = a.assemble_options(BASE, BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS).unwrap();
    let addrs = labels.iter().map(|l| result.label_ip(l).unwrap()).collect();
    (result.inner.code_buffer, addrs)
}

fn decode(code: Vec<u8>, follow: bool) -> Region {
    let config = TranslationConfig {
        memory_model: MemoryModel::Plain,
        tso_vector: false,
        cpu_level: CpuLevel::V3,
        superblocks: true,
    };
    let guest = Bytes(code);
    let context = PassContext { code: &guest, config: &config };
    let mut region = Region::new(BASE);
    Decode { max_insns: 64, follow }.run(&context, &mut region).unwrap();
    verify(&region).unwrap();
    region
}

/// Addresses of the region's guest instructions, in block order.
fn insns(r: &Region) -> Vec<u64> {
    r.guest_insns().map(|(a, _)| a).collect()
}

/// The region's exits: (kind, direct target or None for an indirect one).
fn exits(r: &Region) -> Vec<(ExitKind, Option<u64>)> {
    r.blocks
        .iter()
        .filter_map(|b| b.insts.last())
        .map(|v| r.inst(*v))
        .filter_map(|d| match d.op {
            Opcode::Exit => Some((ExitKind::from_u16(d.aux).unwrap(), Some(d.imm64()))),
            Opcode::ExitIndirect => Some((ExitKind::from_u16(d.aux).unwrap(), None)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_call_and_its_return_stay_in_the_region() {
    // top: call f; after: add rax, 1; jcc: jne top; fall: int3
    // f: mov rax, 5; ret: ret
    let (code, l) = assemble(|a, l| {
        let mut f = a.create_label();
        let mut top = a.create_label();
        let mut after = a.create_label();
        let mut jcc = a.create_label();
        let mut fall = a.create_label();
        let mut ret = a.create_label();
        a.set_label(&mut top)?;
        a.call(f)?;
        a.set_label(&mut after)?;
        a.add(rax, 1)?;
        a.set_label(&mut jcc)?;
        a.jne(top)?;
        a.set_label(&mut fall)?;
        a.int3()?;
        a.set_label(&mut f)?;
        a.mov(rax, 5u64)?;
        a.set_label(&mut ret)?;
        a.ret()?;
        l.extend([top, after, jcc, fall, f, ret]);
        Ok(())
    });
    let (top, after, jcc, fall, f, ret) = (l[0], l[1], l[2], l[3], l[4], l[5]);
    let r = decode(code.clone(), true);
    assert_eq!(insns(&r), [top, f, ret, after, jcc, fall]);
    // The return is checked: a mismatch leaves indirectly; the branch
    // leaves for its target, and decoding goes on at its fall-through
    // (the int3, a trap).
    let mut got = exits(&r);
    got.sort_by_key(|e| (e.1, e.0 as u16));
    let mut want = vec![(ExitKind::Ret, None), (ExitKind::Jump, Some(top))];
    want.sort_by_key(|e| (e.1, e.0 as u16));
    assert_eq!(got, want);

    // Without follow the call ends the region.
    let r = decode(code, false);
    assert_eq!(insns(&r), [top]);
    assert_eq!(exits(&r), [(ExitKind::Call, Some(f))]);
}

#[test]
fn a_jump_is_followed_once_and_a_loop_back_exits() {
    // l0: jmp l1; int3; l1: inc rax; l2: jmp l0
    let (code, l) = assemble(|a, l| {
        let mut top = a.create_label();
        let mut next = a.create_label();
        let mut back = a.create_label();
        a.set_label(&mut top)?;
        a.jmp(next)?;
        a.int3()?;
        a.set_label(&mut next)?;
        a.inc(rax)?;
        a.set_label(&mut back)?;
        a.jmp(top)?;
        l.extend([top, next, back]);
        Ok(())
    });
    let r = decode(code, true);
    assert_eq!(insns(&r), [l[0], l[1], l[2]]);
    assert_eq!(exits(&r), [(ExitKind::Jump, Some(l[0]))]);
}

#[test]
fn an_unreadable_target_is_not_followed() {
    let (code, l) = assemble(|a, l| {
        let mut top = a.create_label();
        a.set_label(&mut top)?;
        a.call(0x10_0000u64)?;
        l.push(top);
        Ok(())
    });
    let r = decode(code, true);
    assert_eq!(insns(&r), [l[0]]);
    assert_eq!(exits(&r), [(ExitKind::Call, Some(0x10_0000))]);
}

#[test]
fn a_ret_without_a_followed_call_leaves_the_region() {
    let (code, _) = assemble(|a, _| {
        a.mov(rax, 1u64)?;
        a.ret()?;
        Ok(())
    });
    let r = decode(code, true);
    assert_eq!(exits(&r), [(ExitKind::Ret, None)]);
}
