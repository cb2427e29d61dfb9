//! Guest signals: the signal system calls and delivery to guest handlers.
//!
//! The host kernel does most of the work. The guest's mask is the host's
//! mask (except the fault signals, which aarchx needs unblocked), a
//! signal the guest ignores is ignored on the host, one it leaves at the
//! default action has the host default, and one it handles has the host
//! handler of `crate::signals`, which records it. So kill, tgkill and
//! sigtimedwait go to the host as they are, a blocked signal pends in the
//! host kernel, a default action happens for real (the process dies of or
//! stops on the signal, as natively), and execve passes the ignored set
//! and the mask on as the kernel does. Signal numbers, `siginfo_t`,
//! `timespec` and `itimerval` are the same on x86-64 and arm64 Linux.
//!
//! Delivery happens at safe points of the dispatcher ([`Process::deliver_signals`]):
//! between regions, and before and after a system call. A handler runs on
//! the x86-64 signal frame (`crate::signal::frame`) built on the guest
//! stack or the alternate stack, returns to its `sa_restorer`, which calls
//! rt_sigreturn ([`Process::sigreturn`]), which restores the registers,
//! FP state, mask and alternate stack from the frame. A system call
//! interrupted by a host signal (EINTR) is restarted after the handler if
//! its SA_RESTART says so and the call is one the kernel restarts.
//! Synchronous faults of guest code ([`Process::trap`], [`Process::fault`])
//! reach the guest's handler with the registers before the faulting
//! instruction, or kill the process as natively when it has none (or
//! blocks or ignores the signal). See `docs/signals.md`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use aarchx_ir::{GuestState, TrapKind};

use super::numbers::Sysno;
use super::{Errno, Process, SYSCALL_LEN};
use crate::machine::GuestFault;
use crate::mem::SharedMemory;
use crate::signal::frame::{uc_flags, Placement, Plain, RtSigframe, Sigcontext, Siginfo, StackT, Ucontext};
use crate::signal::{fpstate, interruptible};
use crate::signals;

const SIGKILL: u64 = 9;
const SIGSTOP: u64 = 19;
const SIGSEGV: i32 = 11;
const SIG_DFL: u64 = 0;
const SIG_IGN: u64 = 1;
/// Signals whose default action is to do nothing: SIGCHLD, SIGCONT,
/// SIGURG, SIGWINCH.
const DEFAULT_IGNORED: [i32; 4] = [17, 18, 23, 28];
/// Signals whose default action is to stop the process: SIGSTOP, SIGTSTP,
/// SIGTTIN, SIGTTOU.
const STOP_SIGNALS: [i32; 4] = [19, 20, 21, 22];
/// The bits of SIGKILL and SIGSTOP, which can be neither blocked nor caught.
const UNBLOCKABLE: u64 = 1 << (SIGKILL - 1) | 1 << (SIGSTOP - 1);

const SIG_BLOCK: u64 = 0;
const SIG_UNBLOCK: u64 = 1;
const SIG_SETMASK: u64 = 2;

const SA_RESTORER: u64 = 0x0400_0000;
const SA_ONSTACK: u64 = 0x0800_0000;
const SA_RESTART: u64 = 0x1000_0000;
const SA_NODEFER: u64 = 0x4000_0000;
const SA_RESETHAND: u64 = 0x8000_0000;

const SS_ONSTACK: u64 = 1;
const SS_DISABLE: u64 = 2;
const SS_AUTODISARM: u64 = 1 << 31;
const MINSIGSTKSZ: u64 = 2048;

/// si_code values of the kernel's faults (asm-generic/siginfo.h).
const SI_KERNEL: i32 = 0x80;
const ILL_ILLOPN: i32 = 2;
const FPE_INTDIV: i32 = 1;
const FPE_FLTDIV: i32 = 3;
const FPE_FLTOVF: i32 = 4;
const FPE_FLTUND: i32 = 5;
const FPE_FLTRES: i32 = 6;
const FPE_FLTINV: i32 = 7;
const SEGV_MAPERR: i32 = 1;
/// x86 exception vectors, for `sigcontext.trapno`.
const TRAP_DE: u64 = 0;
const TRAP_BP: u64 = 3;
const TRAP_UD: u64 = 6;
const TRAP_GP: u64 = 13;
const TRAP_PF: u64 = 14;
const TRAP_MF: u64 = 16;
const TRAP_XF: u64 = 19;

const RAX: usize = 0;
const RDX: usize = 2;
const RSP: usize = 4;
const RSI: usize = 6;
const RDI: usize = 7;
/// Index of the direction flag in `GuestState::flags`.
const DF: usize = 6;

/// The x86-64 kernel `struct sigaction`: handler, flags, restorer, mask.
type Action = [u64; 4];

