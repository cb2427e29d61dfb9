/* A signal that arrives just before a blocking system call must still
 * interrupt it. Each round arms a one-shot timer of a few microseconds
 * and blocks in read() on a pipe that only the SIGALRM handler writes
 * to (no SA_RESTART): the signal comes before the read (the handler runs
 * first and the read returns its byte), during it (EINTR, then the byte),
 * or, in some rounds, in between. If a signal is held back until the
 * read returns, the read never returns. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define ROUNDS 4000

static int fds[2];
static volatile sig_atomic_t fired;

static void on_alarm(int sig) {
    (void)sig;
    fired++;
    char c = 'x';
    write(fds[1], &c, 1);
}

int main(void) {
    if (pipe(fds) != 0) {
        perror("pipe");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    int bytes = 0, failures = 0;
    for (int i = 0; i < ROUNDS; i++) {
        struct itimerval it = {{0, 0}, {0, 1 + (i * 7) % 10}};
        setitimer(ITIMER_REAL, &it, NULL);
        for (;;) {
            char c;
            ssize_t n = read(fds[0], &c, 1);
            if (n == 1) {
                bytes++;
                break;
            }
            if (n != -1 || errno != EINTR) {
                failures++;
                break;
            }
        }
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    char c;
    ssize_t extra = read(fds[0], &c, 1);
    printf("%d rounds: %d signals, %d bytes read, %d failed reads, then read %zd (%s)\n", ROUNDS, (int)fired, bytes,
           failures, extra, extra < 0 && errno == EAGAIN ? "EAGAIN" : "?");
    return 0;
}
