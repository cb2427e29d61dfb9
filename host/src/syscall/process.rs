//! New processes and their reaping: fork, vfork, fork-like clone, wait4
//! and waitid.
//!
//! A fork is a host fork (a raw host `clone` without CLONE_VM): the child
//! is a copy of this whole aarchx process, translation cache included, and
//! goes on translating the guest from the instruction after the system
//! call, on its one thread. A fork while other guest threads run copies
//! the runtime's locks as those threads held them: the dispatcher holds
//! the translator's lock across the call ([`forks`]) and the fork holds
//! the guest memory map's, so the child finds both free; a lock of the
//! host's C library that another thread held (its allocator's) is still
//! copied held (see docs/threads.md).
//!
//! vfork, and clone with CLONE_VM|CLONE_VFORK (glibc's posix_spawn), are
//! a fork with CLONE_VFORK: the child gets a copy of memory, not the same
//! memory, and the parent sleeps until the child executes a program or
//! exits (on a native host kernel; qemu-user turns CLONE_VFORK into a plain
//! fork, and the parent then runs on at once). Programs that follow the
//! vfork rules (the child only calls execve or _exit) cannot tell; what
//! such a child writes to memory is not seen by the parent (posix_spawn's
//! report of a failed exec is lost: the parent sees the child exit 127).
//!
//! clone of a thread (CLONE_THREAD) is `thread.rs`'s; CLONE_VM without
//! CLONE_THREAD or CLONE_VFORK (a process sharing memory) is not
//! supported: -ENOSYS.
//!
//! wait4 and waitid pass through: the wait status encoding, `struct
//! rusage` (144 bytes) and `siginfo_t` (128 bytes) are the same on x86-64
//! and arm64 Linux, and so are the option bits.

use aarchx_ir::GuestState;

use super::{Errno, Process, RSP};

use super::thread::{CLONE_CHILD_CLEARTID, CLONE_CHILD_SETTID, CLONE_PARENT_SETTID, CLONE_VM};

const CLONE_VFORK: u64 = 0x4000;
/// The low byte of the flags: the signal the parent gets when the child
/// exits.
const EXIT_SIGNAL: u64 = 0xff;
/// The flags a fork-like clone may carry.
const FORK_FLAGS: u64 = EXIT_SIGNAL | CLONE_VFORK | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID;

/// Whether the system call `state` asks for makes a new process (fork,
/// vfork, a clone without CLONE_THREAD): the dispatcher then holds the
/// runtime's locks across it.
pub fn forks(state: &GuestState) -> bool {
    use super::{Sysno, RAX, RDI};
    match Sysno::from_nr(state.gpr[RAX]) {
        Some(Sysno::fork | Sysno::vfork) => true,
        Some(Sysno::clone) => !super::thread::is_thread(state.gpr[RDI]),
        _ => false,
    }
}

/// Whether the system call `state` asks for is an `execve`, which ends
/// this process's aarchx if it succeeds.
pub fn execs(state: &GuestState) -> bool {
    matches!(super::Sysno::from_nr(state.gpr[super::RAX]), Some(super::Sysno::execve | super::Sysno::execveat))
}

const SIGCHLD: u64 = 17;

impl Process {
    /// fork.
    pub(super) fn fork(&mut self, state: &mut GuestState) -> Result<u64, Errno> {
        self.clone_process(state, SIGCHLD, 0, 0, 0)
    }

    /// vfork: a fork whose parent waits for the child to exec or exit.
    pub(super) fn vfork(&mut self, state: &mut GuestState) -> Result<u64, Errno> {
        self.clone_process(state, CLONE_VFORK | SIGCHLD, 0, 0, 0)
    }

    /// clone(flags, stack, parent_tid, child_tid, tls) in the x86-64
    /// argument order; only its fork-like forms.
    pub(super) fn clone(
        &mut self,
        state: &mut GuestState,
        flags: u64,
        stack: u64,
        ptid: u64,
        ctid: u64,
    ) -> Result<u64, Errno> {
        let shares_memory = flags & CLONE_VM != 0 && flags & CLONE_VFORK == 0;
        if shares_memory || flags & !(FORK_FLAGS | CLONE_VM) != 0 {
            return unsupported_clone(flags);
        }
        self.clone_process(state, flags & FORK_FLAGS, stack, ptid, ctid)
    }

    /// The host fork behind fork, vfork and clone: `flags` holds only
    /// [`FORK_FLAGS`]; the child starts on guest stack `stack` if it is not
    /// 0. The tid pointers are guest addresses, which are host addresses.
    fn clone_process(
        &mut self,
        state: &mut GuestState,
        flags: u64,
        stack: u64,
        ptid: u64,
        ctid: u64,
    ) -> Result<u64, Errno> {
        // The child's copy of the memory map's lock must be free.
        let held = self.mem.lock();
        // SAFETY: the child is a copy of this process with this thread
        // only; the locks it needs are held here (the memory map's) or by
        // the dispatcher (the translator's) across the call. The tid
        // pointers are guest memory the kernel checks.
        let pid = unsafe { crate::sys::process::fork_clone(flags, ptid, ctid) };
        drop(held);
        let pid = pid?;
        if pid == 0 && stack != 0 {
            state.gpr[RSP] = stack;
        }
        Ok(pid)
    }
}

fn unsupported_clone(flags: u64) -> Result<u64, Errno> {
    tracing::debug!(
        flags = format_args!("{flags:#x}"),
        "clone: only fork-like clones are supported: returning -ENOSYS"
    );
    Err(Errno(libc::ENOSYS))
}
