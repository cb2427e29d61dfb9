//! Packed integer instructions: the table of those shaped `dst =
//! op.T(dst, src)` (bitwise logic, wrapping and saturating arithmetic,
//! compares, min/max, averages, multiplies, interleaves, packs, shuffles,
//! byte shifts, with their SSSE3, SSE4.1 and SSE4.2 additions, and the
//! AES-NI rounds and pclmulqdq), and the lane shifts by an immediate or an XMM/m128 count.

use aarchx_ir::{IntCond, Opcode, Type};
use iced_x86::Mnemonic;

use super::super::lift::Outcome;
use super::super::operand::L;

/// Opcode, lane shape and aux (a compare's condition; pshufhw's
/// high-quadword bit) of a packed integer or bitwise instruction.
pub(super) fn packed_op(m: Mnemonic) -> Option<(Opcode, Type, u16)> {
    use Mnemonic as M;
    use Opcode as O;
    use Type as T;
    let cmp = |c: IntCond, ty| (O::Icmp, ty, c as u16);
    let op = |o, ty| (o, ty, 0);
    Some(match m {
        M::Pxor | M::Xorps | M::Xorpd => op(O::Xor, T::V128),
        M::Por | M::Orps | M::Orpd => op(O::Or, T::V128),
        M::Pand | M::Andps | M::Andpd => op(O::And, T::V128),
        M::Pandn | M::Andnps | M::Andnpd => op(O::AndNot, T::V128),
        M::Paddb => op(O::Add, T::I8X16),
        M::Paddw => op(O::Add, T::I16X8),
        M::Paddd => op(O::Add, T::I32X4),
        M::Paddq => op(O::Add, T::I64X2),
        M::Psubb => op(O::Sub, T::I8X16),
        M::Psubw => op(O::Sub, T::I16X8),
        M::Psubd => op(O::Sub, T::I32X4),
        M::Psubq => op(O::Sub, T::I64X2),
        M::Paddusb => op(O::AddSatU, T::I8X16),
        M::Paddusw => op(O::AddSatU, T::I16X8),
        M::Psubusb => op(O::SubSatU, T::I8X16),
        M::Psubusw => op(O::SubSatU, T::I16X8),
        M::Paddsb => op(O::AddSatS, T::I8X16),
        M::Paddsw => op(O::AddSatS, T::I16X8),
        M::Psubsb => op(O::SubSatS, T::I8X16),
        M::Psubsw => op(O::SubSatS, T::I16X8),
        M::Pcmpeqb => cmp(IntCond::Eq, T::I8X16),
        M::Pcmpeqw => cmp(IntCond::Eq, T::I16X8),
        M::Pcmpeqd => cmp(IntCond::Eq, T::I32X4),
        M::Pcmpgtb => cmp(IntCond::Sgt, T::I8X16),
        M::Pcmpgtw => cmp(IntCond::Sgt, T::I16X8),
        M::Pcmpgtd => cmp(IntCond::Sgt, T::I32X4),
        M::Pcmpeqq => cmp(IntCond::Eq, T::I64X2),
        M::Pcmpgtq => cmp(IntCond::Sgt, T::I64X2),
        M::Pminub => op(O::Umin, T::I8X16),
        M::Pminuw => op(O::Umin, T::I16X8),
        M::Pminud => op(O::Umin, T::I32X4),
        M::Pmaxuw => op(O::Umax, T::I16X8),
        M::Pmaxud => op(O::Umax, T::I32X4),
        M::Pminsb => op(O::Smin, T::I8X16),
        M::Pminsd => op(O::Smin, T::I32X4),
        M::Pmaxsb => op(O::Smax, T::I8X16),
        M::Pmaxsd => op(O::Smax, T::I32X4),
        M::Pmulld => op(O::Mul, T::I32X4),
        M::Packusdw => op(O::NarrowU, T::I16X8),
        M::Pshufb => op(O::ShuffleBytes, T::I8X16),
        M::Pmaxub => op(O::Umax, T::I8X16),
        M::Pminsw => op(O::Smin, T::I16X8),
        M::Pmaxsw => op(O::Smax, T::I16X8),
        M::Pavgb => op(O::AvgU, T::I8X16),
        M::Pavgw => op(O::AvgU, T::I16X8),
        M::Pmullw => op(O::Mul, T::I16X8),
        M::Pmulhw => op(O::Smulh, T::I16X8),
        M::Pmulhuw => op(O::Umulh, T::I16X8),
        M::Pmuludq => op(O::MulEvenU, T::I64X2),
        M::Pmaddwd => op(O::MulAddPairs, T::I32X4),
        M::Psadbw => op(O::SumAbsDiff, T::I64X2),
        M::Punpcklbw => op(O::UnpackLo, T::I8X16),
        M::Punpcklwd => op(O::UnpackLo, T::I16X8),
        M::Punpckldq | M::Unpcklps => op(O::UnpackLo, T::I32X4),
        M::Punpcklqdq | M::Unpcklpd => op(O::UnpackLo, T::I64X2),
        M::Punpckhbw => op(O::UnpackHi, T::I8X16),
        M::Punpckhwd => op(O::UnpackHi, T::I16X8),
        M::Punpckhdq | M::Unpckhps => op(O::UnpackHi, T::I32X4),
        M::Punpckhqdq | M::Unpckhpd => op(O::UnpackHi, T::I64X2),
        M::Packsswb => op(O::NarrowS, T::I8X16),
        M::Packssdw => op(O::NarrowS, T::I16X8),
        M::Packuswb => op(O::NarrowU, T::I8X16),
        M::Pshufd => op(O::Shuffle, T::I32X4),
        M::Pshuflw => op(O::Shuffle, T::I16X8),
        M::Pshufhw => (O::Shuffle, T::I16X8, 0x100),
        M::Pslldq => op(O::ByteShl, T::V128),
        M::Psrldq => op(O::ByteShr, T::V128),
        M::Aesenc => op(O::AesEnc, T::I8X16),
        M::Aesenclast => op(O::AesEncLast, T::I8X16),
        M::Aesdec => op(O::AesDec, T::I8X16),
        M::Aesdeclast => op(O::AesDecLast, T::I8X16),
        M::Aesimc => op(O::AesImc, T::I8X16),
        M::Aeskeygenassist => op(O::AesKeygen, T::I8X16),
        M::Pclmulqdq => op(O::Clmul, T::I64X2),
        _ => return None,
    })
}