/// Whether the guest's disposition of `sig` is mirrored on the host (the
/// fault signals are aarchx's).
fn mirrored(sig: u64) -> bool {
    (1..=64).contains(&sig) && sig != SIGKILL && sig != SIGSTOP && !signals::FAULT_SIGNALS.contains(&(sig as i32))
}

/// Gives `sig` the host disposition matching the guest's `handler`.
fn set_host_disposition(sig: u64, handler: u64) {
    if !mirrored(sig) {
        return;
    }
    match handler {
        // Not one of the fault signals aarchx handles (see `mirrored`).
        SIG_IGN => crate::sys::signals::ignore(sig as i32),
        SIG_DFL => crate::sys::signals::set_default(sig as i32),
        _ => signals::catch(sig as i32),
    }
}

fn bit(sig: u64) -> u64 {
    1 << (sig - 1)
}

/// The signal dispositions, which the threads of a process share.
#[derive(Debug)]
struct Actions {
    table: Mutex<[Action; 64]>,
    /// Whether SIGSEGV or SIGBUS has a handler: asked at every dispatch,
    /// so kept apart from the lock.
    catches_faults: AtomicBool,
}

impl Actions {
    fn get(&self, slot: usize) -> Action {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)[slot]
    }

    fn set(&self, slot: usize, action: Action) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        table[slot] = action;
        let catches = [libc::SIGSEGV, libc::SIGBUS].iter().any(|&s| table[(s - 1) as usize][0] > SIG_IGN);
        self.catches_faults.store(catches, Ordering::SeqCst);
    }
}

/// The guest's signal state: the dispositions the threads share, and
/// what each thread has of its own (mask, alternate stack, a wait's
/// mask to restore, the call a signal interrupted).
#[derive(Debug)]
pub struct Signals {
    actions: Arc<Actions>,
    mask: u64,
    /// x86-64 `stack_t`: sp, flags, size.
    altstack: [u64; 3],
    /// The mask rt_sigsuspend replaced: the handler that ends the wait
    /// restores it when it returns.
    suspended: Option<u64>,
    /// The system call a host signal interrupted (it returned EINTR).
    interrupted: Option<u64>,
}

impl Default for Signals {
    fn default() -> Self {
        Signals {
            actions: Arc::new(Actions { table: Mutex::new([[0; 4]; 64]), catches_faults: AtomicBool::new(false) }),
            mask: 0,
            altstack: [0, SS_DISABLE, 0],
            suspended: None,
            interrupted: None,
        }
    }
}

fn read_words<const N: usize>(mem: &SharedMemory, addr: u64) -> Result<[u64; N], Errno> {
    let mut buf = vec![0u8; 8 * N];
    mem.lock().read_bytes(addr, &mut buf)?;
    Ok(std::array::from_fn(|i| u64::from_le_bytes(buf[8 * i..8 * i + 8].try_into().expect("8 bytes"))))
}

fn write_words(mem: &SharedMemory, addr: u64, words: &[u64]) -> Result<(), Errno> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.lock().write_bytes(addr, &bytes)
}

/// Whether the kernel restarts `nr` after a handler with SA_RESTART
/// (those that return ERESTARTSYS); the rest fail with EINTR.
fn restartable(nr: u64) -> bool {
    use Sysno::*;
    !matches!(
        Sysno::from_nr(nr),
        Some(
            pause
                | rt_sigsuspend
                | rt_sigtimedwait
                | nanosleep
                | clock_nanosleep
                | select
                | pselect6
                | poll
                | ppoll
                | epoll_wait
                | epoll_pwait
                | epoll_pwait2
                | io_getevents
                | semtimedop
        )
    )
}

/// Takes the default action of `sig` for real: nothing for the ignored
/// ones, stops the process (until it is continued) for a stop signal,
/// else kills it with the signal.
fn take_default_action(sig: i32) {
    if DEFAULT_IGNORED.contains(&sig) {
        return;
    }
    if STOP_SIGNALS.contains(&sig) {
        host!(libc::SYS_tgkill, u64::from(std::process::id()), super::this_thread(), libc::SIGSTOP as u64).ok();
    } else {
        signals::die_with(sig);
    }
}

impl Signals {
    /// The guest's initial signal state: default actions, except for the
    /// signals the host ignores (inherited across execve), and the host's
    /// mask. SIGPIPE is given back its default action on the host (Rust's
    /// runtime ignores it), and the fault handlers are installed.
    pub fn inherited() -> Signals {
        set_host_disposition(libc::SIGPIPE as u64, SIG_DFL);
        signals::install_fault_handlers();
        let s = Signals { mask: signals::host_mask() & !UNBLOCKABLE, ..Signals::default() };
        for sig in (1..=64).filter(|&s| mirrored(s) && crate::sys::signals::ignored(s as i32)) {
            s.actions.set((sig - 1) as usize, [SIG_IGN, 0, 0, 0]);
        }
        s
    }

