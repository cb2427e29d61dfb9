//! The integer semantics of the IR: ops on one lane of a given width (a
//! whole scalar is one lane): arithmetic, bitwise, shifts and rotates,
//! min/max, saturation, the bit counts, integer comparison and CRC-32C. Operands
//! arrive masked to the width; results may carry bits above it, which the
//! caller masks off.
//!
//! One definition, used by the interpreter (`host/src/interp`) and by
//! translation-time constant folding (the `const-fold` pass), so a folded
//! constant is the value the reference executor computes.

use crate::{IntCond, Opcode};

/// The low `bits` bits set.
/// `crc32c.i32 crc, data, bytes`: `crc` updated with the low `bytes`
/// bytes of `data`, bit by bit, lowest first (the reflected polynomial
/// 0x82f63b78).
pub fn crc32c(crc: u32, data: u64, bytes: u16) -> u32 {
    (0..u32::from(bytes) * 8).fold(crc, |c, i| {
        let bit = (c ^ (data >> i) as u32) & 1;
        (c >> 1) ^ if bit != 0 { 0x82f6_3b78 } else { 0 }
    })
}

pub fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1 << bits) - 1
    }
}

/// `x` sign-extended from `bits` bits.
pub fn sext(x: u128, bits: u32) -> i128 {
    let unused = 128 - bits;
    ((x << unused) as i128) >> unused
}

/// The binary integer op `op` on `a` and `b` of `bits` bits. For shifts and
/// rotates `b` is the amount, an unsigned number of any width. `None` for
/// an op that is not a binary integer op.
pub fn binary(op: Opcode, bits: u32, a: u128, b: u128) -> Option<u128> {
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let shift = u32::try_from(b).unwrap_or(u32::MAX);
    let rotate = (b % u128::from(bits)) as u32;
    Some(match op {
        Opcode::Add => a.wrapping_add(b),
        Opcode::Sub => a.wrapping_sub(b),
        Opcode::Mul => a.wrapping_mul(b),
        // The double-width product fits a u128 up to 64-bit operands; the
        // lifter emits no 128-bit high multiply.
        Opcode::Umulh if bits <= 64 => (a * b) >> bits,
        Opcode::Smulh if bits <= 64 => ((sa * sb) >> bits) as u128,
        Opcode::Umulh | Opcode::Smulh => 0,
        // A zero divisor or a signed overflow cannot reach here (the lifter
        // traps first); give 0 rather than panic.
        Opcode::Udiv => a.checked_div(b).unwrap_or(0),
        Opcode::Urem => a.checked_rem(b).unwrap_or(0),
        Opcode::Sdiv => sa.checked_div(sb).filter(|q| *q == sext(*q as u128, bits)).map_or(0, |q| q as u128),
        Opcode::Srem => sa.checked_rem(sb).map_or(0, |r| r as u128),
        Opcode::And => a & b,
        Opcode::Or => a | b,
        Opcode::Xor => a ^ b,
        Opcode::AndNot => a & !b,
        Opcode::Shl if shift < bits => a << shift,
        Opcode::Lshr if shift < bits => a >> shift,
        Opcode::Shl | Opcode::Lshr => 0,
        Opcode::Ashr => (sa >> shift.min(bits - 1)) as u128,
        Opcode::Rotl if rotate != 0 => (a << rotate) | (a >> (bits - rotate)),
        Opcode::Rotr if rotate != 0 => (a >> rotate) | (a << (bits - rotate)),
        Opcode::Rotl | Opcode::Rotr => a,
        Opcode::Umin => a.min(b),
        Opcode::Umax => a.max(b),
        Opcode::Smin => sa.min(sb) as u128,
        Opcode::Smax => sa.max(sb) as u128,
        // (a + b + 1) >> 1 without overflowing at 128 bits.
        Opcode::AvgU => (a >> 1) + (b >> 1) + ((a | b) & 1),
        Opcode::AddSatU => a.saturating_add(b).min(mask(bits)),
        Opcode::SubSatU => a.saturating_sub(b),
        Opcode::AddSatS => saturate_signed(sa.saturating_add(sb), bits),
        Opcode::SubSatS => saturate_signed(sa.saturating_sub(sb), bits),
        Opcode::Pdep => set_bits(b).enumerate().filter(|(k, _)| a >> k & 1 != 0).fold(0, |r, (_, i)| r | 1 << i),
        Opcode::Pext => set_bits(b).enumerate().filter(|(_, i)| a >> i & 1 != 0).fold(0, |r, (k, _)| r | 1 << k),
        _ => return None,
    })
}

/// The positions of the set bits of `x`, lowest first.
fn set_bits(x: u128) -> impl Iterator<Item = u32> {
    (0..128).filter(move |i| x >> i & 1 != 0)
}

/// The unary integer op `op` on `a` of `bits` bits; `None` for an op that
/// is not a unary integer op.
pub fn unary(op: Opcode, bits: u32, a: u128) -> Option<u128> {
    Some(match op {
        Opcode::Not => !a,
        Opcode::Neg => a.wrapping_neg(),
        // The width for zero falls out: 128 leading zeros in the container.
        Opcode::Clz => u128::from(a.leading_zeros() - (128 - bits)),
        Opcode::Ctz => u128::from(a.trailing_zeros().min(bits)),
        Opcode::Popcnt => u128::from(a.count_ones()),
        Opcode::Bswap => a.swap_bytes() >> (128 - bits),
        Opcode::Parity => u128::from((a as u8).count_ones().is_multiple_of(2)),
        _ => return None,
    })
}

/// `a COND b` for integers of `bits` bits.
pub fn compare(cond: IntCond, bits: u32, a: u128, b: u128) -> bool {
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    match cond {
        IntCond::Eq => a == b,
        IntCond::Ne => a != b,
        IntCond::Ult => a < b,
        IntCond::Ule => a <= b,
        IntCond::Ugt => a > b,
        IntCond::Uge => a >= b,
        IntCond::Slt => sa < sb,
        IntCond::Sle => sa <= sb,
        IntCond::Sgt => sa > sb,
        IntCond::Sge => sa >= sb,
    }
}

/// `x` clamped to the signed range of `bits` bits.
pub fn saturate_signed(x: i128, bits: u32) -> u128 {
    let max = mask(bits - 1) as i128;
    x.clamp(-max - 1, max) as u128
}
