//! Guest threads, the system call side: `clone` with the flags of
//! `pthread_create` (the dispatcher then starts the host thread, see
//! `crate::run`), `set_tid_address`, the robust futex list, and what the
//! kernel does when a thread ends: it walks the thread's robust list
//! (marking the futexes it still holds `FUTEX_OWNER_DIED` and waking a
//! waiter), then clears the `CLONE_CHILD_CLEARTID` word and wakes its
//! futex, which is what `pthread_join` waits for.
//!
//! One host thread runs each guest thread, so the guest's thread id is
//! the host's (gettid, tgkill and the futex words agree), its signal mask
//! is the host thread's, and guest memory, the host's own, is shared.

use aarchx_ir::GuestState;

use super::{Errno, Process, RAX, RSP};

pub(super) const CLONE_VM: u64 = 0x100;
const CLONE_FS: u64 = 0x200;
const CLONE_FILES: u64 = 0x400;
const CLONE_SIGHAND: u64 = 0x800;
const CLONE_THREAD: u64 = 0x1_0000;
const CLONE_SYSVSEM: u64 = 0x4_0000;
const CLONE_SETTLS: u64 = 0x8_0000;
pub(super) const CLONE_PARENT_SETTID: u64 = 0x10_0000;
pub(super) const CLONE_CHILD_CLEARTID: u64 = 0x20_0000;
const CLONE_DETACHED: u64 = 0x40_0000;
pub(super) const CLONE_CHILD_SETTID: u64 = 0x100_0000;

/// What a new thread shares with its creator: everything.
const THREAD_SHARES: u64 = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
/// The flags a thread's clone may carry besides those.
const THREAD_OPTIONS: u64 =
    CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_DETACHED | CLONE_CHILD_SETTID;

/// `futex` word bits of the robust-list protocol (linux/futex.h).
const FUTEX_WAITERS: u32 = 0x8000_0000;
const FUTEX_OWNER_DIED: u32 = 0x4000_0000;
const FUTEX_TID_MASK: u32 = 0x3fff_ffff;
/// The kernel's bound on a robust list's length (ROBUST_LIST_LIMIT).
const ROBUST_LIST_LIMIT: usize = 2048;
/// `struct robust_list_head`: next, futex_offset, list_op_pending.
const ROBUST_HEAD_SIZE: u64 = 24;

/// A guest thread created by `clone`, for the dispatcher to start: its
/// state (rax 0, its own stack and TLS) and its view of the process.
#[derive(Debug)]
pub struct NewThread {
    pub state: GuestState,
    pub process: Process,
    /// Guest addresses to store the new thread's id at, once known
    /// (`CLONE_PARENT_SETTID`, `CLONE_CHILD_SETTID`).
    pub tid_at: Vec<u64>,
}

/// What a thread keeps for its end: the `CLONE_CHILD_CLEARTID` /
/// `set_tid_address` word and the robust list head.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadExit {
    clear_tid: u64,
    robust_list: u64,
}

/// Whether `flags` ask for a thread (rather than a process).
pub(super) fn is_thread(flags: u64) -> bool {
    flags & CLONE_THREAD != 0
}

impl Process {
    /// clone(flags, stack, ptid, ctid, tls) of a thread: the new thread's
    /// description. The dispatcher starts it and returns its id in rax.
    pub(super) fn clone_thread(
        &mut self,
        state: &GuestState,
        [flags, stack, ptid, ctid, tls]: [u64; 5],
    ) -> Result<Box<NewThread>, Errno> {
        if flags & THREAD_SHARES != THREAD_SHARES || flags & !(THREAD_SHARES | THREAD_OPTIONS | 0xff) != 0 {
            tracing::debug!(flags = format_args!("{flags:#x}"), "clone: a thread must share everything: -EINVAL");
            return Err(Errno::EINVAL);
        }
        let mut child = *state;
        child.gpr[RAX] = 0;
        if stack != 0 {
            child.gpr[RSP] = stack;
        }
        if flags & CLONE_SETTLS != 0 {
            child.fs_base = tls;
        }
        let mut tid_at = Vec::new();
        if flags & CLONE_PARENT_SETTID != 0 {
            tid_at.push(ptid);
        }
        if flags & CLONE_CHILD_SETTID != 0 {
            tid_at.push(ctid);
        }
        let mut process = self.for_thread();
        if flags & CLONE_CHILD_CLEARTID != 0 {
            process.thread_exit.clear_tid = ctid;
        }
        Ok(Box::new(NewThread { state: child, process, tid_at }))
    }

