/* SIGFPE from an integer division by zero, caught: the handler sees
 * FPE_INTDIV at the dividing instruction and leaves with siglongjmp. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static sigjmp_buf env;
static volatile int code, at_rip;

static void on_fpe(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    code = si->si_code;
    at_rip = si->si_addr == (void *)uc->uc_mcontext.gregs[REG_RIP];
    siglongjmp(env, sig);
}

int main(int argc, char **argv) {
    (void)argv;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fpe;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGFPE, &sa, NULL);
    volatile int zero = argc - 1;
    for (int i = 0; i < 3; i++) {
        int got = sigsetjmp(env, 1);
        if (got == 0) {
            printf("quotient %d\n", 100 / zero);
        } else {
            printf("caught signal %d: FPE_INTDIV %d, si_addr is rip %d\n", got, code == FPE_INTDIV, at_rip);
        }
    }
    return 0;
}
