//! select and pselect6. arm64 lacks select: it is pselect6 with the
//! `struct timeval` timeout as a `struct timespec`, normalised and checked
//! as the kernel does, and the time left written back to the guest's
//! timeval as Linux does. `fd_set` (an array of 64-bit words), `struct
//! timespec` and pselect6's `{ sigset pointer, size }` argument are the
//! same on x86-64 and arm64; pselect6's temporary signal mask is the
//! guest's (`Signals::masked_wait`).

use super::{Errno, Process};

const USEC_PER_SEC: i64 = 1_000_000;
const NSEC_PER_USEC: i64 = 1000;

impl Process {
    /// select(nfds, readfds, writefds, exceptfds, timeout).
    pub(super) fn select(&mut self, nfds: u64, r: u64, w: u64, e: u64, timeout: u64) -> Result<u64, Errno> {
        if timeout == 0 {
            return host!(libc::SYS_pselect6, nfds, r, w, e, 0u64, 0u64);
        }
        let mut tv = [0u8; 16];
        self.mem.lock().read_bytes(timeout, &mut tv)?;
        let sec = i64::from_le_bytes(tv[..8].try_into().expect("8 bytes"));
        let usec = i64::from_le_bytes(tv[8..].try_into().expect("8 bytes"));
        // As the kernel's kern_select: whole seconds of tv_usec carry into
        // tv_sec, and a negative time is invalid.
        let mut ts = libc::timespec {
            tv_sec: sec.wrapping_add(usec / USEC_PER_SEC),
            tv_nsec: (usec % USEC_PER_SEC) * NSEC_PER_USEC,
        };
        if ts.tv_sec < 0 || ts.tv_nsec < 0 {
            return Err(Errno::EINVAL);
        }
        let polls = ts.tv_sec == 0 && ts.tv_nsec == 0;
        let result = host!(libc::SYS_pselect6, nfds, r, w, e, &mut ts as *mut libc::timespec as u64, 0u64);
        if !polls {
            // The host wrote the time left to `ts`. As Linux, a timeval the
            // guest cannot write is left as it is, without an error.
            let mut left = [0u8; 16];
            left[..8].copy_from_slice(&ts.tv_sec.to_le_bytes());
            left[8..].copy_from_slice(&(ts.tv_nsec / NSEC_PER_USEC).to_le_bytes());
            self.mem.lock().write_bytes(timeout, &left).ok();
        }
        result
    }

    /// pselect6(nfds, readfds, writefds, exceptfds, timeout, sig), `sig`
    /// pointing at `{ const sigset_t *set; size_t size }`.
    pub(super) fn pselect6(&mut self, nfds: u64, r: u64, w: u64, e: u64, timeout: u64, sig: u64) -> Result<u64, Errno> {
        let mut words = [0u8; 16];
        if sig != 0 {
            self.mem.lock().read_bytes(sig, &mut words)?;
        }
        let set = u64::from_le_bytes(words[..8].try_into().expect("8 bytes"));
        let size = u64::from_le_bytes(words[8..].try_into().expect("8 bytes"));
        self.signals.masked_wait(&self.mem, set, size, |host_set| {
            let arg = [host_set, 8];
            let argp = if host_set == 0 { 0 } else { arg.as_ptr() as u64 };
            host!(libc::SYS_pselect6, nfds, r, w, e, timeout, argp)
        })
    }
}
