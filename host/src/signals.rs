//! Host signal handling at the runtime's edge. For now: ending aarchx with
//! the signal that killed the guest, so the parent sees the same status as
//! for a native run. (Delivery to guest handlers comes with the signals work.)

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
