/* syscall_badptr: every supported system call that takes a pointer, given
 * a bad one in each pointer argument in turn: an unmapped address (0x1000,
 * below the lowest address a program may map), a kernel address (0xffff800000000000), and,
 * where the call writes through the pointer, a read-only page; sizes that
 * go with a pointer are also tried huge or negative. Prints each call's
 * return value and errno, so the native kernel's answers are the expected
 * output: under aarchx the calls must fail the same way, never crash it.
 *
 * The other arguments are chosen so that a call which did not fault would
 * still do nothing lasting (no signal sent, no file made outside a private
 * directory that does not exist, no process created, nothing blocking).
 *
 * Not made here, because their native failure cannot be made harmless or
 * they have no pointer to check:
 *   rt_sigreturn (restores the registers from whatever the stack holds),
 *   exit, exit_group (end the program; no pointer),
 *   fork, vfork (no pointer), clone (its tid pointers are written by a new
 *   process), kill, tkill, tgkill, pause, alarm (no pointer),
 *   set_tid_address (returns the thread id, different each run, and arms a
 *   write at exit), set_robust_list (stores the pointer, never reads it),
 *   rseq and the other calls aarchx answers with ENOSYS by design.
 * Left out because qemu-user 7.2, which runs the arm64 build in the tests,
 * answers them otherwise than the kernel (it checks or copies a buffer
 * before the kernel would look at it, or lacks the call):
 *   epoll_pwait2, preadv2, pwritev2, mlock2 (ENOSYS there); a read from an
 *   empty pipe or socket, flistxattr with no attributes, getgroups with no
 *   groups, accept on a socket that does not listen, waitid with no child,
 *   clock_getres, nanosleep (the kernel fails first or writes nothing);
 *   the second path of rename, renameat2, link and linkat (the kernel fails
 *   on the first, missing, one first).
 * The page past the end of a file is only passed to calls whose memory
 * aarchx copies itself, and not to all of those: qemu-user dies where it
 * copies such a page, and after a few of these faults (getdents here).
 * mmap, munmap, mprotect, madvise, mremap, msync, mlock, munlock and
 * mincore are given the kernel address as their range. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The bad pointers: unmapped, kernel, read-only, and (for the calls aarchx
 * copies for itself) a page of a file mapping past the end of its file,
 * which is mapped but faults (SIGBUS) when touched. */
static long bad[4];
static const char *bad_name[4] = { "unmapped", "kernel", "readonly", "past-eof" };

static void show(const char *what, int which, const char *size, long r)
{
    char label[96];
    snprintf(label, sizeof label, "%s %s%s%s", what, bad_name[which], *size ? " " : "", size);
    if (r < 0)
        printf("%-52s -1 %s\n", label, strerrorname_np(errno));
    else
        printf("%-52s %ld\n", label, r);
}

/* A call with `p` bad in turn: IN reads through it (unmapped, kernel),
 * OUT writes through it (read-only too). SIZED names the size tried. */
#define TRY(n, what, size, call)                                                                                       \
    for (int i_ = 0; i_ < (n); i_++) {                                                                                 \
        long p = bad[i_];                                                                                              \
        errno = 0;                                                                                                     \
        long r_ = (call);                                                                                              \
        show(what, i_, size, r_);                                                                                      \
    }
#define IN(what, call) TRY(2, what, "", call)
#define OUT(what, call) TRY(3, what, "", call)
#define PAST_EOF(what, call)                                                                                           \
    {                                                                                                                  \
        long p = bad[3];                                                                                               \
        errno = 0;                                                                                                     \
        long r_ = (call);                                                                                              \
        show(what, 3, "", r_);                                                                                         \
    }
#define IN_SIZED(what, size, call) TRY(2, what, size, call)
#define OUT_SIZED(what, size, call) TRY(3, what, size, call)

#define S(...) syscall(__VA_ARGS__)
#define L(x) ((long)(x))

