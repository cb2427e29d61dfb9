//! The host operating system behind one boundary, as wasmtime keeps
//! `runtime/vm/sys/`: memory mappings and their protection ([`mem`]),
//! signal dispositions, masks and death by a signal ([`signals`]), and the
//! process's own facts and calls ([`process`]: ids, the auxiliary vector,
//! descriptors, the fork-like `clone`). Nothing else in the crate calls a
//! `libc` function. What stays elsewhere is the Linux ABI the guest sees
//! (system call numbers, flags and errno values, the same on x86-64 and
//! arm64 Linux, as `libc` constants), the signal frame types the handlers
//! read (`crate::signal::context`), and the guest's own system calls,
//! which go to the host kernel through the interruptible system call of
//! `crate::signal::interruptible` (its interrupt window is signal
//! handling's).
//!
//! Linux is the one implementation (`linux/`); `docs/macos.md` maps each
//! part to what a macOS arm64 host would use in its place.

use std::fmt;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::{mem, process, signals};

/// A failed operation, as the errno the guest receives. Linux errno values
/// are the same on x86-64 and arm64 (both use `asm-generic/errno.h`), so a
/// host errno is passed on as is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(pub i32);

impl Errno {
    pub const EFAULT: Errno = Errno(libc::EFAULT);
    pub const EINVAL: Errno = Errno(libc::EINVAL);
    pub const ENOMEM: Errno = Errno(libc::ENOMEM);
    pub const EEXIST: Errno = Errno(libc::EEXIST);

    /// The calling thread's current host errno (reads it, allocates
    /// nothing: usable in a signal handler).
    pub fn last() -> Errno {
        Errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", std::io::Error::from_raw_os_error(self.0))
    }
}

impl From<Errno> for std::io::Error {
    fn from(e: Errno) -> std::io::Error {
        std::io::Error::from_raw_os_error(e.0)
    }
}
