//! Signals, as far as they go for now: the guest's signal dispositions,
//! mask and alternate stack are recorded (rt_sigaction, rt_sigprocmask,
//! sigaltstack) and reported back, but guest handlers are never run: real
//! delivery to guest code is a later issue.
//!
//! A signal the guest sends itself (kill, tkill, tgkill) is honoured as far
//! as that allows: ignored if the guest ignores it or its default action is
//! to ignore it, kept pending while the guest blocks it (so glibc's raise
//! and abort, which block all signals around the tgkill, still work), and
//! otherwise given its default action for real on the host, so the process
//! dies of (or stops on) that signal as the guest would. A guest handler, which cannot run yet, gets the default
//! action too. Signal numbers are the same on x86-64 and arm64 Linux.
//!
//! Ignoring is real: a signal the guest ignores is ignored on the host too
//! (so a write to a closed pipe fails with EPIPE, SIGCHLD's SIG_IGN reaps
//! children, and an execve passes the ignored set on as the kernel does),
//! and any other disposition is the host default. The guest starts with
//! the dispositions aarchx inherited, except SIGPIPE, which Rust's runtime
//! ignores at start-up and is given back its default action. The fault
//! signals aarchx itself raises for guest faults keep their host handling.

use super::Errno;
use crate::mem::GuestMemory;

const SIGKILL: u64 = 9;
const SIGSTOP: u64 = 19;
const SIG_DFL: u64 = 0;
const SIG_IGN: u64 = 1;
/// Signals whose default action is to do nothing: SIGCHLD, SIGCONT,
/// SIGURG, SIGWINCH.
const DEFAULT_IGNORED: [u64; 4] = [17, 18, 23, 28];
/// Signals whose default action is to stop the process: SIGSTOP, SIGTSTP,
/// SIGTTIN, SIGTTOU.
const STOP_SIGNALS: [u64; 4] = [19, 20, 21, 22];
/// The bits of SIGKILL and SIGSTOP, which can be neither blocked nor caught.
const UNBLOCKABLE: u64 = 1 << (SIGKILL - 1) | 1 << (SIGSTOP - 1);

const SIG_BLOCK: u64 = 0;
const SIG_UNBLOCK: u64 = 1;
const SIG_SETMASK: u64 = 2;

const SS_DISABLE: u64 = 2;
const SS_AUTODISARM: u64 = 1 << 31;
const MINSIGSTKSZ: u64 = 2048;

/// The x86-64 kernel `struct sigaction`: handler, flags, restorer, mask.
type Action = [u64; 4];

/// SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV: their host disposition is
/// never changed for the guest.
const FAULT_SIGNALS: [u64; 5] = [4, 5, 7, 8, 11];
const SIGPIPE: u64 = 13;

/// Whether the guest's disposition of `sig` is mirrored on the host.
fn mirrored(sig: u64) -> bool {
    (1..=64).contains(&sig) && sig != SIGKILL && sig != SIGSTOP && !FAULT_SIGNALS.contains(&sig)
}

/// Whether the host ignores `sig`.
fn host_ignores(sig: u64) -> bool {
    // SAFETY: sigaction with no new action only writes `old`, a live local.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig as i32, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Makes the host ignore `sig`, or take its default action.
fn set_host_ignored(sig: u64, ignored: bool) {
    let disposition = if ignored { libc::SIG_IGN } else { libc::SIG_DFL };
    // SAFETY: installs SIG_IGN or SIG_DFL (no handler code) for a signal
    // that is not one of the fault signals aarchx handles.
    unsafe { libc::signal(sig as i32, disposition) };
}

fn bit(sig: u64) -> u64 {
    1 << (sig - 1)
}

/// The guest's signal state.
#[derive(Debug)]
pub struct Signals {
    actions: [Action; 64],
    mask: u64,
    pending: u64,
    /// x86-64 `stack_t`: sp, flags, size.
    altstack: [u64; 3],
}

impl Default for Signals {
    fn default() -> Self {
        Signals { actions: [[0; 4]; 64], mask: 0, pending: 0, altstack: [0, SS_DISABLE, 0] }
    }
}

fn read_words<const N: usize>(mem: &GuestMemory, addr: u64) -> Result<[u64; N], Errno> {
    let mut buf = vec![0u8; 8 * N];
    mem.read_bytes(addr, &mut buf)?;
    Ok(std::array::from_fn(|i| u64::from_le_bytes(buf[8 * i..8 * i + 8].try_into().expect("8 bytes"))))
}

fn write_words(mem: &mut GuestMemory, addr: u64, words: &[u64]) -> Result<(), Errno> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.write_bytes(addr, &bytes)
}

