//! The x86-64 Linux signal frame, as the kernel lays it out on the guest
//! stack: `struct rt_sigframe` (arch/x86/include/asm/sigframe.h), holding
//! the return address of the handler (`pretcode`, the guest's
//! `sa_restorer`), the `ucontext` (asm-generic/ucontext.h) with its
//! `sigcontext` (arch/x86/include/uapi/asm/sigcontext.h) and signal mask,
//! then the `siginfo`. The 512-byte fxsave-format FP area lies above the
//! frame, 64-byte aligned, and `sigcontext.fpstate` points at it (see
//! [`Placement`], after `get_sigframe` in arch/x86/kernel/signal.c).
//!
//! The structs are `#[repr(C)]` and contain only integers, and a test pins
//! every offset at the values a C program prints with `offsetof` over the
//! kernel's own headers (see `docs/signals.md`).

use aarchx_ir::GuestState;

/// `struct sigcontext` (64-bit): the general registers in the kernel's
/// order, flags, segment selectors, fault details and the FP area pointer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sigcontext {
    pub r8: u64,
    pub r9: u64,
    pub r10: u64,
    pub r11: u64,
    pub r12: u64,
    pub r13: u64,
    pub r14: u64,
    pub r15: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rbp: u64,
    pub rbx: u64,
    pub rdx: u64,
    pub rax: u64,
    pub rcx: u64,
    pub rsp: u64,
    pub rip: u64,
    pub eflags: u64,
    pub cs: u16,
    pub gs: u16,
    pub fs: u16,
    pub ss: u16,
    pub err: u64,
    pub trapno: u64,
    pub oldmask: u64,
    pub cr2: u64,
    pub fpstate: u64,
    pub reserved1: [u64; 8],
}

/// `stack_t`: the alternate signal stack.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackT {
    pub sp: u64,
    pub flags: i32,
    pub _pad: u32,
    pub size: u64,
}

/// The kernel's `struct ucontext` (its signal mask is the kernel's 8-byte
/// `sigset_t`; glibc's larger `ucontext_t` overlaps the siginfo beyond it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ucontext {
    pub flags: u64,
    pub link: u64,
    pub stack: StackT,
    pub mcontext: Sigcontext,
    pub sigmask: u64,
}

/// `siginfo_t`: 128 bytes, the same on x86-64 and arm64 Linux. The
/// fields after `si_code` are a union; [`Siginfo::fields`] holds it as
/// words (`si_addr`, or `si_pid` and `si_uid`, at word 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Siginfo {
    pub signo: i32,
    pub errno: i32,
    pub code: i32,
    pub _pad: i32,
    pub fields: [u64; 14],
}

/// `struct rt_sigframe` of x86-64.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtSigframe {
    pub pretcode: u64,
    pub uc: Ucontext,
    pub info: Siginfo,
}

/// The x86-64 red zone below rsp that a signal frame must skip.
const RED_ZONE: u64 = 128;
/// `uc_flags`: UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS, as the kernel sets
/// them, with UC_FP_XSTATE when the FP area is in XSAVE format.
pub fn uc_flags(xstate: bool) -> u64 {
    0x2 | 0x4 | u64::from(xstate)
}
/// The user code and stack segment selectors of x86-64 Linux.
pub const USER_CS: u16 = 0x33;
pub const USER_SS: u16 = 0x2b;

/// Types made only of integers with no implicit padding: any byte pattern
/// is a valid value, so they can be viewed and built as bytes.
///
/// # Safety
///
/// Implement only for `#[repr(C)]` structs of integer fields without
/// implicit padding.
pub unsafe trait Plain: Copy + Default {
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: per the trait contract every byte of `Self` is
        // initialised (no implicit padding), so it can be read as `u8`s.
        unsafe { std::slice::from_raw_parts((self as *const Self).cast::<u8>(), size_of::<Self>()) }
    }

    /// The value whose bytes are `bytes` (exactly `size_of::<Self>()`).
    fn from_bytes(bytes: &[u8]) -> Self {
        assert_eq!(bytes.len(), size_of::<Self>(), "a whole value");
        // SAFETY: per the trait contract any bit pattern is a valid value,
        // and `bytes` has exactly the size; the read is unaligned.
        unsafe { bytes.as_ptr().cast::<Self>().read_unaligned() }
    }
}

// SAFETY: all four are `#[repr(C)]` integer structs whose fields are laid
// out without gaps (explicit `_pad` fields fill the holes); the layout
// test below pins their sizes.
unsafe impl Plain for Sigcontext {}
// SAFETY: as above.
unsafe impl Plain for Siginfo {}
// SAFETY: as above.
unsafe impl Plain for RtSigframe {}
// SAFETY: as above.
unsafe impl Plain for StackT {}

/// Where a frame goes: the FP area, then the frame below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The FP area (64-byte aligned).
    pub fpstate: u64,
    /// The frame itself; the handler starts with rsp here, so that rsp + 8
    /// is 16-byte aligned as right after a call.
    pub frame: u64,
}