    /// A new thread's signal state: the same dispositions, the creating
    /// thread's mask, no alternate stack (as for a clone with CLONE_VM).
    pub fn for_thread(&self) -> Signals {
        Signals { actions: Arc::clone(&self.actions), mask: self.mask, ..Signals::default() }
    }

    fn set_mask(&mut self, mask: u64) {
        self.mask = mask & !UNBLOCKABLE;
        signals::set_host_mask(self.mask);
    }

    /// Whether the guest has a handler for SIGSEGV or SIGBUS: then faults
    /// of JIT code must be replayed exactly.
    pub fn catches_memory_faults(&self) -> bool {
        self.actions.catches_faults.load(Ordering::SeqCst)
    }

    /// rt_sigaction(sig, act, oact, sigsetsize).
    pub fn sigaction(&mut self, mem: &SharedMemory, sig: u64, act: u64, oact: u64, size: u64) -> Result<u64, Errno> {
        if size != 8 || !(1..=64).contains(&sig) || (act != 0 && (sig == SIGKILL || sig == SIGSTOP)) {
            return Err(Errno::EINVAL);
        }
        let new = if act != 0 { Some(read_words::<4>(mem, act)?) } else { None };
        let slot = (sig - 1) as usize;
        if oact != 0 {
            write_words(mem, oact, &self.actions.get(slot))?;
        }
        if let Some(mut new) = new {
            new[3] &= !UNBLOCKABLE;
            self.actions.set(slot, new);
            set_host_disposition(sig, new[0]);
            if new[0] == SIG_IGN || (new[0] == SIG_DFL && DEFAULT_IGNORED.contains(&(sig as i32))) {
                signals::discard(sig as i32);
            }
        }
        Ok(0)
    }

    /// rt_sigprocmask(how, set, oset, sigsetsize). What it unblocks is
    /// delivered at the next safe point, right after the call.
    pub fn sigprocmask(&mut self, mem: &SharedMemory, how: u64, set: u64, oset: u64, size: u64) -> Result<u64, Errno> {
        if size != 8 {
            return Err(Errno::EINVAL);
        }
        let new = if set != 0 { Some(read_words::<1>(mem, set)?[0]) } else { None };
        if oset != 0 {
            write_words(mem, oset, &[self.mask])?;
        }
        if let Some(new) = new {
            let mask = match how {
                SIG_BLOCK => self.mask | new,
                SIG_UNBLOCK => self.mask & !new,
                SIG_SETMASK => new,
                _ => return Err(Errno::EINVAL),
            };
            self.set_mask(mask);
        }
        Ok(0)
    }

    /// Whether `sp` is on the alternate stack.
    fn on_altstack(&self, sp: u64) -> bool {
        let [base, _, size] = self.altstack;
        size != 0 && sp > base && sp - base <= size
    }

    /// The `ss_flags` sigaltstack reports at `sp`.
    fn altstack_flags(&self, sp: u64) -> u64 {
        let autodisarm = self.altstack[1] & SS_AUTODISARM;
        if self.on_altstack(sp) {
            SS_ONSTACK | autodisarm
        } else if self.altstack[2] == 0 {
            SS_DISABLE
        } else {
            autodisarm
        }
    }

    /// Sets the alternate stack from an x86-64 `stack_t` while the guest
    /// runs at `sp`.
    fn set_altstack(&mut self, [sp, flags, size]: [u64; 3], at: u64) -> Result<(), Errno> {
        if self.on_altstack(at) {
            return Err(Errno(libc::EPERM));
        }
        let flags = flags & 0xffff_ffff;
        if flags & !(SS_DISABLE | SS_AUTODISARM | SS_ONSTACK) != 0 {
            return Err(Errno::EINVAL);
        }
        if flags & SS_DISABLE != 0 {
            self.altstack = [0, SS_DISABLE, 0];
        } else if size < MINSIGSTKSZ {
            return Err(Errno(libc::ENOMEM));
        } else {
            self.altstack = [sp, flags & SS_AUTODISARM, size];
        }
        Ok(())
    }

    /// sigaltstack(ss, old_ss), the guest running at `sp`.
    pub fn sigaltstack(&mut self, mem: &SharedMemory, ss: u64, old: u64, sp: u64) -> Result<u64, Errno> {
        let new = if ss != 0 { Some(read_words::<3>(mem, ss)?) } else { None };
        if old != 0 {
            write_words(mem, old, &[self.altstack[0], self.altstack_flags(sp), self.altstack[2]])?;
        }
        if let Some(new) = new {
            self.set_altstack(new, sp)?;
        }
        Ok(0)
    }

