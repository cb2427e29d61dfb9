//! Guest registers as the IR names them: the operand of `get` and `set`.

use crate::types::Type;

/// A guest register: a slot of [`crate::GuestState`]. Encoded in an
/// instruction's `aux` field as a `u16`:
/// 0..=15 GPRs (x86 encoding order), 16..=22 flags, 32..=47 XMM registers
/// (the low 128 bits of ymm0-15), 48.. special registers, 64..=79 the upper
/// 128 bits of ymm0-15 (`ymmh0`..`ymmh15`), 80..=87 the MMX registers
/// `mm0`..`mm7` (the significands, bits 0-63, of the x87 data registers
/// R0-R7), 88..=95 `fpexp0`..`fpexp7` (bits 64-79 of R0-R7: sign and
/// exponent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(pub u16);

/// Names of the GPRs in x86 encoding order.
pub const GPR_NAMES: [&str; 16] =
    ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"];
/// Names of the status and control flags, in [`crate::GuestState::flags`] order.
pub const FLAG_NAMES: [&str; 7] = ["cf", "pf", "af", "zf", "sf", "of", "df"];
/// Names of the special registers, from [`Reg::FS_BASE`] on.
pub const SPECIAL_NAMES: [&str; 9] =
    ["fs_base", "gs_base", "mxcsr", "fpcw", "fpsw", "x87_op", "x87_addr", "fptag", "leaf_done"];

const FLAG0: u16 = 16;
const XMM0: u16 = 32;
const SPECIAL0: u16 = 48;
const YMMH0: u16 = 64;
const MM0: u16 = 80;
const FPEXP0: u16 = 88;

impl Reg {
    pub const RAX: Reg = Reg(0);
    pub const RCX: Reg = Reg(1);
    pub const RDX: Reg = Reg(2);
    pub const RBX: Reg = Reg(3);
    pub const RSP: Reg = Reg(4);
    pub const RBP: Reg = Reg(5);
    pub const RSI: Reg = Reg(6);
    pub const RDI: Reg = Reg(7);
    pub const R11: Reg = Reg(11);
    pub const CF: Reg = Reg(FLAG0);
    pub const PF: Reg = Reg(FLAG0 + 1);
    pub const AF: Reg = Reg(FLAG0 + 2);
    pub const ZF: Reg = Reg(FLAG0 + 3);
    pub const SF: Reg = Reg(FLAG0 + 4);
    pub const OF: Reg = Reg(FLAG0 + 5);
    pub const DF: Reg = Reg(FLAG0 + 6);
    pub const FS_BASE: Reg = Reg(SPECIAL0);
    pub const GS_BASE: Reg = Reg(SPECIAL0 + 1);
    pub const MXCSR: Reg = Reg(SPECIAL0 + 2);
    pub const FPCW: Reg = Reg(SPECIAL0 + 3);
    /// The x87 status word (TOP, C0-C3, exception flags).
    pub const FPSW: Reg = Reg(SPECIAL0 + 4);
    /// Scratch: the x87 operation the lifter hands the `x87` helpers.
    pub const X87_OP: Reg = Reg(SPECIAL0 + 5);
    /// Scratch: the address of that operation's memory operand.
    pub const X87_ADDR: Reg = Reg(SPECIAL0 + 6);
    /// The x87 tags, abridged as fxsave stores them (bit i: R<i> valid).
    pub const FPTAG: Reg = Reg(SPECIAL0 + 7);
    /// Set by a leaf routine's `call` (see [`crate::cond::Helper::is_leaf`]):
    /// 1 when the routine ran, 0 when it declined.
    pub const LEAF_DONE: Reg = Reg(SPECIAL0 + 8);

    /// One past the highest register number: a table indexed by `Reg.0`
    /// of this length covers every register.
    pub const SLOTS: usize = FPEXP0 as usize + 8;

    /// The x87 data registers' parts and tags, which the `x87` helpers
    /// read and write as a whole and MMX instructions piecewise.
    pub const X87_DATA: [Reg; 17] = {
        let mut r = [Reg::FPTAG; 17];
        let mut i = 0;
        while i < 8 {
            r[i] = Reg(MM0 + i as u16);
            r[8 + i] = Reg(FPEXP0 + i as u16);
            i += 1;
        }
        r
    };

    /// The six status flags the arithmetic instructions write.
    pub const STATUS_FLAGS: [Reg; 6] = [Reg::CF, Reg::PF, Reg::AF, Reg::ZF, Reg::SF, Reg::OF];

    pub fn gpr(n: u8) -> Reg {
        debug_assert!(n < 16);
        Reg(u16::from(n))
    }

    pub fn xmm(n: u8) -> Reg {
        debug_assert!(n < 16);
        Reg(XMM0 + u16::from(n))
    }

    /// The upper 128 bits of ymm`n` (its low half is [`Reg::xmm`]).
    pub fn ymm_hi(n: u8) -> Reg {
        debug_assert!(n < 16);
        Reg(YMMH0 + u16::from(n))
    }

    /// mm`n`: the significand (bits 0-63) of the x87 data register R`n`.
    pub fn mm(n: u8) -> Reg {
        debug_assert!(n < 8);
        Reg(MM0 + u16::from(n))
    }

    /// Bits 64-79 (sign and exponent) of the x87 data register R`n`; an
    /// MMX write of mm`n` sets them to all ones.
    pub fn fpexp(n: u8) -> Reg {
        debug_assert!(n < 8);
        Reg(FPEXP0 + u16::from(n))
    }