impl Placement {
    /// The kernel's `get_sigframe`: from the interrupted rsp (minus the red
    /// zone), or from the top of the alternate stack `stack_top` when the
    /// handler runs there, with an FP area of `fp_size` bytes.
    pub fn new(rsp: u64, stack_top: Option<u64>, fp_size: u64) -> Placement {
        let sp = stack_top.unwrap_or(rsp.wrapping_sub(RED_ZONE));
        let fpstate = sp.wrapping_sub(fp_size) & !63;
        let frame = (fpstate.wrapping_sub(size_of::<RtSigframe>() as u64) & !15).wrapping_sub(8);
        Placement { fpstate, frame }
    }
}

impl Sigcontext {
    /// The general registers, rip and flags of `state`.
    pub fn from_state(s: &GuestState) -> Sigcontext {
        let g = &s.gpr;
        Sigcontext {
            r8: g[8],
            r9: g[9],
            r10: g[10],
            r11: g[11],
            r12: g[12],
            r13: g[13],
            r14: g[14],
            r15: g[15],
            rdi: g[7],
            rsi: g[6],
            rbp: g[5],
            rbx: g[3],
            rdx: g[2],
            rax: g[0],
            rcx: g[1],
            rsp: g[4],
            rip: s.rip,
            eflags: s.rflags(),
            cs: USER_CS,
            ss: USER_SS,
            ..Sigcontext::default()
        }
    }

    /// Writes the general registers, rip and flags back into `state`.
    pub fn to_state(&self, s: &mut GuestState) {
        s.gpr = [
            self.rax, self.rcx, self.rdx, self.rbx, self.rsp, self.rbp, self.rsi, self.rdi, self.r8, self.r9, self.r10,
            self.r11, self.r12, self.r13, self.r14, self.r15,
        ];
        s.rip = self.rip;
        s.set_rflags(self.eflags);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    /// Expected values: printed by a C program built with gcc for x86-64
    /// from `<asm/sigcontext.h>`, `<asm/siginfo.h>` and `<asm/signal.h>`
    /// (`offsetof`, `sizeof`; the program is in docs/signals.md).
    #[test]
    fn layouts_match_the_kernel_headers() {
        assert_eq!(offset_of!(Sigcontext, r8), 0);
        assert_eq!(offset_of!(Sigcontext, rdi), 64);
        assert_eq!(offset_of!(Sigcontext, rax), 104);
        assert_eq!(offset_of!(Sigcontext, rsp), 120);
        assert_eq!(offset_of!(Sigcontext, rip), 128);
        assert_eq!(offset_of!(Sigcontext, eflags), 136);
        assert_eq!(offset_of!(Sigcontext, cs), 144);
        assert_eq!(offset_of!(Sigcontext, ss), 150);
        assert_eq!(offset_of!(Sigcontext, err), 152);
        assert_eq!(offset_of!(Sigcontext, trapno), 160);
        assert_eq!(offset_of!(Sigcontext, oldmask), 168);
        assert_eq!(offset_of!(Sigcontext, cr2), 176);
        assert_eq!(offset_of!(Sigcontext, fpstate), 184);
        assert_eq!(offset_of!(Sigcontext, reserved1), 192);
        assert_eq!(size_of::<Sigcontext>(), 256);
        assert_eq!(offset_of!(Ucontext, link), 8);
        assert_eq!(offset_of!(Ucontext, stack), 16);
        assert_eq!(offset_of!(Ucontext, mcontext), 40);
        assert_eq!(offset_of!(Ucontext, sigmask), 296);
        assert_eq!(size_of::<Ucontext>(), 304);
        assert_eq!(offset_of!(RtSigframe, uc), 8);
        assert_eq!(offset_of!(RtSigframe, info), 312);
        assert_eq!(size_of::<RtSigframe>(), 440);
        assert_eq!(size_of::<Siginfo>(), 128);
        assert_eq!(offset_of!(Siginfo, fields), 16, "si_addr, si_pid");
        assert_eq!((size_of::<StackT>(), offset_of!(StackT, flags), offset_of!(StackT, size)), (24, 8, 16));
    }

    #[test]
    fn placement_skips_the_red_zone_and_aligns() {
        let p = Placement::new(0x7fff_0000_1238, None, 512);
        assert_eq!(p.fpstate % 64, 0);
        assert!(p.fpstate + 512 <= 0x7fff_0000_1238 - RED_ZONE);
        assert_eq!((p.frame + 8) % 16, 0);
        assert!(p.frame + size_of::<RtSigframe>() as u64 <= p.fpstate);
        let alt = Placement::new(0x7fff_0000_1238, Some(0x5000_0000), 512);
        assert_eq!(alt.fpstate, 0x5000_0000 - 512);
        let x = Placement::new(0x7fff_0000_1238, Some(0x5000_0000), 836);
        assert_eq!(x.fpstate, (0x5000_0000 - 836) & !63);
    }

    #[test]
    fn registers_round_trip() {
        let mut s = GuestState { rip: 0x401000, ..GuestState::default() };
        for (i, g) in s.gpr.iter_mut().enumerate() {
            *g = 0x1000 + i as u64;
        }
        s.set_rflags(0x8c5);
        let sc = Sigcontext::from_state(&s);
        assert_eq!((sc.rax, sc.rsp, sc.rdi, sc.r15), (0x1000, 0x1004, 0x1007, 0x100f));
        let mut back = GuestState::default();
        sc.to_state(&mut back);
        assert_eq!((back.gpr, back.rip, back.rflags()), (s.gpr, s.rip, s.rflags()));
        assert_eq!(Sigcontext::from_bytes(sc.as_bytes()), sc);
    }
}
