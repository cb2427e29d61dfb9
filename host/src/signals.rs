//! Host signal handling at the runtime's edge: the handlers aarchx
//! installs on the host and the little state they share with the
//! dispatcher: atomics, and the JIT run of the thread in a
//! constant-initialised thread-local (a handler may touch nothing else).
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
//!   entry). A SIGBUS for misalignment at a bare `ldar`/`stlr` of JIT code
//!   resumes at that access's fenced plain version instead (its fixup,
//!   see `crate::jit::lower`). The same signals sent by a process are recorded as pending
//!   like any other. Any other fault is aarchx's own: the handler restores
//!   the default action and returns, so the access faults again and the
//!   process dies of it.
//! - [`die_with`]: ending aarchx with the signal that killed the guest.

use std::cell::Cell;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering::SeqCst};

use crate::machine::GuestFault;
use crate::signal::frame::{Plain, Siginfo};

/// The fault signals [`on_fault`] owns.
pub const FAULT_SIGNALS: [i32; 5] = [libc::SIGILL, libc::SIGTRAP, libc::SIGBUS, libc::SIGFPE, libc::SIGSEGV];

/// Signals recorded by a handler and not yet delivered: bit `sig - 1`.
static PENDING: AtomicU64 = AtomicU64::new(0);
/// The siginfo of each recorded signal, as 16 words.
static INFO: [[AtomicU64; 16]; 64] = [const { [const { AtomicU64::new(0) }; 16] }; 64];

/// The last guest-access fault: signal (0 for none), si_code, address.
static FAULT_SIG: AtomicI32 = AtomicI32::new(0);
static FAULT_CODE: AtomicI32 = AtomicI32::new(0);
static FAULT_ADDR: AtomicU64 = AtomicU64::new(0);

/// The JIT run in progress on a thread: its code range (empty between
/// runs), where translated blocks start in it (past the trampoline), the
/// trampoline's exit sequence, the address of the stack-pointer slot the
/// trampoline filled on entry, that of the context's target-cache pointer,
/// and the misaligned-access fixup table (address, length).
#[derive(Clone, Copy)]
#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code, reason = "JIT code runs on aarch64 hosts only"))]
struct JitRun {
    start: usize,
    end: usize,
    blocks: usize,
    exit: usize,
    sp_slot: usize,
    ibtc_slot: usize,
    fixups: usize,
    fixups_len: usize,
}

impl JitRun {
    const NONE: JitRun =
        JitRun { start: 0, end: 0, blocks: 0, exit: 0, sp_slot: 0, ibtc_slot: 0, fixups: 0, fixups_len: 0 };
}

thread_local! {
    /// Per thread: a fault is the faulting thread's, and each thread runs
    /// its own JIT. Constant-initialised with no destructor, so reading it
    /// in a signal handler allocates nothing and runs no initialiser.
    static JIT_RUN: Cell<JitRun> = const { Cell::new(JitRun::NONE) };
}

/// This thread's JIT run ([`JitRun::NONE`] between runs).
fn jit_run() -> JitRun {
    JIT_RUN.with(Cell::get)
}

fn bit(sig: i32) -> u64 {
    1 << (sig - 1)
}

/// Records `sig` with its siginfo as pending.
///
/// # Safety
///
/// `info` points at the kernel's siginfo for this delivery.
unsafe fn record(sig: i32, info: *const libc::siginfo_t) {
    if !(1..=64).contains(&sig) {
        return;
    }
    // SAFETY: the kernel's siginfo is 128 bytes (16 words), readable.
    let words = unsafe { std::slice::from_raw_parts(info.cast::<u64>(), 16) };
    for (slot, w) in INFO[(sig - 1) as usize].iter().zip(words) {
        slot.store(*w, SeqCst);
    }
    PENDING.fetch_or(bit(sig), SeqCst);
}

