/* A flag the x87 set while its exception was masked becomes pending when
 * fldcw unmasks it: the next waiting x87 instruction raises SIGFPE with
 * FPE_FLTINV, as the CPU does (#MF). */
#define _GNU_SOURCE
#include <fenv.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <setjmp.h>
static sigjmp_buf env; static volatile int code;
static void h(int s, siginfo_t *si, void *c) { (void)c; code = si->si_code; siglongjmp(env, s); }
static volatile long double z = 0.0L, one = 1.0L, r;
int main(void) {
    struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_sigaction = h; sa.sa_flags = SA_SIGINFO; sigaction(SIGFPE, &sa, 0);
    r = z / z;             /* IE, masked: flag only */
    int got = sigsetjmp(env, 1);
    if (!got) {
        unsigned short cw; __asm__ volatile("fnstcw %0" : "=m"(cw)); cw &= ~1; __asm__ volatile("fldcw %0" :: "m"(cw));
        r = one + one;     /* the pending IE is raised here */
        printf("no signal %Lf\n", r);
    } else printf("signal %d code %d\n", got, code);
    unsigned short sw; __asm__ volatile("fnstsw %0" : "=m"(sw)); printf("sw %#x\n", sw & 0xff);
    return 0;
}
