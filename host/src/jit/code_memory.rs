//! The host calls behind the code cache's memory: one anonymous mapping,
//! readable and executable, made writable (and not executable) only for
//! the moment a write to it takes, page by page. No page of the cache is
//! ever writable and executable at once (W^X), so a guest store that
//! strays into it faults like a store to read-only memory, and host code
//! cannot be planted there.
//!
//! Flipping the protection, rather than writing through a second,
//! writable mapping of the same memory, keeps every write at the address
//! the code runs from: qemu-user, which runs the arm64 build in the tests,
//! notices a change of code only there (its translations of a page are
//! dropped when the page is written or made writable), and ignores the
//! arm64 instruction cache maintenance. A page is not executable while it
//! is written: a cache belongs to one thread (see `jit/mod.rs`), which is
//! then not running code.
//!
//! Every change of the code cache's mapping is here (through `crate::sys`).

use std::io;
use std::ops::Range;

use crate::sys::mem as host;

/// Reserves `size` bytes, readable and executable, where the kernel
/// chooses; returns the start.
pub fn map(size: usize) -> io::Result<usize> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    Ok(host::map_anywhere(0, size as u64, libc::PROT_READ | libc::PROT_EXEC, flags, -1, 0)? as usize)
}

/// Sets the protection of the pages holding `range`.
///
/// # Safety
///
/// `range` lies in a mapping made by [`map`] and not unmapped, and no code
/// in those pages runs until they are executable again.
unsafe fn protect(range: &Range<usize>, prot: i32) {
    let page = host::page_size() as usize;
    let start = range.start & !(page - 1);
    let end = range.end.next_multiple_of(page);
    // SAFETY: the caller's contract: these pages are the code cache's.
    let r = unsafe { host::protect(start as u64, (end - start) as u64, prot) };
    // Failing to change the protection of our own mapping means the
    // address space is broken: nothing sensible remains to be done.
    if let Err(e) = r {
        panic!("mprotect of the code cache failed: {e}");
    }
}

/// Runs `write` with the pages holding `range` writable and not
/// executable, then makes them executable again (not writable).
///
/// # Safety
///
/// As for [`protect`]; `write` writes only within `range`.
pub unsafe fn with_writable<T>(range: Range<usize>, write: impl FnOnce() -> T) -> T {
    // SAFETY: the caller's contract.
    unsafe { protect(&range, libc::PROT_READ | libc::PROT_WRITE) };
    let out = write();
    // SAFETY: as above.
    unsafe { protect(&range, libc::PROT_READ | libc::PROT_EXEC) };
    out
}

/// Unmaps a mapping made by [`map`].
///
/// # Safety
///
/// No code in it runs again, and nothing refers to it.
pub unsafe fn unmap(base: usize, size: usize) {
    // SAFETY: the caller's contract.
    unsafe { host::unmap(base as u64, size as u64) }.ok();
}
