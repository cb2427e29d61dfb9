//! The x86-64 Linux system call numbers: the one table of them, with their
//! names, as in the kernel's `arch/x86/entry/syscalls/syscall_64.tbl` (0 to
//! 450), and how aarchx handles each ([`Handling`] and a note), which
//! `docs/syscalls.md` is generated from ([`markdown`]). The dispatcher
//! matches on [`Sysno`]; unknown numbers are reported by number only. A
//! test checks that the calls the dispatcher handles are exactly those not
//! marked [`Handling::Enosys`].

use std::fmt::Write;

/// How aarchx makes an x86-64 system call on an arm64 (or x86-64) host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handling {
    /// The host call of the same name with the guest's arguments: the
    /// layouts and flag values it uses are the same on x86-64 and arm64.
    Passed,
    /// The host call of the same name, with arguments, structures or flag
    /// values converted (or a part of its uses refused).
    Translated,
    /// Made of other host calls (arm64 lacks it), or done by aarchx itself
    /// (the guest's memory map, signal state, registers).
    Emulated,
    /// Fails with a fixed error by design.
    Refused,
    /// Not implemented: -ENOSYS, logged once at debug level.
    Enosys,
}

impl Handling {
    /// Every handling, in the order the documentation lists them.
    pub const ALL: [Handling; 5] =
        [Handling::Passed, Handling::Translated, Handling::Emulated, Handling::Refused, Handling::Enosys];

    /// The word `docs/syscalls.md` uses.
    pub fn word(self) -> &'static str {
        match self {
            Handling::Passed => "passed",
            Handling::Translated => "translated",
            Handling::Emulated => "emulated",
            Handling::Refused => "refused",
            Handling::Enosys => "ENOSYS",
        }
    }

    /// What the word means.
    pub fn meaning(self) -> &'static str {
        match self {
            Handling::Passed => {
                "the host call of the same name with the guest's arguments: what it reads and writes has the same \
                 layout and flag values on x86-64 and arm64 Linux"
            }
            Handling::Translated => {
                "the host call of the same name, with arguments, structures or flag values converted (or some of its \
                 uses refused)"
            }
            Handling::Emulated => {
                "arm64 lacks it, or it concerns what aarchx keeps for the guest (memory map, signals, registers): \
                 made of other host calls or done by aarchx"
            }
            Handling::Refused => "fails with a fixed error by design",
            Handling::Enosys => "not implemented: fails with ENOSYS (logged once with AARCHX_LOG=debug)",
        }
    }
}

macro_rules! x86_64_syscalls {
    ($($name:ident = $nr:literal, $handling:ident $(, $note:literal)?;)*) => {
        /// An x86-64 Linux system call, named as the kernel names it.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Sysno {
            $($name = $nr,)*
        }

        impl Sysno {
            /// Every call, by number.
            pub const ALL: &'static [Sysno] = &[$(Sysno::$name,)*];

            /// The call with x86-64 number `nr`, if there is one.
            pub fn from_nr(nr: u64) -> Option<Sysno> {
                match nr {
                    $($nr => Some(Sysno::$name),)*
                    _ => None,
                }
            }

            /// The kernel's name of the call.
            pub fn name(self) -> &'static str {
                match self {
                    $(Sysno::$name => stringify!($name),)*
                }
            }

            /// How aarchx makes the call.
            pub fn handling(self) -> Handling {
                match self {
                    $(Sysno::$name => Handling::$handling,)*
                }
            }

            /// What is worth knowing about how aarchx makes it ("" if
            /// nothing beyond its handling).
            pub fn note(self) -> &'static str {
                match self {
                    $(Sysno::$name => concat!("" $(, $note)?),)*
                }
            }
        }
    };
}

/// `docs/syscalls.md`: the handling of every x86-64 call, one table.
pub fn markdown() -> String {
    let mut s = String::new();
    s.push_str(
        "# System calls\n\n\
         <!-- Generated from host/src/syscall/numbers.rs: AARCHX_BLESS=1 cargo test -p aarchx --test syscalls_doc -->\n\n\
         How aarchx makes each x86-64 Linux system call on its host (the handling is about an arm64 host; on an \
         x86-64 host the conversions are the identity). The table is `host/src/syscall/numbers.rs`, the one \
         list of the calls; `host/src/syscall/mod.rs` dispatches them, and a test checks that the calls it \
         handles are exactly those not marked ENOSYS. Numbers the table does not name fail with ENOSYS too.\n\n",
    );
    for h in Handling::ALL {
        let count = Sysno::ALL.iter().filter(|c| c.handling() == h).count();
        writeln!(s, "- **{}** ({count} calls): {}.", h.word(), h.meaning()).expect("write to a String");
    }
    s.push_str("\n| nr | call | handling | note |\n|---:|---|---|---|\n");
    for c in Sysno::ALL {
        let note = c.note().replace('|', "\\|");
        writeln!(s, "| {} | {} | {} | {note} |", *c as u64, c.name(), c.handling().word()).expect("write to a String");
    }
    s
}