    /// Every valid register, in encoding order.
    pub fn all() -> impl Iterator<Item = Reg> {
        (0..16)
            .chain(FLAG0..FLAG0 + 7)
            .chain(XMM0..XMM0 + 16)
            .chain(SPECIAL0..SPECIAL0 + SPECIAL_NAMES.len() as u16)
            .chain(YMMH0..YMMH0 + 16)
            .chain(MM0..FPEXP0 + 8)
            .map(Reg)
    }

    pub fn is_valid(self) -> bool {
        self.ty().is_some()
    }

    #[inline]
    pub fn as_gpr(self) -> Option<usize> {
        (self.0 < 16).then_some(usize::from(self.0))
    }

    #[inline]
    pub fn as_flag(self) -> Option<usize> {
        (FLAG0..FLAG0 + 7).contains(&self.0).then(|| usize::from(self.0 - FLAG0))
    }

    #[inline]
    pub fn as_xmm(self) -> Option<usize> {
        (XMM0..XMM0 + 16).contains(&self.0).then(|| usize::from(self.0 - XMM0))
    }

    #[inline]
    pub fn as_ymm_hi(self) -> Option<usize> {
        (YMMH0..YMMH0 + 16).contains(&self.0).then(|| usize::from(self.0 - YMMH0))
    }

    #[inline]
    pub fn as_mm(self) -> Option<usize> {
        (MM0..MM0 + 8).contains(&self.0).then(|| usize::from(self.0 - MM0))
    }

    #[inline]
    pub fn as_fpexp(self) -> Option<usize> {
        (FPEXP0..FPEXP0 + 8).contains(&self.0).then(|| usize::from(self.0 - FPEXP0))
    }

    /// The type `get` of this register yields, or `None` for an invalid one.
    pub fn ty(self) -> Option<Type> {
        if self.as_gpr().is_some() {
            Some(Type::I64)
        } else if self.as_flag().is_some() {
            Some(Type::I1)
        } else if self.as_xmm().is_some() || self.as_ymm_hi().is_some() {
            Some(Type::V128)
        } else if self.as_mm().is_some() {
            Some(Type::I64)
        } else if self.as_fpexp().is_some() {
            Some(Type::I16)
        } else {
            match self {
                Reg::FS_BASE | Reg::GS_BASE | Reg::X87_ADDR => Some(Type::I64),
                Reg::MXCSR | Reg::X87_OP => Some(Type::I32),
                Reg::FPCW | Reg::FPSW => Some(Type::I16),
                Reg::FPTAG => Some(Type::I8),
                Reg::LEAF_DONE => Some(Type::I1),
                _ => None,
            }
        }
    }

    /// The text name (`rax`, `cf`, `xmm3`, `ymmh3`, `mm3`, `fpexp3`, `fs_base`).
    pub fn write_name(self, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        if let Some(g) = self.as_gpr() {
            out.write_str(GPR_NAMES[g])
        } else if let Some(f) = self.as_flag() {
            out.write_str(FLAG_NAMES[f])
        } else if let Some(x) = self.as_xmm() {
            write!(out, "xmm{x}")
        } else if let Some(x) = self.as_ymm_hi() {
            write!(out, "ymmh{x}")
        } else if let Some(x) = self.as_mm() {
            write!(out, "mm{x}")
        } else if let Some(x) = self.as_fpexp() {
            write!(out, "fpexp{x}")
        } else if (SPECIAL0..SPECIAL0 + SPECIAL_NAMES.len() as u16).contains(&self.0) {
            out.write_str(SPECIAL_NAMES[usize::from(self.0 - SPECIAL0)])
        } else {
            write!(out, "reg{}", self.0)
        }
    }

    pub fn from_name(s: &str) -> Option<Reg> {
        if let Some(i) = GPR_NAMES.iter().position(|n| *n == s) {
            return Some(Reg(i as u16));
        }
        if let Some(i) = FLAG_NAMES.iter().position(|n| *n == s) {
            return Some(Reg(FLAG0 + i as u16));
        }
        if let Some(i) = SPECIAL_NAMES.iter().position(|n| *n == s) {
            return Some(Reg(SPECIAL0 + i as u16));
        }
        let (first, count, digits) = [("ymmh", YMMH0, 16), ("xmm", XMM0, 16), ("mm", MM0, 8), ("fpexp", FPEXP0, 8)]
            .into_iter()
            .find_map(|(prefix, first, count)| Some((first, count, s.strip_prefix(prefix)?)))?;
        let n: u16 = digits.parse().ok()?;
        (n < count).then_some(Reg(first + n))
    }
}

impl core::fmt::Display for Reg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.write_name(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn every_register_name_parses_back_and_fits_the_slot_bound() {
        let names: alloc::vec::Vec<_> = Reg::all().map(|r| r.to_string()).collect();
        for (r, name) in Reg::all().zip(&names) {
            assert_eq!(Reg::from_name(name), Some(r), "{name}");
            assert!(usize::from(r.0) < Reg::SLOTS, "{name}");
        }
        assert_eq!(Reg::from_name("ymmh15"), Some(Reg::ymm_hi(15)));
        assert_eq!(Reg::from_name("ymmh16"), None);
        assert_eq!(Reg::from_name("mm7"), Some(Reg::mm(7)));
        assert_eq!(Reg::from_name("mm8"), None);
        assert_eq!(Reg::from_name("fpexp0"), Some(Reg::fpexp(0)));
        let distinct: alloc::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), names.len());
    }
}
