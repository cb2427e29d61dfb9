//! The guest CPU state: one `#[repr(C)]` struct, the single home of every
//! guest register while translated code or the interpreter runs.

use crate::reg::Reg;

/// Guest x86-64 register state. Its layout is part of the JIT's contract
/// (the backend addresses fields by the offsets below) and of the plugin
/// ABI; a test pins it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct GuestState {
    /// rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15.
    pub gpr: [u64; 16],
    pub rip: u64,
    pub fs_base: u64,
    pub gs_base: u64,
    /// cf, pf, af, zf, sf, of, df: one byte each, 0 or 1.
    pub flags: [u8; 8],
    pub mxcsr: u32,
    /// x87 control word (precision, rounding, exception masks).
    pub fpcw: u16,
    pub _pad: [u8; 10],
    pub xmm: [u128; 16],
    /// The x87 data registers R0-R7 by physical number (ST(i) is
    /// R((TOP + i) mod 8)), each an 80-bit extended value in the low bits.
    pub st: [u128; 8],
    /// x87 status word: exception flags, C0-C3, TOP in bits 11-13.
    pub fpsw: u16,
    /// x87 tags, abridged as in fxsave: bit i set when R<i> holds a value.
    pub fptag: u8,
    /// Whether the last leaf routine ran (1) or declined (0): `leaf_done`.
    pub leaf_done: u8,
    /// Scratch for the `x87` helpers: the operation (`x87::X87Insn`)
    /// and its memory operand's address, set by the lifter before a call.
    pub x87_op: u32,
    pub x87_addr: u64,
    /// The upper 128 bits of ymm0-15 (AVX); the low halves are `xmm`.
    pub ymm_hi: [u128; 16],
}

impl Default for GuestState {
    fn default() -> Self {
        GuestState {
            gpr: [0; 16],
            rip: 0,
            fs_base: 0,
            gs_base: 0,
            flags: [0; 8],
            mxcsr: GuestState::MXCSR_DEFAULT,
            fpcw: GuestState::FPCW_DEFAULT,
            _pad: [0; 10],
            xmm: [0; 16],
            st: [0; 8],
            fpsw: 0,
            fptag: 0,
            leaf_done: 0,
            x87_op: 0,
            x87_addr: 0,
            ymm_hi: [0; 16],
        }
    }
}

impl GuestState {
    pub const OFFSET_GPR: usize = core::mem::offset_of!(GuestState, gpr);
    pub const OFFSET_RIP: usize = core::mem::offset_of!(GuestState, rip);
    pub const OFFSET_FS_BASE: usize = core::mem::offset_of!(GuestState, fs_base);
    pub const OFFSET_GS_BASE: usize = core::mem::offset_of!(GuestState, gs_base);
    pub const OFFSET_FLAGS: usize = core::mem::offset_of!(GuestState, flags);
    /// MXCSR at process start (and for a signal handler): every exception
    /// masked, round to nearest, no FTZ nor DAZ, no flag set.
    pub const MXCSR_DEFAULT: u32 = 0x1f80;
    /// MXCSR's sticky exception flags (IE DE ZE OE UE PE).
    pub const MXCSR_FLAGS: u32 = 0x3f;
    /// The x87 control word after `fninit`: every exception masked,
    /// 64-bit precision, round to nearest.
    pub const FPCW_DEFAULT: u16 = 0x037f;
    pub const OFFSET_MXCSR: usize = core::mem::offset_of!(GuestState, mxcsr);
    pub const OFFSET_FPCW: usize = core::mem::offset_of!(GuestState, fpcw);
    pub const OFFSET_XMM: usize = core::mem::offset_of!(GuestState, xmm);
    pub const OFFSET_ST: usize = core::mem::offset_of!(GuestState, st);
    pub const OFFSET_FPSW: usize = core::mem::offset_of!(GuestState, fpsw);
    pub const OFFSET_FPTAG: usize = core::mem::offset_of!(GuestState, fptag);
    pub const OFFSET_LEAF_DONE: usize = core::mem::offset_of!(GuestState, leaf_done);
    pub const OFFSET_X87_OP: usize = core::mem::offset_of!(GuestState, x87_op);
    pub const OFFSET_X87_ADDR: usize = core::mem::offset_of!(GuestState, x87_addr);
    pub const OFFSET_YMM_HI: usize = core::mem::offset_of!(GuestState, ymm_hi);

    /// Byte offset of a register's slot in the struct.
    pub fn offset_of(reg: Reg) -> usize {
        if let Some(g) = reg.as_gpr() {
            Self::OFFSET_GPR + 8 * g
        } else if let Some(f) = reg.as_flag() {
            Self::OFFSET_FLAGS + f
        } else if let Some(x) = reg.as_xmm() {
            Self::OFFSET_XMM + 16 * x
        } else if let Some(x) = reg.as_ymm_hi() {
            Self::OFFSET_YMM_HI + 16 * x
        } else if let Some(p) = reg.as_mm() {
            Self::OFFSET_ST + 16 * p
        } else if let Some(p) = reg.as_fpexp() {
            Self::OFFSET_ST + 16 * p + 8
        } else {
            match reg {
                Reg::FS_BASE => Self::OFFSET_FS_BASE,
                Reg::GS_BASE => Self::OFFSET_GS_BASE,
                Reg::MXCSR => Self::OFFSET_MXCSR,
                Reg::FPCW => Self::OFFSET_FPCW,
                Reg::FPSW => Self::OFFSET_FPSW,
                Reg::X87_OP => Self::OFFSET_X87_OP,
                Reg::X87_ADDR => Self::OFFSET_X87_ADDR,
                Reg::FPTAG => Self::OFFSET_FPTAG,
                Reg::LEAF_DONE => Self::OFFSET_LEAF_DONE,
                _ => panic!("invalid register {reg:?}"),
            }
        }
    }

