//! epoll. `struct epoll_event` is packed on x86-64 (12 bytes: u32 events,
//! then the u64 data at offset 4) and naturally aligned on arm64 (16
//! bytes, data at offset 8), so the event epoll_ctl reads and the events
//! the waits return are converted; the event bits and EPOLL_CLOEXEC are
//! the same on both. arm64 lacks epoll_create and epoll_wait: they are
//! epoll_create1 and epoll_pwait. The temporary signal mask of
//! epoll_pwait and epoll_pwait2 is the guest's (`Signals::masked_wait`).

use super::{Errno, Process};

/// Size of the x86-64 `struct epoll_event`.
const EVENT_SIZE: usize = 12;
const EPOLL_CTL_DEL: u64 = 2;
/// The most events one host wait collects: a wait asking for more gets
/// at most this many, and the others stay ready for the next wait.
const MAX_EVENTS: usize = 1024;

fn event_from_x86_64(b: &[u8; EVENT_SIZE]) -> libc::epoll_event {
    libc::epoll_event {
        events: u32::from_le_bytes(b[..4].try_into().expect("4 bytes")),
        u64: u64::from_le_bytes(b[4..].try_into().expect("8 bytes")),
    }
}

fn event_to_x86_64(e: &libc::epoll_event) -> [u8; EVENT_SIZE] {
    let mut b = [0u8; EVENT_SIZE];
    b[..4].copy_from_slice(&{ e.events }.to_le_bytes());
    b[4..].copy_from_slice(&{ e.u64 }.to_le_bytes());
    b
}

/// Which host call waits: epoll_pwait (timeout in milliseconds) or
/// epoll_pwait2 (timeout a `struct timespec` pointer, the same on both).
#[derive(Clone, Copy)]
pub(super) enum Timeout {
    Millis,
    Timespec,
}

/// epoll_create(size): size must be positive, and is otherwise unused.
pub(super) fn create(size: u64) -> Result<u64, Errno> {
    if size as i32 <= 0 {
        return Err(Errno::EINVAL);
    }
    host!(libc::SYS_epoll_create1, 0u64)
}

impl Process {
    /// epoll_ctl(epfd, op, fd, event): the event is read (and must be
    /// readable) for every operation but EPOLL_CTL_DEL, as the kernel does.
    pub(super) fn epoll_ctl(&mut self, epfd: u64, op: u64, fd: u64, event: u64) -> Result<u64, Errno> {
        let mut host_event = libc::epoll_event { events: 0, u64: 0 };
        if op != EPOLL_CTL_DEL {
            let mut b = [0u8; EVENT_SIZE];
            self.mem.lock().read_bytes(event, &mut b)?;
            host_event = event_from_x86_64(&b);
        }
        host!(libc::SYS_epoll_ctl, epfd, op, fd, &host_event as *const libc::epoll_event as u64)
    }

    /// epoll_pwait and epoll_pwait2 (epoll_wait is epoll_pwait with no
    /// mask): the host's events, written to the guest's array as x86-64
    /// events.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn epoll_pwait(
        &mut self,
        epfd: u64,
        events: u64,
        maxevents: u64,
        timeout: u64,
        kind: Timeout,
        set: u64,
        size: u64,
    ) -> Result<u64, Errno> {
        let max = maxevents as i32;
        if max <= 0 || max as usize > i32::MAX as usize / EVENT_SIZE {
            return Err(Errno::EINVAL);
        }
        if !crate::mem::user_range(events, max as u64 * EVENT_SIZE as u64) {
            return Err(Errno::EFAULT);
        }
        let n = (max as usize).min(MAX_EVENTS);
        let mut buf = vec![libc::epoll_event { events: 0, u64: 0 }; n];
        let nr = match kind {
            Timeout::Millis => libc::SYS_epoll_pwait,
            Timeout::Timespec => libc::SYS_epoll_pwait2,
        };
        let got = self.signals.masked_wait(&self.mem, set, size, |host_set| {
            host!(nr, epfd, buf.as_mut_ptr() as u64, n as u64, timeout, host_set, 8u64)
        })?;
        let bytes: Vec<u8> = buf[..got as usize].iter().flat_map(event_to_x86_64).collect();
        self.mem.lock().write_bytes(events, &bytes)?;
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_64_events_are_packed() {
        let b = [0x05, 0, 0, 0x80, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88];
        let e = event_from_x86_64(&b);
        assert_eq!({ e.events }, 0x8000_0005, "EPOLLIN | EPOLLOUT | EPOLLET");
        assert_eq!({ e.u64 }, 0x8877_6655_4433_2211, "data at offset 4");
        assert_eq!(event_to_x86_64(&e), b);
    }
}
