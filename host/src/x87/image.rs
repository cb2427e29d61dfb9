//! The x87 state in memory: 80-bit values, the 28-byte environment of
//! fnstenv/fldenv, and the x87 part of the fxsave image (control, status
//! and abridged tag words at 0-4, the registers in stack order at 32).
//! The last-instruction and last-operand pointers and the opcode are not
//! modelled: they are stored as zero.

use aarchx_ir::{GuestState, Type};

use super::value::{classify, Class, F80};
use crate::machine::Machine;

pub fn load_f80(mem: &mut dyn Machine, addr: u64) -> F80 {
    let lo = mem.load(addr, Type::I64);
    let hi = mem.load(addr.wrapping_add(8), Type::I16);
    hi << 64 | lo
}

pub fn store_f80(mem: &mut dyn Machine, addr: u64, v: F80) {
    mem.store(addr, Type::I64, v & u128::from(u64::MAX));
    mem.store(addr.wrapping_add(8), Type::I16, v >> 64);
}

fn top(s: &GuestState) -> usize {
    usize::from(s.fpsw >> 11 & 7)
}

/// The full tag word: two bits per physical register, 00 valid, 01
/// zero, 10 special (NaN, infinity, denormal, unsupported), 11 empty.
fn full_tags(s: &GuestState) -> u16 {
    (0..8).fold(0, |acc, p| {
        let tag = if s.fptag & (1 << p) == 0 {
            3
        } else {
            match classify(s.st[p]) {
                Class::Normal => 0,
                Class::Zero => 1,
                _ => 2,
            }
        };
        acc | tag << (2 * p)
    })
}

/// fnstenv (32-bit layout, the one 64-bit mode uses): control, status
/// and tag words with their reserved upper halves set, then the pointer
/// fields; afterwards every exception is masked.
pub fn store_env(s: &mut GuestState, mem: &mut dyn Machine, addr: u64) {
    let words =
        [0xffff_0000 | u32::from(s.fpcw), 0xffff_0000 | u32::from(s.fpsw), 0xffff_0000 | u32::from(full_tags(s))];
    for (i, w) in words.into_iter().enumerate() {
        mem.store(addr + 4 * i as u64, Type::I32, u128::from(w));
    }
    for off in [12, 16, 20] {
        mem.store(addr + off, Type::I32, 0);
    }
    mem.store(addr + 24, Type::I32, 0xffff_0000);
    s.fpcw |= 0x3f;
}

/// fldenv: control and status words, and which registers are empty.
pub fn load_env(s: &mut GuestState, mem: &mut dyn Machine, addr: u64) {
    s.fpcw = mem.load(addr, Type::I16) as u16;
    s.fpsw = mem.load(addr + 4, Type::I16) as u16;
    let tags = mem.load(addr + 8, Type::I16) as u16;
    s.fptag = (0..8).fold(0, |acc, p| acc | u8::from(tags >> (2 * p) & 3 != 3) << p);
}

/// fxsave's x87 part: bytes 0-23 and the eight 16-byte register slots at 32.
pub fn save(s: &mut GuestState, mem: &mut dyn Machine, addr: u64) {
    mem.store(addr, Type::I16, u128::from(s.fpcw));
    mem.store(addr + 2, Type::I16, u128::from(s.fpsw));
    mem.store(addr + 4, Type::I16, u128::from(s.fptag));
    mem.store(addr + 6, Type::I16, 0);
    mem.store(addr + 8, Type::I64, 0);
    mem.store(addr + 16, Type::I64, 0);
    for i in 0..8 {
        let slot = addr + 32 + 16 * i as u64;
        store_f80(mem, slot, s.st[(top(s) + i) & 7]);
        mem.store(slot + 10, Type::I16, 0);
        mem.store(slot + 12, Type::I32, 0);
    }
}

/// fxrstor's x87 part.
pub fn restore(s: &mut GuestState, mem: &mut dyn Machine, addr: u64) {
    s.fpcw = mem.load(addr, Type::I16) as u16;
    s.fpsw = mem.load(addr + 2, Type::I16) as u16;
    s.fptag = mem.load(addr + 4, Type::I8) as u8;
    for i in 0..8 {
        let p = (top(s) + i) & 7;
        s.st[p] = load_f80(mem, addr + 32 + 16 * i as u64);
    }
}
