//! Host memory: mappings, their protection and the page size. Calls that
//! can replace or change existing memory are `unsafe`: the caller must own
//! the range, so that no memory the runtime refers to changes under it.

use crate::sys::Errno;

/// A non-fixed (or no-replace) mapping: the kernel picks free space, or
/// fails, so no existing memory is touched.
pub fn map_anywhere(hint: u64, len: u64, prot: i32, flags: i32, fd: i32, offset: u64) -> Result<u64, Errno> {
    debug_assert_eq!(flags & libc::MAP_FIXED, 0);
    // SAFETY: without MAP_FIXED the kernel only uses free address space,
    // so no existing Rust-visible memory changes.
    let p = unsafe { libc::mmap(hint as *mut libc::c_void, len as usize, prot, flags, fd, offset as libc::off_t) };
    if p == libc::MAP_FAILED {
        Err(Errno::last())
    } else {
        Ok(p as u64)
    }
}

/// Maps over `[addr, addr + len)`, replacing what is there.
///
/// # Safety
/// The caller owns the range: no memory the runtime refers to is in it.
pub unsafe fn map_fixed(addr: u64, len: u64, prot: i32, flags: i32, fd: i32, offset: u64) -> Result<u64, Errno> {
    // SAFETY: the caller owns the range; MAP_FIXED replaces only it.
    let p = unsafe {
        libc::mmap(addr as *mut libc::c_void, len as usize, prot, flags | libc::MAP_FIXED, fd, offset as libc::off_t)
    };
    if p == libc::MAP_FAILED {
        Err(Errno::last())
    } else {
        Ok(p as u64)
    }
}

/// Reserves `[addr, addr + len)` if it is entirely free, as PROT_NONE.
/// Succeeds only when the mapping landed exactly there (kernels before
/// 4.17 and qemu-user may treat MAP_FIXED_NOREPLACE as a hint).
pub fn reserve_exact(addr: u64, len: u64) -> Result<(), Errno> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED_NOREPLACE;
    let got = map_anywhere(addr, len, libc::PROT_NONE, flags, -1, 0)?;
    if got != addr {
        // SAFETY: the kernel just created this mapping for us elsewhere.
        unsafe { unmap(got, len) }.ok();
        return Err(Errno::EEXIST);
    }
    Ok(())
}

/// # Safety
/// The caller owns the range: no memory the runtime refers to is in it.
pub unsafe fn unmap(addr: u64, len: u64) -> Result<(), Errno> {
    // SAFETY: the caller owns the range.
    if unsafe { libc::munmap(addr as *mut libc::c_void, len as usize) } != 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// # Safety
/// The caller owns the range: no memory the runtime refers to is in it.
pub unsafe fn protect(addr: u64, len: u64, prot: i32) -> Result<(), Errno> {
    // SAFETY: the caller owns the range; only its protection changes.
    if unsafe { libc::mprotect(addr as *mut libc::c_void, len as usize, prot) } != 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// # Safety
/// The caller owns the old range, and with MREMAP_FIXED the new one too.
pub unsafe fn remap(old: u64, old_len: u64, new_len: u64, flags: i32, new_addr: u64) -> Result<u64, Errno> {
    // SAFETY: the caller owns both ranges; without MREMAP_FIXED the
    // kernel only grows into or moves to free address space.
    let p = unsafe {
        libc::mremap(old as *mut libc::c_void, old_len as usize, new_len as usize, flags, new_addr as *mut libc::c_void)
    };
    if p == libc::MAP_FAILED {
        Err(Errno::last())
    } else {
        Ok(p as u64)
    }
}

/// Passes `advice` (which may drop the contents) on for the range.
///
/// # Safety
/// The caller owns the range and may lose its contents.
pub unsafe fn advise(addr: u64, len: u64, advice: i32) -> Result<(), Errno> {
    // SAFETY: the caller owns the range and accepts the advice's effect.
    if unsafe { libc::madvise(addr as *mut libc::c_void, len as usize, advice) } != 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// The host page size (a power of two; 4 KiB if the host will not say).
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page).ok().filter(|p| p.is_power_of_two()).unwrap_or(4096)
}
