/* SIGCHLD from a forked child that exits, waited for with sigsuspend: the
 * handler's siginfo names the child and its status. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Children send stderr to /dev/null (the translator may report there
 * when they exit). */
static void quiet_stderr(void) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
}

static volatile sig_atomic_t got, code, status, right_pid;
static volatile pid_t child;

static void on_chld(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    got = sig;
    code = si->si_code;
    status = si->si_status;
    right_pid = si->si_pid == child;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_chld;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGCHLD, &sa, NULL);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &old);
    child = fork();
    if (child == 0) {
        quiet_stderr();
        _exit(7);
    }
    while (!got) {
        sigsuspend(&old);
    }
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("SIGCHLD %d: CLD_EXITED %d, status %d, from the child %d, still blocked after %d\n", (int)got,
           code == CLD_EXITED, (int)status, (int)right_pid, sigismember(&now, SIGCHLD));
    int st = 0;
    pid_t waited = waitpid(child, &st, 0);
    printf("waitpid: %d, exit %d\n", waited == child, WEXITSTATUS(st));
    return 0;
}
