//! The x87 operation descriptor: what the lifter hands the `x87` and
//! `x87_flags` helpers in the `x87_op` register (a memory operand's
//! address goes in `x87_addr`). The lifter decodes the instruction into
//! one [`X87Insn`]; the runtime's helper executes it on the x87 state of
//! [`crate::GuestState`] and never looks at x86 bytes.
//!
//! Encoding in 32 bits: bits 0-7 the operation, 8-11 the operand kind,
//! 12-14 the stack index of an `st(i)` operand, bit 15 "result to
//! `st(i)`", bits 16-17 how many registers to pop afterwards.

macro_rules! ops {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum $name { $($(#[$vm])* $v,)* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$v,)*];

            pub fn from_u8(v: u8) -> Option<$name> {
                Self::ALL.get(usize::from(v)).copied()
            }
        }
    };
}

ops! {
    /// What an x87 instruction does. "The operand" is the memory operand
    /// or `st(i)`; arithmetic computes `st(0) OP operand` into `st(0)`, or
    /// `st(i) OP st(0)` into `st(i)` when `to_sti` is set.
    X87Op {
        /// fld, fild: push the operand.
        Load,
        /// fld1, fldl2t, fldl2e, fldpi, fldlg2, fldln2, fldz: push the
        /// constant numbered by the `st(i)` index, in that order.
        LoadConst,
        /// fst, fstp: st(0) to the operand (f32, f64, f80 or st(i)).
        Store,
        /// fist, fistp: st(0) rounded by the control word to an integer.
        StoreInt,
        /// fisttp: st(0) truncated to an integer.
        StoreTrunc,
        /// fcmovcc (the lifter tests the condition): st(0) = st(i).
        Move,
        Add,
        Mul,
        Sub,
        /// Reversed subtraction: operand - st(0) (st(0) - st(i) with `to_sti`).
        SubR,
        Div,
        /// Reversed division.
        DivR,
        /// fcom, ficom: C3, C2, C0 from comparing st(0) with the operand;
        /// any NaN is an invalid operation.
        Com,
        /// fucom: as `Com`, invalid only for a signalling NaN.
        Ucom,
        /// fcomi: ZF, PF, CF from comparing st(0) with st(i) (helper `x87_flags`).
        Comi,
        /// fucomi.
        Ucomi,
        /// ftst: compare st(0) with 0.
        Tst,
        /// fxam: classify st(0) into C3, C2, C0 and its sign into C1.
        Xam,
        Chs,
        Abs,
        Sqrt,
        Rndint,
        Scale,
        /// fprem: partial remainder with a truncated quotient.
        Prem,
        /// fprem1: IEEE partial remainder (quotient rounded to nearest).
        Prem1,
        Xtract,
        Xch,
        Free,
        /// fninit.
        Init,
        /// fnclex.
        Clex,
        DecStp,
        IncStp,
        /// fnstenv: the 28-byte environment to memory, then mask all exceptions.
        StoreEnv,
        /// fldenv.
        LoadEnv,
        /// fxsave's x87 part: bytes 0-23 and the registers at 32-159.
        SaveImage,
        /// fxrstor's x87 part.
        RestoreImage,
        /// xrstor of an x87 component in its initial configuration:
        /// fninit's control, status and tags, every data register +0.
        Reset,
    }
}

ops! {
    /// The operand of an x87 operation.
    Operand {
        None,
        /// The register `st(i)`; `i` is [`X87Insn::index`].
        St,
        /// Memory operands at `x87_addr`, by format.
        F32,
        F64,
        F80,
        I16,
        I32,
        I64,
        /// A memory area that the operation defines (environment, image).
        Area,
    }
}

/// One decoded x87 operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct X87Insn {
    pub op: X87Op,
    pub operand: Operand,
    /// The `i` of `st(i)`, or the constant of `LoadConst`.
    pub index: u8,
    /// The result goes to `st(i)` instead of `st(0)`.
    pub to_sti: bool,
    /// Registers popped after the operation (0-2).
    pub pops: u8,
}

impl X87Insn {
    pub fn new(op: X87Op, operand: Operand) -> X87Insn {
        X87Insn { op, operand, index: 0, to_sti: false, pops: 0 }
    }

    pub fn encode(self) -> u32 {
        u32::from(self.op as u8)
            | u32::from(self.operand as u8) << 8
            | u32::from(self.index & 7) << 12
            | u32::from(self.to_sti) << 15
            | u32::from(self.pops & 3) << 16
    }

    pub fn decode(v: u32) -> Option<X87Insn> {
        Some(X87Insn {
            op: X87Op::from_u8(v as u8)?,
            operand: Operand::from_u8((v >> 8 & 0xf) as u8)?,
            index: (v >> 12 & 7) as u8,
            to_sti: v >> 15 & 1 != 0,
            pops: (v >> 16 & 3) as u8,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips() {
        for op in X87Op::ALL {
            for operand in Operand::ALL {
                let i = X87Insn { op: *op, operand: *operand, index: 5, to_sti: true, pops: 2 };
                assert_eq!(X87Insn::decode(i.encode()), Some(i));
            }
        }
        assert_eq!(X87Insn::decode(0xff), None);
    }
}
