//! Lane views of raw values: masks, sign extension, reading one lane of a
//! 128-bit vector, building a vector from lanes, and the generic lane-wise
//! drivers every per-lane op goes through. A scalar is a vector of one lane
//! as wide as its type, so the same drivers run scalar ops.

use aarchx_ir::Type;

pub use aarchx_ir::eval::{mask, sext};

/// Lane `i` of `v` seen as lanes of `bits` bits, lane 0 in the low bits.
pub fn lane(v: u128, bits: u32, i: u32) -> u128 {
    (v >> (bits * i)) & mask(bits)
}

/// The value whose lanes of `bits` bits are `lanes`, from lane 0 up (each
/// masked to the lane width; lanes not given are zero).
pub fn from_lanes(bits: u32, lanes: impl IntoIterator<Item = u128>) -> u128 {
    lanes.into_iter().zip(0..).fold(0, |acc, (x, i)| acc | ((x & mask(bits)) << (bits * i)))
}

/// `f(lane_bits, lane)` applied to every lane of `a` (shape `ty`).
pub fn map(ty: Type, a: u128, mut f: impl FnMut(u32, u128) -> u128) -> u128 {
    let bits = ty.lane_bits();
    from_lanes(bits, (0..ty.lanes()).map(|i| f(bits, lane(a, bits, i))))
}

/// `f(lane_bits, a_lane, b_lane)` applied to every pair of lanes of `a` and `b` (shape `ty`).
pub fn zip(ty: Type, a: u128, b: u128, mut f: impl FnMut(u32, u128, u128) -> u128) -> u128 {
    let bits = ty.lane_bits();
    from_lanes(bits, (0..ty.lanes()).map(|i| f(bits, lane(a, bits, i), lane(b, bits, i))))
}

/// `f(lane_index, [a_lane, b_lane, c_lane])` applied to every lane of
/// `a`, `b` and `c` (shape `ty`).
pub fn zip3(ty: Type, [a, b, c]: [u128; 3], mut f: impl FnMut(u32, [u128; 3]) -> u128) -> u128 {
    let bits = ty.lane_bits();
    from_lanes(bits, (0..ty.lanes()).map(|i| f(i, [a, b, c].map(|x| lane(x, bits, i)))))
}

/// A comparison outcome as a lane of `ty`: i1 1 for scalars, an all-ones
/// lane for vectors; 0 when false.
pub fn truth(ty: Type, holds: bool) -> u128 {
    match (holds, ty.is_vector()) {
        (false, _) => 0,
        (true, true) => mask(ty.lane_bits()),
        (true, false) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_round_trip() {
        let v = 0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100u128;
        assert_eq!(lane(v, 8, 0), 0x00);
        assert_eq!(lane(v, 8, 15), 0x0f);
        assert_eq!(lane(v, 32, 2), 0x0b0a_0908);
        assert_eq!(lane(v, 128, 0), v);
        assert_eq!(from_lanes(16, (0..8).map(|i| lane(v, 16, i))), v);
        assert_eq!(from_lanes(32, [0x1_0000_0001, 2]), 0x2_0000_0001);
    }

    #[test]
    fn sign_extension_by_width() {
        assert_eq!(sext(0x80, 8), -128);
        assert_eq!(sext(0x7f, 8), 127);
        assert_eq!(sext(1, 1), -1);
        assert_eq!(sext(u128::MAX, 128), -1);
        assert_eq!(mask(128), u128::MAX);
        assert_eq!(mask(1), 1);
    }
}