/// The handler of a signal the guest handles: records it, and cancels the
/// host system call about to start, if any.
extern "C" fn on_signal(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    // SAFETY: with SA_SIGINFO the kernel passes its siginfo and the
    // interrupted context, both valid for the handler's duration and not
    // otherwise referenced.
    unsafe { record(sig, info) };
    // SAFETY: as above.
    let uc = unsafe { &mut *uc.cast::<libc::ucontext_t>() };
    cut_jit_run(uc);
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
fn cut_jit_run(uc: &mut libc::ucontext_t) {
    let run = jit_run();
    let slot = run.ibtc_slot;
    if run.end == 0 || slot == 0 {
        return;
    }
    // SAFETY: `slot` is the `ibtc` field of the live JIT context of the
    // run in progress (registered by `jit_enter`, cleared by `jit_leave`);
    // translated code on this thread only reads it, with plain loads that
    // this store, made between two of its instructions, cannot tear.
    unsafe { std::ptr::write_volatile(slot as *mut usize, crate::jit::ibtc::NO_ENTRIES.as_ptr() as usize) };
    #[cfg(target_arch = "aarch64")]
    if (run.blocks..run.end).contains(&context::pc(uc)) {
        uc.uc_mcontext.regs[usize::from(crate::jit::regs::BUDGET_REG)] = 1;
    }
    #[cfg(not(target_arch = "aarch64"))]
    let _ = uc;
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
    let run = jit_run();
    let in_jit = (run.start..run.end).contains(&pc);
    #[cfg(target_arch = "aarch64")]
    if in_jit && sig == libc::SIGBUS && info_ref.si_code == libc::BUS_ADRALN {
        if let Some(f) = misaligned_fixup(&run, pc) {
            // A bare acquire/release access at a misaligned address: its
            // fenced plain version takes over, now and from now on (a site
            // misaligned once tends to be again; FEX-Emu backpatches the
            // same way). See `jit/lower/mem.rs`.
            // SAFETY: `at` is an instruction of the live code cache (the
            // run's fixup table lists only those), and this thread, the
            // cache's, runs no code while the patch makes its page
            // writable.
            unsafe { crate::jit::cache::patch_word(f.at, f.branch) };
            context::set_pc(uc, f.fixup);
            return;
        }
    }
    if memory && ((begin..end).contains(&pc) || in_jit) {
        FAULT_CODE.store(info_ref.si_code, SeqCst);
        FAULT_ADDR.store(addr, SeqCst);
        FAULT_SIG.store(sig, SeqCst);
        if in_jit {
            leave_jit_code(uc);
        } else {
            context::set_pc(uc, landing);
        }
        return;
    }
    // aarchx's own fault: die of it.
    // SAFETY: installs the default action (no handler code).
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}

/// A bare acquire/release access of JIT code (`at`), the fenced plain
/// version a misaligned one resumes at (`fixup`), and the `b fixup` that
/// replaces the access once it has been misaligned (encoded in advance:
/// the handler does not assemble).
#[derive(Clone, Copy, Debug)]
pub struct Fixup {
    pub at: usize,
    pub fixup: usize,
    pub branch: u32,
}

/// The fixup of the bare acquire/release access at `pc`, if it is one.
#[cfg(target_arch = "aarch64")]
fn misaligned_fixup(run: &JitRun, pc: usize) -> Option<Fixup> {
    let (ptr, len) = (run.fixups, run.fixups_len);
    if len == 0 {
        return None;
    }
    // SAFETY: `jit_enter` registered this slice of the JIT's fixup table,
    // which nothing changes while translated code runs (only then can a
    // pc lie in the cache), and `jit_leave` unregisters it.
    let table = unsafe { std::slice::from_raw_parts(ptr as *const Fixup, len) };
    let i = table.binary_search_by_key(&pc, |f| f.at).ok()?;
    Some(table[i])
}

/// Sends the interrupted JIT code to the trampoline's exit sequence with
/// the fault exit code, the stack as the trampoline left it.
#[cfg(target_arch = "aarch64")]
fn leave_jit_code(uc: &mut libc::ucontext_t) {
    // SAFETY: the slot is the `entry_sp` field of the live JIT context of
    // the run in progress (registered by `jit_enter`), written by the
    // trampoline before it branched to the block.
    let run = jit_run();
    let sp = unsafe { *(run.sp_slot as *const u64) };
    uc.uc_mcontext.sp = sp;
    uc.uc_mcontext.regs[0] = crate::jit::exit::fault_code();
    context::set_pc(uc, run.exit);
}

#[cfg(not(target_arch = "aarch64"))]
fn leave_jit_code(_uc: &mut libc::ucontext_t) {
    unreachable!("JIT code runs on aarch64 hosts only");
}

/// Installs `handler` for `sig` with SA_SIGINFO | SA_ONSTACK, every
/// signal blocked while it runs.
fn install(sig: i32, handler: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void)) {
    // SAFETY: `handler` only touches atomics (and, for faults, the
    // context the kernel passes); `act` is a live, fully initialised local.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigfillset(&mut act.sa_mask);
        libc::sigaction(sig, &act, std::ptr::null_mut());
    }
}

