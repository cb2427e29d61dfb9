/* SIGALRM from setitimer interrupts a compute loop (the handler sets a
 * flag the loop polls), then alarm(), and a pipe read interrupted by a
 * timer: restarted under SA_RESTART, EINTR without it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Children send stderr to /dev/null (the translator may report there
 * when they exit). */
static void quiet_stderr(void) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
}

static volatile sig_atomic_t ticks;

static void on_alarm(int sig) {
    (void)sig;
    ticks++;
}

static void handle(int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = flags;
    sigaction(SIGALRM, &sa, NULL);
}

static void timer(long usec) {
    struct itimerval it = {{0, usec}, {0, usec}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static void read_with_timer(int flags) {
    int fds[2];
    pipe(fds);
    pid_t child = fork();
    if (child == 0) {
        quiet_stderr();
        usleep(400000);
        write(fds[1], "x", 1);
        _exit(0);
    }
    handle(flags);
    ticks = 0;
    timer(30000);
    char c;
    ssize_t n = read(fds[0], &c, 1);
    int err = errno;
    timer(0);
    printf("read with%s SA_RESTART: %zd%s, interrupted: %s\n", flags ? "" : "out", n,
           n < 0 && err == EINTR ? " (EINTR)" : "", ticks > 0 ? "yes" : "no");
    waitpid(child, NULL, 0);
    close(fds[0]);
    close(fds[1]);
}

int main(void) {
    handle(0);
    timer(10000);
    unsigned long spins = 0;
    while (ticks < 3) {
        spins++;
    }
    timer(0);
    printf("loop interrupted by 3 SIGALRMs: %s\n", spins > 0 ? "yes" : "no");
    ticks = 0;
    printf("alarm(5) before: %u\n", alarm(5));
    printf("alarm(0) left: %u\n", alarm(0));
    alarm(1);
    pause();
    printf("pause ended by SIGALRM: %d\n", (int)ticks);
    read_with_timer(SA_RESTART);
    read_with_timer(0);
    return 0;
}
