/* select: the x86-64 select system call (glibc's select() uses pselect6,
 * so it is called by number), which writes the time left back to its
 * timeval as Linux does; glibc's select and pselect; ready sets of a pipe;
 * timeouts that expire; invalid timeouts; and pselect's temporary signal
 * mask, under which a blocked pending signal's handler runs. Prints only
 * relations of times, never the times. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static long sys_select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    return syscall(SYS_select, n, r, w, e, tv);
}

static void result(const char *what, long r)
{
    if (r < 0)
        printf("%-44s -1 %s\n", what, errno == EINVAL ? "EINVAL" : errno == EINTR ? "EINTR" : errno == EBADF ? "EBADF" : errno == EFAULT ? "EFAULT" : "other");
    else
        printf("%-44s %ld\n", what, r);
}

static volatile sig_atomic_t handled, usr2_blocked_in_handler, usr1_blocked_in_handler;

static void on_usr1(int sig)
{
    (void)sig;
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    handled++;
    usr1_blocked_in_handler = sigismember(&now, SIGUSR1);
    usr2_blocked_in_handler = sigismember(&now, SIGUSR2);
}

int main(void)
{
    int p[2];
    if (pipe(p))
        return 1;
    fd_set r, w;
    struct timeval tv;

    FD_ZERO(&r);
    FD_SET(p[0], &r);
    tv = (struct timeval){ 0, 0 };
    result("select: empty pipe, zero timeout", sys_select(p[0] + 1, &r, NULL, NULL, &tv));
    printf("  read set %d, timeval %ld.%06ld\n", FD_ISSET(p[0], &r), (long)tv.tv_sec, (long)tv.tv_usec);

    FD_ZERO(&r);
    FD_SET(p[0], &r);
    tv = (struct timeval){ 0, 20000 };
    result("select: empty pipe, 20 ms", sys_select(p[0] + 1, &r, NULL, NULL, &tv));
    printf("  read set %d, time left %ld.%06ld\n", FD_ISSET(p[0], &r), (long)tv.tv_sec, (long)tv.tv_usec);

    if (write(p[1], "x", 1) != 1)
        return 1;
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_SET(p[0], &r);
    FD_SET(p[1], &r);
    FD_SET(p[0], &w);
    FD_SET(p[1], &w);
    tv = (struct timeval){ 5, 0 };
    result("select: data in the pipe, 5 s", sys_select(p[1] + 1, &r, &w, NULL, &tv));
    printf("  read: %d %d, write: %d %d\n", FD_ISSET(p[0], &r), FD_ISSET(p[1], &r), FD_ISSET(p[0], &w), FD_ISSET(p[1], &w));
    printf("  time left in (4 s, 5 s]: %d, usec < 1e6: %d\n", tv.tv_sec == 4 || (tv.tv_sec == 5 && tv.tv_usec == 0),
           tv.tv_usec < 1000000);

    FD_ZERO(&r);
    FD_SET(p[0], &r);
    tv = (struct timeval){ 0, 2500000 };
    result("select: 2500000 usec (carried into seconds)", sys_select(p[0] + 1, &r, NULL, NULL, &tv));
    printf("  time left 2 s and some: %d\n", tv.tv_sec == 2 && tv.tv_usec > 0);

    tv = (struct timeval){ -1, 0 };
    result("select: negative seconds", sys_select(p[0] + 1, &r, NULL, NULL, &tv));
    tv = (struct timeval){ 0, -1 };
    result("select: negative microseconds", sys_select(p[0] + 1, &r, NULL, NULL, &tv));
    result("select: timeval at address 8", sys_select(p[0] + 1, &r, NULL, NULL, (struct timeval *)8));
    FD_ZERO(&r);
    FD_SET(p[1] + 10, &r);
    tv = (struct timeval){ 0, 0 };
    result("select: a closed descriptor", sys_select(p[1] + 11, &r, NULL, NULL, &tv));
    result("select: no descriptors, 1 ms", sys_select(0, NULL, NULL, NULL, &(struct timeval){ 0, 1000 }));

    FD_ZERO(&r);
    FD_SET(p[0], &r);
    tv = (struct timeval){ 1, 0 };
    result("glibc select", select(p[0] + 1, &r, NULL, NULL, &tv));
    printf("  read set %d\n", FD_ISSET(p[0], &r));
    struct timespec ts = { 0, 1000000 };
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    result("glibc pselect, no mask", pselect(p[0] + 1, &r, NULL, NULL, &ts, NULL));

    char c;
    if (read(p[0], &c, 1) != 1)
        return 1;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t block, empty, now;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGUSR2);
    sigprocmask(SIG_BLOCK, &block, NULL);
    raise(SIGUSR1);
    printf("SIGUSR1 pending while blocked, handled %d\n", (int)handled);
    sigemptyset(&empty);
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    ts = (struct timespec){ 5, 0 };
    result("pselect with an empty mask", pselect(p[0] + 1, &r, NULL, NULL, &ts, &empty));
    printf("  handled %d, in the handler SIGUSR1 blocked %d, SIGUSR2 blocked %d\n", (int)handled,
           (int)usr1_blocked_in_handler, (int)usr2_blocked_in_handler);
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("  after: SIGUSR1 blocked %d, SIGUSR2 blocked %d\n", sigismember(&now, SIGUSR1), sigismember(&now, SIGUSR2));
    ts = (struct timespec){ 0, 1000000 };
    result("pselect with the mask blocking SIGUSR1", pselect(p[0] + 1, &r, NULL, NULL, &ts, &block));
    return 0;
}