    /// rt_sigpending(set, sigsetsize): pending in the host kernel (blocked
    /// there) or recorded and since blocked by the guest.
    pub fn sigpending(&self, mem: &SharedMemory, set: u64, size: u64) -> Result<u64, Errno> {
        if size != 8 {
            return Err(Errno::EINVAL);
        }
        let mut host: u64 = 0;
        host!(libc::SYS_rt_sigpending, &mut host as *mut u64 as u64, 8u64)?;
        write_words(mem, set, &[(host | signals::pending()) & self.mask])?;
        Ok(0)
    }

    /// Waits with `mask` until a handler is to run; the handler then
    /// returns to the mask before. Always EINTR.
    fn suspend(&mut self, mask: u64) -> Result<u64, Errno> {
        let old = self.mask;
        let mask = mask & !UNBLOCKABLE;
        // Block everything while looking at what is recorded, so nothing
        // arrives between the look and the wait.
        signals::set_host_mask(u64::MAX);
        if signals::pending() & !mask == 0 {
            signals::suspend(mask);
        }
        self.set_mask(mask);
        self.suspended = Some(old);
        Err(Errno(libc::EINTR))
    }

    /// rt_sigsuspend(set, sigsetsize).
    pub fn sigsuspend(&mut self, mem: &SharedMemory, set: u64, size: u64) -> Result<u64, Errno> {
        if size != 8 {
            return Err(Errno::EINVAL);
        }
        let mask = read_words::<1>(mem, set)?[0];
        self.suspend(mask)
    }

    /// pause().
    pub fn pause(&mut self) -> Result<u64, Errno> {
        self.suspend(self.mask)
    }

    /// rt_sigtimedwait(set, info, timeout, sigsetsize): a recorded signal
    /// of the set first, else the host's wait.
    pub fn sigtimedwait(
        &mut self,
        mem: &SharedMemory,
        set: u64,
        info: u64,
        timeout: u64,
        size: u64,
    ) -> Result<u64, Errno> {
        if size != 8 {
            return Err(Errno::EINVAL);
        }
        let want = read_words::<1>(mem, set)?[0] & !UNBLOCKABLE;
        if let Some((sig, si)) = signals::take_pending(want) {
            if info != 0 {
                mem.lock().write_bytes(info, si.as_bytes())?;
            }
            return Ok(sig as u64);
        }
        host!(libc::SYS_rt_sigtimedwait, &want as *const u64 as u64, info, timeout, 8u64)
    }

    /// alarm(seconds), which arm64 lacks: setitimer(ITIMER_REAL), with the
    /// seconds left rounded as the kernel rounds them.
    pub fn alarm(&mut self, seconds: u64) -> Result<u64, Errno> {
        let zero = libc::timeval { tv_sec: 0, tv_usec: 0 };
        let new = libc::itimerval { it_interval: zero, it_value: libc::timeval { tv_sec: seconds as i64, tv_usec: 0 } };
        let mut old = libc::itimerval { it_interval: zero, it_value: zero };
        host!(
            libc::SYS_setitimer,
            libc::ITIMER_REAL as u64,
            &new as *const libc::itimerval as u64,
            &mut old as *mut libc::itimerval as u64
        )?;
        let (secs, usecs) = (old.it_value.tv_sec as u64, old.it_value.tv_usec);
        Ok(if (secs == 0 && usecs > 0) || usecs >= 500_000 { secs + 1 } else { secs })
    }

    /// A wait with a temporary signal mask (ppoll, pselect6, epoll_pwait,
    /// epoll_pwait2): `set` is the guest's sigset of `size` bytes, none if
    /// 0. `wait` makes the host call with the host sigset to wait with (0
    /// for none), which the host kernel installs for the wait atomically.
    /// When a signal ends the wait, its handler runs with the wait's mask,
    /// and the mask from before comes back when it returns, as natively.
    pub fn masked_wait(
        &mut self,
        mem: &SharedMemory,
        set: u64,
        size: u64,
        wait: impl FnOnce(u64) -> Result<u64, Errno>,
    ) -> Result<u64, Errno> {
        if set == 0 {
            return wait(0);
        }
        if size != 8 {
            return Err(Errno::EINVAL);
        }
        let mask = read_words::<1>(mem, set)?[0] & !UNBLOCKABLE;
        let faults = signals::FAULT_SIGNALS.iter().fold(0, |m, &s| m | bit(s as u64));
        let host_set = mask & !faults;
        let result = wait(&host_set as *const u64 as u64);
        if result == Err(Errno(libc::EINTR)) {
            self.suspended = Some(self.mask);
            self.set_mask(mask);
        }
        result
    }
}

