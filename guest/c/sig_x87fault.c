/* Faults of x87 memory operands (done by the runtime's x87 helper under
 * aarchx) reach the SIGSEGV handler with the right si_addr, on loads and
 * stores, and the handler leaves with siglongjmp. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf env;
static volatile uintptr_t addr;

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    addr = (uintptr_t)si->si_addr;
    siglongjmp(env, sig);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    double *bad[3] = {(double *)0x40, (double *)0x1008, (double *)0xdead0000};
    for (volatile int i = 0; i < 3; i++) {
        if (sigsetjmp(env, 1) == 0) {
            long double x;
            __asm__ volatile("fldl (%1)\n\tfstpt %0" : "=m"(x) : "r"(bad[i]) : "memory");
            printf("loaded %Lf\n", x);
        } else {
            printf("fldl faulted at %#lx\n", (unsigned long)addr);
        }
        if (sigsetjmp(env, 1) == 0) {
            long double one = 1.0L;
            __asm__ volatile("fldt %1\n\tfstpl (%0)" : : "r"(bad[i]), "m"(one) : "memory");
            printf("stored\n");
        } else {
            printf("fstpl faulted at %#lx\n", (unsigned long)addr);
        }
    }
    long double ok = 2.5L;
    double out;
    __asm__ volatile("fldt %1\n\tfstpl %0" : "=m"(out) : "m"(ok) : "memory");
    printf("x87 still works: %g\n", out);
    return 0;
}
