/* Unmasked floating-point exceptions (feenableexcept unmasks them in MXCSR
 * and the x87 control word): the faulting SSE instruction raises SIGFPE
 * with the si_code of the exception, at its own address, without writing
 * its result, and with its flag set in the MXCSR of the signal frame; an
 * x87 exception is raised at the next waiting x87 instruction. The
 * handler leaves with siglongjmp, and the handler itself ran with the
 * exceptions masked again (the kernel gives it the initial FPU state). */
#define _GNU_SOURCE
#include <fenv.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <xmmintrin.h>

static sigjmp_buf env;
static volatile int code;
static volatile unsigned frame_mxcsr, handler_mxcsr;
static volatile unsigned short frame_fsw, frame_fcw;

static void on_fpe(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    code = si->si_code;
    frame_mxcsr = uc->uc_mcontext.fpregs->mxcsr;
    frame_fsw = uc->uc_mcontext.fpregs->swd;
    frame_fcw = uc->uc_mcontext.fpregs->cwd;
    handler_mxcsr = _mm_getcsr();
    siglongjmp(env, sig);
}

static const char *name(int c) {
    switch (c) {
    case FPE_FLTDIV: return "FPE_FLTDIV";
    case FPE_FLTINV: return "FPE_FLTINV";
    case FPE_FLTOVF: return "FPE_FLTOVF";
    case FPE_FLTUND: return "FPE_FLTUND";
    case FPE_FLTRES: return "FPE_FLTRES";
    default: return "other";
    }
}

static volatile double zero = 0.0, one = 1.0, three = 3.0, big = 1e308, small = 1e-308;
static volatile float fone = 1.0f, fzero = 0.0f;
static volatile long double lzero = 0.0L, lone = 1.0L;

/* divps with one lane dividing by zero, not moved before feenableexcept. */
static __attribute__((noinline)) void divps(volatile float *out) {
    __m128 q = _mm_div_ps(_mm_set1_ps(fone), _mm_set_ps(1.0f, 2.0f, fzero, 4.0f));
    _mm_storeu_ps((float *)out, q);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fpe;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGFPE, &sa, NULL);
    static const int excepts[] = {FE_DIVBYZERO, FE_INVALID, FE_OVERFLOW, FE_UNDERFLOW, FE_INEXACT, FE_DIVBYZERO,
                                  FE_DIVBYZERO};
    static const char *const what[] = {"1/0 (divsd)", "0/0 (divsd)", "max*max (mulsd)", "min*min (mulsd)",
                                       "1/3 (divsd)", "1f/0f (divps)", "1/0 (x87 fdiv)"};
    for (int t = 0; t < 7; t++) {
        volatile double result = -42.0;
        volatile float fresult[4] = {-42.0f, -42.0f, -42.0f, -42.0f};
        volatile long double lresult = -42.0L;
        feclearexcept(FE_ALL_EXCEPT);
        int got = sigsetjmp(env, 1);
        if (got == 0) {
            feenableexcept(excepts[t]);
            switch (t) {
            case 0: result = one / zero; break;
            case 1: result = zero / zero; break;
            case 2: result = big * big; break;
            case 3: result = small * small; break;
            case 4: result = one / three; break;
            case 5: divps(fresult); break;
            case 6: lresult = lone / lzero; break;
            }
            fedisableexcept(FE_ALL_EXCEPT);
            printf("%-16s no signal\n", what[t]);
        } else {
            printf("%-16s signal %d %s, frame mxcsr %04x fsw&0x3f %02x fcw %04x, handler mxcsr %04x, result %a "
                   "%a %a %La\n",
                   what[t], got, name(code), frame_mxcsr, frame_fsw & 0x3f, frame_fcw, handler_mxcsr, result,
                   fresult[0], fresult[1], lresult);
        }
        /* siglongjmp does not restore the FPU: it is the handler's. */
        printf("  after: mxcsr %04x, fegetexcept %02x\n", _mm_getcsr(), fegetexcept());
        fedisableexcept(FE_ALL_EXCEPT);
    }
    return 0;
}