static const long HUGE = (long)(SIZE_MAX >> 1);
static const long NEG = -1;

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    void *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ro == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    bad[0] = 0x1000; /* below mmap_min_addr: never mapped */
    bad[1] = (long)0xffff800000000000ul;
    bad[2] = L(ro);
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGUSR1, SIG_IGN);

    /* What the calls act on. */
    static char buf[8192];
    long bufp = L(buf);
    const char *missing = "/nonexistent-aarchx-badptr/x";
    long miss = L(missing);
    int file = (int)S(SYS_memfd_create, L("badptr"), 0);
    if (write(file, "0123456789abcdef", 16) != 16) {
        perror("write");
        return 1;
    }
    int dir = open("/", O_RDONLY | O_DIRECTORY);
    int pfd[2];
    if (pipe2(pfd, O_NONBLOCK) != 0) {
        perror("pipe2");
        return 1;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0) {
        perror("socketpair");
        return 1;
    }
    int lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int ep = epoll_create1(0);
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    timer_t timer;
    struct sigevent sev = { .sigev_notify = SIGEV_NONE };
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
        perror("timer_create");
        return 1;
    }
    struct timespec zero = { 0, 0 };
    long zerop = L(&zero);
    socklen_t slen = sizeof buf;
    long slenp = L(&slen);

    /* Files and descriptors. */
    OUT("pread64 buf", S(SYS_pread64, file, p, 16, 0));
    OUT_SIZED("pread64 buf", "huge", S(SYS_pread64, file, p, HUGE, 0));
    OUT_SIZED("pread64 buf", "negative", S(SYS_pread64, file, p, NEG, 0));
    IN("write buf", S(SYS_write, pfd[1], p, 16));
    IN_SIZED("write buf", "huge", S(SYS_write, pfd[1], p, HUGE));
    IN("pwrite64 buf", S(SYS_pwrite64, file, p, 16, 0));
    IN("readv iov", S(SYS_readv, file, p, 1));
    IN_SIZED("readv iov", "negative", S(SYS_readv, file, p, NEG));
    IN("writev iov", S(SYS_writev, pfd[1], p, 1));
    IN("preadv iov", S(SYS_preadv, file, p, 1, 0, 0));
    IN("pwritev iov", S(SYS_pwritev, file, p, 1, 0, 0));
    {
        struct iovec biov[3];
        for (int i = 0; i < 3; i++) {
            biov[i].iov_base = (void *)bad[i];
            biov[i].iov_len = 16;
        }
        for (int i = 0; i < 3; i++) {
            errno = 0;
            show("preadv iov_base", i, "", S(SYS_preadv, file, L(&biov[i]), 1, 0, 0));
        }
        for (int i = 0; i < 2; i++) {
            errno = 0;
            show("writev iov_base", i, "", S(SYS_writev, pfd[1], L(&biov[i]), 1));
        }
        for (int i = 0; i < 2; i++) {
            errno = 0;
            show("vmsplice iov_base", i, "", S(SYS_vmsplice, pfd[1], L(&biov[i]), 1, 0));
        }
    }
    IN("vmsplice iov", S(SYS_vmsplice, pfd[1], p, 1, 0));
    IN("open path", S(SYS_open, p, O_RDONLY));
    IN("openat path", S(SYS_openat, AT_FDCWD, p, O_RDONLY));
    IN("creat path", S(SYS_creat, p, 0600));
    IN("stat path", S(SYS_stat, p, bufp));
    OUT("stat buf", S(SYS_stat, L("/"), p));
    IN("lstat path", S(SYS_lstat, p, bufp));
    OUT("lstat buf", S(SYS_lstat, L("/"), p));
    OUT("fstat buf", S(SYS_fstat, file, p));
    IN("newfstatat path", S(SYS_newfstatat, AT_FDCWD, p, bufp, 0));
    OUT("newfstatat buf", S(SYS_newfstatat, AT_FDCWD, L("/"), p, 0));
    IN("statx path", S(SYS_statx, AT_FDCWD, p, 0, 0x7ff, bufp));
    OUT("statx buf", S(SYS_statx, AT_FDCWD, L("/"), 0, 0x7ff, p));
    IN("statfs path", S(SYS_statfs, p, bufp));
    OUT("statfs buf", S(SYS_statfs, L("/"), p));
    OUT("fstatfs buf", S(SYS_fstatfs, dir, p));
    IN("access path", S(SYS_access, p, F_OK));
    IN("faccessat path", S(SYS_faccessat, AT_FDCWD, p, F_OK));
    IN("faccessat2 path", S(SYS_faccessat2, AT_FDCWD, p, F_OK, 0));
    IN("truncate path", S(SYS_truncate, p, 0));
    IN("chdir path", S(SYS_chdir, p));
    IN("rename old", S(SYS_rename, p, miss));
    IN("renameat old", S(SYS_renameat, AT_FDCWD, p, AT_FDCWD, miss));
    IN("mkdir path", S(SYS_mkdir, p, 0700));
    IN("mkdirat path", S(SYS_mkdirat, AT_FDCWD, p, 0700));
    IN("rmdir path", S(SYS_rmdir, p));
    IN("link old", S(SYS_link, p, miss));
    IN("unlink path", S(SYS_unlink, p));
    IN("unlinkat path", S(SYS_unlinkat, AT_FDCWD, p, 0));
    IN("symlink target", S(SYS_symlink, p, miss));
    IN("symlink path", S(SYS_symlink, miss, p));
    IN("symlinkat path", S(SYS_symlinkat, miss, AT_FDCWD, p));
    IN("readlink path", S(SYS_readlink, p, bufp, 64));
    OUT("readlink buf", S(SYS_readlink, L("/proc/self/cwd"), p, 64));
    OUT("readlink buf /proc/self/exe", S(SYS_readlink, L("/proc/self/exe"), p, 64));
    OUT_SIZED("readlink buf", "negative", S(SYS_readlink, L("/proc/self/cwd"), p, NEG));
    IN("readlinkat path", S(SYS_readlinkat, AT_FDCWD, p, bufp, 64));
    OUT("readlinkat buf", S(SYS_readlinkat, AT_FDCWD, L("/proc/self/exe"), p, 64));
    IN("chmod path", S(SYS_chmod, p, 0700));
    IN("fchmodat path", S(SYS_fchmodat, AT_FDCWD, p, 0700));
    IN("chown path", S(SYS_chown, p, -1, -1));
    IN("lchown path", S(SYS_lchown, p, -1, -1));
    IN("fchownat path", S(SYS_fchownat, AT_FDCWD, p, -1, -1, 0));
    IN("mknod path", S(SYS_mknod, p, S_IFIFO | 0600, 0));
    IN("mknodat path", S(SYS_mknodat, AT_FDCWD, p, S_IFIFO | 0600, 0));
    IN("utime path", S(SYS_utime, p, 0));
    IN("utime times", S(SYS_utime, miss, p));
    IN("utimes path", S(SYS_utimes, p, 0));
    IN("utimes times", S(SYS_utimes, miss, p));
    IN("futimesat times", S(SYS_futimesat, AT_FDCWD, miss, p));
    IN("utimensat path", S(SYS_utimensat, AT_FDCWD, p, 0, 0));
    IN("utimensat times", S(SYS_utimensat, file, 0, p, 0));
    IN("inotify_add_watch path", S(SYS_inotify_add_watch, dir, p, 0x2));
    OUT("getcwd buf", S(SYS_getcwd, p, 4096));
    OUT_SIZED("getcwd buf", "huge", S(SYS_getcwd, p, HUGE));
    OUT("getdents buf", S(SYS_getdents, dir, p, 4096));
    OUT_SIZED("getdents buf", "huge", S(SYS_getdents, dir, p, HUGE));
    OUT("getdents64 buf", S(SYS_getdents64, dir, p, 4096));
    OUT("pipe fds", S(SYS_pipe, p));
    OUT("pipe2 fds", S(SYS_pipe2, p, 0));
    OUT("ioctl FIONREAD", S(SYS_ioctl, pfd[0], FIONREAD, p));
    IN("ioctl FIONBIO", S(SYS_ioctl, pfd[0], FIONBIO, p));
    OUT("ioctl TCGETS (pipe)", S(SYS_ioctl, pfd[0], 0x5401, p));
    OUT("fcntl F_GETLK", S(SYS_fcntl, file, F_GETLK, p));
    IN("fcntl F_SETLK", S(SYS_fcntl, file, F_SETLK, p));
    IN("sendfile offset", S(SYS_sendfile, pfd[1], file, p, 1));
    IN("splice off_in", S(SYS_splice, file, p, pfd[1], 0, 1, SPLICE_F_NONBLOCK));
    IN("copy_file_range off_in", S(SYS_copy_file_range, file, p, file, 0, 1, 0));
    IN("fsetxattr name", S(SYS_fsetxattr, file, p, bufp, 4, 0));
    IN("fsetxattr value", S(SYS_fsetxattr, file, L("user.x"), p, 4, 0));
    IN("fgetxattr name", S(SYS_fgetxattr, file, p, bufp, 64));
    IN("fremovexattr name", S(SYS_fremovexattr, file, p));
    IN("memfd_create name", S(SYS_memfd_create, p, 0));

    /* Polling and waiting. */
    IN("poll fds", S(SYS_poll, p, 1, 0));
    IN_SIZED("poll fds", "huge", S(SYS_poll, p, HUGE, 0));
    IN("ppoll fds", S(SYS_ppoll, p, 1, zerop, 0, 8));
    IN("ppoll timeout", S(SYS_ppoll, 0, 0, p, 0, 8));
    IN("ppoll sigmask", S(SYS_ppoll, 0, 0, zerop, p, 8));
    {
        struct timeval tv = { 0, 0 };
        IN("select readfds", S(SYS_select, 1, p, 0, 0, L(&tv)));
        IN_SIZED("select readfds", "negative", S(SYS_select, NEG, p, 0, 0, L(&tv)));
        IN("select timeout", S(SYS_select, 0, 0, 0, 0, p));
        IN("pselect6 writefds", S(SYS_pselect6, 1, 0, p, 0, zerop, 0));
        IN("pselect6 timeout", S(SYS_pselect6, 0, 0, 0, 0, p, 0));
        IN("pselect6 sigmask", S(SYS_pselect6, 0, 0, 0, 0, zerop, p));
    }
    IN("epoll_ctl event", S(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, pfd[0], p));
    OUT("epoll_wait events", S(SYS_epoll_wait, ep, p, 1, 0));
    OUT_SIZED("epoll_wait events", "negative", S(SYS_epoll_wait, ep, p, NEG, 0));
    OUT("epoll_pwait events", S(SYS_epoll_pwait, ep, p, 1, 0, 0, 8));
    IN("epoll_pwait sigmask", S(SYS_epoll_pwait, ep, bufp, 1, 0, p, 8));
    {
        struct epoll_event ev = { .events = EPOLLIN };
        epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev);
        if (write(sv[1], "x", 1) != 1)
            return 1;
        OUT("epoll_wait events (ready)", S(SYS_epoll_wait, ep, p, 1, 0));
        OUT("epoll_pwait events (ready)", S(SYS_epoll_pwait, ep, p, 1, 0, 0, 8));
        if (read(sv[0], buf, 1) != 1)
            return 1;
    }
    OUT("wait4 status (no child)", S(SYS_wait4, -1, p, WNOHANG, 0));
    OUT("wait4 rusage (no child)", S(SYS_wait4, -1, 0, WNOHANG, p));
    IN("clock_nanosleep req", S(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, p, 0));
    IN("futex WAIT uaddr", S(SYS_futex, p, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0));
    IN("futex WAIT timeout", S(SYS_futex, bufp, FUTEX_WAIT_PRIVATE, 1, p, 0, 0));
    IN("futex WAKE uaddr", S(SYS_futex, p, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0));

    /* Signals. */
    IN("rt_sigaction act", S(SYS_rt_sigaction, SIGUSR2, p, 0, 8));
    OUT("rt_sigaction oldact", S(SYS_rt_sigaction, SIGUSR2, 0, p, 8));
    IN_SIZED("rt_sigaction act", "huge sigsetsize", S(SYS_rt_sigaction, SIGUSR2, p, 0, HUGE));
    IN("rt_sigprocmask set", S(SYS_rt_sigprocmask, SIG_BLOCK, p, 0, 8));
    OUT("rt_sigprocmask oldset", S(SYS_rt_sigprocmask, SIG_BLOCK, 0, p, 8));
    OUT_SIZED("rt_sigprocmask oldset", "huge sigsetsize", S(SYS_rt_sigprocmask, SIG_BLOCK, 0, p, HUGE));
    OUT("rt_sigpending set", S(SYS_rt_sigpending, p, 8));
    IN("rt_sigtimedwait set", S(SYS_rt_sigtimedwait, p, 0, zerop, 8));
    {
        sigset_t usr2;
        sigemptyset(&usr2);
        sigaddset(&usr2, SIGUSR2);
        IN("rt_sigtimedwait info", S(SYS_rt_sigtimedwait, L(&usr2), p, zerop, 8));
        IN("rt_sigtimedwait timeout", S(SYS_rt_sigtimedwait, L(&usr2), 0, p, 8));
    }
    IN("rt_sigsuspend mask", S(SYS_rt_sigsuspend, p, 8));
    IN("rt_sigqueueinfo info", S(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, p));
    IN("rt_tgsigqueueinfo info", S(SYS_rt_tgsigqueueinfo, getpid(), getpid(), SIGUSR1, p));
    IN("sigaltstack ss", S(SYS_sigaltstack, p, 0));
    OUT("sigaltstack old", S(SYS_sigaltstack, 0, p));
    IN("signalfd mask", S(SYS_signalfd, -1, p, 8));
    IN("signalfd4 mask", S(SYS_signalfd4, -1, p, 8, 0));
    {
        int pidfd = (int)S(SYS_pidfd_open, getpid(), 0);
        IN("pidfd_send_signal info", S(SYS_pidfd_send_signal, pidfd, SIGUSR1, p, 0));
        close(pidfd);
    }

    /* Time. */
    OUT("gettimeofday tv", S(SYS_gettimeofday, p, 0));
    OUT("time tloc", S(SYS_time, p) < 0 ? -1 : 0);
    OUT("clock_gettime tp", S(SYS_clock_gettime, CLOCK_REALTIME, p));
    OUT("getitimer value", S(SYS_getitimer, ITIMER_REAL, p));
    IN("setitimer new", S(SYS_setitimer, ITIMER_REAL, p, 0));
    OUT("timer_create id", S(SYS_timer_create, CLOCK_MONOTONIC, 0, p));
    IN("timer_create sigevent", S(SYS_timer_create, CLOCK_MONOTONIC, p, bufp));
    IN("timer_settime new", S(SYS_timer_settime, L(timer), 0, p, 0));
    OUT("timer_gettime value", S(SYS_timer_gettime, L(timer), p));
    IN("timerfd_settime new", S(SYS_timerfd_settime, tfd, 0, p, 0));
    OUT("timerfd_gettime value", S(SYS_timerfd_gettime, tfd, p));
    OUT("times buf", S(SYS_times, p) < 0 ? -1 : 0);

    /* Process information. */
    OUT("uname buf", S(SYS_uname, p));
    OUT("getrlimit rlim", S(SYS_getrlimit, RLIMIT_NOFILE, p));
    IN("setrlimit rlim", S(SYS_setrlimit, RLIMIT_NOFILE, p));
    IN("prlimit64 new", S(SYS_prlimit64, 0, RLIMIT_NOFILE, p, 0));
    OUT("prlimit64 old", S(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, p));
    OUT("getrusage usage", S(SYS_getrusage, RUSAGE_SELF, p));
    OUT("sysinfo info", S(SYS_sysinfo, p));
    IN("setgroups list", S(SYS_setgroups, 1, p));
    OUT("getresuid ruid", S(SYS_getresuid, p, bufp, bufp));
    OUT("getresgid egid", S(SYS_getresgid, bufp, p, bufp));
    IN("capget header", S(SYS_capget, p, bufp));
    IN("capset header", S(SYS_capset, p, bufp));
    OUT("getcpu cpu", S(SYS_getcpu, p, 0, 0));
    OUT("sched_getaffinity mask", S(SYS_sched_getaffinity, 0, 128, p));
    IN("sched_setaffinity mask", S(SYS_sched_setaffinity, 0, 128, p));
    IN("sched_setparam param", S(SYS_sched_setparam, 0, p));
    OUT("sched_getparam param", S(SYS_sched_getparam, 0, p));
    IN("sched_setscheduler param", S(SYS_sched_setscheduler, 0, SCHED_OTHER, p));
    OUT("sched_rr_get_interval tp", S(SYS_sched_rr_get_interval, 0, p));
    IN("sched_setattr attr", S(SYS_sched_setattr, 0, p, 0));
    OUT("sched_getattr attr", S(SYS_sched_getattr, 0, p, 48, 0));
    OUT("prctl PR_GET_NAME", S(SYS_prctl, PR_GET_NAME, p, 0, 0, 0));
    IN("prctl PR_SET_NAME", S(SYS_prctl, PR_SET_NAME, p, 0, 0, 0));
    OUT("prctl PR_GET_PDEATHSIG", S(SYS_prctl, PR_GET_PDEATHSIG, p, 0, 0, 0));
    OUT("arch_prctl ARCH_GET_FS", S(SYS_arch_prctl, 0x1003, p));
    OUT("arch_prctl ARCH_GET_GS", S(SYS_arch_prctl, 0x1004, p));
    OUT("getrandom buf", S(SYS_getrandom, p, 16, 0));
    OUT_SIZED("getrandom buf", "huge", S(SYS_getrandom, p, HUGE, 0));
    IN("execve path", S(SYS_execve, p, 0, 0));
    IN("execve argv", S(SYS_execve, miss, p, 0));
    IN("execve envp", S(SYS_execve, miss, 0, p));

    /* Sockets. */
    IN("connect addr", S(SYS_connect, lsock, p, 16));
    IN("bind addr", S(SYS_bind, lsock, p, 16));
    IN_SIZED("bind addr", "negative", S(SYS_bind, lsock, p, NEG));
    IN("sendto buf", S(SYS_sendto, sv[0], p, 16, 0, 0, 0));
    IN("sendto addr", S(SYS_sendto, sv[0], bufp, 16, 0, p, 16));
    if (write(sv[0], "0123456789abcdef", 16) != 16)
        return 1;
    OUT("recvfrom buf", S(SYS_recvfrom, sv[1], p, 16, MSG_DONTWAIT, 0, 0));
    OUT("recvfrom addrlen", S(SYS_recvfrom, sv[1], bufp, 1, MSG_DONTWAIT, bufp, p));
    IN("sendmsg msg", S(SYS_sendmsg, sv[0], p, 0));
    IN("recvmsg msg", S(SYS_recvmsg, sv[1], p, MSG_DONTWAIT));
    IN("sendmmsg msgvec", S(SYS_sendmmsg, sv[0], p, 1, 0));
    IN("recvmmsg msgvec", S(SYS_recvmmsg, sv[1], p, 1, MSG_DONTWAIT, 0));
    OUT("getsockname addr", S(SYS_getsockname, sv[0], p, slenp));
    OUT("getsockname addrlen", S(SYS_getsockname, sv[0], bufp, p));
    OUT("getpeername addr", S(SYS_getpeername, sv[0], p, slenp));
    OUT("socketpair sv", S(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, p));
    IN("setsockopt optval", S(SYS_setsockopt, sv[0], SOL_SOCKET, SO_RCVBUF, p, 4));
    OUT("getsockopt optval", S(SYS_getsockopt, sv[0], SOL_SOCKET, SO_RCVBUF, p, slenp));
    OUT("getsockopt optlen", S(SYS_getsockopt, sv[0], SOL_SOCKET, SO_RCVBUF, bufp, p));

    /* Memory: the kernel address as the range. */
    {
        long k = bad[1];
        long r;
        errno = 0;
        r = L(mmap((void *)k, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
        show("mmap MAP_FIXED", 1, "", r == -1 ? -1 : 0);
        errno = 0;
        r = L(mmap((void *)k, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
        show("mmap MAP_FIXED_NOREPLACE", 1, "", r == -1 ? -1 : 0);
        errno = 0;
        show("munmap", 1, "", S(SYS_munmap, k, page));
        errno = 0;
        show("mprotect", 1, "", S(SYS_mprotect, k, page, PROT_READ));
        errno = 0;
        show("madvise", 1, "", S(SYS_madvise, k, page, MADV_DONTNEED));
        errno = 0;
        show("mremap", 1, "", S(SYS_mremap, k, page, page, 0, 0));
        errno = 0;
        show("msync", 1, "", S(SYS_msync, k, page, MS_ASYNC));
        errno = 0;
        show("mlock", 1, "", S(SYS_mlock, k, page));
        errno = 0;
        show("munlock", 1, "", S(SYS_munlock, k, page));
        errno = 0;
        show("mincore", 1, "", S(SYS_mincore, k, page, bufp));
        errno = 0;
        show("munmap", 1, "huge", S(SYS_munmap, k, HUGE));
    }
    OUT("mincore vec", S(SYS_mincore, L(ro), page, p));

    /* A mapping of two pages of a one-byte file: its second page is past
     * the end. The calls aarchx makes of other host calls or converts copy
     * these bytes themselves. */
    {
        int small = (int)S(SYS_memfd_create, L("past-eof"), 0);
        if (write(small, "x", 1) != 1)
            return 1;
        char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, small, 0);
        if (two == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        bad[3] = L(two + page);
        PAST_EOF("rt_sigaction act", S(SYS_rt_sigaction, SIGUSR2, p, 0, 8));
        PAST_EOF("rt_sigaction oldact", S(SYS_rt_sigaction, SIGUSR2, 0, p, 8));
        PAST_EOF("rt_sigprocmask set", S(SYS_rt_sigprocmask, SIG_BLOCK, p, 0, 8));
        PAST_EOF("rt_sigprocmask oldset", S(SYS_rt_sigprocmask, SIG_BLOCK, 0, p, 8));
        PAST_EOF("sigaltstack old", S(SYS_sigaltstack, 0, p));
        PAST_EOF("stat buf", S(SYS_stat, L("/"), p));
        PAST_EOF("fstat buf", S(SYS_fstat, file, p));
        PAST_EOF("newfstatat buf", S(SYS_newfstatat, AT_FDCWD, L("/"), p, 0));
        PAST_EOF("arch_prctl ARCH_GET_FS", S(SYS_arch_prctl, 0x1003, p));
        PAST_EOF("epoll_ctl event", S(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, pfd[1], p));
        if (write(sv[1], "x", 1) != 1)
            return 1;
        PAST_EOF("epoll_wait events (ready)", S(SYS_epoll_wait, ep, p, 1, 0));
        if (read(sv[0], buf, 1) != 1)
            return 1;
        PAST_EOF("execve argv", S(SYS_execve, L("/proc/self/exe"), p, 0));
        PAST_EOF("pselect6 sigmask", S(SYS_pselect6, 0, 0, 0, 0, zerop, p));
        PAST_EOF("time tloc", S(SYS_time, p) < 0 ? -1 : 0);
        printf("the file mapping's first page: %c\n", two[0]);
    }

    /* Nothing above may have changed what the program sees. */
    printf("still here: %s\n", read(file, buf, 0) == 0 ? "yes" : "no");
    return 0;
}
