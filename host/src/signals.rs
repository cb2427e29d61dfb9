//! Host signal handling at the runtime's edge: the handlers aarchx
//! installs on the host. The little state they share with the dispatcher
//! is the thread's context (`crate::thread`: recorded signals, the fault
//! record, the run of generated code), and a handler touches nothing else.
//!
//! - Signals the guest handles: [`catch`] installs [`on_signal`], which
//!   only records the signal and its siginfo as pending; the dispatcher
//!   delivers it to the guest handler at the next safe point
//!   ([`take_pending`]). It is installed without SA_RESTART, so a blocking
//!   host system call returns EINTR and the syscall layer restarts it or
//!   not as the guest's SA_RESTART says; a host call of a guest system
//!   call that has not entered the kernel yet is cancelled
//!   (`crate::signal::interruptible`).
//! - SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP always have [`on_fault`]: a
//!   fault of a guest memory access, in the interpreter's probes
//!   (`crate::signal::probe`) or in JIT code, is recorded and the host
//!   context redirected (to the probe's landing pad; to the trampoline's
//!   exit with the fault exit code and the stack pointer of the run's
//!   entry). A store to a page write-protected for its guest code runs
//!   again instead, the page made writable (`crate::code_pages`). A
//!   SIGBUS for misalignment at a bare `ldar`/`stlr` of JIT code
//!   resumes at that access's fenced plain version instead (its fixup,
//!   see `crate::jit::lower`). The same signals sent by a process are recorded as pending
//!   like any other. Any other fault is aarchx's own: the handler restores
//!   the default action and returns, so the access faults again and the
//!   process dies of it.
//! - [`die_with`]: ending aarchx with the signal that killed the guest.

use crate::signal::frame::{Plain, Siginfo};
use crate::sys;
use crate::thread::{self, CodeRun};

/// `si_code` of a fault on a page whose permissions refuse the access
/// (`libc` has no name for it).
const SEGV_ACCERR: i32 = 2;

/// The fault signals [`on_fault`] owns.
pub const FAULT_SIGNALS: [i32; 5] = [libc::SIGILL, libc::SIGTRAP, libc::SIGBUS, libc::SIGFPE, libc::SIGSEGV];

/// The handler of a signal the guest handles: records it, and cancels the
/// host system call about to start, if any.
extern "C" fn on_signal(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    // SAFETY: with SA_SIGINFO the kernel passes its siginfo and the
    // interrupted context, both valid for the handler's duration and not
    // otherwise referenced.
    unsafe { record(sig, info) };
    // SAFETY: as above.
    let uc = unsafe { &mut *uc.cast::<libc::ucontext_t>() };
    cut_code_run(uc);
    cancel_syscall(uc);
}

/// Brings a JIT run in progress back to the dispatcher soon, for the
/// signal just recorded: its indirect branches miss from now on (the
/// context's target-cache pointer is swapped for a table with no entries;
/// `Jit::run` puts the real one back), and when the signal interrupted a
/// translated block itself, its next budget check (every backward exit)
/// finds the chain budget spent. Interrupted elsewhere (a helper, the
/// trampoline, whose x26 is not the budget yet or any more), the budget
/// still bounds the delay.
fn cut_code_run(uc: &mut libc::ucontext_t) {
    let Some(run) = thread::current().code_run() else { return };
    let Some(slot) = run.cut else { return };
    thread::cut_one(slot);
    #[cfg(target_arch = "aarch64")]
    if (run.blocks..run.code.1).contains(&context::pc(uc)) {
        uc.uc_mcontext.regs[run.budget_reg] = 1;
    }
    #[cfg(not(target_arch = "aarch64"))]
    let _ = uc;
}

/// Records `sig` with its siginfo as pending on this thread.
///
/// # Safety
///
/// `info` points at the kernel's siginfo for this delivery.
unsafe fn record(sig: i32, info: *const libc::siginfo_t) {
    // SAFETY: the kernel's siginfo is 128 bytes (16 words), readable.
    let words = unsafe { &*info.cast::<[u64; 16]>() };
    thread::current().record_signal(sig, words);
}

