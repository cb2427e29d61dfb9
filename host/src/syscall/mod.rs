//! The x86-64 Linux system call layer: takes a guest `syscall` (number in
//! rax, arguments in rdi, rsi, rdx, r10, r8, r9), performs it on the host
//! and leaves the result in rax (a negative errno on failure), with rcx and
//! r11 clobbered as the real instruction does.
//!
//! Host calls always use the host's own names (`libc::SYS_*`), never the
//! guest's number, and go through `host!`, whose stub a signal arriving
//! just before the call cancels (`crate::signal::interruptible`: the
//! guest's call is then made after its handler). Guest structures whose
//! layout differs on the host are converted explicitly, so the same code
//! is right on x86-64 and arm64 hosts. Guest pointers are host pointers
//! (identity map) and go to the host kernel as they are, so it checks
//! them; where this layer reads or writes guest memory itself, it checks
//! the guest owns it (EFAULT otherwise). Errno values are the same numbers
//! on x86-64 and arm64 Linux (both use `asm-generic/errno.h`), so host
//! errnos pass through.
//!
//! fork, vfork and fork-like clones make a new process (`process`), a
//! clone of a thread a new guest thread on a host thread of its own
//! (`thread`), execve re-enters aarchx or runs a host program (`exec`).
//! Signals, their system calls
//! and delivery to guest handlers are in `signal`. Unknown and
//! unimplemented calls return -ENOSYS and are logged once each. How each
//! call is made (passed, translated, emulated, refused or ENOSYS) is
//! recorded with its number in `numbers` and rendered as docs/syscalls.md;
//! a test checks `dispatch` against it.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

use aarchx_ir::GuestState;

use crate::loader::rootfs::Rootfs;
use crate::loader::LoadedProgram;
use crate::mem::{Errno, SharedMemory};
use crate::signal::interruptible;

/// Makes a host system call with `u64` arguments, giving its result, the
/// host errno, or `interruptible::NOT_ENTERED` when a signal arrived
/// first during a guest system call (see `crate::signal::interruptible`).
macro_rules! host {
    ($nr:expr $(, $arg:expr)* $(,)?) => {{
        // SAFETY: a host system call that does not map or unmap memory.
        // Pointer arguments are guest pointers (guest memory is
        // identity-mapped) or point at live locals; the kernel checks them
        // and writes only where the call says.
        unsafe { $crate::signal::interruptible::syscall($nr, &[$({ let arg: u64 = $arg; arg }),*]) }
    }};
}

mod control;
mod dirents;
mod epoll;
mod exec;
mod fs;
pub mod numbers;
mod process;
mod procfs;
mod select;
mod signal;
mod thread;

use epoll::Timeout;
pub use exec::init as init_exec;
use fs::{AT_FDCWD, AT_REMOVEDIR, AT_SYMLINK_NOFOLLOW};
use numbers::Sysno;
pub use process::{execs, forks};
use signal::Signals;
pub use thread::NewThread;
use thread::ThreadExit;

const RAX: usize = 0;
const RCX: usize = 1;
const RDX: usize = 2;
const RSP: usize = 4;
const RSI: usize = 6;
const RDI: usize = 7;
const R8: usize = 8;
const R9: usize = 9;
const R10: usize = 10;
const R11: usize = 11;

/// Length of the `syscall` instruction.
pub const SYSCALL_LEN: u64 = 2;

const ARCH_SET_GS: u64 = 0x1001;
const ARCH_SET_FS: u64 = 0x1002;
const ARCH_GET_FS: u64 = 0x1003;
const ARCH_GET_GS: u64 = 0x1004;

/// x86-64 `O_WRONLY | O_CREAT | O_TRUNC`, for creat.
const CREAT_FLAGS: u64 = 0o1 | 0o100 | 0o1000;
/// futex operations passed to the host: all but FUTEX_FD (2, removed
/// from Linux), with or without FUTEX_PRIVATE_FLAG and
/// FUTEX_CLOCK_REALTIME. Guest addresses, thread ids (the PI operations'
/// words) and `struct timespec` are the host's.
const FUTEX_PASSTHROUGH: [u64; 13] = [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];

/// What the dispatcher does after a system call.
#[derive(Debug)]
pub enum SyscallOutcome {
    /// Go on at `state.rip`.
    Continue,
    /// The guest process exited (exit_group) with this status.
    Exit(i32),
    /// This guest thread ended (exit) with this status: the process ends
    /// with it when it was the last.
    ExitThread(i32),
    /// Go on, and start this new guest thread (clone); its id is the
    /// system call's result.
    Spawn(Box<NewThread>),
}

/// The guest process as the system calls see it.
#[derive(Debug)]
pub struct Process {
    /// The guest memory map, shared by the process's threads: the
    /// translator's [`aarchx_pass::GuestCode`] and what the system calls
    /// check guest pointers against (the executors access guest memory
    /// directly, `crate::mem::GuestAccess`).
    pub mem: SharedMemory,
    /// The guest executable's absolute path, for /proc/self/exe.
    exe: CString,
    /// The guest root absolute paths resolve in first.
    root: Rootfs,
    signals: Signals,
    /// System call numbers already reported as unimplemented.
    reported: BTreeSet<u64>,
    /// The guest's auxiliary vector, for /proc/self/auxv.
    auxv: Vec<(u64, u64)>,
    /// What this thread's end does (its tid word, its robust list).
    thread_exit: ThreadExit,
}

impl Process {
    pub fn new(program: LoadedProgram, root: Rootfs) -> Process {
        let exe = CString::new(program.exe.as_os_str().as_bytes()).unwrap_or_default();
        Process {
            mem: SharedMemory::new(program.memory),
            exe,
            root,
            signals: Signals::inherited(),
            reported: BTreeSet::new(),
            auxv: program.auxv,
            thread_exit: ThreadExit::default(),
        }
    }

    /// A new thread's view of this process: the same memory and signal
    /// dispositions, this thread's signal mask.
    fn for_thread(&self) -> Process {
        Process {
            mem: self.mem.clone(),
            exe: self.exe.clone(),
            root: self.root.clone(),
            signals: self.signals.for_thread(),
            reported: self.reported.clone(),
            auxv: self.auxv.clone(),
            thread_exit: ThreadExit::default(),
        }
    }

    fn unimplemented(&mut self, nr: u64, name: Option<&'static str>) -> Result<u64, Errno> {
        if self.reported.insert(nr) {
            tracing::debug!(nr, name = name.unwrap_or("unknown"), "unimplemented system call: returning -ENOSYS");
        }
        Err(Errno(libc::ENOSYS))
    }
}