    /// clone3(args, size) of a thread: `struct clone_args` read from the
    /// guest and made clone's arguments. A process, a pidfd, set_tid or a
    /// cgroup is ENOSYS, so the caller falls back to clone (as glibc does
    /// on a kernel without clone3); what the kernel refuses (a size out of
    /// range, an exit signal for a thread, signal bits in the flags, a
    /// stack without its size or the reverse) is refused as it does.
    pub(super) fn clone3_thread(&mut self, state: &GuestState, args: u64, size: u64) -> Result<Box<NewThread>, Errno> {
        /// `CLONE_ARGS_SIZE_VER0`: flags to tls, eight u64s.
        const VER0: usize = 64;
        const CLONE_PIDFD: u64 = 0x1000;
        if (size as usize) < VER0 {
            return Err(Errno::EINVAL);
        }
        if size > 4096 {
            return Err(Errno(libc::E2BIG));
        }
        let mut raw = vec![0u8; size as usize];
        self.mem.lock().read_bytes(args, &mut raw)?;
        let word =
            |i: usize| raw.get(8 * i..8 * i + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
        let [flags, _pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls] = std::array::from_fn(word);
        // set_tid, set_tid_size, cgroup (and any later field) must be unused.
        let extra_used = raw[VER0..].iter().any(|&b| b != 0);
        if !is_thread(flags) || flags & CLONE_PIDFD != 0 || extra_used || exit_signal > 0xff {
            tracing::debug!(
                flags = format_args!("{flags:#x}"),
                "clone3: only a thread without pidfd, set_tid or cgroup: -ENOSYS (clone serves the rest)"
            );
            return Err(Errno(libc::ENOSYS));
        }
        if exit_signal != 0 || flags & 0xff != 0 || (stack == 0) != (stack_size == 0) {
            return Err(Errno::EINVAL);
        }
        let top = if stack == 0 { 0 } else { stack.checked_add(stack_size).ok_or(Errno::EINVAL)? };
        self.clone_thread(state, [flags, top, parent_tid, child_tid, tls])
    }

    /// set_tid_address(tidptr): the word cleared when the thread ends.
    pub(super) fn set_tid_address(&mut self, tidptr: u64) -> Result<u64, Errno> {
        self.thread_exit.clear_tid = tidptr;
        Ok(super::this_thread())
    }

    /// set_robust_list(head, len).
    pub(super) fn set_robust_list(&mut self, head: u64, len: u64) -> Result<u64, Errno> {
        if len != ROBUST_HEAD_SIZE {
            return Err(Errno::EINVAL);
        }
        self.thread_exit.robust_list = head;
        Ok(0)
    }

    /// get_robust_list(pid, head_ptr, len_ptr), for this thread (pid 0 or
    /// its own id) only.
    pub(super) fn get_robust_list(&mut self, pid: u64, head_ptr: u64, len_ptr: u64) -> Result<u64, Errno> {
        if pid != 0 && pid != super::this_thread() {
            return Err(Errno(libc::EPERM));
        }
        let mem = self.mem.lock();
        mem.write_bytes(head_ptr, &self.thread_exit.robust_list.to_le_bytes())?;
        mem.write_bytes(len_ptr, &ROBUST_HEAD_SIZE.to_le_bytes())?;
        Ok(0)
    }

    /// What the kernel does when this thread ends (exit, or the last
    /// thread's exit_group is not it): its robust futexes are released as
    /// the owner's death, then its tid word is cleared and woken.
    pub fn end_thread(&mut self) {
        let tid = super::this_thread() as u32;
        if self.thread_exit.robust_list != 0 {
            self.release_robust_list(tid);
        }
        let at = self.thread_exit.clear_tid;
        if at != 0 && self.mem.lock().write_bytes(at, &0u32.to_le_bytes()).is_ok() {
            // FUTEX_WAKE (not private: the kernel uses a shared wake).
            host!(libc::SYS_futex, at, 1u64, 1u64).ok();
        }
    }

    /// The kernel's `exit_robust_list`: each futex on the list (and the
    /// one a lock operation was about to add, `list_op_pending`) whose
    /// word still names this thread gets `FUTEX_OWNER_DIED`, and a waiter
    /// is woken.
    fn release_robust_list(&mut self, tid: u32) {
        let head = self.thread_exit.robust_list;
        let word = |addr: u64| {
            let mut b = [0u8; 8];
            self.mem.lock().read_bytes(addr, &mut b).ok().map(|()| u64::from_le_bytes(b))
        };
        let (Some(first), Some(offset), Some(pending)) = (word(head), word(head + 8), word(head + 16)) else {
            return;
        };
        let mut entries = Vec::new();
        let mut entry = first & !1;
        while entry != head && entries.len() < ROBUST_LIST_LIMIT {
            if entry != pending & !1 {
                entries.push(entry);
            }
            let Some(next) = word(entry) else { break };
            entry = next & !1;
        }
        if pending != 0 {
            entries.push(pending & !1);
        }
        for entry in entries {
            let futex = entry.wrapping_add(offset);
            if futex % 4 != 0 {
                continue;
            }
            let mut held = [0u8; 4];
            if self.mem.lock().read_bytes(futex, &mut held).is_err() {
                continue;
            }
            let mut val = u32::from_le_bytes(held);
            while val & FUTEX_TID_MASK == tid {
                let new = (val & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
                let seen = crate::signal::probe::cas(futex, 4, u64::from(val), u64::from(new)) as u32;
                if seen == val {
                    if val & FUTEX_WAITERS != 0 {
                        host!(libc::SYS_futex, futex, 1u64, 1u64).ok();
                    }
                    break;
                }
                val = seen;
            }
        }
        // A futex word that could not be swapped left its fault behind.
        crate::signal::probe::take_fault();
    }
}