/// Opcode and lane shape of a lane shift (psll/psrl/psra).
pub(super) fn shift_op(m: Mnemonic) -> Option<(Opcode, Type)> {
    use Mnemonic as M;
    Some(match m {
        M::Psllw => (Opcode::Shl, Type::I16X8),
        M::Pslld => (Opcode::Shl, Type::I32X4),
        M::Psllq => (Opcode::Shl, Type::I64X2),
        M::Psrlw => (Opcode::Lshr, Type::I16X8),
        M::Psrld => (Opcode::Lshr, Type::I32X4),
        M::Psrlq => (Opcode::Lshr, Type::I64X2),
        M::Psraw => (Opcode::Ashr, Type::I16X8),
        M::Psrad => (Opcode::Ashr, Type::I32X4),
        _ => return None,
    })
}

impl L<'_, '_> {
    /// Every lane of dst shifted by the imm8 count, or by the unsigned low
    /// 64 bits of an XMM/m128 count (the IR's shifts clear lanes, or fill
    /// them with the sign, for counts of the lane width or more, as x86 does).
    pub(super) fn xshift(&mut self, op: Opcode, ty: Type) -> Outcome {
        let amount = match self.ximm8() {
            Some(n) => self.c(Type::I8, u64::from(n)),
            None => {
                let v = self.xget(1);
                self.xlane(v, Type::I64, 0)
            }
        };
        let d = self.xget(0);
        let r = self.bin(op, ty, d, amount);
        self.xset(0, r);
        Outcome::Next
    }
}
