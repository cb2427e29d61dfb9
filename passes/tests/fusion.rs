//! `state-forward` + `cond-fusion` + `dead-flags` + `dce` on lifted code: a
//! flag-setting instruction followed by a conditional branch leaves one
//! compare of the original operands feeding the branch. (That the passes
//! keep the semantics is checked against the interpreter in
//! `host/tests/transforms.rs`.)

mod common;

use aarchx_ir::print::print;
use aarchx_ir::verify::verify;
use aarchx_ir::{Opcode, Region};
use aarchx_pass::{CpuLevel, MemoryModel, Pass, PassContext, TranslationConfig};
use aarchx_passes::cond_fusion::CondFusion;
use aarchx_passes::dce::Dce;
use aarchx_passes::dead_flags::DeadFlags;
use aarchx_passes::decode::Decode;
use aarchx_passes::state_forward::StateForward;
use common::{Bytes, BASE};
use iced_x86::code_asm::*;

/// Lifts `code` and runs the passes; returns the region.
fn optimise(code: Vec<u8>) -> Region {
    let config = TranslationConfig {
        memory_model: MemoryModel::Plain,
        tso_vector: false,
        cpu_level: CpuLevel::V3,
        superblocks: true,
    };
    let guest = Bytes(code);
    let context = PassContext { code: &guest, config: &config };
    let mut region = Region::new(BASE);
    Decode { max_insns: 16, follow: false }.run(&context, &mut region).unwrap();
    let passes: [&mut dyn Pass; 4] = [
        &mut StateForward,
        &mut CondFusion,
        &mut DeadFlags { lookahead: 16, abi_calls: false, indirect: true },
        &mut Dce,
    ];
    for p in passes {
        p.run(&context, &mut region).unwrap();
        verify(&region).unwrap_or_else(|e| panic!("{e}\n{}", print(&region)));
    }
    region
}

/// The text of the instruction defining the first block's branch condition.
fn branch_condition(region: &Region) -> String {
    let term = region.inst(*region.blocks[0].insts.last().unwrap());
    assert_eq!(term.op, Opcode::Brif, "{}", print(region));
    let cond = term.arg(0);
    let text = print(region);
    // The printer numbers values by position: find the condition's line.
    // (`get rbx` comes first: the lifter reads the source operand first.)
    let pos = region.blocks.iter().flat_map(|b| b.insts.iter()).position(|v| *v == cond).unwrap();
    let line = text.lines().filter(|l| l.starts_with("  ")).nth(pos).unwrap().trim().to_string();
    line
}

fn cmp_then(jcc: fn(&mut CodeAssembler) -> Result<(), IcedError>) -> Region {
    let mut a = CodeAssembler::new(64).unwrap();
    a.cmp(rax, rbx).unwrap();
    jcc(&mut a).unwrap();
    optimise(a.assemble(BASE).unwrap())
}

#[test]
fn cmp_and_jcc_become_one_compare() {
    let cases: [(fn(&mut CodeAssembler) -> Result<(), IcedError>, &str); 10] = [
        (|a| a.jl(0x4000), "slt"),
        (|a| a.jge(0x4000), "sge"),
        (|a| a.jle(0x4000), "sle"),
        (|a| a.jg(0x4000), "sgt"),
        (|a| a.jb(0x4000), "ult"),
        (|a| a.jae(0x4000), "uge"),
        (|a| a.jbe(0x4000), "ule"),
        (|a| a.ja(0x4000), "ugt"),
        (|a| a.je(0x4000), "eq"),
        (|a| a.jne(0x4000), "ne"),
    ];
    for (jcc, cond) in cases {
        let region = cmp_then(jcc);
        let line = branch_condition(&region);
        assert!(line.ends_with(&format!("= icmp.i64 {cond} v1, v0")), "{cond}: {line}\n{}", print(&region));
    }
}

#[test]
fn test_and_jle_become_one_compare_with_zero() {
    let mut a = CodeAssembler::new(64).unwrap();
    a.test(rcx, rcx).unwrap();
    a.jle(0x4000).unwrap();
    let region = optimise(a.assemble(BASE).unwrap());
    let line = branch_condition(&region);
    assert!(line.contains("= icmp.i64 sle v"), "{line}\n{}", print(&region));
}

#[test]
fn comisd_and_jbe_or_ja_become_one_float_compare() {
    // jbe: CF or ZF, that is b >= a or unordered; ja: its complement.
    for (ja, want) in [(false, "= fcmp.f64 nlt v"), (true, "= fcmp.f64 lt v")] {
        let mut a = CodeAssembler::new(64).unwrap();
        a.comisd(xmm0, xmm1).unwrap();
        if ja {
            a.ja(0x4000).unwrap();
        } else {
            a.jbe(0x4000).unwrap();
        }
        let region = optimise(a.assemble(BASE).unwrap());
        let line = branch_condition(&region);
        assert!(line.contains(want), "ja {ja}: {line}\n{}", print(&region));
    }
}

#[test]
fn flags_die_when_the_targets_overwrite_them() {
    // dec rcx; jnz back to the dec; add after it. Both exit targets write
    // every status flag before reading any (dec leaves CF alone, but the
    // jnz ends the walk... so the loop's own target keeps CF live, and dec
    // never sets CF): no flag write is left before the exits.
    let mut a = CodeAssembler::new(64).unwrap();
    let mut top = a.create_label();
    a.set_label(&mut top).unwrap();
    a.dec(rcx).unwrap();
    a.jnz(top).unwrap();
    a.add(rax, 1).unwrap();
    let region = optimise(a.assemble(BASE).unwrap());
    let text = print(&region);
    assert!(!text.contains("set cf") && !text.contains("set zf") && !text.contains("set of"), "{text}");
}
