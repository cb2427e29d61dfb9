//! Host system calls that a signal arriving just before them cancels, so
//! a guest handler is never held up by a call that blocks: musl's
//! cancellation points, or qemu's `safe_syscall`.
//!
//! The dispatcher looks at the recorded signals before a guest system
//! call (`Process::signal_before_syscall`), but one can arrive after that
//! look and before the host call enters the kernel; the host handler only
//! records it, and a blocking call would wait without it. So every host
//! call of the syscall layer goes through [`syscall`], a small assembly
//! stub (`aarchx_syscall`, for aarch64 and x86-64 hosts): it checks the
//! thread's window word (in its context, `crate::thread`, whose address
//! the stub is passed) and only then executes `svc #0` / `syscall`. While the
//! window is open ([`open`], before the look), the host handler of a
//! signal the guest handles marks the word ([`signal_arrived`]) and, when
//! the interrupted pc lies between the check and the system call
//! instruction (inclusive: a pc *at* it has not executed it, or the
//! kernel rewound it to restart it), moves the pc to the stub's landing
//! pad. Either way the stub returns [`NOT_ENTERED`] without entering the
//! kernel; after the instruction, the kernel itself returns EINTR (the
//! host handlers have no SA_RESTART).
//!
//! [`NOT_ENTERED`] means the guest's system call has not started: the
//! syscall layer puts rip back on the guest's `syscall`, the handler runs
//! first and the call is made when it returns, as on a real CPU. The
//! guest's call starts when one of its host calls enters the kernel: the
//! window closes then ([`syscall`]) and when the guest's call is over
//! ([`close`]), so a call that made several host calls is never made
//! twice, and host calls outside a guest system call are never cancelled.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};

use crate::mem::Errno;

/// The window is open: set by [`open`].
const OPEN: u32 = 1;
/// A signal arrived since the window opened.
const SIGNALLED: u32 = 2;

/// What the stub returns when it did not enter the kernel:
/// ERESTARTNOINTR, a kernel-internal value ("restart the call
/// transparently") that no host call returns to user space.
pub const NOT_ENTERED: Errno = Errno(513);

#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl aarchx_syscall",
    ".globl aarchx_syscall_check",
    ".globl aarchx_syscall_insn",
    ".globl aarchx_syscall_cancelled",
    // x0-x5 = arguments, x6 = number, x7 = the window word.
    "aarchx_syscall:",
    "mov x8, x6",
    "aarchx_syscall_check:",
    "ldr w9, [x7]",
    "cmp w9, #{both}",
    "b.eq aarchx_syscall_cancelled",
    "aarchx_syscall_insn:",
    "svc #0",
    "ret",
    "aarchx_syscall_cancelled:",
    "mov x0, #-{not_entered}",
    "ret",
    both = const OPEN | SIGNALLED,
    not_entered = const NOT_ENTERED.0,
);

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl aarchx_syscall",
    ".globl aarchx_syscall_check",
    ".globl aarchx_syscall_insn",
    ".globl aarchx_syscall_cancelled",
    // rdi, rsi, rdx, rcx, r8, r9 = arguments, [rsp + 8] = number,
    // [rsp + 16] = the window word (r11 is the syscall's to clobber).
    "aarchx_syscall:",
    "mov r10, rcx",
    "mov rax, qword ptr [rsp + 8]",
    "mov r11, qword ptr [rsp + 16]",
    "aarchx_syscall_check:",
    "cmp dword ptr [r11], {both}",
    "je aarchx_syscall_cancelled",
    "aarchx_syscall_insn:",
    "syscall",
    "ret",
    "aarchx_syscall_cancelled:",
    "mov rax, -{not_entered}",
    "ret",
    both = const OPEN | SIGNALLED,
    not_entered = const NOT_ENTERED.0,
);

extern "C" {
    fn aarchx_syscall(a0: u64, a1: u64, a2: u64, a3: u64, a4: u64, a5: u64, nr: i64, window: *const AtomicU32) -> i64;
    static aarchx_syscall_check: u8;
    static aarchx_syscall_insn: u8;
    static aarchx_syscall_cancelled: u8;
}

/// This thread's window word: [`OPEN`] and [`SIGNALLED`]; the stub
/// cancels when both are set.
fn window() -> &'static AtomicU32 {
    &crate::thread::current().window
}

/// Opens the window: a guest system call is about to be looked at.
pub fn open() {
    window().store(OPEN, SeqCst);
}

/// Closes the window: the guest's system call has started or is over.
pub fn close() {
    window().store(0, SeqCst);
}

/// From a host signal handler: a signal the guest handles arrived while
/// the interrupted code was at `pc`. Returns where that code must resume
/// instead, when it was about to enter the kernel in an open window.
pub fn signal_arrived(pc: usize) -> Option<usize> {
    let was = window().fetch_or(SIGNALLED, SeqCst);
    let (check, insn, cancelled) = (
        std::ptr::addr_of!(aarchx_syscall_check) as usize,
        std::ptr::addr_of!(aarchx_syscall_insn) as usize,
        std::ptr::addr_of!(aarchx_syscall_cancelled) as usize,
    );
    (was & OPEN != 0 && (check..=insn).contains(&pc)).then_some(cancelled)
}

/// Makes host system call `nr` with `args` (missing ones are 0), giving
/// its result, the host errno, or [`NOT_ENTERED`].
///
/// # Safety
///
/// As `libc::syscall`: the call's pointer arguments must be valid for
/// what it reads and writes, and it must not break Rust's assumptions
/// (unmapping memory Rust uses, and the like).
pub unsafe fn syscall(nr: libc::c_long, args: &[u64]) -> Result<u64, Errno> {
    let a = |i: usize| args.get(i).copied().unwrap_or(0);
    // SAFETY: the stub only moves the arguments into the system call
    // registers; the call itself is the caller's contract.
    let r = unsafe { aarchx_syscall(a(0), a(1), a(2), a(3), a(4), a(5), nr, window()) };
    if r == -i64::from(NOT_ENTERED.0) {
        return Err(NOT_ENTERED);
    }
    close();
    if (-4095..0).contains(&r) {
        Err(Errno(-r as i32))
    } else {
        Ok(r as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain calls through the stub (the window stays closed).
    #[test]
    fn calls_give_results_and_errnos() {
        // SAFETY: getpid has no arguments and no effect.
        let pid = unsafe { syscall(libc::SYS_getpid, &[]) };
        assert_eq!(pid, Ok(u64::from(std::process::id())));
        // SAFETY: close of a descriptor that cannot be open.
        assert_eq!(unsafe { syscall(libc::SYS_close, &[u64::from(u32::MAX >> 1)]) }, Err(Errno(libc::EBADF)));
        let mut buf = [0u8; 8];
        // SAFETY: getrandom writes at most 8 bytes into the live local.
        assert_eq!(unsafe { syscall(libc::SYS_getrandom, &[buf.as_mut_ptr() as u64, 8, 0]) }, Ok(8));
    }
}
