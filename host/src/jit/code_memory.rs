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
//! Every raw OS call of the code cache is here.

use std::io;
use std::ops::Range;

/// Reserves `size` bytes, readable and executable, where the kernel
/// chooses; returns the start.
pub fn map(size: usize) -> io::Result<usize> {
    // SAFETY: a fresh anonymous private mapping with no address hint
    // touches no existing memory; the result is checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_EXEC,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p as usize)
}

/// The host page size.
fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|p| p.is_power_of_two()).unwrap_or(4096)
}

/// Sets the protection of the pages holding `range`.
///
/// # Safety
///
/// `range` lies in a mapping made by [`map`] and not unmapped, and no code
/// in those pages runs until they are executable again.
unsafe fn protect(range: &Range<usize>, prot: i32) {
    let page = page();
    let start = range.start & !(page - 1);
    let end = range.end.next_multiple_of(page);
    // SAFETY: the caller's contract: these pages are the code cache's.
    let r = unsafe { libc::mprotect(start as *mut libc::c_void, end - start, prot) };
    // Failing to change the protection of our own mapping means the
    // address space is broken: nothing sensible remains to be done.
    assert_eq!(r, 0, "mprotect of the code cache failed: {}", io::Error::last_os_error());
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
    unsafe { libc::munmap(base as *mut libc::c_void, size) };
}