/// Performs the system call the guest asked for with `syscall`. `state.rip`
/// must already point after the instruction.
pub fn syscall(proc: &mut Process, state: &mut GuestState) -> SyscallOutcome {
    let nr = state.gpr[RAX];
    if nr == Sysno::rt_sigreturn as u64 {
        // Restores every register, rax, rcx and r11 included.
        interruptible::close();
        proc.sigreturn(state);
        return SyscallOutcome::Continue;
    }
    let args = [state.gpr[RDI], state.gpr[RSI], state.gpr[RDX], state.gpr[R10], state.gpr[R8], state.gpr[R9]];
    let mut outcome = SyscallOutcome::Continue;
    let sysno = Sysno::from_nr(nr);
    let mut result = match sysno {
        Some(sysno) => proc.dispatch(sysno, args, state, &mut outcome),
        None => proc.unimplemented(nr, None),
    };
    if let Some(sysno) = sysno.filter(|_| result == Err(Errno::EFAULT)) {
        // Perhaps a write into a page protected for its code (the kernel
        // does not fault for us, it fails): with those pages writable
        // again (their code dropped), the call runs once more (see
        // `crate::code_pages`).
        if proc.mem.lock().unprotect_all_code() {
            tracing::debug!(nr, "EFAULT with code pages write-protected: retried with them writable");
            outcome = SyscallOutcome::Continue;
            result = proc.dispatch(sysno, args, state, &mut outcome);
        }
    }
    interruptible::close();
    tracing::trace!(nr, name = sysno.map_or("unknown", Sysno::name), ?args, ?result, "syscall");
    if result == Err(interruptible::NOT_ENTERED) {
        // A signal came before the call: its handler runs, then the call.
        tracing::debug!(nr, "a signal arrived before the host call: its handler runs first");
        state.rip -= SYSCALL_LEN;
        return outcome;
    }
    if result == Err(Errno(libc::EINTR)) {
        proc.interrupted(nr);
    }
    let new_thread = matches!(outcome, SyscallOutcome::Spawn(_));
    if result == Ok(0) && !new_thread && matches!(sysno, Some(Sysno::fork | Sysno::vfork | Sysno::clone)) {
        proc.forked_child();
    }
    state.gpr[RAX] = match result {
        Ok(v) => v,
        Err(Errno(e)) => (-i64::from(e)) as u64,
    };
    state.gpr[RCX] = state.rip;
    state.gpr[R11] = state.rflags();
    outcome
}

/// The host's real and effective user and group ids.
pub struct HostIds {
    pub uid: u32,
    pub euid: u32,
    pub gid: u32,
    pub egid: u32,
}

pub fn host_ids() -> HostIds {
    let (uid, euid, gid, egid) = crate::sys::process::ids();
    HostIds { uid, euid, gid, egid }
}

/// 16 random bytes from the host (for AT_RANDOM).
pub fn random_bytes() -> [u8; 16] {
    let mut buf = [0u8; 16];
    let got = host!(libc::SYS_getrandom, buf.as_mut_ptr() as u64, 16u64, 0u64);
    if got != Ok(16) {
        if let Ok(bytes) = urandom() {
            buf = bytes;
        }
    }
    buf
}

fn urandom() -> std::io::Result<[u8; 16]> {
    use std::io::Read;
    let mut buf = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf)
}

/// The host thread id of the calling guest thread (one host thread runs
/// each).
pub fn this_thread() -> u64 {
    host!(libc::SYS_gettid).unwrap_or(0)
}