/// Installs the fault handler for the five fault signals.
pub fn install_fault_handlers() {
    for sig in FAULT_SIGNALS {
        install(sig, on_fault);
    }
}

/// Makes the host record `sig` for a guest handler.
pub fn catch(sig: i32) {
    if !FAULT_SIGNALS.contains(&sig) {
        install(sig, on_signal);
    }
}

/// Sets the host mask of the signals the guest may block (all but the
/// fault signals, which aarchx needs, and SIGKILL and SIGSTOP); returns
/// the host mask before.
pub fn set_host_mask(mask: u64) -> u64 {
    let faults = FAULT_SIGNALS.iter().fold(0, |m, &s| m | bit(s));
    let mut old: u64 = 0;
    let new = mask & !faults;
    // SAFETY: rt_sigprocmask with 8-byte kernel sigsets, both live locals.
    unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &new as *const u64, &mut old as *mut u64, 8) };
    old
}

/// The host's current signal mask.
pub fn host_mask() -> u64 {
    let none: u64 = 0;
    let mut old: u64 = 0;
    // SAFETY: rt_sigprocmask blocking nothing, with 8-byte kernel sigsets
    // in live locals: only reads the mask.
    unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_BLOCK, &none as *const u64, &mut old as *mut u64, 8) };
    old
}

/// Waits, with the host mask `mask` (the fault signals never blocked),
/// until a handler has run; the mask is then what it was.
pub fn suspend(mask: u64) {
    let faults = FAULT_SIGNALS.iter().fold(0, |m, &s| m | bit(s));
    let set = mask & !faults;
    // SAFETY: rt_sigsuspend with an 8-byte kernel sigset in a live local.
    unsafe { libc::syscall(libc::SYS_rt_sigsuspend, &set as *const u64, 8) };
}

/// Takes one recorded signal among `allowed` (lowest number first), with
/// its siginfo.
pub fn take_pending(allowed: u64) -> Option<(i32, Siginfo)> {
    loop {
        let ready = PENDING.load(SeqCst) & allowed;
        if ready == 0 {
            return None;
        }
        let sig = ready.trailing_zeros() as i32 + 1;
        if PENDING.fetch_and(!bit(sig), SeqCst) & bit(sig) != 0 {
            let words: Vec<u8> = INFO[(sig - 1) as usize].iter().flat_map(|w| w.load(SeqCst).to_le_bytes()).collect();
            return Some((sig, Siginfo::from_bytes(&words)));
        }
    }
}

/// The recorded signals, as a mask.
pub fn pending() -> u64 {
    PENDING.load(SeqCst)
}

/// Drops every recorded signal (in a new child process).
pub fn forget_pending() {
    PENDING.store(0, SeqCst);
}

/// Drops a recorded signal (the guest now ignores it).
pub fn discard(sig: i32) {
    PENDING.fetch_and(!bit(sig), SeqCst);
}