    /// Reads a register as raw bits.
    pub fn get(&self, reg: Reg) -> u128 {
        if let Some(g) = reg.as_gpr() {
            u128::from(self.gpr[g])
        } else if let Some(f) = reg.as_flag() {
            u128::from(self.flags[f] & 1)
        } else if let Some(x) = reg.as_xmm() {
            self.xmm[x]
        } else if let Some(x) = reg.as_ymm_hi() {
            self.ymm_hi[x]
        } else if let Some(p) = reg.as_mm() {
            self.st[p] & u128::from(u64::MAX)
        } else if let Some(p) = reg.as_fpexp() {
            self.st[p] >> 64 & 0xffff
        } else {
            match reg {
                Reg::FS_BASE => u128::from(self.fs_base),
                Reg::GS_BASE => u128::from(self.gs_base),
                Reg::MXCSR => u128::from(self.mxcsr),
                Reg::FPCW => u128::from(self.fpcw),
                Reg::FPSW => u128::from(self.fpsw),
                Reg::X87_OP => u128::from(self.x87_op),
                Reg::X87_ADDR => u128::from(self.x87_addr),
                Reg::FPTAG => u128::from(self.fptag),
                Reg::LEAF_DONE => u128::from(self.leaf_done & 1),
                _ => panic!("invalid register {reg:?}"),
            }
        }
    }

    /// Writes a register from raw bits (truncated to its width).
    pub fn set(&mut self, reg: Reg, v: u128) {
        if let Some(g) = reg.as_gpr() {
            self.gpr[g] = v as u64;
        } else if let Some(f) = reg.as_flag() {
            self.flags[f] = (v & 1) as u8;
        } else if let Some(x) = reg.as_xmm() {
            self.xmm[x] = v;
        } else if let Some(x) = reg.as_ymm_hi() {
            self.ymm_hi[x] = v;
        } else if let Some(p) = reg.as_mm() {
            self.st[p] = self.st[p] & !u128::from(u64::MAX) | v & u128::from(u64::MAX);
        } else if let Some(p) = reg.as_fpexp() {
            self.st[p] = self.st[p] & !(0xffff << 64) | (v & 0xffff) << 64;
        } else {
            match reg {
                Reg::FS_BASE => self.fs_base = v as u64,
                Reg::GS_BASE => self.gs_base = v as u64,
                Reg::MXCSR => self.mxcsr = v as u32,
                Reg::FPCW => self.fpcw = v as u16,
                Reg::FPSW => self.fpsw = v as u16,
                Reg::X87_OP => self.x87_op = v as u32,
                Reg::X87_ADDR => self.x87_addr = v as u64,
                Reg::FPTAG => self.fptag = v as u8,
                Reg::LEAF_DONE => self.leaf_done = (v & 1) as u8,
                _ => panic!("invalid register {reg:?}"),
            }
        }
    }

    /// The flags packed as in the x86 RFLAGS register (bit 1 always set).
    pub fn rflags(&self) -> u64 {
        const BITS: [u32; 7] = [0, 2, 4, 6, 7, 11, 10];
        BITS.iter().zip(self.flags.iter()).fold(2, |acc, (bit, f)| acc | (u64::from(*f & 1) << bit))
    }

    /// Sets the seven flags from an RFLAGS value.
    pub fn set_rflags(&mut self, rflags: u64) {
        const BITS: [u32; 7] = [0, 2, 4, 6, 7, 11, 10];
        for (f, bit) in self.flags.iter_mut().zip(BITS) {
            *f = ((rflags >> bit) & 1) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_pinned() {
        assert_eq!(GuestState::OFFSET_GPR, 0);
        assert_eq!(GuestState::OFFSET_RIP, 128);
        assert_eq!(GuestState::OFFSET_FS_BASE, 136);
        assert_eq!(GuestState::OFFSET_FLAGS, 152);
        assert_eq!(GuestState::OFFSET_MXCSR, 160);
        assert_eq!(GuestState::OFFSET_XMM, 176);
        assert_eq!(GuestState::OFFSET_ST, 432);
        assert_eq!(GuestState::OFFSET_FPSW, 560);
        assert_eq!(GuestState::OFFSET_FPTAG, 562);
        assert_eq!(GuestState::OFFSET_X87_OP, 564);
        assert_eq!(GuestState::OFFSET_X87_ADDR, 568);
        assert_eq!(GuestState::OFFSET_YMM_HI, 576);
        assert_eq!(core::mem::size_of::<GuestState>(), 832);
    }

    #[test]
    fn mmx_registers_are_the_x87_data_registers_parts() {
        let mut s = GuestState::default();
        s.st[3] = 0x1234_8000_0000_0000_0001;
        assert_eq!(s.get(Reg::mm(3)), 0x8000_0000_0000_0001);
        assert_eq!(s.get(Reg::fpexp(3)), 0x1234);
        s.set(Reg::mm(3), 0x55);
        s.set(Reg::fpexp(3), 0xffff);
        assert_eq!(s.st[3], 0xffff_0000_0000_0000_0055);
        assert_eq!(GuestState::offset_of(Reg::fpexp(3)), GuestState::OFFSET_ST + 3 * 16 + 8);
        s.set(Reg::FPTAG, 0x81);
        assert_eq!(s.fptag, 0x81);
    }

    #[test]
    fn rflags_round_trip() {
        let mut s = GuestState::default();
        s.set_rflags(0x8d5);
        assert_eq!(s.flags, [1, 1, 1, 1, 1, 1, 0, 0]);
        assert_eq!(s.rflags(), 0x8d7);
    }
}