/// Sends code about to enter the kernel for a guest system call to the
/// cancelled return of `crate::signal::interruptible`.
fn cancel_syscall(uc: &mut libc::ucontext_t) {
    if let Some(pc) = crate::signal::interruptible::signal_arrived(context::pc(uc)) {
        context::set_pc(uc, pc);
    }
}

/// The host pc and a way to move it, from the handler's context.
#[cfg(target_arch = "aarch64")]
mod context {
    pub fn pc(uc: &libc::ucontext_t) -> usize {
        uc.uc_mcontext.pc as usize
    }
    pub fn set_pc(uc: &mut libc::ucontext_t, pc: usize) {
        uc.uc_mcontext.pc = pc as u64;
    }
}

#[cfg(target_arch = "x86_64")]
mod context {
    pub fn pc(uc: &libc::ucontext_t) -> usize {
        uc.uc_mcontext.gregs[libc::REG_RIP as usize] as usize
    }
    pub fn set_pc(uc: &mut libc::ucontext_t, pc: usize) {
        uc.uc_mcontext.gregs[libc::REG_RIP as usize] = pc as i64;
    }
}

/// The handler of the fault signals (see the module comment).
extern "C" fn on_fault(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    // SAFETY: with SA_SIGINFO the kernel passes its siginfo and the
    // interrupted context, both valid for the handler's duration and not
    // otherwise referenced.
    let (info_ref, uc) = unsafe { (&*info, &mut *uc.cast::<libc::ucontext_t>()) };
    if info_ref.si_code <= 0 {
        // Sent by a process (kill, tgkill, sigqueue): an ordinary signal.
        // SAFETY: as above.
        unsafe { record(sig, info) };
        cancel_syscall(uc);
        return;
    }
    let memory = sig == libc::SIGSEGV || sig == libc::SIGBUS;
    // SAFETY: for SIGSEGV and SIGBUS the kernel fills si_addr.
    let addr = unsafe { info_ref.si_addr() } as u64;
    let pc = context::pc(uc);
    let (begin, end, landing) = crate::signal::probe::code_range();
    let run = thread::current().code_run();
    let in_jit = run.filter(|r| r.contains(pc));
    #[cfg(target_arch = "aarch64")]
    if let Some(run) = in_jit.filter(|_| sig == libc::SIGBUS && info_ref.si_code == libc::BUS_ADRALN) {
        if let (Some(f), Some(patch)) = (run.fixup(pc), run.patch) {
            // A bare acquire/release access at a misaligned address: its
            // fenced plain version takes over, now and from now on (a site
            // misaligned once tends to be again; FEX-Emu backpatches the
            // same way). See `jit/lower/mem.rs`.
            // SAFETY: `at` is an instruction of the run's code (its fixup
            // table lists only those), and this thread, the code's, runs
            // no code while the patch makes its page writable.
            unsafe { patch(f.at, f.branch) };
            context::set_pc(uc, f.fixup);
            return;
        }
    }
    if memory && ((begin..end).contains(&pc) || in_jit.is_some()) {
        if sig == libc::SIGSEGV && info_ref.si_code == SEGV_ACCERR && crate::code_pages::resume_write(addr) {
            // A store to a page write-protected for its code: it runs
            // again, the page writable now; translated code in progress
            // comes back to the dispatcher soon, which drops the page's
            // translations (see `crate::code_pages`).
            cut_code_run(uc);
            return;
        }
        if let Some(decline) = in_jit.and_then(|run| run.leaf_decline(pc)) {
            // A leaf routine's access: it declines, and the guest's own
            // code that follows takes the fault (see `crate::jit::leaf`).
            context::set_pc(uc, decline);
            return;
        }
        thread::current().record_fault(crate::machine::GuestFault { sig, code: info_ref.si_code, addr });
        match in_jit {
            Some(run) => leave_code_run(uc, &run),
            None => context::set_pc(uc, landing),
        }
        return;
    }
    // aarchx's own fault: die of it.
    sys::signals::set_default(sig);
}