impl Process {
    fn dispatch(
        &mut self,
        sysno: Sysno,
        a: [u64; 6],
        state: &mut GuestState,
        outcome: &mut SyscallOutcome,
    ) -> Result<u64, Errno> {
        use Sysno::*;
        let [a0, a1, a2, a3, a4, a5] = a;
        match sysno {
            // Files and descriptors.
            read => host!(libc::SYS_read, a0, a1, a2),
            write => host!(libc::SYS_write, a0, a1, a2),
            readv => host!(libc::SYS_readv, a0, a1, a2),
            writev => host!(libc::SYS_writev, a0, a1, a2),
            pread64 => host!(libc::SYS_pread64, a0, a1, a2, a3),
            pwrite64 => host!(libc::SYS_pwrite64, a0, a1, a2, a3),
            preadv => host!(libc::SYS_preadv, a0, a1, a2, a3, a4),
            pwritev => host!(libc::SYS_pwritev, a0, a1, a2, a3, a4),
            open => self.openat(AT_FDCWD, a0, a1, a2),
            openat => self.openat(a0, a1, a2, a3),
            creat => self.openat(AT_FDCWD, a0, CREAT_FLAGS, a1),
            close => host!(libc::SYS_close, a0),
            lseek => host!(libc::SYS_lseek, a0, a1, a2),
            stat => self.fstatat(AT_FDCWD, a0, a1, 0),
            lstat => self.fstatat(AT_FDCWD, a0, a1, AT_SYMLINK_NOFOLLOW),
            fstat => self.fstat(a0, a1),
            newfstatat => self.fstatat(a0, a1, a2, a3),
            statx => self.statx(a0, a1, a2, a3, a4),
            statfs => self.statfs(a0, a1),
            fstatfs => host!(libc::SYS_fstatfs, a0, a1),
            access => self.faccessat(AT_FDCWD, a0, a1, 0),
            faccessat => self.faccessat(a0, a1, a2, 0),
            faccessat2 => self.faccessat(a0, a1, a2, a3),
            getdents64 => host!(libc::SYS_getdents64, a0, a1, a2),
            getdents => self.getdents(a0, a1, a2),
            dup => host!(libc::SYS_dup, a0),
            dup2 => fs::dup2(a0, a1),
            dup3 => host!(libc::SYS_dup3, a0, a1, a2),
            fcntl => self.fcntl(a0, a1, a2),
            pipe => fs::pipe2(a0, 0),
            pipe2 => fs::pipe2(a0, a1),
            ioctl => self.ioctl(a0, a1, a2),
            poll => fs::poll(a0, a1, a2),
            ppoll => self.signals.masked_wait(&self.mem, a3, a4, |set| host!(libc::SYS_ppoll, a0, a1, a2, set, 8u64)),
            readlink => self.readlinkat(AT_FDCWD, a0, a1, a2),
            readlinkat => self.readlinkat(a0, a1, a2, a3),
            getcwd => host!(libc::SYS_getcwd, a0, a1),
            chdir => self.chdir(a0),
            fchdir => host!(libc::SYS_fchdir, a0),
            mkdir => self.mkdirat(AT_FDCWD, a0, a1),
            mkdirat => self.mkdirat(a0, a1, a2),
            rmdir => self.unlinkat(AT_FDCWD, a0, AT_REMOVEDIR),
            unlink => self.unlinkat(AT_FDCWD, a0, 0),
            unlinkat => self.unlinkat(a0, a1, a2),
            rename => self.renameat(AT_FDCWD, a0, AT_FDCWD, a1, 0),
            renameat => self.renameat(a0, a1, a2, a3, 0),
            renameat2 => self.renameat(a0, a1, a2, a3, a4),
            link => self.linkat(AT_FDCWD, a0, AT_FDCWD, a1, 0),
            linkat => self.linkat(a0, a1, a2, a3, a4),
            symlink => self.symlinkat(a0, AT_FDCWD, a1),
            symlinkat => self.symlinkat(a0, a1, a2),
            chmod => self.fchmodat(AT_FDCWD, a0, a1),
            fchmod => host!(libc::SYS_fchmod, a0, a1),
            fchmodat => self.fchmodat(a0, a1, a2),
            chown => self.fchownat(AT_FDCWD, a0, a1, a2, 0),
            lchown => self.fchownat(AT_FDCWD, a0, a1, a2, AT_SYMLINK_NOFOLLOW),
            fchown => host!(libc::SYS_fchown, a0, a1, a2),
            fchownat => self.fchownat(a0, a1, a2, a3, a4),
            mknod => self.mknodat(AT_FDCWD, a0, a1, a2),
            mknodat => self.mknodat(a0, a1, a2, a3),
            umask => host!(libc::SYS_umask, a0),
            utimensat => self.utimensat(a0, a1, a2, a3),
            utimes => self.utimes(AT_FDCWD, a0, a1, true),
            futimesat => self.utimes(a0, a1, a2, true),
            utime => self.utimes(AT_FDCWD, a0, a1, false),
            truncate => self.truncate(a0, a1),
            ftruncate => host!(libc::SYS_ftruncate, a0, a1),
            fsync => host!(libc::SYS_fsync, a0),
            fdatasync => host!(libc::SYS_fdatasync, a0),
            flock => host!(libc::SYS_flock, a0, a1),
            preadv2 => host!(libc::SYS_preadv2, a0, a1, a2, a3, a4, a5),
            pwritev2 => host!(libc::SYS_pwritev2, a0, a1, a2, a3, a4, a5),
            fadvise64 => host!(libc::SYS_fadvise64, a0, a1, a2, a3),
            fallocate => host!(libc::SYS_fallocate, a0, a1, a2, a3),
            readahead => host!(libc::SYS_readahead, a0, a1, a2),
            sync_file_range => host!(libc::SYS_sync_file_range, a0, a1, a2, a3),
            copy_file_range => host!(libc::SYS_copy_file_range, a0, a1, a2, a3, a4, a5),
            sync => host!(libc::SYS_sync),
            syncfs => host!(libc::SYS_syncfs, a0),
            close_range => host!(libc::SYS_close_range, a0, a1, a2),
            sendfile => host!(libc::SYS_sendfile, a0, a1, a2, a3),
            splice => host!(libc::SYS_splice, a0, a1, a2, a3, a4, a5),
            tee => host!(libc::SYS_tee, a0, a1, a2, a3),
            vmsplice => host!(libc::SYS_vmsplice, a0, a1, a2, a3),
            fgetxattr => host!(libc::SYS_fgetxattr, a0, a1, a2, a3),
            fsetxattr => host!(libc::SYS_fsetxattr, a0, a1, a2, a3, a4),
            flistxattr => host!(libc::SYS_flistxattr, a0, a1, a2),
            fremovexattr => host!(libc::SYS_fremovexattr, a0, a1),

            // Descriptors for events: the flags are O_NONBLOCK and
            // O_CLOEXEC, and `struct itimerspec` and `struct inotify_event`
            // have the same layout, on both.
            memfd_create => host!(libc::SYS_memfd_create, a0, a1),
            eventfd => host!(libc::SYS_eventfd2, a0, 0u64),
            eventfd2 => host!(libc::SYS_eventfd2, a0, a1),
            timerfd_create => host!(libc::SYS_timerfd_create, a0, a1),
            timerfd_settime => host!(libc::SYS_timerfd_settime, a0, a1, a2, a3),
            timerfd_gettime => host!(libc::SYS_timerfd_gettime, a0, a1),
            inotify_init => host!(libc::SYS_inotify_init1, 0u64),
            inotify_init1 => host!(libc::SYS_inotify_init1, a0),
            inotify_add_watch => host!(libc::SYS_inotify_add_watch, a0, a1, a2),
            inotify_rm_watch => host!(libc::SYS_inotify_rm_watch, a0, a1),

            // Sockets: `struct sockaddr`, `msghdr`, `cmsghdr`, `mmsghdr`,
            // the SOCK_*, MSG_*, SOL_* and SO_* values and the socket
            // options' layouts are the same on both.
            socket => host!(libc::SYS_socket, a0, a1, a2),
            socketpair => host!(libc::SYS_socketpair, a0, a1, a2, a3),
            bind => host!(libc::SYS_bind, a0, a1, a2),
            listen => host!(libc::SYS_listen, a0, a1),
            accept => host!(libc::SYS_accept, a0, a1, a2),
            accept4 => host!(libc::SYS_accept4, a0, a1, a2, a3),
            connect => host!(libc::SYS_connect, a0, a1, a2),
            getsockname => host!(libc::SYS_getsockname, a0, a1, a2),
            getpeername => host!(libc::SYS_getpeername, a0, a1, a2),
            sendto => host!(libc::SYS_sendto, a0, a1, a2, a3, a4, a5),
            recvfrom => host!(libc::SYS_recvfrom, a0, a1, a2, a3, a4, a5),
            sendmsg => host!(libc::SYS_sendmsg, a0, a1, a2),
            recvmsg => host!(libc::SYS_recvmsg, a0, a1, a2),
            sendmmsg => host!(libc::SYS_sendmmsg, a0, a1, a2, a3),
            recvmmsg => host!(libc::SYS_recvmmsg, a0, a1, a2, a3, a4),
            shutdown => host!(libc::SYS_shutdown, a0, a1),
            setsockopt => host!(libc::SYS_setsockopt, a0, a1, a2, a3, a4),
            getsockopt => host!(libc::SYS_getsockopt, a0, a1, a2, a3, a4),

            // Waiting for descriptors.
            select => self.select(a0, a1, a2, a3, a4),
            pselect6 => self.pselect6(a0, a1, a2, a3, a4, a5),
            epoll_create => epoll::create(a0),
            epoll_create1 => host!(libc::SYS_epoll_create1, a0),
            epoll_ctl => self.epoll_ctl(a0, a1, a2, a3),
            epoll_wait => self.epoll_pwait(a0, a1, a2, a3, Timeout::Millis, 0, 0),
            epoll_pwait => self.epoll_pwait(a0, a1, a2, a3, Timeout::Millis, a4, a5),
            epoll_pwait2 => self.epoll_pwait(a0, a1, a2, a3, Timeout::Timespec, a4, a5),

            // Memory.
            brk => Ok(self.mem.lock().brk(a0)),
            // Code changes are recorded by the memory map (see
            // `GuestMemory::take_written_code`).
            mmap => self.mem.lock().mmap(a0, a1, a2, a3, a4 as i32, a5),
            munmap => self.mem.lock().munmap(a0, a1).map(|()| 0),
            mprotect => self.mem.lock().mprotect(a0, a1, a2).map(|()| 0),
            mremap => self.mem.lock().mremap(a0, a1, a2, a3, a4),
            madvise => self.mem.lock().madvise(a0, a1, a2),
            msync => host!(libc::SYS_msync, a0, a1, a2),
            mincore => host!(libc::SYS_mincore, a0, a1, a2),
            mlock => host!(libc::SYS_mlock, a0, a1),
            munlock => host!(libc::SYS_munlock, a0, a1),
            mlock2 => host!(libc::SYS_mlock2, a0, a1, a2),
            mlockall => host!(libc::SYS_mlockall, a0),
            munlockall => host!(libc::SYS_munlockall),

            // The process and its thread.
            exit => {
                *outcome = SyscallOutcome::ExitThread(a0 as i32);
                Ok(0)
            }
            exit_group => {
                *outcome = SyscallOutcome::Exit(a0 as i32);
                Ok(0)
            }
            arch_prctl => self.arch_prctl(state, a0, a1),
            set_tid_address => self.set_tid_address(a0),
            set_robust_list => self.set_robust_list(a0, a1),
            get_robust_list => self.get_robust_list(a0, a1, a2),
            futex if FUTEX_PASSTHROUGH.contains(&(a1 & 0x7f)) => host!(libc::SYS_futex, a0, a1, a2, a3, a4, a5),
            fork => self.fork(state),
            vfork => self.vfork(state),
            clone if thread::is_thread(a0) => {
                *outcome = SyscallOutcome::Spawn(self.clone_thread(state, [a0, a1, a2, a3, a4])?);
                Ok(0)
            }
            clone => self.clone(state, a0, a1, a2, a3),
            clone3 => {
                *outcome = SyscallOutcome::Spawn(self.clone3_thread(state, a0, a1)?);
                Ok(0)
            }
            execve => self.execve(a0, a1, a2),
            wait4 => host!(libc::SYS_wait4, a0, a1, a2, a3),
            waitid => host!(libc::SYS_waitid, a0, a1, a2, a3, a4),
            getpid => host!(libc::SYS_getpid),
            gettid => host!(libc::SYS_gettid),
            getppid => host!(libc::SYS_getppid),
            getuid => host!(libc::SYS_getuid),
            geteuid => host!(libc::SYS_geteuid),
            getgid => host!(libc::SYS_getgid),
            getegid => host!(libc::SYS_getegid),
            getresuid => host!(libc::SYS_getresuid, a0, a1, a2),
            getresgid => host!(libc::SYS_getresgid, a0, a1, a2),
            getgroups => host!(libc::SYS_getgroups, a0, a1),
            setuid => host!(libc::SYS_setuid, a0),
            setgid => host!(libc::SYS_setgid, a0),
            setreuid => host!(libc::SYS_setreuid, a0, a1),
            setregid => host!(libc::SYS_setregid, a0, a1),
            setresuid => host!(libc::SYS_setresuid, a0, a1, a2),
            setresgid => host!(libc::SYS_setresgid, a0, a1, a2),
            setgroups => host!(libc::SYS_setgroups, a0, a1),
            getpgid => host!(libc::SYS_getpgid, a0),
            getpgrp => host!(libc::SYS_getpgid, 0u64),
            setpgid => host!(libc::SYS_setpgid, a0, a1),
            getsid => host!(libc::SYS_getsid, a0),
            setsid => host!(libc::SYS_setsid),
            prlimit64 => host!(libc::SYS_prlimit64, a0, a1, a2, a3),
            getrlimit => host!(libc::SYS_prlimit64, 0u64, a0, 0u64, a1),
            setrlimit => host!(libc::SYS_prlimit64, 0u64, a0, a1, 0u64),
            getrusage => host!(libc::SYS_getrusage, a0, a1),
            times => host!(libc::SYS_times, a0),
            sysinfo => host!(libc::SYS_sysinfo, a0),
            uname => self.uname(a0),
            sched_getaffinity => host!(libc::SYS_sched_getaffinity, a0, a1, a2),
            sched_yield => host!(libc::SYS_sched_yield),
            sched_setaffinity => host!(libc::SYS_sched_setaffinity, a0, a1, a2),
            sched_get_priority_max => host!(libc::SYS_sched_get_priority_max, a0),
            sched_get_priority_min => host!(libc::SYS_sched_get_priority_min, a0),
            sched_getparam => host!(libc::SYS_sched_getparam, a0, a1),
            sched_setparam => host!(libc::SYS_sched_setparam, a0, a1),
            sched_getscheduler => host!(libc::SYS_sched_getscheduler, a0),
            sched_setscheduler => host!(libc::SYS_sched_setscheduler, a0, a1, a2),
            sched_rr_get_interval => host!(libc::SYS_sched_rr_get_interval, a0, a1),
            sched_getattr => host!(libc::SYS_sched_getattr, a0, a1, a2, a3),
            sched_setattr => host!(libc::SYS_sched_setattr, a0, a1, a2),
            getpriority => host!(libc::SYS_getpriority, a0, a1),
            setpriority => host!(libc::SYS_setpriority, a0, a1, a2),
            ioprio_get => host!(libc::SYS_ioprio_get, a0, a1),
            ioprio_set => host!(libc::SYS_ioprio_set, a0, a1, a2),
            getcpu => host!(libc::SYS_getcpu, a0, a1, a2),
            prctl => control::prctl(a0, a1, a2, a3, a4),
            personality => control::personality(a0),
            capget => host!(libc::SYS_capget, a0, a1),
            capset => host!(libc::SYS_capset, a0, a1),
            setfsuid => host!(libc::SYS_setfsuid, a0),
            setfsgid => host!(libc::SYS_setfsgid, a0),
            pidfd_open => host!(libc::SYS_pidfd_open, a0, a1),
            pidfd_send_signal => host!(libc::SYS_pidfd_send_signal, a0, a1, a2, a3),
            getrandom => host!(libc::SYS_getrandom, a0, a1, a2),

            // Time.
            clock_gettime => host!(libc::SYS_clock_gettime, a0, a1),
            clock_getres => host!(libc::SYS_clock_getres, a0, a1),
            gettimeofday => host!(libc::SYS_gettimeofday, a0, a1),
            time => self.time(a0),
            nanosleep => host!(libc::SYS_nanosleep, a0, a1),
            clock_nanosleep => host!(libc::SYS_clock_nanosleep, a0, a1, a2, a3),
            timer_create => host!(libc::SYS_timer_create, a0, a1, a2),
            timer_settime => host!(libc::SYS_timer_settime, a0, a1, a2, a3),
            timer_gettime => host!(libc::SYS_timer_gettime, a0, a1),
            timer_getoverrun => host!(libc::SYS_timer_getoverrun, a0),
            timer_delete => host!(libc::SYS_timer_delete, a0),
            clock_settime | settimeofday => Err(Errno(libc::EPERM)),

            // Signals.
            rt_sigaction => self.signals.sigaction(&self.mem, a0, a1, a2, a3),
            rt_sigprocmask => self.signals.sigprocmask(&self.mem, a0, a1, a2, a3),
            sigaltstack => self.signals.sigaltstack(&self.mem, a0, a1, state.gpr[RSP]),
            rt_sigpending => self.signals.sigpending(&self.mem, a0, a1),
            rt_sigsuspend => self.signals.sigsuspend(&self.mem, a0, a1),
            pause => self.signals.pause(),
            rt_sigtimedwait => self.signals.sigtimedwait(&self.mem, a0, a1, a2, a3),
            kill => host!(libc::SYS_kill, a0, a1),
            tgkill => host!(libc::SYS_tgkill, a0, a1, a2),
            tkill => host!(libc::SYS_tkill, a0, a1),
            rt_sigqueueinfo => host!(libc::SYS_rt_sigqueueinfo, a0, a1, a2),
            rt_tgsigqueueinfo => host!(libc::SYS_rt_tgsigqueueinfo, a0, a1, a2, a3),
            // signalfd_siginfo and the SFD_* flags are the same on both.
            signalfd => host!(libc::SYS_signalfd4, a0, a1, a2, 0u64),
            signalfd4 => host!(libc::SYS_signalfd4, a0, a1, a2, a3),
            alarm => self.signals.alarm(a0),
            setitimer => host!(libc::SYS_setitimer, a0, a1, a2),
            getitimer => host!(libc::SYS_getitimer, a0, a1),

            _ => self.unimplemented(sysno as u64, Some(sysno.name())),
        }
    }