/// The si_code of a floating-point exception, as the kernel's
/// `fpu__exception_code` derives it from `err`, the exception flags set
/// whose exception is unmasked (x87: status word and not control word;
/// SSE: MXCSR's flags and not its masks): invalid first, then divide by
/// zero, overflow, underflow or denormal, precision.
fn fp_code(err: u32) -> i32 {
    if err & 0x01 != 0 {
        FPE_FLTINV
    } else if err & 0x04 != 0 {
        FPE_FLTDIV
    } else if err & 0x08 != 0 {
        FPE_FLTOVF
    } else if err & 0x12 != 0 {
        FPE_FLTUND
    } else if err & 0x20 != 0 {
        FPE_FLTRES
    } else {
        0
    }
}

/// The siginfo of a fault: signal, code, address.
fn fault_info(sig: i32, code: i32, addr: u64) -> Siginfo {
    let mut info = Siginfo { signo: sig, code, ..Siginfo::default() };
    info.fields[0] = addr;
    info
}

/// What the frame of a fault records besides the registers: trap number
/// and faulting address (cr2). The page-fault error code (`err`) is left
/// 0: the host does not say whether the access was a read or a write.
#[derive(Clone, Copy, Debug, Default)]
struct FaultContext {
    trapno: u64,
    cr2: u64,
}

impl Process {
    /// A safe point: delivers the signals the host recorded that the guest
    /// does not block, each on its own frame (the last one runs first).
    pub fn deliver_signals(&mut self, state: &mut GuestState) {
        let ready = signals::pending() & !self.signals.mask;
        if ready == 0 && self.signals.interrupted.is_none() && self.signals.suspended.is_none() {
            return;
        }
        let mut interrupted = self.signals.interrupted.take();
        while let Some((sig, info)) = signals::take_pending(!self.signals.mask) {
            self.deliver(state, sig, info, FaultContext::default(), interrupted.take());
        }
        if let Some(old) = self.signals.suspended.take() {
            self.signals.set_mask(old);
        }
    }

    /// A system call is about to start: whether a signal is waiting to be
    /// delivered, whose handler should then run first. From here until a
    /// host call of the system call enters the kernel, a signal that
    /// arrives cancels that host call (`crate::signal::interruptible`) and
    /// is delivered first too.
    pub fn signal_before_syscall(&self) -> bool {
        interruptible::open();
        let ready = signals::pending() & !self.signals.mask != 0;
        if ready {
            interruptible::close();
        }
        ready
    }

    /// Notes that the system call `nr` just failed with EINTR.
    pub(super) fn interrupted(&mut self, nr: u64) {
        self.signals.interrupted = Some(nr);
    }

    /// In the child of a fork: no signal is pending for it (what the
    /// parent recorded stays the parent's), as for a new process.
    pub(super) fn forked_child(&mut self) {
        signals::forget_pending();
        crate::thread::forked_child();
        self.signals.interrupted = None;
    }

    /// Whether faults of JIT code must be replayed on the interpreter for
    /// an exact context (see [`Signals::catches_memory_faults`]).
    pub fn catches_memory_faults(&self) -> bool {
        self.signals.catches_memory_faults()
    }

    /// A trap of guest code at `state.rip`: the signal the kernel sends for
    /// it, to the guest's handler. Returns the signal when instead it must
    /// kill the process (see [`Process::force`]).
    #[must_use]
    pub fn trap(&mut self, state: &mut GuestState, kind: TrapKind) -> Option<i32> {
        let rip = state.rip;
        let (sig, code, addr, trapno) = match kind {
            TrapKind::Ill => (libc::SIGILL, ILL_ILLOPN, rip, TRAP_UD),
            TrapKind::DivZero => (libc::SIGFPE, FPE_INTDIV, rip, TRAP_DE),
            TrapKind::Breakpoint => {
                // int3 is a trap: the context is after it.
                state.rip = rip + 1;
                (libc::SIGTRAP, SI_KERNEL, 0, TRAP_BP)
            }
            TrapKind::Privileged => (libc::SIGSEGV, SI_KERNEL, 0, TRAP_GP),
            TrapKind::FetchFault => (libc::SIGSEGV, SEGV_MAPERR, rip, TRAP_PF),
            TrapKind::SimdFp => (libc::SIGFPE, fp_code(!(state.mxcsr >> 7) & state.mxcsr), rip, TRAP_XF),
            TrapKind::X87Fp => (libc::SIGFPE, fp_code(u32::from(state.fpsw & !state.fpcw)), rip, TRAP_MF),
        };
        tracing::debug!(rip = format_args!("{rip:#x}"), "guest fault {kind}: signal {sig}");
        let cr2 = if trapno == TRAP_PF { addr } else { 0 };
        self.force(state, sig, fault_info(sig, code, addr), FaultContext { trapno, cr2 })
    }

