/* ldmxcsr of a value with a reserved bit (16) set raises #GP: SIGSEGV,
 * SI_KERNEL, and MXCSR is left as it was. */
#define _GNU_SOURCE
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <setjmp.h>
static sigjmp_buf env; static volatile int code;
static void h(int s, siginfo_t *si, void *c) { (void)c; code = si->si_code; siglongjmp(env, s); }
int main(void) {
    struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_sigaction = h; sa.sa_flags = SA_SIGINFO; sigaction(SIGSEGV, &sa, 0);
    volatile unsigned v = 0x11f80, now;
    int got = sigsetjmp(env, 1);
    if (!got) { __asm__ volatile("ldmxcsr %0" :: "m"(v)); printf("no fault\n"); }
    else printf("signal %d code %#x\n", got, code);
    __asm__ volatile("stmxcsr %0" : "=m"(now)); printf("mxcsr %#x\n", now);
    return 0;
}