    fn arch_prctl(&mut self, state: &mut GuestState, code: u64, addr: u64) -> Result<u64, Errno> {
        match code {
            ARCH_SET_FS => state.fs_base = addr,
            ARCH_SET_GS => state.gs_base = addr,
            ARCH_GET_FS => self.mem.lock().write_bytes(addr, &state.fs_base.to_le_bytes())?,
            ARCH_GET_GS => self.mem.lock().write_bytes(addr, &state.gs_base.to_le_bytes())?,
            _ => return Err(Errno::EINVAL),
        }
        Ok(0)
    }

    /// uname, with the machine an x86-64 one.
    fn uname(&mut self, buf: u64) -> Result<u64, Errno> {
        host!(libc::SYS_uname, buf)?;
        let mut machine = [0u8; 65];
        machine[..6].copy_from_slice(b"x86_64");
        self.mem.lock().write_bytes(buf + 4 * 65, &machine)?;
        Ok(0)
    }

    /// time, which arm64 lacks.
    fn time(&mut self, tloc: u64) -> Result<u64, Errno> {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        host!(libc::SYS_clock_gettime, libc::CLOCK_REALTIME as u64, &mut ts as *mut libc::timespec as u64)?;
        let secs = ts.tv_sec as u64;
        if tloc != 0 {
            self.mem.lock().write_bytes(tloc, &secs.to_le_bytes())?;
        }
        Ok(secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::GuestMemory;
    use numbers::Handling;
    use std::path::PathBuf;

    const RW: u64 = 3;

    fn process() -> (Process, u64) {
        let mut mem = GuestMemory::new();
        let scratch = mem.mmap(0, 1 << 16, RW, (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64, -1, 0).unwrap();
        let program = LoadedProgram {
            entry: 0,
            stack_pointer: 0,
            exe: PathBuf::from("/guest/prog"),
            memory: mem,
            auxv: Vec::new(),
        };
        (Process::new(program, Rootfs::new(std::path::Path::new("/")).unwrap()), scratch)
    }

    fn call(p: &mut Process, nr: Sysno, args: &[u64]) -> (i64, SyscallOutcome) {
        let mut s = GuestState { rip: 0x401234, ..GuestState::default() };
        s.set_rflags(0x1);
        s.gpr[RAX] = nr as u64;
        for (reg, v) in [RDI, RSI, RDX, R10, R8, R9].iter().zip(args) {
            s.gpr[*reg] = *v;
        }
        let outcome = syscall(p, &mut s);
        assert_eq!(s.gpr[RCX], 0x401234, "rcx = return address");
        assert_eq!(s.gpr[R11], 0x3, "r11 = rflags");
        (s.gpr[RAX] as i64, outcome)
    }

    fn put(p: &mut Process, addr: u64, bytes: &[u8]) -> u64 {
        p.mem.lock().write_bytes(addr, bytes).unwrap();
        addr
    }

    fn get(p: &Process, addr: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        p.mem.lock().read_bytes(addr, &mut v).unwrap();
        v
    }

    /// pthread_create's clone: a new thread to start, on its stack with its
    /// TLS, rax 0, the tid words to fill; a thread that does not share
    /// everything is refused.
    #[test]
    fn a_thread_clone_describes_the_new_thread() {
        let (mut p, m) = process();
        let flags = 0x3d0f00; // glibc's CLONE_VM | FS | FILES | SIGHAND | THREAD | SYSVSEM | SETTLS | PARENT_SETTID | CHILD_CLEARTID
        let (r, outcome) = call(&mut p, Sysno::clone, &[flags, m + 4096, m, m + 8, 0x7000]);
        assert_eq!(r, 0, "the dispatcher puts the new thread's id in rax");
        let SyscallOutcome::Spawn(t) = outcome else { panic!("no new thread: {outcome:?}") };
        assert_eq!((t.state.gpr[RAX], t.state.gpr[RSP], t.state.fs_base), (0, m + 4096, 0x7000));
        assert_eq!(t.tid_at, vec![m]);
        let (r, outcome) = call(&mut p, Sysno::clone, &[0x10000, 0, 0, 0, 0]);
        assert_eq!(r, -i64::from(libc::EINVAL), "CLONE_THREAD without CLONE_VM and CLONE_SIGHAND");
        assert!(matches!(outcome, SyscallOutcome::Continue));
    }

    /// glibc 2.34+'s pthread_create tries clone3 first: the same thread,
    /// its stack pointer at stack + stack_size; anything but a plain
    /// thread is ENOSYS (glibc then uses clone), a short struct EINVAL.
    #[test]
    fn a_thread_clone3_describes_the_new_thread() {
        let (mut p, m) = process();
        let args = |flags: u64, set_tid: u64| -> Vec<u8> {
            // flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup
            [flags, 0, m + 8, m, 0, m + 1024, 3072, 0x7000, set_tid, u64::from(set_tid != 0), 0]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect()
        };
        let at = put(&mut p, m + 256, &args(0x3d0f00, 0));
        let (r, outcome) = call(&mut p, Sysno::clone3, &[at, 88]);
        assert_eq!(r, 0);
        let SyscallOutcome::Spawn(t) = outcome else { panic!("no new thread: {outcome:?}") };
        assert_eq!((t.state.gpr[RAX], t.state.gpr[RSP], t.state.fs_base), (0, m + 4096, 0x7000));
        assert_eq!(t.tid_at, vec![m]);
        let fork_like = put(&mut p, m + 512, &args(0x1200000, 0));
        assert_eq!(call(&mut p, Sysno::clone3, &[fork_like, 88]).0, -i64::from(libc::ENOSYS), "a process");
        let with_tid = put(&mut p, m + 512, &args(0x3d0f00, m));
        assert_eq!(call(&mut p, Sysno::clone3, &[with_tid, 88]).0, -i64::from(libc::ENOSYS), "set_tid");
        assert_eq!(call(&mut p, Sysno::clone3, &[at, 32]).0, -i64::from(libc::EINVAL), "shorter than version 0");
        let mut signalled = args(0x3d0f00, 0);
        signalled[32] = 17;
        let signalled = put(&mut p, m + 512, &signalled);
        assert_eq!(call(&mut p, Sysno::clone3, &[signalled, 88]).0, -i64::from(libc::EINVAL), "a thread's exit signal");
    }

    #[test]
    fn unknown_calls_are_enosys() {
        let (mut p, _) = process();
        let mut s = GuestState::default();
        s.gpr[RAX] = 1000;
        assert!(matches!(syscall(&mut p, &mut s), SyscallOutcome::Continue));
        assert_eq!(s.gpr[RAX] as i64, -i64::from(libc::ENOSYS));
        assert_eq!(call(&mut p, Sysno::execve, &[0, 0, 0]).0, -i64::from(libc::EFAULT));
        assert_eq!(call(&mut p, Sysno::rseq, &[]).0, -i64::from(libc::ENOSYS));
    }

    /// The calls `dispatch` has an arm for, read from this file's source:
    /// the names in the arm patterns between `match sysno {` and the
    /// fallback arm.
    fn dispatched() -> BTreeSet<&'static str> {
        let src = include_str!("mod.rs");
        let body = src.split("    fn dispatch(").nth(1).expect("fn dispatch");
        let body = &body[body.find("match sysno {").expect("the match")..];
        let body = &body[..body.find("            _ => self.unimplemented").expect("the fallback arm")];
        let ident =
            |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        body.lines()
            .filter_map(|l| l.split_once("=>").map(|(pattern, _)| pattern.split(" if ").next().unwrap_or(pattern)))
            .filter(|p| p.split('|').all(|n| ident(n.trim())))
            .flat_map(|p| p.split('|').map(str::trim))
            .collect()
    }

    #[test]
    fn dispatch_handles_exactly_the_calls_not_marked_enosys() {
        let arms = dispatched();
        assert!(arms.len() > 200, "{arms:?}");
        for name in &arms {
            assert!(Sysno::ALL.iter().any(|c| c.name() == *name), "{name}: not a call");
        }
        for &c in Sysno::ALL {
            // rt_sigreturn is made before the dispatch, by `syscall`.
            let handled = arms.contains(c.name()) || c == Sysno::rt_sigreturn;
            assert_eq!(
                handled,
                c.handling() != Handling::Enosys,
                "{} is marked {:?} in numbers.rs but dispatch {} it",
                c.name(),
                c.handling(),
                if handled { "handles" } else { "does not handle" }
            );
        }
        let (mut p, _) = process();
        for &c in Sysno::ALL.iter().filter(|c| c.handling() == Handling::Enosys) {
            assert_eq!(call(&mut p, c, &[]).0, -i64::from(libc::ENOSYS), "{}", c.name());
            assert!(p.reported.contains(&(c as u64)), "{} did not reach the unimplemented path", c.name());
        }
    }

    /// The flag and option values the socket, event-descriptor and epoll
    /// calls pass through are the x86-64 ones (from
    /// /usr/include/x86_64-linux-gnu and asm-generic/socket.h) on the host
    /// too.
    #[test]
    fn passed_through_constants_are_the_x86_64_values() {
        assert_eq!((libc::SOCK_NONBLOCK, libc::SOCK_CLOEXEC), (0o4000, 0o2000000));
        assert_eq!((libc::O_NONBLOCK, libc::O_CLOEXEC), (0o4000, 0o2000000));
        assert_eq!((libc::EFD_NONBLOCK, libc::EFD_CLOEXEC, libc::EFD_SEMAPHORE), (0o4000, 0o2000000, 1));
        assert_eq!((libc::TFD_NONBLOCK, libc::TFD_CLOEXEC, libc::TFD_TIMER_ABSTIME), (0o4000, 0o2000000, 1));
        assert_eq!((libc::IN_NONBLOCK, libc::IN_CLOEXEC, libc::EPOLL_CLOEXEC), (0o4000, 0o2000000, 0o2000000));
        assert_eq!((libc::SOL_SOCKET, libc::SO_REUSEADDR, libc::SO_TYPE, libc::SO_RCVBUF), (1, 2, 3, 8));
        assert_eq!((libc::SO_LINGER, libc::SO_PEERCRED, libc::SO_ACCEPTCONN, libc::SCM_RIGHTS), (13, 17, 30, 1));
        assert_eq!((libc::MSG_NOSIGNAL, libc::MSG_CMSG_CLOEXEC, libc::MSG_DONTWAIT), (0x4000, 0x4000_0000, 0x40));
        assert_eq!((libc::EPOLLIN, libc::EPOLLOUT, libc::EPOLLET, libc::EPOLLONESHOT), (1, 4, 1 << 31, 1 << 30));
        assert_eq!(std::mem::size_of::<libc::msghdr>(), 56);
        assert_eq!(std::mem::size_of::<libc::cmsghdr>(), 16);
        assert_eq!(std::mem::size_of::<libc::mmsghdr>(), 64);
    }

    #[test]
    fn sockets_pass_descriptors() {
        let (mut p, m) = process();
        assert_eq!(call(&mut p, Sysno::socketpair, &[1, 1 | 0o2000000, 0, m]).0, 0, "AF_UNIX SOCK_STREAM|SOCK_CLOEXEC");
        let fds = get(&p, m, 8);
        let (a, b) = (u64::from(fds[0]), u64::from(fds[4]));
        assert_eq!(call(&mut p, Sysno::fcntl, &[a, 1, 0]).0, 1, "FD_CLOEXEC");
        let msg = put(&mut p, m + 64, b"ping");
        assert_eq!(call(&mut p, Sysno::sendto, &[a, msg, 4, 0, 0, 0]).0, 4);
        assert_eq!(call(&mut p, Sysno::recvfrom, &[b, m + 128, 16, 0, 0, 0]).0, 4);
        assert_eq!(get(&p, m + 128, 4), b"ping");
        assert_eq!(call(&mut p, Sysno::shutdown, &[a, 1]).0, 0);
        assert_eq!(call(&mut p, Sysno::recvfrom, &[b, m + 128, 16, 0, 0, 0]).0, 0, "end of stream");
        let udp = call(&mut p, Sysno::socket, &[2, 2 | 0o4000, 0]).0 as u64;
        assert_eq!(call(&mut p, Sysno::fcntl, &[udp, 3, 0]).0 & 0o4000, 0o4000, "AF_INET SOCK_DGRAM|SOCK_NONBLOCK");
        call(&mut p, Sysno::close, &[udp]);
        call(&mut p, Sysno::close, &[a]);
        call(&mut p, Sysno::close, &[b]);
    }

    #[test]
    fn select_writes_the_time_left_back() {
        let (mut p, m) = process();
        assert_eq!(call(&mut p, Sysno::pipe, &[m]).0, 0);
        let fds = get(&p, m, 8);
        let (r, w) = (u64::from(fds[0]), u64::from(fds[4]));
        let set = m + 64;
        let tv = m + 128;
        let timeval = |p: &mut Process, sec: i64, usec: i64| {
            put(p, tv, &[sec.to_le_bytes(), usec.to_le_bytes()].concat());
        };
        put(&mut p, set, &(1u64 << w).to_le_bytes());
        timeval(&mut p, 0, 2_500_000);
        assert_eq!(call(&mut p, Sysno::select, &[w + 1, 0, set, 0, tv]).0, 1, "the write end is writable");
        let left = get(&p, tv, 16);
        let (sec, usec) =
            (i64::from_le_bytes(left[..8].try_into().unwrap()), i64::from_le_bytes(left[8..].try_into().unwrap()));
        assert!(sec == 2 && (400_000..500_000).contains(&usec), "2.5 s less a little: {sec}.{usec:06}");
        put(&mut p, set, &(1u64 << r).to_le_bytes());
        timeval(&mut p, 0, 1000);
        assert_eq!(call(&mut p, Sysno::select, &[r + 1, set, 0, 0, tv]).0, 0, "1 ms, nothing to read");
        assert_eq!(get(&p, tv, 16), [0u8; 16], "none left");
        assert_eq!(get(&p, set, 8), [0u8; 8], "the set cleared");
        timeval(&mut p, 0, -1);
        assert_eq!(call(&mut p, Sysno::select, &[r + 1, set, 0, 0, tv]).0, -i64::from(libc::EINVAL));
        assert_eq!(call(&mut p, Sysno::select, &[r + 1, set, 0, 0, 8]).0, -i64::from(libc::EFAULT));
        call(&mut p, Sysno::close, &[r]);
        call(&mut p, Sysno::close, &[w]);
    }

    #[test]
    fn epoll_data_survives_both_conversions() {
        let (mut p, m) = process();
        let ep = call(&mut p, Sysno::epoll_create, &[1]).0;
        assert!(ep >= 0, "{ep}");
        assert_eq!(call(&mut p, Sysno::epoll_create, &[0]).0, -i64::from(libc::EINVAL));
        assert_eq!(call(&mut p, Sysno::pipe, &[m]).0, 0);
        let w = u64::from(get(&p, m, 8)[4]);
        let event = put(&mut p, m + 64, &[&4u32.to_le_bytes()[..], &0x1122_3344_5566_7788u64.to_le_bytes()].concat());
        assert_eq!(call(&mut p, Sysno::epoll_ctl, &[ep as u64, 1, w, event]).0, 0, "EPOLL_CTL_ADD EPOLLOUT");
        put(&mut p, m + 128, &[0xa5; 24]);
        assert_eq!(call(&mut p, Sysno::epoll_wait, &[ep as u64, m + 128, 2, 0]).0, 1);
        assert_eq!(get(&p, m + 128, 12), get(&p, event, 12), "packed 12-byte event");
        assert_eq!(get(&p, m + 140, 12), [0xa5; 12], "one event written");
        assert_eq!(call(&mut p, Sysno::epoll_wait, &[ep as u64, m + 128, 0, 0]).0, -i64::from(libc::EINVAL));
        assert_eq!(call(&mut p, Sysno::epoll_ctl, &[ep as u64, 2, w, 0]).0, 0, "EPOLL_CTL_DEL, no event");
        assert_eq!(call(&mut p, Sysno::epoll_pwait, &[ep as u64, m + 128, 2, 0, 0, 8]).0, 0);
        for fd in [ep as u64, w, u64::from(get(&p, m, 8)[0])] {
            call(&mut p, Sysno::close, &[fd]);
        }
    }

    #[test]
    fn getdents_gives_linux_dirents() {
        let (mut p, m) = process();
        let root = put(&mut p, m, b"/\0");
        let fd = call(&mut p, Sysno::open, &[root, 0o200000, 0]).0 as u64;
        let n = call(&mut p, Sysno::getdents, &[fd, m + 4096, 4096]).0;
        assert!(n > 0, "{n}");
        let buf = get(&p, m + 4096, n as usize);
        let (mut at, mut names) = (0, Vec::new());
        while at < buf.len() {
            let reclen = usize::from(u16::from_le_bytes([buf[at + 16], buf[at + 17]]));
            let name: Vec<u8> = buf[at + 18..].iter().take_while(|&&b| b != 0).copied().collect();
            assert_eq!(reclen, (20 + name.len()).next_multiple_of(8));
            if name == b"." || name == b".." {
                assert_eq!(buf[at + reclen - 1], libc::DT_DIR, "d_type last");
            }
            names.push(name);
            at += reclen;
        }
        assert!(names.iter().any(|n| n == b".."), "{names:?}");
        assert_eq!(call(&mut p, Sysno::lseek, &[fd, 0, 0]).0, 0);
        assert_eq!(call(&mut p, Sysno::getdents, &[fd, m + 4096, 8]).0, -i64::from(libc::EINVAL), "too small");
        call(&mut p, Sysno::close, &[fd]);
    }

    #[test]
    fn prctl_personality_and_refusals() {
        let (mut p, m) = process();
        assert!(call(&mut p, Sysno::prctl, &[3, 0, 0, 0, 0]).0 >= 0, "PR_GET_DUMPABLE");
        assert_eq!(call(&mut p, Sysno::prctl, &[16, m, 0, 0, 0]).0, 0, "PR_GET_NAME");
        for option in [22, 25, 35, 40, 50, 59, 65] {
            assert_eq!(
                call(&mut p, Sysno::prctl, &[option, 0, 0, 0, 0]).0,
                -i64::from(libc::EINVAL),
                "option {option}"
            );
        }
        assert_eq!(call(&mut p, Sysno::personality, &[0xffff_ffff]).0, 0);
        assert_eq!(call(&mut p, Sysno::personality, &[0]).0, 0);
        assert_eq!(call(&mut p, Sysno::personality, &[0x0040000]).0, -i64::from(libc::EINVAL), "ADDR_NO_RANDOMIZE");
        assert_eq!(call(&mut p, Sysno::clock_settime, &[0, m]).0, -i64::from(libc::EPERM));
        assert_eq!(call(&mut p, Sysno::settimeofday, &[m, 0]).0, -i64::from(libc::EPERM));
    }

    #[test]
    fn fork_and_wait4() {
        let (mut p, m) = process();
        let (pid, outcome) = call(&mut p, Sysno::fork, &[]);
        if pid == 0 {
            // The forked child of the test process leaves at once, running
            // no destructors or test-harness code.
            crate::sys::process::exit_now(7);
        }
        assert!(pid > 0, "fork: {pid}");
        assert!(matches!(outcome, SyscallOutcome::Continue));
        assert_eq!(call(&mut p, Sysno::wait4, &[pid as u64, m, 0, m + 64]).0, pid);
        let status = u32::from_le_bytes(get(&p, m, 4).try_into().unwrap());
        assert_eq!(status, 7 << 8, "WEXITSTATUS 7");
        assert_eq!(call(&mut p, Sysno::wait4, &[pid as u64, m, 1, 0]).0, -i64::from(libc::ECHILD));
        assert_eq!(call(&mut p, Sysno::clone, &[0x100 | 17, 0, 0, 0, 0]).0, -i64::from(libc::ENOSYS), "CLONE_VM alone");
    }

    #[test]
    fn execve_failures_are_errnos() {
        let (mut p, m) = process();
        let missing = put(&mut p, m, b"/nonexistent/aarchx-exec\0");
        assert_eq!(call(&mut p, Sysno::execve, &[missing, 0, 0]).0, -i64::from(libc::ENOENT));
        let dir = put(&mut p, m + 64, b"/\0");
        assert_eq!(call(&mut p, Sysno::execve, &[dir, 0, 0]).0, -i64::from(libc::EACCES));
    }

    #[test]
    fn exit_and_exit_group() {
        let (mut p, _) = process();
        assert!(matches!(call(&mut p, Sysno::exit_group, &[3]).1, SyscallOutcome::Exit(3)));
        assert!(matches!(call(&mut p, Sysno::exit, &[0x1ff]).1, SyscallOutcome::ExitThread(0x1ff)));
    }

    #[test]
    fn pipe_write_read() {
        let (mut p, m) = process();
        assert_eq!(call(&mut p, Sysno::pipe, &[m]).0, 0);
        let fds = get(&p, m, 8);
        let (r, w) = (u64::from(fds[0]), u64::from(fds[4]));
        let msg = put(&mut p, m + 64, b"hello");
        assert_eq!(call(&mut p, Sysno::write, &[w, msg, 5]).0, 5);
        assert_eq!(call(&mut p, Sysno::read, &[r, m + 128, 16]).0, 5);
        assert_eq!(get(&p, m + 128, 5), b"hello");
        assert_eq!(call(&mut p, Sysno::write, &[w, 0, 5]).0, -i64::from(libc::EFAULT));
        assert_eq!(call(&mut p, Sysno::dup2, &[w, w]).0, w as i64);
        assert_eq!(call(&mut p, Sysno::close, &[r]).0, 0);
        assert_eq!(call(&mut p, Sysno::close, &[w]).0, 0);
        assert_eq!(call(&mut p, Sysno::close, &[w]).0, -i64::from(libc::EBADF));
        assert_eq!(call(&mut p, Sysno::dup2, &[w, w]).0, -i64::from(libc::EBADF));
    }

    #[test]
    fn open_stat_and_fcntl_flags() {
        let (mut p, m) = process();
        let path = put(&mut p, m, b"/\0");
        // x86-64 O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC.
        let fd = call(&mut p, Sysno::open, &[path, 0o200000 | 0o400000 | 0o2000000, 0]).0;
        assert!(fd >= 0, "open / with x86-64 O_DIRECTORY: {fd}");
        let flags = call(&mut p, Sysno::fcntl, &[fd as u64, 3, 0]).0 as u64;
        assert_eq!(flags & 0o600000, 0o600000, "F_GETFL reports x86-64 O_DIRECTORY | O_NOFOLLOW: {flags:o}");
        let null = put(&mut p, m + 1536, b"/dev/null\0");
        let fd2 = call(&mut p, Sysno::open, &[null, 0o200000, 0]).0;
        assert_eq!(fd2, -i64::from(libc::ENOTDIR), "x86-64 O_DIRECTORY reaches the host");
        assert_eq!(call(&mut p, Sysno::fstat, &[fd as u64, m + 256]).0, 0);
        let mode = u32::from_le_bytes(get(&p, m + 256 + 24, 4).try_into().unwrap());
        assert_eq!(mode & libc::S_IFMT, libc::S_IFDIR);
        assert_eq!(call(&mut p, Sysno::stat, &[path, m + 512]).0, 0);
        assert_eq!(get(&p, m + 256, 144), get(&p, m + 512, 144));
        assert_eq!(call(&mut p, Sysno::fstat, &[fd as u64, 8]).0, -i64::from(libc::EFAULT));
        assert_eq!(call(&mut p, Sysno::fcntl, &[fd as u64, 9999, 0]).0, -i64::from(libc::EINVAL));
        assert_eq!(call(&mut p, Sysno::ioctl, &[fd as u64, 0x5401, m + 1024]).0, -i64::from(libc::ENOTTY));
        assert_eq!(call(&mut p, Sysno::ioctl, &[fd as u64, 0x8912, m + 1024]).0, -i64::from(libc::ENOTTY));
        call(&mut p, Sysno::close, &[fd as u64]);
        let file = put(&mut p, m + 2048, b"/nonexistent/aarchx\0");
        assert_eq!(call(&mut p, Sysno::open, &[file, 0, 0]).0, -i64::from(libc::ENOENT));
        assert_eq!(call(&mut p, Sysno::access, &[path, 0]).0, 0);
    }

    #[test]
    fn proc_self_exe_is_the_guest() {
        let (mut p, m) = process();
        let path = put(&mut p, m, b"/proc/self/exe\0");
        assert_eq!(call(&mut p, Sysno::readlink, &[path, m + 64, 100]).0, 11);
        assert_eq!(get(&p, m + 64, 11), b"/guest/prog");
        assert_eq!(call(&mut p, Sysno::readlink, &[path, m + 64, 3]).0, 3);
        assert_eq!(call(&mut p, Sysno::readlinkat, &[AT_FDCWD, path, m + 64, 0]).0, -i64::from(libc::EINVAL));
    }

    #[test]
    fn uname_says_x86_64() {
        let (mut p, m) = process();
        assert_eq!(call(&mut p, Sysno::uname, &[m]).0, 0);
        assert_eq!(get(&p, m, 5), b"Linux");
        assert_eq!(get(&p, m + 260, 7), b"x86_64\0");
    }

    #[test]
    fn arch_prctl_fs_and_gs() {
        let (mut p, m) = process();
        let mut s = GuestState::default();
        s.gpr[RAX] = Sysno::arch_prctl as u64;
        s.gpr[RDI] = ARCH_SET_FS;
        s.gpr[RSI] = 0x1234_5000;
        syscall(&mut p, &mut s);
        assert_eq!((s.gpr[RAX], s.fs_base), (0, 0x1234_5000));
        s.gpr[RAX] = Sysno::arch_prctl as u64;
        s.gpr[RDI] = ARCH_GET_FS;
        s.gpr[RSI] = m;
        syscall(&mut p, &mut s);
        assert_eq!(get(&p, m, 8), 0x1234_5000u64.to_le_bytes());
        s.gpr[RAX] = Sysno::arch_prctl as u64;
        s.gpr[RDI] = 0x3001;
        syscall(&mut p, &mut s);
        assert_eq!(s.gpr[RAX] as i64, -i64::from(libc::EINVAL));
    }

    #[test]
    fn process_info_and_time() {
        let (mut p, m) = process();
        assert_eq!(call(&mut p, Sysno::getpid, &[]).0, i64::from(std::process::id()));
        assert_eq!(call(&mut p, Sysno::set_tid_address, &[m]).0, call(&mut p, Sysno::gettid, &[]).0);
        assert_eq!(call(&mut p, Sysno::set_robust_list, &[m, 24]).0, 0);
        assert_eq!(call(&mut p, Sysno::prlimit64, &[0, 3, 0, m]).0, 0, "RLIMIT_STACK");
        assert_eq!(call(&mut p, Sysno::getrandom, &[m, 16, 0]).0, 16);
        let t = call(&mut p, Sysno::time, &[m + 64]).0;
        assert!(t > 1_600_000_000);
        assert_eq!(get(&p, m + 64, 8), (t as u64).to_le_bytes());
        assert_eq!(call(&mut p, Sysno::clock_gettime, &[1, m]).0, 0);
        assert_eq!(call(&mut p, Sysno::futex, &[m, 1 | 128, 1, 0, 0, 0]).0, 0, "FUTEX_WAKE_PRIVATE");
        assert_eq!(call(&mut p, Sysno::kill, &[u64::from(std::process::id()), 0]).0, 0);
        assert_eq!(call(&mut p, Sysno::sched_getaffinity, &[0, 128, m]).0 > 0, true);
    }

    #[test]
    fn absolute_paths_resolve_inside_the_root_first() {
        let dir = std::env::temp_dir().join(format!("aarchx-syscall-root-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("etc")).unwrap();
        std::fs::write(dir.join("etc/aarchx-only-in-root"), b"root").unwrap();
        let (mut p, m) = process();
        p.root = Rootfs::new(&dir).unwrap();
        let in_root = put(&mut p, m, b"/etc/aarchx-only-in-root\0");
        let fd = call(&mut p, Sysno::open, &[in_root, 0, 0]).0;
        assert!(fd >= 0, "open: {fd}");
        assert_eq!(call(&mut p, Sysno::read, &[fd as u64, m + 256, 16]).0, 4);
        assert_eq!(get(&p, m + 256, 4), b"root");
        assert_eq!(call(&mut p, Sysno::close, &[fd as u64]).0, 0);
        assert_eq!(call(&mut p, Sysno::stat, &[in_root, m + 1024]).0, 0);
        assert_eq!(get(&p, m + 1024 + 48, 8), 4u64.to_le_bytes(), "st_size");
        assert_eq!(call(&mut p, Sysno::access, &[in_root, 0]).0, 0);
        let host_only = put(&mut p, m + 512, b"/proc/self/status\0");
        assert_eq!(call(&mut p, Sysno::access, &[host_only, 0]).0, 0, "not in the root: the host's");
        let nowhere = put(&mut p, m + 600, b"/etc/aarchx-nowhere\0");
        assert_eq!(call(&mut p, Sysno::stat, &[nowhere, m + 1024]).0, -i64::from(libc::ENOENT));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Calls that make, remove or change a name act on the file the guest
    /// sees under it: the root's when it is in the root, else the host's.
    #[test]
    fn names_are_changed_where_the_guest_sees_them() {
        let base = std::env::temp_dir().join(format!("aarchx-syscall-names-{}", std::process::id()));
        let (host, root_dir) = (base.join("host"), base.join("root"));
        let mirror = root_dir.join(host.strip_prefix("/").unwrap());
        std::fs::create_dir_all(&host).unwrap();
        std::fs::create_dir_all(&mirror).unwrap();
        for (dir, text) in [(&host, "host"), (&mirror, "root")] {
            std::fs::write(dir.join("file"), text).unwrap();
            std::fs::write(dir.join("old"), text).unwrap();
        }
        let (mut p, m) = process();
        p.root = Rootfs::new(&root_dir).unwrap();
        let name = |n: &str| format!("{}/{n}\0", host.display()).into_bytes();
        let file = put(&mut p, m, &name("file"));
        assert_eq!(call(&mut p, Sysno::unlink, &[file]).0, 0);
        assert!(!mirror.join("file").exists() && host.join("file").exists(), "the root's file went first");
        assert_eq!(call(&mut p, Sysno::unlink, &[file]).0, 0);
        assert!(!host.join("file").exists(), "then, no longer in the root, the host's");
        let (old, new) = (put(&mut p, m + 512, &name("old")), put(&mut p, m + 1024, &name("new")));
        assert_eq!(call(&mut p, Sysno::rename, &[old, new]).0, 0, "old in the root, new on the host");
        assert_eq!(std::fs::read(host.join("new")).unwrap(), b"root", "moved from the root to the host");
        let dir = put(&mut p, m + 1536, &name("dir"));
        assert_eq!(call(&mut p, Sysno::mkdir, &[dir, 0o755]).0, 0);
        assert!(host.join("dir").is_dir() && !mirror.join("dir").exists(), "a new name is made on the host");
        std::os::unix::fs::symlink("/aarchx-nowhere", mirror.join("dangling")).unwrap();
        let dangling = put(&mut p, m + 2048, &name("dangling"));
        assert_eq!(call(&mut p, Sysno::lstat, &[dangling, m + 3072]).0, 0, "lstat keeps the root's link");
        let mode = u32::from_le_bytes(get(&p, m + 3072 + 24, 4).try_into().unwrap());
        assert_eq!(mode & libc::S_IFMT, libc::S_IFLNK);
        let stat = call(&mut p, Sysno::stat, &[dangling, m + 3072]).0;
        assert_eq!(stat, -i64::from(libc::ENOENT), "stat follows it nowhere, then finds no host file");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn memory_calls_report_code_changes() {
        let (mut p, _) = process();
        let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        let (addr, _) = call(&mut p, Sysno::mmap, &[0, 8192, 5, flags, u64::MAX, 0]);
        assert!(addr > 0);
        p.mem.lock().take_written_code();
        let (r, _) = call(&mut p, Sysno::mprotect, &[addr as u64, 4096, 1]);
        assert_eq!(r, 0);
        assert!(p.mem.lock().take_written_code().contains(&(addr as u64, 4096)), "code lost exec");
        let (r, _) = call(&mut p, Sysno::munmap, &[addr as u64, 8192]);
        assert_eq!(r, 0);
        assert!(p.mem.lock().take_written_code().contains(&(addr as u64, 8192)), "code unmapped");
        assert_eq!(call(&mut p, Sysno::mmap, &[0, 0, 3, flags, u64::MAX, 0]).0, -i64::from(libc::EINVAL));
    }
}
