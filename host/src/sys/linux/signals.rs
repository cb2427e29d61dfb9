//! Host signals: dispositions, this thread's mask (as the kernel's 64-bit
//! set, bit `sig - 1`), waiting for a signal, and dying of one. Every
//! function here is async-signal-safe.

/// A handler as the kernel calls it with `SA_SIGINFO`: signal, siginfo,
/// and the interrupted context (`ucontext_t`).
pub type Handler = extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void);

/// Installs `handler` for `sig`, run on the alternate stack when the
/// thread has one, with every signal blocked while it runs.
///
/// # Safety
/// `handler` must be async-signal-safe, and may run on any thread at any
/// instruction.
pub unsafe fn install(sig: i32, handler: Handler) {
    // SAFETY: `act` is a live, fully initialised local; the caller vouches
    // for the handler.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigfillset(&mut act.sa_mask);
        libc::sigaction(sig, &act, std::ptr::null_mut());
    }
}

/// Gives `sig` its default action.
pub fn set_default(sig: i32) {
    // SAFETY: installs SIG_DFL, no handler code.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}

/// Makes the host ignore `sig`.
pub fn ignore(sig: i32) {
    // SAFETY: installs SIG_IGN, no handler code.
    unsafe { libc::signal(sig, libc::SIG_IGN) };
}

/// Whether the host ignores `sig`.
pub fn ignored(sig: i32) -> bool {
    // SAFETY: sigaction with no new action only writes `old`, a live local.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Sets this thread's mask to `mask`; returns the mask before.
pub fn set_mask(mask: u64) -> u64 {
    let mut old: u64 = 0;
    // SAFETY: rt_sigprocmask with 8-byte kernel sigsets, both live locals.
    unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &mask as *const u64, &mut old as *mut u64, 8) };
    old
}

/// This thread's mask.
pub fn mask() -> u64 {
    let none: u64 = 0;
    let mut old: u64 = 0;
    // SAFETY: rt_sigprocmask blocking nothing, with 8-byte kernel sigsets
    // in live locals: only reads the mask.
    unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_BLOCK, &none as *const u64, &mut old as *mut u64, 8) };
    old
}

/// Waits with the mask `mask` until a handler has run; the mask is then
/// what it was.
pub fn suspend(mask: u64) {
    // SAFETY: rt_sigsuspend with an 8-byte kernel sigset in a live local.
    unsafe { libc::syscall(libc::SYS_rt_sigsuspend, &mask as *const u64, 8) };
}

/// Runs `f` with every signal blocked on this thread (a thread it starts
/// inherits that mask), then gives the thread its mask back.
/// (The C library's own signals stay unblocked: it filters them out.)
pub fn with_all_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: plain signal-mask calls on valid, initialised sigsets.
    let old = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        old
    };
    let out = f();
    // SAFETY: as above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    out
}

/// Kills this process with `sig` by its default action, writing no core
/// file; returns only if that action is to ignore it.
pub fn die_of(sig: i32) {
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
}
