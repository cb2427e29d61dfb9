//! The AES round ops and the carry-less multiply, on published values:
//! FIPS-197's appendix A.1 (key expansion) and appendix B (the first
//! round of its cipher example), and carry-less products worked by hand.

use super::eval;

/// A 128-bit value from its 16 bytes in memory order, as FIPS-197 prints
/// a state column by column.
fn bytes(hex: &str) -> u128 {
    let b: Vec<u8> = (0..16).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex")).collect();
    u128::from_le_bytes(b.try_into().expect("16 bytes"))
}

fn binary(op: &str, a: u128, b: u128) -> u128 {
    eval(&[("xmm0", a), ("xmm1", b)], &format!("v0 = get xmm0\n v1 = get xmm1\n v2 = {op} v0, v1"))
}

fn unary(op: &str, a: u128) -> u128 {
    eval(&[("xmm0", a)], &format!("v0 = get xmm0\n v1 = {op} v0"))
}

#[test]
fn an_encryption_round_is_fips_197_round_one() {
    // Appendix B: the state at the start of round 1, round key 1, and the
    // state at the start of round 2.
    let state = bytes("193de3bea0f4e22b9ac68d2ae9f84808");
    let key = bytes("a0fafe1788542cb123a339392a6c7605");
    assert_eq!(binary("aes_enc.i8x16", state, key), bytes("a49c7ff2689f352b6b5bea43026a5049"));
}

#[test]
fn the_last_rounds_undo_each_other() {
    // aesdeclast(aesenclast(s, 0), 0) = s: InvSubBytes and InvShiftRows
    // undo SubBytes and ShiftRows.
    let s = bytes("00112233445566778899aabbccddeeff");
    let enc = binary("aes_enc_last.i8x16", s, 0);
    assert_ne!(enc, s);
    assert_eq!(binary("aes_dec_last.i8x16", enc, 0), s);
}

#[test]
fn keygen_assist_is_fips_197_key_expansion() {
    // Appendix A.1, i = 4: w3 = 09cf4f3c; RotWord(SubWord(w3)) = 8a84eb01
    // before the round constant 01 (SubWord(w3) = 018a84eb). Dwords 1 and
    // 3 are the sources; w1 = 28aed2a6 gives SubWord 34e4b524 (each byte
    // through the S-box: 28 -> 34, ae -> e4, d2 -> b5, a6 -> 24).
    let key = bytes("2b7e151628aed2a6abf7158809cf4f3c");
    let out = eval(&[("xmm0", key)], "v0 = get xmm0\n v1 = aes_keygen.i8x16 v0, 1");
    assert_eq!(out, bytes("34e4b524e5b52434018a84eb8b84eb01"));
}

#[test]
fn inverse_mix_columns_of_a_uniform_column_is_itself() {
    // A column of equal bytes b maps to (14^11^13^9)·b = b.
    let v = bytes("5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a");
    assert_eq!(unary("aes_imc.i8x16", v), v);
}

#[test]
fn clmul_picks_halves_and_multiplies_without_carries() {
    let a = 3u128 << 64 | 1;
    let b = 3u128 << 64 | 7;
    let clmul = |imm: u32| {
        eval(&[("xmm0", a), ("xmm1", b)], &format!("v0 = get xmm0\n v1 = get xmm1\n v2 = clmul.i64x2 v0, v1, {imm}"))
    };
    // (x+1)(x+1) = x^2+1; 1·(x^2+x+1); (x+1)(x^2+x+1) = x^3+1; 1·(x+1).
    assert_eq!(clmul(0x11), 5);
    assert_eq!(clmul(0x00), 7);
    assert_eq!(clmul(0x01), 9);
    assert_eq!(clmul(0x10), 3);
    // The top bit times x reaches bit 64.
    let top = eval(&[("xmm0", 1 << 63), ("xmm1", 2)], "v0 = get xmm0\n v1 = get xmm1\n v2 = clmul.i64x2 v0, v1, 0");
    assert_eq!(top, 1 << 64);
}
