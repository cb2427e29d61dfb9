/* raise() with SA_SIGINFO: si_signo, si_code, si_pid; the mask inside a
 * handler (sa_mask and the signal itself, not with SA_NODEFER), a
 * handler's edit of uc_sigmask kept by sigreturn, SA_RESETHAND, a signal
 * raised inside a handler delivered after it returns, SIG_IGN. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static int depth;

static void on_usr1(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("USR1 %d: si_signo %d SI_TKILL %d self %d; blocked: USR1 %d USR2 %d\n", sig, si->si_signo,
           si->si_code == SI_TKILL, si->si_pid == getpid(), sigismember(&now, SIGUSR1), sigismember(&now, SIGUSR2));
    raise(SIGUSR2);
    printf("USR2 raised inside, still pending\n");
    sigaddset(&uc->uc_sigmask, SIGHUP);
}

static void on_usr2(int sig) {
    printf("USR2 %d after USR1 returned\n", sig);
}

static void on_nodefer(int sig) {
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("nodefer depth %d, blocked itself %d\n", depth, sigismember(&now, sig));
    if (depth++ == 0) {
        raise(sig);
    }
}

static void on_once(int sig) {
    printf("once %d\n", sig);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigaddset(&sa.sa_mask, SIGUSR2);
    sigaction(SIGUSR1, &sa, NULL);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR1);
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("after: HUP blocked %d, USR1 blocked %d\n", sigismember(&now, SIGHUP), sigismember(&now, SIGUSR1));
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_nodefer;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGWINCH, &sa, NULL);
    raise(SIGWINCH);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_once;
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGURG, &sa, NULL);
    raise(SIGURG);
    struct sigaction cur;
    sigaction(SIGURG, NULL, &cur);
    printf("reset to default %d\n", cur.sa_handler == SIG_DFL);
    raise(SIGURG);
    signal(SIGTERM, SIG_IGN);
    raise(SIGTERM);
    printf("SIGTERM ignored\n");
    return 0;
}
