//! Integer ops on one lane of a given width (a whole scalar is one lane):
//! arithmetic, bitwise, shifts and rotates, min/max, saturation, the bit
//! counts and integer comparison. Operands arrive masked to the width;
//! results may carry bits above it, which the lane drivers mask off.

use aarchx_ir::{IntCond, Opcode};

use super::lanes::{mask, sext};

/// The binary integer op `op` on `a` and `b` of `bits` bits. For shifts and
/// rotates `b` is the amount, an unsigned number of any width.
pub fn binary(op: Opcode, bits: u32, a: u128, b: u128) -> u128 {
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let shift = u32::try_from(b).unwrap_or(u32::MAX);
    let rotate = (b % u128::from(bits)) as u32;
    match op {
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
        _ => unreachable!("{op} is not a binary integer op"),
    }
}

/// The unary integer op `op` on `a` of `bits` bits.
pub fn unary(op: Opcode, bits: u32, a: u128) -> u128 {
    match op {
        Opcode::Not => !a,
        Opcode::Neg => a.wrapping_neg(),
        // The width for zero falls out: 128 leading zeros in the container.
        Opcode::Clz => u128::from(a.leading_zeros() - (128 - bits)),
        Opcode::Ctz => u128::from(a.trailing_zeros().min(bits)),
        Opcode::Popcnt => u128::from(a.count_ones()),
        Opcode::Bswap => a.swap_bytes() >> (128 - bits),
        Opcode::Parity => u128::from((a as u8).count_ones().is_multiple_of(2)),
        _ => unreachable!("{op} is not a unary integer op"),
    }
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

#[cfg(test)]
mod tests {
    use crate::interp::testing::eval;

    /// `OP.i8 rax, rcx` on the low bytes of the two registers.
    fn op8(op: &str, a: u128, b: u128) -> u128 {
        eval(
            &[("rax", a), ("rcx", b)],
            &format!("v0 = get rax\n v1 = get rcx\n v2 = trunc.i8 v0\n v3 = trunc.i8 v1\n v4 = {op}.i8 v2, v3"),
        )
    }

    /// `OP.i64 rax, rcx`.
    fn op64(op: &str, a: u128, b: u128) -> u128 {
        eval(&[("rax", a), ("rcx", b)], &format!("v0 = get rax\n v1 = get rcx\n v2 = {op}.i64 v0, v1"))
    }

    /// `OP.i32 rax` on the low half of the register.
    fn unary32(op: &str, a: u128) -> u128 {
        eval(&[("rax", a)], &format!("v0 = get rax\n v1 = trunc.i32 v0\n v2 = {op}.i32 v1"))
    }

    #[test]
    fn arithmetic_wraps_at_the_width() {
        assert_eq!(op8("add", 0xff, 0x02), 0x01);
        assert_eq!(op8("sub", 0x00, 0x01), 0xff);
        assert_eq!(op8("mul", 0x10, 0x11), 0x10);
        assert_eq!(op64("add", u64::MAX.into(), 1), 0);
        assert_eq!(unary32("neg", 1), 0xffff_ffff);
        assert_eq!(unary32("not", 0x0f0f_0f0f), 0xf0f0_f0f0);
    }

    #[test]
    fn shifts_past_the_width() {
        assert_eq!(op8("shl", 0x81, 1), 0x02);
        assert_eq!(op8("shl", 0x81, 8), 0x00);
        assert_eq!(op8("lshr", 0x80, 7), 0x01);
        assert_eq!(op8("lshr", 0x80, 8), 0x00);
        assert_eq!(op8("ashr", 0x80, 3), 0xf0);
        assert_eq!(op8("ashr", 0x80, 200), 0xff);
        assert_eq!(op8("ashr", 0x40, 200), 0x00);
        assert_eq!(op64("shl", 1, 63), 0x8000_0000_0000_0000);
        assert_eq!(op64("shl", 1, 64), 0);
        // The amount is unsigned: a huge one is past the width, not negative.
        assert_eq!(op64("lshr", 0x8000_0000_0000_0000, u64::MAX.into()), 0);
        assert_eq!(op64("ashr", 0x8000_0000_0000_0000, 63), u64::MAX.into());
    }

    #[test]
    fn shift_amount_of_another_type() {
        let r = eval(
            &[("rax", 0x1234), ("rcx", 4)],
            "v0 = get rax\n v1 = get rcx\n v2 = trunc.i8 v1\n v3 = shl.i64 v0, v2",
        );
        assert_eq!(r, 0x12340);
    }

    #[test]
    fn rotates_modulo_the_width() {
        assert_eq!(op8("rotl", 0x81, 1), 0x03);
        assert_eq!(op8("rotl", 0x81, 9), 0x03);
        assert_eq!(op8("rotr", 0x81, 1), 0xc0);
        assert_eq!(op8("rotr", 0x81, 8), 0x81);
        assert_eq!(op64("rotr", 1, 1), 0x8000_0000_0000_0000);
        assert_eq!(op64("rotl", 1, 0x1_0000_0001), 2);
    }

    #[test]
    fn division_signed_and_unsigned() {
        assert_eq!(op8("udiv", 0xfe, 0x02), 0x7f);
        assert_eq!(op8("sdiv", 0xfe, 0x02), 0xff); // -2 / 2 = -1
        assert_eq!(op8("sdiv", 0xf9, 0x02), 0xfd); // -7 / 2 = -3 (toward zero)
        assert_eq!(op8("srem", 0xf9, 0x02), 0xff); // -7 % 2 = -1
        assert_eq!(op8("urem", 0xf9, 0x02), 0x01);
        // Impossible after the lifter's checks, but no panic.
        assert_eq!(op8("udiv", 5, 0), 0);
        assert_eq!(op8("sdiv", 0x80, 0xff), 0);
    }

    #[test]
    fn high_multiplies() {
        assert_eq!(op64("umulh", u64::MAX.into(), u64::MAX.into()), 0xffff_ffff_ffff_fffe);
        assert_eq!(op64("smulh", u64::MAX.into(), u64::MAX.into()), 0); // -1 * -1 = 1
        assert_eq!(op64("smulh", u64::MAX.into(), 2), u64::MAX.into()); // -1 * 2 = -2
        assert_eq!(op8("umulh", 0x80, 0x04), 0x02);
        assert_eq!(op8("smulh", 0x80, 0x04), 0xfe); // -128 * 4 = -512 = 0xfe00
    }

    #[test]
    fn bit_counts() {
        assert_eq!(unary32("clz", 0), 32);
        assert_eq!(unary32("clz", 1), 31);
        assert_eq!(unary32("clz", 0x8000_0000), 0);
        assert_eq!(unary32("ctz", 0), 32);
        assert_eq!(unary32("ctz", 0x100), 8);
        assert_eq!(unary32("popcnt", 0xf0f0_0001), 9);
        assert_eq!(unary32("bswap", 0x1122_3344), 0x4433_2211);
    }

    #[test]
    fn parity_of_the_low_byte() {
        let parity = |x| eval(&[("rax", x)], "v0 = get rax\n v1 = parity.i64 v0");
        assert_eq!(parity(0), 1);
        assert_eq!(parity(0x03), 1);
        assert_eq!(parity(0x07), 0);
        assert_eq!(parity(0x0100), 1); // only the low byte counts
        assert_eq!(parity(0xfe), 0);
    }

    #[test]
    fn min_max_and_saturation() {
        assert_eq!(op8("umin", 0x80, 0x7f), 0x7f);
        assert_eq!(op8("smin", 0x80, 0x7f), 0x80);
        assert_eq!(op8("umax", 0x80, 0x7f), 0x80);
        assert_eq!(op8("smax", 0x80, 0x7f), 0x7f);
        assert_eq!(op8("avg_u", 0xff, 0xfe), 0xff);
        assert_eq!(op8("avg_u", 0x01, 0x02), 0x02);
        assert_eq!(op8("add_sat_u", 0xf0, 0x20), 0xff);
        assert_eq!(op8("sub_sat_u", 0x10, 0x20), 0x00);
        assert_eq!(op8("add_sat_s", 0x70, 0x20), 0x7f);
        assert_eq!(op8("add_sat_s", 0x90, 0xe0), 0x80);
        assert_eq!(op8("sub_sat_s", 0x90, 0x20), 0x80);
        assert_eq!(op8("sub_sat_s", 0x70, 0xe0), 0x7f);
        assert_eq!(op8("add_sat_s", 0x10, 0xf0), 0x00);
    }

    #[test]
    fn compares_signed_and_unsigned() {
        let cmp = |cond: &str, a, b| {
            eval(
                &[("rax", a), ("rcx", b)],
                &format!(
                    "v0 = get rax\n v1 = get rcx\n v2 = trunc.i16 v0\n v3 = trunc.i16 v1\n v4 = icmp.i16 {cond} v2, v3"
                ),
            )
        };
        assert_eq!(cmp("ult", 0x0001, 0xffff), 1);
        assert_eq!(cmp("slt", 0x0001, 0xffff), 0);
        assert_eq!(cmp("sgt", 0x0001, 0xffff), 1);
        assert_eq!(cmp("uge", 0xffff, 0xffff), 1);
        assert_eq!(cmp("sle", 0x8000, 0x7fff), 1);
        assert_eq!(cmp("eq", 0x1_0005, 0x5), 1); // compared at 16 bits
        assert_eq!(cmp("ne", 0x5, 0x5), 0);
        assert_eq!(cmp("ugt", 0x8000, 0x7fff), 1);
        assert_eq!(cmp("ule", 0x8000, 0x7fff), 0);
        assert_eq!(cmp("sge", 0x8000, 0x7fff), 0);
    }

    #[test]
    fn widths_change() {
        let r = eval(&[("rax", 0x80)], "v0 = get rax\n v1 = trunc.i8 v0\n v2 = sext.i64 v1");
        assert_eq!(r, 0xffff_ffff_ffff_ff80);
        let r = eval(&[("rax", 0x1_8000_0080)], "v0 = get rax\n v1 = trunc.i32 v0\n v2 = zext.i64 v1");
        assert_eq!(r, 0x8000_0080);
        let r = eval(&[("rax", 0xffff_ffff_ffff_ff7f)], "v0 = get rax\n v1 = trunc.i8 v0\n v2 = sext.i16 v1");
        assert_eq!(r, 0x007f);
        let r = eval(
            &[("rax", 0x1111_2222_3333_4444), ("rcx", 0x5555_6666_7777_8888)],
            "v0 = get rax\n v1 = get rcx\n v2 = concat.i128 v0, v1",
        );
        assert_eq!(r, 0x1111_2222_3333_4444_5555_6666_7777_8888);
        let r = eval(&[("rax", 0xabcd)], "v0 = get rax\n v1 = trunc.i8 v0\n v2 = trunc.i8 v0\n v3 = concat.i16 v1, v2");
        assert_eq!(r, 0xcdcd);
        let r = eval(
            &[("rax", 0x8000_0000_0000_0001), ("rcx", 64)],
            "v0 = get rax\n v1 = get rcx\n v2 = sext.i128 v0\n v3 = lshr.i128 v2, v1\n v4 = trunc.i64 v3",
        );
        assert_eq!(r, 0xffff_ffff_ffff_ffff);
    }

    #[test]
    fn select_picks_by_the_condition() {
        let body = "v0 = get rax\n v1 = get rcx\n v2 = get zf\n v3 = select.i64 v2, v0, v1";
        assert_eq!(eval(&[("rax", 1), ("rcx", 2), ("zf", 1)], body), 1);
        assert_eq!(eval(&[("rax", 1), ("rcx", 2), ("zf", 0)], body), 2);
    }
}

#[cfg(test)]
mod vector_tests {
    use crate::interp::testing::{eval, pack, vop};

    /// `OP xmm0, rcx`: a shift by a scalar amount.
    fn shift(op: &str, a: u128, amount: u128) -> u128 {
        eval(&[("xmm0", a), ("rcx", amount)], &format!("v0 = get xmm0\n v1 = get rcx\n v2 = {op} v0, v1"))
    }

    fn bytes(low: [u128; 4]) -> u128 {
        pack(8, [low[0], low[1], low[2], low[3], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    }

    #[test]
    fn byte_lanes_wrap_saturate_and_compare() {
        let (a, b) = (bytes([0xff, 0x7f, 0x80, 0x10]), bytes([0x01, 0x01, 0x80, 0x20]));
        assert_eq!(vop("add.i8x16", &[a, b]), bytes([0x00, 0x80, 0x00, 0x30]));
        assert_eq!(vop("add_sat_u.i8x16", &[a, b]), bytes([0xff, 0x80, 0xff, 0x30]));
        assert_eq!(vop("add_sat_s.i8x16", &[a, b]), bytes([0x00, 0x7f, 0x80, 0x30]));
        assert_eq!(vop("sub_sat_u.i8x16", &[a, b]), bytes([0xfe, 0x7e, 0x00, 0x00]));
        assert_eq!(vop("avg_u.i8x16", &[a, b]), bytes([0x80, 0x40, 0x80, 0x18]));
        assert_eq!(
            vop("icmp.i8x16 eq", &[a, b]),
            pack(8, [0, 0, 0xff, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
        );
        assert_eq!(vop("icmp.i8x16 sgt", &[a, b]), bytes([0, 0xff, 0, 0]));
        assert_eq!(vop("icmp.i8x16 ugt", &[a, b]), bytes([0xff, 0xff, 0, 0]));
    }

    #[test]
    fn word_lanes_multiply_and_shift() {
        let a = pack(16, [0xffff, 0x8000, 0x0100, 3, 0, 0, 0, 0]);
        let b = pack(16, [0xffff, 2, 0x0100, 0xfffe, 0, 0, 0, 0]);
        assert_eq!(vop("mul.i16x8", &[a, b]), pack(16, [1, 0, 0, 0xfffa, 0, 0, 0, 0]));
        assert_eq!(vop("umulh.i16x8", &[a, b]), pack(16, [0xfffe, 1, 1, 2, 0, 0, 0, 0]));
        assert_eq!(vop("smulh.i16x8", &[a, b]), pack(16, [0, 0xffff, 1, 0xffff, 0, 0, 0, 0]));
        assert_eq!(vop("smin.i16x8", &[a, b]), pack(16, [0xffff, 0x8000, 0x0100, 0xfffe, 0, 0, 0, 0]));
        assert_eq!(vop("umax.i16x8", &[a, b]), pack(16, [0xffff, 0x8000, 0x0100, 0xfffe, 0, 0, 0, 0]));
        let v = pack(16, [0x8001, 0x7fff, 1, 0xffff, 0, 0, 0, 0]);
        assert_eq!(shift("shl.i16x8", v, 1), pack(16, [0x0002, 0xfffe, 2, 0xfffe, 0, 0, 0, 0]));
        assert_eq!(shift("shl.i16x8", v, 16), 0);
        assert_eq!(shift("lshr.i16x8", v, 15), pack(16, [1, 0, 0, 1, 0, 0, 0, 0]));
        assert_eq!(shift("ashr.i16x8", v, 20), pack(16, [0xffff, 0, 0, 0xffff, 0, 0, 0, 0]));
        assert_eq!(shift("ashr.i16x8", v, 1), pack(16, [0xc000, 0x3fff, 0, 0xffff, 0, 0, 0, 0]));
    }

    #[test]
    fn wide_lanes_do_not_carry() {
        let (a, b) = (pack(64, [u64::MAX.into(), 1]), pack(64, [1, 1]));
        assert_eq!(vop("add.v128", &[a, b]), pack(64, [0, 2]));
        assert_eq!(vop("sub.i64x2", &[b, a]), pack(64, [2, 0]));
        assert_eq!(vop("and_not.v128", &[a, b]), pack(64, [0xffff_ffff_ffff_fffe, 0]));
        assert_eq!(vop("icmp.i32x4 slt", &[pack(32, [0xffff_ffff, 1, 2, 3]), 0]), pack(32, [0xffff_ffff, 0, 0, 0]));
        assert_eq!(vop("neg.i32x4", &[pack(32, [1, 0, 0xffff_ffff, 5])]), pack(32, [0xffff_ffff, 0, 1, 0xffff_fffb]));
        assert_eq!(vop("not.v128", &[0]), u128::MAX);
    }
}