    /// A guest memory access faulted (the state is before the faulting
    /// instruction); as [`Process::trap`].
    #[must_use]
    pub fn fault(&mut self, state: &mut GuestState, fault: GuestFault) -> Option<i32> {
        tracing::debug!(rip = format_args!("{:#x}", state.rip), ?fault, "guest memory fault");
        let context = FaultContext { trapno: TRAP_PF, cr2: fault.addr };
        self.force(state, fault.sig, fault_info(fault.sig, fault.code, fault.addr), context)
    }

    /// A synchronous signal, as the kernel's `force_sig_fault`: delivered
    /// to the guest's handler, else (no handler, or the guest blocks or
    /// ignores the signal) the process dies of it: returns the signal.
    fn force(&mut self, state: &mut GuestState, sig: i32, info: Siginfo, context: FaultContext) -> Option<i32> {
        let s = sig as u64;
        let [handler, ..] = self.signals.actions.get((s - 1) as usize);
        if handler <= SIG_IGN || self.signals.mask & bit(s) != 0 {
            return Some(sig);
        }
        self.deliver(state, sig, info, context, None);
        None
    }

    /// Delivers `sig`: its default action, nothing when ignored, or the
    /// guest handler on a new frame. `interrupted` is the system call the
    /// signal interrupted, restarted after the handler under SA_RESTART.
    fn deliver(
        &mut self,
        state: &mut GuestState,
        sig: i32,
        info: Siginfo,
        context: FaultContext,
        interrupted: Option<u64>,
    ) {
        let s = sig as u64;
        let slot = (s - 1) as usize;
        let [handler, flags, restorer, sa_mask] = self.signals.actions.get(slot);
        match handler {
            SIG_IGN => return,
            SIG_DFL => return take_default_action(sig),
            _ => {}
        }
        if flags & SA_RESTORER == 0 {
            // The x86-64 kernel cannot return from a handler without one.
            signals::die_with(SIGSEGV);
        }
        let sp = state.gpr[RSP];
        let alt = flags & SA_ONSTACK != 0 && self.signals.altstack[2] != 0 && !self.signals.on_altstack(sp);
        let [ss_sp, _, ss_size] = self.signals.altstack;
        let place = Placement::new(sp, alt.then(|| ss_sp.wrapping_add(ss_size)), fpstate::size());
        let saved_mask = self.signals.suspended.take().unwrap_or(self.signals.mask);
        let mut mcontext = Sigcontext::from_state(state);
        mcontext.fpstate = place.fpstate;
        mcontext.oldmask = saved_mask;
        mcontext.trapno = context.trapno;
        mcontext.cr2 = context.cr2;
        if let Some(nr) = interrupted {
            if flags & SA_RESTART != 0 && restartable(nr) {
                mcontext.rax = nr;
                mcontext.rip -= SYSCALL_LEN;
            }
        }
        let stack = StackT { sp: ss_sp, flags: self.signals.altstack_flags(sp) as i32, _pad: 0, size: ss_size };
        let frame = RtSigframe {
            pretcode: restorer,
            uc: Ucontext { flags: uc_flags(fpstate::xstate()), link: 0, stack, mcontext, sigmask: saved_mask },
            info,
        };
        if fpstate::save(state, &self.mem.lock(), place.fpstate).is_none()
            || self.mem.lock().write_bytes(place.frame, frame.as_bytes()).is_err()
        {
            // No room for the frame: the kernel forces SIGSEGV.
            tracing::debug!(sig, frame = format_args!("{:#x}", place.frame), "cannot write the signal frame");
            signals::die_with(SIGSEGV);
        }
        state.gpr[RSP] = place.frame;
        state.gpr[RDI] = s;
        state.gpr[RSI] = place.frame + std::mem::offset_of!(RtSigframe, info) as u64;
        state.gpr[RDX] = place.frame + std::mem::offset_of!(RtSigframe, uc) as u64;
        state.gpr[RAX] = 0;
        state.flags[DF] = 0;
        // The handler starts with the FPU's initial control and status, as
        // the kernel's `fpu__clear_user_states` gives it (the frame keeps
        // the interrupted ones).
        state.mxcsr = GuestState::MXCSR_DEFAULT;
        state.fpcw = GuestState::FPCW_DEFAULT;
        state.fpsw = 0;
        state.fptag = 0;
        state.ymm_hi = [0; 16];
        state.rip = handler;
        if alt && self.signals.altstack[1] & SS_AUTODISARM != 0 {
            self.signals.altstack = [0, SS_DISABLE, 0];
        }
        let blocked = if flags & SA_NODEFER != 0 { sa_mask } else { sa_mask | bit(s) };
        self.signals.set_mask(self.signals.mask | blocked);
        if flags & SA_RESETHAND != 0 {
            self.signals.actions.set(slot, [SIG_DFL, flags, restorer, sa_mask]);
            set_host_disposition(s, SIG_DFL);
        }
        tracing::debug!(
            sig,
            handler = format_args!("{handler:#x}"),
            frame = format_args!("{:#x}", place.frame),
            "signal delivered"
        );
    }