/// The fault recorded for the access that just failed.
///
/// # Panics
///
/// If no fault was recorded.
pub fn take_fault() -> GuestFault {
    let sig = FAULT_SIG.swap(0, SeqCst);
    assert_ne!(sig, 0, "a guest access failed without a recorded fault");
    GuestFault { sig, code: FAULT_CODE.load(SeqCst), addr: FAULT_ADDR.load(SeqCst) }
}

/// Records a fault of a guest access made by a runtime helper that JIT
/// code called, and leaves the run as a fault of the code itself would:
/// at the trampoline's exit sequence, with its stack and the fault code.
/// Only `call_helper`'s own frame is abandoned, which owns nothing.
///
/// # Safety
///
/// Called from the helper entry point of a JIT run in progress (after
/// `jit_enter`), with nothing left to drop on the way back to it.
#[cfg(target_arch = "aarch64")]
pub unsafe fn leave_jit_run(fault: GuestFault) -> ! {
    FAULT_CODE.store(fault.code, SeqCst);
    FAULT_ADDR.store(fault.addr, SeqCst);
    FAULT_SIG.store(fault.sig, SeqCst);
    // SAFETY: the slot is the live context's `entry_sp` (see
    // `leave_jit_code`).
    let run = jit_run();
    let sp = unsafe { *(run.sp_slot as *const u64) };
    let exit = run.exit;
    // SAFETY: the exit sequence restores the registers the trampoline
    // saved from the stack at `sp` and returns from the trampoline's call
    // with x0 (the contract above: no frame in between needs dropping).
    unsafe {
        std::arch::asm!(
            "mov sp, {sp}",
            "br {exit}",
            sp = in(reg) sp,
            exit = in(reg) exit,
            in("x0") crate::jit::exit::fault_code(),
            options(noreturn)
        )
    }
}

/// Registers the JIT run about to start: faults with a pc in `code` are
/// the guest's; they leave through `exit` with the stack pointer stored
/// at `sp_slot`, but for a misaligned acquire/release access at an address
/// of `fixups` (sorted, alive until [`jit_leave`]), which resumes at its
/// fixup. Translated blocks start at `blocks` (in `code`); a
/// signal to deliver redirects the target-cache pointer at `ibtc_slot`
/// (see [`cut_jit_run`]).
pub fn jit_enter(
    code: std::ops::Range<usize>,
    blocks: usize,
    exit: usize,
    sp_slot: *const u64,
    ibtc_slot: *mut usize,
    fixups: &[Fixup],
) {
    JIT_RUN.with(|r| {
        r.set(JitRun {
            start: code.start,
            end: code.end,
            blocks,
            exit,
            sp_slot: sp_slot as usize,
            ibtc_slot: ibtc_slot as usize,
            fixups: fixups.as_ptr() as usize,
            fixups_len: fixups.len(),
        })
    });
}

/// The JIT run is over.
pub fn jit_leave() {
    JIT_RUN.with(|r| r.set(JitRun::NONE));
}

/// Kills this process with `sig`, as the default action of a guest fault
/// would kill the guest. No core file is written: aarchx writes nothing to
/// the host file system that the guest did not ask for.
pub fn die_with(sig: i32) -> ! {
    let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: setrlimit, signal, sigprocmask and raise are async-signal-safe
    // libc calls given valid arguments; `no_core` and `set` live on this
    // stack for the duration of the calls.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
    // A signal whose default action is to ignore (not one of the faults)
    // would return here.
    std::process::exit(128 + sig)
}

/// Starts a thread of aarchx's own (a timer, a watchdog) with every
/// signal blocked, so the guest's signals keep reaching the main thread.
pub fn spawn_quiet(name: &str, body: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    // SAFETY: plain signal-mask calls on valid, initialised sigsets; the
    // new thread inherits the blocked mask, this thread gets its old one
    // back right after the spawn.
    let old = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        old
    };
    let spawned = std::thread::Builder::new().name(name.into()).spawn(body);
    // SAFETY: as above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    spawned.map(drop)
}
