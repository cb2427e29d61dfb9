//! Value types of the IR: integers, floats and 128-bit vectors.

use core::fmt;

/// The type of an IR value. Vector types give the lane shape an operation
/// works on; all vector values are 128 bits wide and interchangeable, so a
/// guest XMM register can feed a byte-lane op and then a double-lane op
/// without a cast.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Type {
    I1 = 0,
    I8,
    I16,
    I32,
    I64,
    I128,
    F32,
    F64,
    V128,
    I8X16,
    I16X8,
    I32X4,
    I64X2,
    F32X4,
    F64X2,
}

impl Type {
    /// Every type, in encoding order.
    pub const ALL: [Type; 15] = [
        Type::I1,
        Type::I8,
        Type::I16,
        Type::I32,
        Type::I64,
        Type::I128,
        Type::F32,
        Type::F64,
        Type::V128,
        Type::I8X16,
        Type::I16X8,
        Type::I32X4,
        Type::I64X2,
        Type::F32X4,
        Type::F64X2,
    ];

    pub fn from_u8(v: u8) -> Option<Type> {
        Type::ALL.get(usize::from(v)).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            Type::I1 => "i1",
            Type::I8 => "i8",
            Type::I16 => "i16",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::I128 => "i128",
            Type::F32 => "f32",
            Type::F64 => "f64",
            Type::V128 => "v128",
            Type::I8X16 => "i8x16",
            Type::I16X8 => "i16x8",
            Type::I32X4 => "i32x4",
            Type::I64X2 => "i64x2",
            Type::F32X4 => "f32x4",
            Type::F64X2 => "f64x2",
        }
    }

    pub fn from_name(s: &str) -> Option<Type> {
        Type::ALL.iter().copied().find(|t| t.name() == s)
    }

    /// Width of the whole value in bits.
    pub fn bits(self) -> u32 {
        match self {
            Type::I1 => 1,
            Type::I8 => 8,
            Type::I16 => 16,
            Type::I32 | Type::F32 => 32,
            Type::I64 | Type::F64 => 64,
            _ => 128,
        }
    }

    /// Width of one lane in bits (the whole width for scalars).
    pub fn lane_bits(self) -> u32 {
        match self {
            Type::I8X16 => 8,
            Type::I16X8 => 16,
            Type::I32X4 | Type::F32X4 => 32,
            Type::I64X2 | Type::F64X2 | Type::V128 => 64,
            t => t.bits(),
        }
    }

    pub fn lanes(self) -> u32 {
        if self.is_vector() {
            128 / self.lane_bits()
        } else {
            1
        }
    }

    /// The scalar type of one lane.
    pub fn lane_type(self) -> Type {
        match self {
            Type::I8X16 => Type::I8,
            Type::I16X8 => Type::I16,
            Type::I32X4 => Type::I32,
            Type::I64X2 | Type::V128 => Type::I64,
            Type::F32X4 => Type::F32,
            Type::F64X2 => Type::F64,
            t => t,
        }
    }

    pub fn is_vector(self) -> bool {
        matches!(self, Type::V128 | Type::I8X16 | Type::I16X8 | Type::I32X4 | Type::I64X2 | Type::F32X4 | Type::F64X2)
    }

    pub fn is_int(self) -> bool {
        matches!(self, Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64 | Type::I128)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Type::F32 | Type::F64)
    }

    /// Whether a value of type `self` may be used where `other` is expected:
    /// equal types, or any two vector types.
    pub fn compatible(self, other: Type) -> bool {
        self == other || (self.is_vector() && other.is_vector())
    }

    /// Mask of the value's bits in a `u128` container.
    pub fn mask(self) -> u128 {
        if self.bits() == 128 {
            u128::MAX
        } else {
            (1u128 << self.bits()) - 1
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
