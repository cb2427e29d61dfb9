/* The sticky exception flags: each operation runs after feclearexcept,
 * and fetestexcept (x87 status word and MXCSR) and MXCSR itself (which
 * also has DE, the denormal-operand flag) show what it raised. SSE scalar
 * and packed forms, conversions, the signalling (comisd, cmpltsd) and
 * quiet (ucomisd, cmpeqsd) compares, min/max, and the x87; in hot code,
 * a sum computed only for its flag (in log1p) and an unread compare. No
 * operand is a denormal: the JIT does not raise DE, the denormal-operand
 * flag (see
 * docs/architecture.md, "SSE floating point"; the oracle checks DE on the
 * interpreter, fenv_ftz under DAZ and FTZ). */
#include <emmintrin.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdio.h>

static volatile double zero = 0.0, one = 1.0, three = 3.0, big = DBL_MAX, small = DBL_MIN,
                       qnan = __builtin_nan(""), snan = __builtin_nans(""), minus = -1.0, half = 0.5;
static volatile float fbig = 1e30f, fone = 1.0f;
static volatile double tiny = 0x1p-414;
static volatile long double lzero = 0.0L, lone = 1.0L, lthree = 3.0L;
static volatile double sink;
static volatile int isink;
static volatile long double lsink;

/* A compare whose flags nobody reads, for its invalid exception. */
static void unread_compare(double a, double b) {
    __asm__ volatile("ucomisd %1, %0" : : "x"(a), "x"(b) : "cc");
}

/* Each run many times, so that hot code (a superblock, every pass) runs
 * it too: how many runs lacked the flag. */
static void hot(void) {
    int lost_log1p = 0, lost_compare = 0;
    for (int i = 0; i < 3000; i++) {
        feclearexcept(FE_ALL_EXCEPT);
        /* glibc computes 2^54 + x only for its inexact flag
         * (math_force_eval), its value never read. */
        sink = log1p(tiny);
        lost_log1p += !fetestexcept(FE_INEXACT);
        feclearexcept(FE_ALL_EXCEPT);
        unread_compare(snan, one);
        lost_compare += !fetestexcept(FE_INVALID);
    }
    feclearexcept(FE_ALL_EXCEPT);
    printf("hot log1p(tiny): inexact missing in %d of 3000 runs\n", lost_log1p);
    printf("hot unread ucomisd(snan): invalid missing in %d of 3000 runs\n", lost_compare);
}

static void show(const char *what) {
    int e = fetestexcept(FE_ALL_EXCEPT);
    unsigned csr = _mm_getcsr();
    printf("%-22s fetestexcept:%s%s%s%s%s mxcsr flags %02x\n", what, e & FE_INVALID ? " invalid" : "",
           e & FE_DIVBYZERO ? " divbyzero" : "", e & FE_OVERFLOW ? " overflow" : "",
           e & FE_UNDERFLOW ? " underflow" : "", e & FE_INEXACT ? " inexact" : "", csr & 0x3f);
    feclearexcept(FE_ALL_EXCEPT);
}

int main(void) {
    feclearexcept(FE_ALL_EXCEPT);
    show("nothing");
    sink = one + three;
    show("1+3");
    sink = one / three;
    show("1/3");
    sink = one / zero;
    show("1/0");
    sink = zero / zero;
    show("0/0");
    sink = sqrt(minus);
    show("sqrt(-1)");
    sink = big * three;
    show("max*3");
    sink = small / three;
    show("min/3");
    sink = snan + one;
    show("snan+1");
    sink = qnan + one;
    show("qnan+1");
    isink = (int)big;
    show("(int)max");
    isink = (int)qnan;
    show("(int)qnan");
    isink = (int)(one / three * 3.5);
    show("(int)1.1666");
    sink = (float)(one / three);
    show("(float)(1/3)");
    sink = (float)big;
    show("(float)max");
    sink = (double)(fbig * fbig);
    show("1e30f*1e30f");
    sink = (double)fone;
    show("(double)1.0f");
    isink = qnan < one;
    show("qnan<1 (comisd)");
    isink = qnan == one;
    show("qnan==1 (ucomisd)");
    isink = isless(qnan, one);
    show("isless(qnan,1)");
    isink = snan == one;
    show("snan==1 (ucomisd)");
    __m128d m = _mm_min_sd(_mm_set_sd(qnan), _mm_set_sd(one));
    sink = _mm_cvtsd_f64(m);
    show("minsd(qnan,1)");
    m = _mm_cmplt_pd(_mm_set_pd(one, qnan), _mm_set_pd(three, one));
    sink = _mm_cvtsd_f64(m);
    show("cmpltpd(qnan,...)");
    m = _mm_cmpeq_pd(_mm_set_pd(one, qnan), _mm_set_pd(three, one));
    sink = _mm_cvtsd_f64(m);
    show("cmpeqpd(qnan,...)");
    m = _mm_mul_pd(_mm_set_pd(big, one), _mm_set_pd(three, three));
    sink = _mm_cvtsd_f64(m);
    show("mulpd(max,1 x 3)");
    __m128i ints = _mm_cvtpd_epi32(_mm_set_pd(big, half));
    isink = _mm_cvtsi128_si32(ints);
    show("cvtpd2dq(0.5,max)");
    lsink = lone / lzero;
    show("x87 1/0");
    lsink = lone / lthree;
    show("x87 1/3");
    lsink = lzero / lzero;
    show("x87 0/0");
    feraiseexcept(FE_OVERFLOW | FE_INEXACT);
    show("feraiseexcept(o|i)");
    hot();
    return 0;
}