    /// rt_sigreturn: the context of the frame the handler returned from
    /// (its `pretcode` popped, so at rsp - 8) becomes the guest's. A frame
    /// that cannot be read kills the process with SIGSEGV, as natively.
    pub fn sigreturn(&mut self, state: &mut GuestState) {
        let at = state.gpr[RSP].wrapping_sub(8);
        let mut bytes = vec![0u8; size_of::<RtSigframe>()];
        if self.mem.lock().read_bytes(at, &mut bytes).is_err() {
            signals::die_with(SIGSEGV);
        }
        let frame = RtSigframe::from_bytes(&bytes);
        let sp = state.gpr[RSP];
        let mcontext = frame.uc.mcontext;
        mcontext.to_state(state);
        if mcontext.fpstate != 0 && fpstate::restore(state, &self.mem.lock(), mcontext.fpstate).is_none() {
            signals::die_with(SIGSEGV);
        }
        self.signals.set_mask(frame.uc.sigmask);
        let stack = frame.uc.stack;
        // As the kernel's restore_altstack: errors (such as still running
        // on the alternate stack) leave it as it is.
        self.signals.set_altstack([stack.sp, stack.flags as u32 as u64, stack.size], sp).ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::GuestMemory;

    fn scratch() -> (SharedMemory, u64) {
        let mut mem = GuestMemory::new();
        let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        let a = mem.mmap(0, 4096, 3, flags, -1, 0).unwrap();
        (SharedMemory::new(mem), a)
    }

    #[test]
    fn actions_are_recorded_and_returned() {
        let (mem, a) = scratch();
        let mut s = Signals::default();
        write_words(&mem, a, &[0x401000, 0x0400_0000, 0x401100, u64::MAX]).unwrap();
        assert_eq!(s.sigaction(&mem, 10, a, a + 64, 8), Ok(0));
        assert_eq!(read_words::<4>(&mem, a + 64).unwrap(), [0; 4], "old action: default");
        assert_eq!(s.sigaction(&mem, 10, 0, a + 64, 8), Ok(0));
        assert_eq!(read_words::<4>(&mem, a + 64).unwrap(), [0x401000, 0x0400_0000, 0x401100, !UNBLOCKABLE]);
        assert_eq!(s.sigaction(&mem, SIGKILL, a, 0, 8), Err(Errno::EINVAL));
        assert_eq!(s.sigaction(&mem, 65, 0, 0, 8), Err(Errno::EINVAL));
        assert_eq!(s.sigaction(&mem, 10, 0, 0, 16), Err(Errno::EINVAL));
        assert_eq!(s.sigaction(&mem, 10, 8, 0, 8), Err(Errno::EFAULT));
        write_words(&mem, a, &[SIG_DFL, 0, 0, 0]).unwrap();
        assert_eq!(s.sigaction(&mem, 10, a, 0, 8), Ok(0));
    }

    #[test]
    fn masks_are_kept_and_checked() {
        let (mem, a) = scratch();
        let mut s = Signals::default();
        let before = signals::host_mask();
        write_words(&mem, a, &[bit(libc::SIGUSR2 as u64) | UNBLOCKABLE]).unwrap();
        assert_eq!(s.sigprocmask(&mem, SIG_BLOCK, a, a + 8, 8), Ok(0));
        assert_eq!(read_words::<1>(&mem, a + 8).unwrap(), [0]);
        assert_eq!(s.mask, bit(libc::SIGUSR2 as u64));
        assert_eq!(signals::host_mask() & bit(libc::SIGUSR2 as u64), bit(libc::SIGUSR2 as u64));
        assert_eq!(s.sigprocmask(&mem, SIG_UNBLOCK, a, 0, 8), Ok(0));
        assert_eq!(s.mask, 0);
        assert_eq!(s.sigprocmask(&mem, 7, a, 0, 8), Err(Errno::EINVAL));
        assert_eq!(s.sigprocmask(&mem, SIG_BLOCK, a, 0, 16), Err(Errno::EINVAL));
        signals::set_host_mask(before);
    }

    #[test]
    fn altstack_is_recorded_and_reports_onstack() {
        let (mem, a) = scratch();
        let mut s = Signals::default();
        assert_eq!(s.sigaltstack(&mem, 0, a, 0x1000), Ok(0));
        assert_eq!(read_words::<3>(&mem, a).unwrap(), [0, SS_DISABLE, 0]);
        write_words(&mem, a, &[0x7000_0000, 0, 1 << 16]).unwrap();
        assert_eq!(s.sigaltstack(&mem, a, a + 32, 0x1000), Ok(0));
        assert_eq!(s.sigaltstack(&mem, 0, a + 32, 0x1000), Ok(0));
        assert_eq!(read_words::<3>(&mem, a + 32).unwrap(), [0x7000_0000, 0, 1 << 16]);
        assert_eq!(s.sigaltstack(&mem, 0, a + 32, 0x7000_0100), Ok(0));
        assert_eq!(read_words::<3>(&mem, a + 32).unwrap(), [0x7000_0000, SS_ONSTACK, 1 << 16]);
        assert_eq!(s.sigaltstack(&mem, a, 0, 0x7000_0100), Err(Errno(libc::EPERM)), "on it");
        write_words(&mem, a, &[0x7000_0000, 0, 100]).unwrap();
        assert_eq!(s.sigaltstack(&mem, a, 0, 0x1000), Err(Errno(libc::ENOMEM)));
    }

    /// The frame rules of arch/x86/kernel/signal.c (red zone, alignment,
    /// argument registers, the mask while the handler runs), and a context
    /// edit by the handler surviving rt_sigreturn.
    #[test]
    fn a_handler_frame_round_trips_through_sigreturn() {
        let mut mem = GuestMemory::new();
        let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        let stack = mem.mmap(0, 1 << 16, 3, flags, -1, 0).unwrap();
        let program = crate::loader::LoadedProgram {
            entry: 0,
            stack_pointer: 0,
            exe: "/guest/prog".into(),
            memory: mem,
            auxv: Vec::new(),
        };
        let mut p = Process::new(program, crate::loader::rootfs::Rootfs::new(std::path::Path::new("/")).unwrap());
        let host_mask = signals::host_mask();
        p.signals.mask = 0;
        let (usr1, usr2) = (libc::SIGUSR1 as u64, libc::SIGUSR2 as u64);
        p.signals.actions.set((usr1 - 1) as usize, [0x40_1000, SA_RESTORER | 4, 0x40_2000, bit(usr2)]);
        let mut s = GuestState { rip: 0x40_0123, ..GuestState::default() };
        for (i, g) in s.gpr.iter_mut().enumerate() {
            *g = 0x1000 + i as u64;
        }
        s.gpr[RSP] = stack + 0x8000 - 3;
        s.xmm[3] = 0x1234_5678;
        s.set_rflags(0x2 | 0x400 | 0x1);
        let before = s;
        p.deliver(
            &mut s,
            usr1 as i32,
            Siginfo { signo: usr1 as i32, ..Siginfo::default() },
            FaultContext::default(),
            None,
        );
        let frame = s.gpr[RSP];
        assert_eq!((s.rip, s.gpr[RDI]), (0x40_1000, usr1));
        assert_eq!((frame + 8) % 16, 0, "rsp + 8 is 16-aligned at handler entry");
        assert!(frame + 440 + 512 <= before.gpr[RSP] - 128, "below the red zone");
        assert_eq!((s.gpr[RSI], s.gpr[RDX]), (frame + 312, frame + 8));
        assert_eq!(s.flags[DF], 0, "direction flag clear");
        assert_eq!(p.signals.mask, bit(usr1) | bit(usr2));
        assert_eq!(read_words::<1>(&p.mem, frame).unwrap(), [0x40_2000], "returns to sa_restorer");
        let mcontext = frame + 8 + 40;
        assert_eq!(read_words::<1>(&p.mem, mcontext + 128).unwrap(), [0x40_0123], "uc_mcontext.rip");
        write_words(&mut p.mem, mcontext + 104, &[77]).unwrap();
        // The handler returns to the restorer (popping pretcode), which
        // calls rt_sigreturn.
        s.gpr[RSP] += 8;
        s.xmm[3] = 0;
        p.sigreturn(&mut s);
        let mut want = before;
        want.gpr[RAX] = 77;
        assert_eq!(s, want);
        assert_eq!(p.signals.mask, 0);
        signals::set_host_mask(host_mask);
    }

    #[test]
    fn restart_follows_the_kernel() {
        assert!(restartable(Sysno::read as u64));
        assert!(restartable(Sysno::wait4 as u64));
        assert!(!restartable(Sysno::nanosleep as u64));
        assert!(!restartable(Sysno::rt_sigsuspend as u64));
    }
}