impl Signals {
    /// The guest's initial signal state: default actions, except for the
    /// signals the host ignores (inherited across execve), and SIGPIPE
    /// back to its default action on the host.
    pub fn inherited() -> Signals {
        set_host_ignored(SIGPIPE, false);
        let mut signals = Signals::default();
        for sig in (1..=64).filter(|&s| mirrored(s) && host_ignores(s)) {
            signals.actions[(sig - 1) as usize][0] = SIG_IGN;
        }
        signals
    }

    /// rt_sigaction(sig, act, oact, sigsetsize).
    pub fn sigaction(&mut self, mem: &mut GuestMemory, sig: u64, act: u64, oact: u64, size: u64) -> Result<u64, Errno> {
        if size != 8 || !(1..=64).contains(&sig) || (act != 0 && (sig == SIGKILL || sig == SIGSTOP)) {
            return Err(Errno::EINVAL);
        }
        let new = if act != 0 { Some(read_words::<4>(mem, act)?) } else { None };
        let slot = (sig - 1) as usize;
        if oact != 0 {
            write_words(mem, oact, &self.actions[slot])?;
        }
        if let Some(mut new) = new {
            new[3] &= !UNBLOCKABLE;
            self.actions[slot] = new;
            if new[0] == SIG_IGN {
                self.pending &= !bit(sig);
            }
            if mirrored(sig) {
                set_host_ignored(sig, new[0] == SIG_IGN);
            }
        }
        Ok(0)
    }

    /// rt_sigprocmask(how, set, oset, sigsetsize); then delivers what it
    /// unblocked.
    pub fn sigprocmask(
        &mut self,
        mem: &mut GuestMemory,
        how: u64,
        set: u64,
        oset: u64,
        size: u64,
    ) -> Result<u64, Errno> {
        if size != 8 {
            return Err(Errno::EINVAL);
        }
        let new = if set != 0 { Some(read_words::<1>(mem, set)?[0]) } else { None };
        if oset != 0 {
            write_words(mem, oset, &[self.mask])?;
        }
        if let Some(new) = new {
            self.mask = match how {
                SIG_BLOCK => self.mask | new,
                SIG_UNBLOCK => self.mask & !new,
                SIG_SETMASK => new,
                _ => return Err(Errno::EINVAL),
            } & !UNBLOCKABLE;
        }
        self.deliver_pending();
        Ok(0)
    }

    /// sigaltstack(ss, old_ss): recorded only.
    pub fn sigaltstack(&mut self, mem: &mut GuestMemory, ss: u64, old: u64) -> Result<u64, Errno> {
        let new = if ss != 0 { Some(read_words::<3>(mem, ss)?) } else { None };
        if old != 0 {
            write_words(mem, old, &self.altstack)?;
        }
        if let Some([sp, flags, size]) = new {
            let flags = flags & 0xffff_ffff;
            if flags & !(SS_DISABLE | SS_AUTODISARM) != 0 {
                return Err(Errno::EINVAL);
            }
            if flags & SS_DISABLE == 0 && size < MINSIGSTKSZ {
                return Err(Errno::ENOMEM);
            }
            self.altstack = if flags & SS_DISABLE != 0 { [0, SS_DISABLE, 0] } else { [sp, flags, size] };
        }
        Ok(0)
    }

    /// A signal the guest sends itself.
    pub fn send_self(&mut self, sig: u64) -> Result<u64, Errno> {
        match sig {
            0 => Ok(0),
            1..=64 if self.mask & bit(sig) != 0 => {
                self.pending |= bit(sig);
                Ok(0)
            }
            1..=64 => {
                self.deliver(sig);
                Ok(0)
            }
            _ => Err(Errno::EINVAL),
        }
    }

    fn deliver_pending(&mut self) {
        while let Some(sig) = (1..=64).find(|&s| self.pending & !self.mask & bit(s) != 0) {
            self.pending &= !bit(sig);
            self.deliver(sig);
        }
    }

    fn deliver(&mut self, sig: u64) {
        let handler = self.actions[(sig - 1) as usize][0];
        if handler == SIG_IGN || DEFAULT_IGNORED.contains(&sig) {
            return;
        }
        if handler != SIG_DFL {
            tracing::debug!(sig, handler, "guest signal handlers are not run yet: taking the default action");
        }
        take_default_action(sig);
    }
}

