//! The AES round ops and the carry-less multiply (AES-NI and PCLMULQDQ):
//! their semantics written from FIPS-197 on the x86 byte layout (byte i
//! of the 128-bit value is state row `i % 4`, column `i / 4`), and checked
//! against the CPU by the oracle. Written here rather than taken from a
//! crate: the `aes` crate's round functions cover neither the last rounds
//! nor the key-expansion assist, and these are a few lines each.

/// The AES S-box, computed from its definition: the multiplicative
/// inverse in GF(2^8) (0 for 0), then the affine transform.
const SBOX: [u8; 256] = {
    let mut sbox = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        // x^254 is x's inverse (x^255 = 1 for x != 0; 0 stays 0).
        let mut inv = 1u8;
        let mut k = 0;
        while k < 254 {
            inv = gf_mul(inv, x as u8);
            k += 1;
        }
        let b = if x == 0 { 0 } else { inv };
        sbox[x] = b ^ b.rotate_left(1) ^ b.rotate_left(2) ^ b.rotate_left(3) ^ b.rotate_left(4) ^ 0x63;
        x += 1;
    }
    sbox
};

/// The inverse S-box.
const INV_SBOX: [u8; 256] = {
    let mut inv = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        inv[SBOX[x] as usize] = x as u8;
        x += 1;
    }
    inv
};

/// Product in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1.
const fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= 0x1b;
        }
        b >>= 1;
    }
    p
}

fn bytes(v: u128) -> [u8; 16] {
    v.to_le_bytes()
}

fn value(b: [u8; 16]) -> u128 {
    u128::from_le_bytes(b)
}

/// ShiftRows (row r rotated left by r columns), or its inverse.
fn shift_rows(s: [u8; 16], inverse: bool) -> [u8; 16] {
    core::array::from_fn(|i| {
        let (row, col) = (i % 4, i / 4);
        let from = if inverse { (col + 4 - row) % 4 } else { (col + row) % 4 };
        s[row + 4 * from]
    })
}

fn sub_bytes(s: [u8; 16], table: &[u8; 256]) -> [u8; 16] {
    s.map(|b| table[usize::from(b)])
}

/// Each column multiplied by the circulant matrix whose first row is
/// `coef` (MixColumns: 2 3 1 1; InvMixColumns: 14 11 13 9).
fn mix_columns(s: [u8; 16], coef: [u8; 4]) -> [u8; 16] {
    core::array::from_fn(|i| {
        let (row, col) = (i % 4, i / 4);
        (0..4).fold(0, |acc, k| acc ^ gf_mul(coef[(k + 4 - row) % 4], s[k + 4 * col]))
    })
}

const MIX: [u8; 4] = [2, 3, 1, 1];
const INV_MIX: [u8; 4] = [14, 11, 13, 9];

/// `aes_enc`, `aes_enc_last`: a round of the cipher on `state`, then the
/// round key XORed in.
pub fn encrypt_round(state: u128, key: u128, last: bool) -> u128 {
    let s = sub_bytes(shift_rows(bytes(state), false), &SBOX);
    let s = if last { s } else { mix_columns(s, MIX) };
    value(s) ^ key
}

/// `aes_dec`, `aes_dec_last`: a round of the equivalent inverse cipher.
pub fn decrypt_round(state: u128, key: u128, last: bool) -> u128 {
    let s = sub_bytes(shift_rows(bytes(state), true), &INV_SBOX);
    let s = if last { s } else { mix_columns(s, INV_MIX) };
    value(s) ^ key
}

/// `aes_imc`: InvMixColumns.
pub fn inverse_mix_columns(state: u128) -> u128 {
    value(mix_columns(bytes(state), INV_MIX))
}

/// `aes_keygen v, rcon`: from dwords 1 and 3 of `v`, SubWord into dwords
/// 0 and 2 and RotWord(SubWord) XOR `rcon` into dwords 1 and 3.
pub fn keygen_assist(v: u128, rcon: u16) -> u128 {
    let sub_word = |w: u32| u32::from_le_bytes(w.to_le_bytes().map(|b| SBOX[usize::from(b)]));
    let (x1, x3) = (sub_word((v >> 32) as u32), sub_word((v >> 96) as u32));
    let rot = |w: u32| w.rotate_right(8) ^ u32::from(rcon);
    u128::from(x1) | u128::from(rot(x1)) << 32 | u128::from(x3) << 64 | u128::from(rot(x3)) << 96
}

/// `clmul a, b, imm`: the carry-less product of the 64-bit half of `a`
/// chosen by imm bit 0 and that of `b` chosen by imm bit 4.
pub fn carryless_multiply(a: u128, b: u128, imm: u16) -> u128 {
    let half = |v: u128, high: bool| if high { (v >> 64) as u64 } else { v as u64 };
    let (x, y) = (half(a, imm & 1 != 0), u128::from(half(b, imm & 0x10 != 0)));
    (0..64).filter(|i| x >> i & 1 != 0).fold(0, |p, i| p ^ (y << i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sbox_has_the_published_corners() {
        // FIPS-197 figure 7: S(0x00) = 0x63, S(0x53) = 0xed, S(0xff) = 0x16.
        assert_eq!((SBOX[0x00], SBOX[0x53], SBOX[0xff]), (0x63, 0xed, 0x16));
        assert_eq!(INV_SBOX[0x63], 0x00);
    }

    #[test]
    fn mix_columns_then_its_inverse_is_the_identity() {
        let s = 0x0f1e_2d3c_4b5a_6978_8796_a5b4_c3d2_e1f0u128;
        assert_eq!(value(mix_columns(mix_columns(bytes(s), MIX), INV_MIX)), s);
    }
}