/// Sends the interrupted generated code to its run's exit sequence with
/// the fault exit code, the stack as the run's entry left it.
#[cfg(target_arch = "aarch64")]
fn leave_code_run(uc: &mut libc::ucontext_t, run: &CodeRun) {
    // SAFETY: the slot is the `entry_sp` field of the live JIT context of
    // the run in progress (registered for the run's duration), written by
    // the trampoline before it branched to the block.
    let sp = unsafe { *(run.sp_slot as *const u64) };
    uc.uc_mcontext.sp = sp;
    uc.uc_mcontext.regs[0] = run.fault_code;
    context::set_pc(uc, run.exit);
}

#[cfg(not(target_arch = "aarch64"))]
fn leave_code_run(_uc: &mut libc::ucontext_t, _run: &CodeRun) {
    unreachable!("JIT code runs on aarch64 hosts only");
}

/// Installs the fault handler for the five fault signals.
pub fn install_fault_handlers() {
    for sig in FAULT_SIGNALS {
        // SAFETY: `on_fault` is async-signal-safe: it touches atomics, this
        // thread's context and the context the kernel passes.
        unsafe { sys::signals::install(sig, on_fault) };
    }
}

/// Makes the host record `sig` for a guest handler.
pub fn catch(sig: i32) {
    if !FAULT_SIGNALS.contains(&sig) {
        // SAFETY: `on_signal` is async-signal-safe: it records the signal
        // in this thread's context (atomics) and may cut the run short.
        unsafe { sys::signals::install(sig, on_signal) };
    }
}

/// Sets the host mask of the signals the guest may block (all but the
/// fault signals, which aarchx needs, and SIGKILL and SIGSTOP); returns
/// the host mask before.
pub fn set_host_mask(mask: u64) -> u64 {
    let faults = FAULT_SIGNALS.iter().fold(0, |m, &s| m | thread::bit(s));
    sys::signals::set_mask(mask & !faults)
}

/// The host's current signal mask.
pub fn host_mask() -> u64 {
    sys::signals::mask()
}

/// Waits, with the host mask `mask` (the fault signals never blocked),
/// until a handler has run; the mask is then what it was.
pub fn suspend(mask: u64) {
    let faults = FAULT_SIGNALS.iter().fold(0, |m, &s| m | thread::bit(s));
    sys::signals::suspend(mask & !faults);
}

/// Takes one signal recorded on this thread among `allowed` (lowest
/// number first), with its siginfo.
pub fn take_pending(allowed: u64) -> Option<(i32, Siginfo)> {
    let (sig, words) = thread::current().take_signal(allowed)?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    Some((sig, Siginfo::from_bytes(&bytes)))
}

/// The signals recorded on this thread, as a mask.
pub fn pending() -> u64 {
    thread::current().pending_signals()
}

/// Drops every recorded signal (in a new child process).
pub fn forget_pending() {
    thread::current().discard_signals(u64::MAX);
}

/// Drops a recorded signal (the guest now ignores it).
pub fn discard(sig: i32) {
    thread::current().discard_signals(thread::bit(sig));
}

/// Kills this process with `sig`, as the default action of a guest fault
/// would kill the guest. No core file is written: aarchx writes nothing to
/// the host file system that the guest did not ask for.
pub fn die_with(sig: i32) -> ! {
    sys::signals::die_of(sig);
    // A signal whose default action is to ignore (not one of the faults)
    // would return here.
    std::process::exit(128 + sig)
}

/// Starts a thread of aarchx's own (a timer, a watchdog) with every
/// signal blocked, so the guest's signals keep reaching the main thread.
pub fn spawn_quiet(name: &str, body: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    // The new thread inherits the blocked mask.
    sys::signals::with_all_blocked(|| std::thread::Builder::new().name(name.into()).spawn(body)).map(drop)
}
