//! The host process's own facts and calls: its ids, its auxiliary vector
//! (flags, CPU features), a descriptor's flags, a memory file with given
//! contents, the fork-like `clone`, and leaving at once.

use crate::sys::Errno;

/// The real and effective user and group ids: (uid, euid, gid, egid).
pub fn ids() -> (u32, u32, u32, u32) {
    // SAFETY: these calls have no preconditions and cannot fail.
    unsafe { (libc::getuid(), libc::geteuid(), libc::getgid(), libc::getegid()) }
}

/// The `AT_FLAGS` entry of this process's auxiliary vector (0 if absent).
pub fn auxv_flags() -> u64 {
    // SAFETY: getauxval only reads this process's auxiliary vector; it has
    // no preconditions and answers 0 for a type that is not there.
    unsafe { libc::getauxval(libc::AT_FLAGS) }
}

/// The `AT_HWCAP` and `AT_HWCAP2` entries of this process's auxiliary
/// vector: the host CPU's features as the kernel reports them.
pub fn hwcaps() -> (u64, u64) {
    // SAFETY: as in `auxv_flags`.
    unsafe { (libc::getauxval(libc::AT_HWCAP), libc::getauxval(libc::AT_HWCAP2)) }
}

/// The file status flags of descriptor `fd` (`F_GETFL`), if it is open.
pub fn fd_flags(fd: i32) -> Option<i32> {
    // SAFETY: F_GETFL reads the descriptor's flags and nothing else.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    (flags >= 0).then_some(flags)
}

/// A new memory file named `name` holding `contents`, positioned at its
/// start; close-on-exec if `cloexec`.
pub fn memfd_with(name: &std::ffi::CStr, contents: &[u8], cloexec: bool) -> Result<i32, Errno> {
    let flags = if cloexec { libc::MFD_CLOEXEC } else { 0 };
    // SAFETY: memfd_create gets a NUL-terminated name; write and lseek get
    // the descriptor it returned and a buffer of that many readable bytes;
    // close is called only on that descriptor.
    unsafe {
        let fd = libc::memfd_create(name.as_ptr(), flags);
        if fd < 0 {
            return Err(Errno::last());
        }
        let mut done = 0;
        while done < contents.len() {
            let n = libc::write(fd, contents[done..].as_ptr().cast(), contents.len() - done);
            if n <= 0 {
                let e = Errno::last();
                libc::close(fd);
                return Err(e);
            }
            done += n as usize;
        }
        libc::lseek(fd, 0, libc::SEEK_SET);
        Ok(fd)
    }
}

/// A fork-like `clone` (no `CLONE_VM`, no new stack) with `flags` and the
/// parent and child tid pointers: the child's id in the parent, 0 in the
/// child. The kernel's argument order differs: x86-64 takes (flags,
/// stack, ptid, ctid, tls), arm64 (flags, stack, ptid, tls, ctid).
///
/// # Safety
/// The child gets a copy of this process with this thread only, and the
/// locks other threads hold stay held in it: the caller holds those the
/// child needs. The tid pointers are memory the kernel checks (or 0).
pub unsafe fn fork_clone(flags: u64, ptid: u64, ctid: u64) -> Result<u64, Errno> {
    #[cfg(target_arch = "x86_64")]
    let args = [flags, 0, ptid, ctid, 0];
    #[cfg(not(target_arch = "x86_64"))]
    let args = [flags, 0, ptid, 0, ctid];
    // SAFETY: the caller's contract; the child returns from this call on
    // its own copy of the stack.
    let r = unsafe { libc::syscall(libc::SYS_clone, args[0], args[1], args[2], args[3], args[4]) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(r as u64)
    }
}

/// Ends this process at once with `status`: no destructor, no buffered
/// output flushed, no exit handler.
pub fn exit_now(status: i32) -> ! {
    // SAFETY: _exit has no preconditions.
    unsafe { libc::_exit(status) }
}