/// Takes the default action of `sig` for real: stops the process (until
/// it is continued) for a stop signal, else kills it with the signal.
fn take_default_action(sig: u64) {
    if STOP_SIGNALS.contains(&sig) {
        host!(libc::SYS_tgkill, u64::from(std::process::id()), super::this_thread(), sig).ok();
    } else {
        crate::signals::die_with(sig as i32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> (GuestMemory, u64) {
        let mut mem = GuestMemory::new();
        let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        let (a, _) = mem.mmap(0, 4096, 3, flags, -1, 0).unwrap();
        (mem, a)
    }

    #[test]
    fn actions_are_recorded_and_returned() {
        let (mut mem, a) = scratch();
        let mut s = Signals::default();
        write_words(&mut mem, a, &[0x401000, 0x0400_0000, 0x401100, u64::MAX]).unwrap();
        assert_eq!(s.sigaction(&mut mem, 10, a, a + 64, 8), Ok(0));
        assert_eq!(read_words::<4>(&mem, a + 64).unwrap(), [0; 4], "old action: default");
        assert_eq!(s.sigaction(&mut mem, 10, 0, a + 64, 8), Ok(0));
        assert_eq!(read_words::<4>(&mem, a + 64).unwrap(), [0x401000, 0x0400_0000, 0x401100, !UNBLOCKABLE]);
        assert_eq!(s.sigaction(&mut mem, SIGKILL, a, 0, 8), Err(Errno::EINVAL));
        assert_eq!(s.sigaction(&mut mem, 65, 0, 0, 8), Err(Errno::EINVAL));
        assert_eq!(s.sigaction(&mut mem, 10, 0, 0, 16), Err(Errno::EINVAL));
        assert_eq!(s.sigaction(&mut mem, 10, 8, 0, 8), Err(Errno::EFAULT));
    }

    #[test]
    fn blocked_self_signals_stay_pending() {
        let (mut mem, a) = scratch();
        let mut s = Signals::default();
        write_words(&mut mem, a, &[u64::MAX]).unwrap();
        assert_eq!(s.sigprocmask(&mut mem, SIG_BLOCK, a, a + 8, 8), Ok(0));
        assert_eq!(read_words::<1>(&mem, a + 8).unwrap(), [0]);
        assert_eq!(s.mask, !UNBLOCKABLE);
        // Would kill the test process if it were delivered now.
        assert_eq!(s.send_self(libc::SIGUSR1 as u64), Ok(0));
        assert_eq!(s.pending, bit(libc::SIGUSR1 as u64));
        // Ignoring it discards it; unblocking then delivers nothing.
        write_words(&mut mem, a + 16, &[SIG_IGN, 0, 0, 0]).unwrap();
        s.sigaction(&mut mem, libc::SIGUSR1 as u64, a + 16, 0, 8).unwrap();
        assert_eq!(s.pending, 0);
        write_words(&mut mem, a, &[0]).unwrap();
        assert_eq!(s.sigprocmask(&mut mem, SIG_SETMASK, a, 0, 8), Ok(0));
        assert_eq!(s.mask, 0);
        assert_eq!(s.send_self(libc::SIGWINCH as u64), Ok(0), "default-ignored");
        assert_eq!(s.send_self(65), Err(Errno::EINVAL));
        assert_eq!(s.sigprocmask(&mut mem, 7, a, 0, 8), Err(Errno::EINVAL));
    }

    #[test]
    fn altstack_is_recorded() {
        let (mut mem, a) = scratch();
        let mut s = Signals::default();
        assert_eq!(s.sigaltstack(&mut mem, 0, a), Ok(0));
        assert_eq!(read_words::<3>(&mem, a).unwrap(), [0, SS_DISABLE, 0]);
        write_words(&mut mem, a, &[0x7000_0000, 0, 1 << 16]).unwrap();
        assert_eq!(s.sigaltstack(&mut mem, a, a + 32), Ok(0));
        assert_eq!(s.sigaltstack(&mut mem, 0, a + 32), Ok(0));
        assert_eq!(read_words::<3>(&mem, a + 32).unwrap(), [0x7000_0000, 0, 1 << 16]);
        write_words(&mut mem, a, &[0x7000_0000, 0, 100]).unwrap();
        assert_eq!(s.sigaltstack(&mut mem, a, 0), Err(Errno::ENOMEM));
    }
}
