/* SIGSEGV recovered with sigsetjmp/siglongjmp, several times: the mask
 * the handler ran with is undone by siglongjmp, and a store that faulted
 * left memory unchanged. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static sigjmp_buf env;
static volatile uintptr_t last_addr;

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    last_addr = (uintptr_t)si->si_addr;
    siglongjmp(env, sig);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    char *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    volatile int *targets[3] = {(int *)8, (int *)(page + 100), (int *)0xdead000};
    for (int i = 0; i < 3; i++) {
        int got = sigsetjmp(env, 1);
        if (got == 0) {
            *targets[i] = i;
            printf("store %d did not fault\n", i);
        } else {
            sigset_t now;
            sigprocmask(SIG_BLOCK, NULL, &now);
            printf("store %d: signal %d at offset %ld, SIGSEGV blocked after: %d\n", i, got,
                   (long)(last_addr - (uintptr_t)targets[i]), sigismember(&now, SIGSEGV));
        }
    }
    printf("page byte 100 still %d\n", page[100]);
    volatile int total = 0;
    for (volatile int i = 0; i < 1000; i++) {
        if (sigsetjmp(env, 1) == 0) {
            total += *(volatile int *)(uintptr_t)(16 * (i % 4));
        } else {
            total++;
        }
    }
    printf("1000 faults caught: %d\n", total);
    return 0;
}
