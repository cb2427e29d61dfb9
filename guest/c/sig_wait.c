/* sigwaitinfo and sigtimedwait: blocked signals from raise() and from a
 * child are taken synchronously; sigpending shows them first. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Children send stderr to /dev/null (the translator may report there
 * when they exit). */
static void quiet_stderr(void) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
}

int main(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);
    raise(SIGUSR1);
    sigset_t pending;
    sigpending(&pending);
    printf("pending: USR1 %d USR2 %d\n", sigismember(&pending, SIGUSR1), sigismember(&pending, SIGUSR2));
    siginfo_t si;
    int sig = sigwaitinfo(&set, &si);
    printf("sigwaitinfo: %d, si_signo %d, SI_TKILL %d, from self %d\n", sig, si.si_signo, si.si_code == SI_TKILL,
           si.si_pid == getpid());
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        quiet_stderr();
        kill(parent, SIGUSR2);
        _exit(0);
    }
    sig = sigwaitinfo(&set, &si);
    printf("from the child: %d, SI_USER %d, si_pid is the child %d\n", sig, si.si_code == SI_USER, si.si_pid == child);
    waitpid(child, NULL, 0);
    struct timespec ts = {0, 20000000};
    sig = sigtimedwait(&set, &si, &ts);
    printf("sigtimedwait with none pending: %d, EAGAIN %d\n", sig, errno == EAGAIN);
    return 0;
}