x86_64_syscalls! {
    read = 0, Passed;
    write = 1, Passed;
    open = 2, Emulated, "openat(AT_FDCWD), flags converted";
    close = 3, Passed;
    stat = 4, Emulated, "newfstatat(AT_FDCWD), `struct stat` converted";
    fstat = 5, Translated, "`struct stat` converted (144 bytes on x86-64, 128 on arm64)";
    lstat = 6, Emulated, "newfstatat(AT_FDCWD), `struct stat` converted";
    poll = 7, Emulated, "ppoll with the timeout as a timespec";
    lseek = 8, Passed;
    mmap = 9, Emulated, "guest memory map kept by aarchx";
    mprotect = 10, Emulated, "guest memory map kept by aarchx";
    munmap = 11, Emulated, "guest memory map kept by aarchx";
    brk = 12, Emulated, "guest memory map kept by aarchx";
    rt_sigaction = 13, Emulated, "guest signal state kept by aarchx (docs/signals.md)";
    rt_sigprocmask = 14, Emulated, "guest signal state kept by aarchx (docs/signals.md)";
    rt_sigreturn = 15, Emulated, "guest signal state kept by aarchx (docs/signals.md)";
    ioctl = 16, Translated, "terminal ioctls and FIONREAD/FIONBIO/FIOCLEX (same numbers and layouts); others ENOTTY";
    pread64 = 17, Passed;
    pwrite64 = 18, Passed;
    readv = 19, Passed;
    writev = 20, Passed;
    access = 21, Emulated, "faccessat(AT_FDCWD)";
    pipe = 22, Emulated, "pipe2(0)";
    select = 23, Emulated, "pselect6 with the timeout as a timespec; the time left written back as a timeval";
    sched_yield = 24, Passed;
    mremap = 25, Emulated, "guest memory map kept by aarchx";
    msync = 26, Passed;
    mincore = 27, Passed;
    madvise = 28, Emulated, "guest memory map kept by aarchx";
    shmget = 29, Enosys;
    shmat = 30, Enosys;
    shmctl = 31, Enosys;
    dup = 32, Passed;
    dup2 = 33, Emulated, "dup3, or fcntl(F_GETFD) when both are the same descriptor";
    pause = 34, Emulated, "guest signal state kept by aarchx (docs/signals.md)";
    nanosleep = 35, Passed;
    getitimer = 36, Passed;
    alarm = 37, Emulated, "setitimer(ITIMER_REAL)";
    setitimer = 38, Passed;
    getpid = 39, Passed;
    sendfile = 40, Passed;
    socket = 41, Passed, "SOCK_NONBLOCK and SOCK_CLOEXEC are O_NONBLOCK and O_CLOEXEC, the same on both";
    connect = 42, Passed, "`struct sockaddr` the same on both; AF_UNIX paths are the host's";
    accept = 43, Passed;
    sendto = 44, Passed;
    recvfrom = 45, Passed;
    sendmsg = 46, Passed, "`struct msghdr` and `struct cmsghdr` (SCM_RIGHTS, SCM_CREDENTIALS) the same layout on both";
    recvmsg = 47, Passed, "`struct msghdr` and `struct cmsghdr` (SCM_RIGHTS, SCM_CREDENTIALS) the same layout on both";
    shutdown = 48, Passed;
    bind = 49, Passed, "`struct sockaddr` the same on both; AF_UNIX paths are the host's";
    listen = 50, Passed;
    getsockname = 51, Passed;
    getpeername = 52, Passed;
    socketpair = 53, Passed, "SOCK_NONBLOCK and SOCK_CLOEXEC are O_NONBLOCK and O_CLOEXEC, the same on both";
    setsockopt = 54, Passed, "SOL_* and SO_* values (asm-generic/socket.h) and option layouts the same on both";
    getsockopt = 55, Passed, "SOL_* and SO_* values (asm-generic/socket.h) and option layouts the same on both";
    clone = 56, Translated, "fork-like flags: a host fork; thread flags: a new host thread running the guest thread (`syscall/thread.rs`); CLONE_VM without CLONE_THREAD ENOSYS";
    fork = 57, Emulated, "a host fork of aarchx";
    vfork = 58, Emulated, "a host fork of aarchx";
    execve = 59, Emulated, "runs the new program under aarchx (or a host program)";
    exit = 60, Emulated, "ends the thread (robust list, tid word cleared and woken); the last one ends the run";
    wait4 = 61, Passed;
    kill = 62, Passed;
    uname = 63, Translated, "machine x86_64";
    semget = 64, Enosys;
    semop = 65, Enosys;
    semctl = 66, Enosys;
    shmdt = 67, Enosys;
    msgget = 68, Enosys;
    msgsnd = 69, Enosys;
    msgrcv = 70, Enosys;
    msgctl = 71, Enosys;
    fcntl = 72, Translated, "F_GETFL/F_SETFL flags converted; F_* commands with the same layouts passed; others EINVAL";
    flock = 73, Passed;
    fsync = 74, Passed;
    fdatasync = 75, Passed;
    truncate = 76, Translated, "an absolute path resolved in the guest root first";
    ftruncate = 77, Passed;
    getdents = 78, Emulated, "getdents64, each record rewritten as a `linux_dirent` (d_type in its last byte)";
    getcwd = 79, Passed;
    chdir = 80, Passed;
    fchdir = 81, Passed;
    rename = 82, Emulated, "the *at form with AT_FDCWD";
    mkdir = 83, Emulated, "the *at form with AT_FDCWD";
    rmdir = 84, Emulated, "the *at form with AT_FDCWD";
    creat = 85, Emulated, "openat(AT_FDCWD, O_WRONLY|O_CREAT|O_TRUNC)";
    link = 86, Emulated, "the *at form with AT_FDCWD";
    unlink = 87, Emulated, "the *at form with AT_FDCWD";
    symlink = 88, Emulated, "the *at form with AT_FDCWD";
    readlink = 89, Translated, "/proc/self/exe names the guest program";
    chmod = 90, Emulated, "the *at form with AT_FDCWD";
    fchmod = 91, Passed;
    chown = 92, Emulated, "the *at form with AT_FDCWD";
    fchown = 93, Passed;
    lchown = 94, Emulated, "the *at form with AT_FDCWD";
    umask = 95, Passed;
    gettimeofday = 96, Passed;
    getrlimit = 97, Emulated, "prlimit64(0)";
    getrusage = 98, Passed;
    sysinfo = 99, Passed;
    times = 100, Passed;
    ptrace = 101, Enosys;
    getuid = 102, Passed;
    syslog = 103, Enosys;
    getgid = 104, Passed;
    setuid = 105, Passed;
    setgid = 106, Passed;
    geteuid = 107, Passed;
    getegid = 108, Passed;
    setpgid = 109, Passed;
    getppid = 110, Passed;
    getpgrp = 111, Emulated, "getpgid(0)";
    setsid = 112, Passed;
    setreuid = 113, Passed;
    setregid = 114, Passed;
    getgroups = 115, Passed;
    setgroups = 116, Passed;
    setresuid = 117, Passed;
    getresuid = 118, Passed;
    setresgid = 119, Passed;
    getresgid = 120, Passed;
    getpgid = 121, Passed;
    setfsuid = 122, Passed;
    setfsgid = 123, Passed;
    getsid = 124, Passed;
    capget = 125, Passed;
    capset = 126, Passed;
    rt_sigpending = 127, Emulated, "guest signal state kept by aarchx (docs/signals.md)";
    rt_sigtimedwait = 128, Translated, "signals aarchx recorded first";
    rt_sigqueueinfo = 129, Passed;
    rt_sigsuspend = 130, Emulated, "guest signal state kept by aarchx (docs/signals.md)";
    sigaltstack = 131, Emulated, "guest signal state kept by aarchx (docs/signals.md)";
    utime = 132, Emulated, "utimensat with the times as timespecs";
    mknod = 133, Emulated, "the *at form with AT_FDCWD";
    uselib = 134, Enosys;
    personality = 135, Emulated, "PER_LINUX only: queries answer it, other personas EINVAL";
    ustat = 136, Enosys;
    statfs = 137, Translated, "an absolute path resolved in the guest root first";
    fstatfs = 138, Passed;
    sysfs = 139, Enosys;
    getpriority = 140, Passed;
    setpriority = 141, Passed;
    sched_setparam = 142, Passed;
    sched_getparam = 143, Passed;
    sched_setscheduler = 144, Passed;
    sched_getscheduler = 145, Passed;
    sched_get_priority_max = 146, Passed;
    sched_get_priority_min = 147, Passed;
    sched_rr_get_interval = 148, Passed;
    mlock = 149, Passed;
    munlock = 150, Passed;
    mlockall = 151, Passed;
    munlockall = 152, Passed;
    vhangup = 153, Enosys;
    modify_ldt = 154, Enosys;
    pivot_root = 155, Enosys;
    _sysctl = 156, Enosys;
    prctl = 157, Translated, "generic options passed; PR_SET_SECCOMP, PR_SET_MM, PR_GET_TID_ADDRESS and arch-specific options EINVAL";
    arch_prctl = 158, Emulated, "FS and GS bases are guest registers; other codes EINVAL";
    adjtimex = 159, Enosys;
    setrlimit = 160, Emulated, "prlimit64(0)";
    chroot = 161, Enosys;
    sync = 162, Passed;
    acct = 163, Enosys;
    settimeofday = 164, Refused, "EPERM: a translated program does not set the host's clock";
    mount = 165, Enosys;
    umount2 = 166, Enosys;
    swapon = 167, Enosys;
    swapoff = 168, Enosys;
    reboot = 169, Enosys;
    sethostname = 170, Enosys;
    setdomainname = 171, Enosys;
    iopl = 172, Enosys;
    ioperm = 173, Enosys;
    create_module = 174, Enosys;
    init_module = 175, Enosys;
    delete_module = 176, Enosys;
    get_kernel_syms = 177, Enosys;
    query_module = 178, Enosys;
    quotactl = 179, Enosys;
    nfsservctl = 180, Enosys;
    getpmsg = 181, Enosys;
    putpmsg = 182, Enosys;
    afs_syscall = 183, Enosys;
    tuxcall = 184, Enosys;
    security = 185, Enosys;
    gettid = 186, Passed;
    readahead = 187, Passed;
    setxattr = 188, Enosys;
    lsetxattr = 189, Enosys;
    fsetxattr = 190, Passed;
    getxattr = 191, Enosys;
    lgetxattr = 192, Enosys;
    fgetxattr = 193, Passed;
    listxattr = 194, Enosys;
    llistxattr = 195, Enosys;
    flistxattr = 196, Passed;
    removexattr = 197, Enosys;
    lremovexattr = 198, Enosys;
    fremovexattr = 199, Passed;
    tkill = 200, Passed;
    time = 201, Emulated, "clock_gettime(CLOCK_REALTIME)";
    futex = 202, Translated, "every operation but the removed FUTEX_FD passed to the host (guest addresses and thread ids are the host's)";
    sched_setaffinity = 203, Passed;
    sched_getaffinity = 204, Passed;
    set_thread_area = 205, Enosys;
    io_setup = 206, Enosys;
    io_destroy = 207, Enosys;
    io_getevents = 208, Enosys;
    io_submit = 209, Enosys;
    io_cancel = 210, Enosys;
    get_thread_area = 211, Enosys;
    lookup_dcookie = 212, Enosys;
    epoll_create = 213, Emulated, "epoll_create1(0) (size checked)";
    epoll_ctl_old = 214, Enosys, "not implemented by the x86-64 kernel either";
    epoll_wait_old = 215, Enosys, "not implemented by the x86-64 kernel either";
    remap_file_pages = 216, Enosys;
    getdents64 = 217, Passed;
    set_tid_address = 218, Emulated, "kept per thread: cleared and woken when the thread ends";
    restart_syscall = 219, Enosys;
    semtimedop = 220, Enosys;
    fadvise64 = 221, Passed;
    timer_create = 222, Passed;
    timer_settime = 223, Passed;
    timer_gettime = 224, Passed;
    timer_getoverrun = 225, Passed;
    timer_delete = 226, Passed;
    clock_settime = 227, Refused, "EPERM: a translated program does not set the host's clock";
    clock_gettime = 228, Passed;
    clock_getres = 229, Passed;
    clock_nanosleep = 230, Passed;
    exit_group = 231, Emulated, "ends the run, every thread";
    epoll_wait = 232, Emulated, "epoll_pwait with no mask, `struct epoll_event` converted";
    epoll_ctl = 233, Translated, "`struct epoll_event` converted (12 bytes, packed, on x86-64; 16 on arm64)";
    tgkill = 234, Passed;
    utimes = 235, Emulated, "utimensat with the times as timespecs";
    vserver = 236, Enosys;
    mbind = 237, Enosys;
    set_mempolicy = 238, Enosys;
    get_mempolicy = 239, Enosys;
    mq_open = 240, Enosys;
    mq_unlink = 241, Enosys;
    mq_timedsend = 242, Enosys;
    mq_timedreceive = 243, Enosys;
    mq_notify = 244, Enosys;
    mq_getsetattr = 245, Enosys;
    kexec_load = 246, Enosys;
    waitid = 247, Passed;
    add_key = 248, Enosys;
    request_key = 249, Enosys;
    keyctl = 250, Enosys;
    ioprio_set = 251, Passed;
    ioprio_get = 252, Passed;
    inotify_init = 253, Emulated, "inotify_init1(0)";
    inotify_add_watch = 254, Passed, "the path is the host's (not looked up in the guest root)";
    inotify_rm_watch = 255, Passed;
    migrate_pages = 256, Enosys;
    openat = 257, Translated, "open flags converted (O_DIRECTORY, O_NOFOLLOW, O_DIRECT, O_LARGEFILE differ); /proc/self/exe and procfs files";
    mkdirat = 258, Translated, "an absolute path resolved in the guest root first";
    mknodat = 259, Translated, "an absolute path resolved in the guest root first";
    fchownat = 260, Translated, "an absolute path resolved in the guest root first";
    futimesat = 261, Emulated, "utimensat with the times as timespecs";
    newfstatat = 262, Translated, "`struct stat` converted (144 bytes on x86-64, 128 on arm64)";
    unlinkat = 263, Translated, "an absolute path resolved in the guest root first";
    renameat = 264, Translated, "an absolute path resolved in the guest root first";
    linkat = 265, Translated, "an absolute path resolved in the guest root first";
    symlinkat = 266, Translated, "an absolute path resolved in the guest root first";
    readlinkat = 267, Translated, "/proc/self/exe names the guest program";
    fchmodat = 268, Translated, "an absolute path resolved in the guest root first";
    faccessat = 269, Translated, "an absolute path resolved in the guest root first";
    pselect6 = 270, Translated, "the temporary signal mask is the guest's";
    ppoll = 271, Translated, "the temporary signal mask is the guest's";
    unshare = 272, Enosys;
    set_robust_list = 273, Emulated, "kept per thread, walked when the thread ends as the kernel does";
    get_robust_list = 274, Emulated, "the calling thread's only (another thread's: EPERM)";
    splice = 275, Passed;
    tee = 276, Passed;
    sync_file_range = 277, Passed;
    vmsplice = 278, Passed;
    move_pages = 279, Enosys;
    utimensat = 280, Translated, "an absolute path resolved in the guest root first";
    epoll_pwait = 281, Translated, "`struct epoll_event` converted; the temporary signal mask is the guest's";
    signalfd = 282, Emulated, "signalfd4(0)";
    timerfd_create = 283, Passed;
    eventfd = 284, Emulated, "eventfd2(count, 0)";
    fallocate = 285, Passed;
    timerfd_settime = 286, Passed;
    timerfd_gettime = 287, Passed;
    accept4 = 288, Passed, "SOCK_NONBLOCK and SOCK_CLOEXEC are O_NONBLOCK and O_CLOEXEC, the same on both";
    signalfd4 = 289, Passed;
    eventfd2 = 290, Passed;
    epoll_create1 = 291, Passed;
    dup3 = 292, Passed;
    pipe2 = 293, Translated, "O_DIRECT converted";
    inotify_init1 = 294, Passed;
    preadv = 295, Passed;
    pwritev = 296, Passed;
    rt_tgsigqueueinfo = 297, Passed;
    perf_event_open = 298, Enosys;
    recvmmsg = 299, Passed, "`struct mmsghdr` and the timeout the same layout on both";
    fanotify_init = 300, Enosys;
    fanotify_mark = 301, Enosys;
    prlimit64 = 302, Passed;
    name_to_handle_at = 303, Enosys;
    open_by_handle_at = 304, Enosys;
    clock_adjtime = 305, Enosys;
    syncfs = 306, Passed;
    sendmmsg = 307, Passed, "`struct mmsghdr` the same layout on both";
    setns = 308, Enosys;
    getcpu = 309, Passed;
    process_vm_readv = 310, Enosys;
    process_vm_writev = 311, Enosys;
    kcmp = 312, Enosys;
    finit_module = 313, Enosys;
    sched_setattr = 314, Passed;
    sched_getattr = 315, Passed;
    renameat2 = 316, Translated, "an absolute path resolved in the guest root first";
    seccomp = 317, Enosys, "a filter would apply to aarchx's own host calls";
    getrandom = 318, Passed;
    memfd_create = 319, Passed;
    kexec_file_load = 320, Enosys;
    bpf = 321, Enosys;
    execveat = 322, Enosys;
    userfaultfd = 323, Enosys;
    membarrier = 324, Enosys;
    mlock2 = 325, Passed;
    copy_file_range = 326, Passed;
    preadv2 = 327, Passed;
    pwritev2 = 328, Passed;
    pkey_mprotect = 329, Enosys;
    pkey_alloc = 330, Enosys;
    pkey_free = 331, Enosys;
    statx = 332, Passed;
    io_pgetevents = 333, Enosys;
    rseq = 334, Enosys, "glibc goes on without it";
    pidfd_send_signal = 424, Passed;
    io_uring_setup = 425, Enosys;
    io_uring_enter = 426, Enosys;
    io_uring_register = 427, Enosys;
    open_tree = 428, Enosys;
    move_mount = 429, Enosys;
    fsopen = 430, Enosys;
    fsconfig = 431, Enosys;
    fsmount = 432, Enosys;
    fspick = 433, Enosys;
    pidfd_open = 434, Passed;
    clone3 = 435, Translated, "a thread as clone's (the new stack pointer at stack + stack_size); any other form ENOSYS, and glibc falls back to clone";
    close_range = 436, Passed;
    openat2 = 437, Enosys;
    pidfd_getfd = 438, Enosys;
    faccessat2 = 439, Translated, "an absolute path resolved in the guest root first";
    process_madvise = 440, Enosys;
    epoll_pwait2 = 441, Translated, "as epoll_pwait; ENOSYS where the host lacks it (kernels before 5.11, qemu-user)";
    mount_setattr = 442, Enosys;
    quotactl_fd = 443, Enosys;
    landlock_create_ruleset = 444, Enosys;
    landlock_add_rule = 445, Enosys;
    landlock_restrict_self = 446, Enosys;
    memfd_secret = 447, Enosys;
    process_mrelease = 448, Enosys;
    futex_waitv = 449, Enosys;
    set_mempolicy_home_node = 450, Enosys;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names() {
        assert_eq!(Sysno::from_nr(0), Some(Sysno::read));
        assert_eq!(Sysno::from_nr(2).map(Sysno::name), Some("open"));
        assert_eq!(Sysno::from_nr(60), Some(Sysno::exit));
        assert_eq!(Sysno::from_nr(231), Some(Sysno::exit_group));
        assert_eq!(Sysno::from_nr(262), Some(Sysno::newfstatat));
        assert_eq!(Sysno::from_nr(334), Some(Sysno::rseq));
        assert_eq!(Sysno::from_nr(335), None);
        assert_eq!(Sysno::from_nr(435).map(Sysno::name), Some("clone3"));
        assert_eq!(Sysno::getrandom as u64, 318);
        assert_eq!(Sysno::ALL.len(), 362);
        assert!(Sysno::ALL.windows(2).all(|w| (w[0] as u64) < (w[1] as u64)), "by number");
    }

    #[test]
    fn handling_and_notes() {
        assert_eq!(Sysno::read.handling(), Handling::Passed);
        assert_eq!(Sysno::read.note(), "");
        assert_eq!(Sysno::select.handling(), Handling::Emulated);
        assert!(Sysno::select.note().contains("pselect6"));
        assert_eq!(Sysno::shmget.handling(), Handling::Enosys);
        let doc = markdown();
        assert!(doc.contains("| 23 | select | emulated | pselect6"), "{doc}");
    }
}
