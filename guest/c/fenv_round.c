/* The four rounding modes (fesetround sets MXCSR.RC and the x87 control
 * word): rint, nearbyint, lrint, llrint, the SSE conversions (scalar and
 * packed, rounding and truncating) and + - * / sqrt on values that round
 * differently in each mode, in float, double and long double. Results are
 * printed exactly (%a, integers). Operands are volatile so that nothing is
 * computed at compile time in the default mode. */
#include <emmintrin.h>
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

static const int modes[] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
static const char *const names[] = {"nearest", "downward", "upward", "towardzero"};

static volatile double dv[] = {2.5, -2.5, 3.5, -0.5, 1.0000000000000002, 0.1, 1e308, -7.499999999999999};
static volatile float fv[] = {2.5f, -1.5f, 0.1f, 16777217.0f};
static volatile long double lv[] = {2.5L, -1.0L / 3.0L, 0.1L};
static volatile int64_t iv[] = {9007199254740993LL, -9007199254740993LL, 16777217, INT64_MAX};

static void scalar(void) {
    for (unsigned i = 0; i < sizeof dv / sizeof dv[0]; i++) {
        double x = dv[i];
        printf("  %a: rint %a nearbyint %a lrint %ld llrint %lld (int) %d (float) %a\n", x, rint(x), nearbyint(x),
               lrint(x), llrint(x), (int)x, (float)x);
    }
    for (unsigned i = 0; i < sizeof fv / sizeof fv[0]; i++) {
        float x = fv[i];
        printf("  %a: rintf %a lrintf %ld\n", x, rintf(x), lrintf(x));
    }
    volatile double one = 1.0, three = 3.0, two = 2.0, tiny = 0x1p-60, big = 0x1p1023;
    volatile float onef = 1.0f, threef = 3.0f;
    printf("  1/3 %a -1/3 %a 1+tiny %a 1-tiny %a -1-tiny %a\n", one / three, -one / three, one + tiny, one - tiny,
           -one - tiny);
    printf("  1.1*1.1 %a sqrt2 %a sqrt3f %a 1/3f %a big*2 %a -big*2 %a\n", 1.1 * (one + 0.1), sqrt(two), sqrtf(threef),
           onef / threef, big * two, -big * two);
    for (unsigned i = 0; i < sizeof iv / sizeof iv[0]; i++) {
        int64_t n = iv[i];
        printf("  %lld: (double) %a (float) %a\n", (long long)n, (double)n, (float)n);
    }
    for (unsigned i = 0; i < sizeof lv / sizeof lv[0]; i++) {
        long double x = lv[i];
        printf("  long double %La: *3 %La /7 %La sqrt %La rintl %La (double) %a\n", x, x * 3, x / 7, sqrtl(x < 0 ? -x : x),
               rintl(x), (double)x);
    }
}

static void packed(void) {
    __m128d d = _mm_set_pd(dv[2], dv[0]);
    __m128 f = _mm_set_ps(fv[3], fv[2], fv[1], fv[0]);
    __m128i ri = _mm_cvtpd_epi32(d), ti = _mm_cvttpd_epi32(d);
    __m128i rf = _mm_cvtps_epi32(f), tf = _mm_cvttps_epi32(f);
    __m128 nd = _mm_cvtpd_ps(_mm_set_pd(dv[5], dv[4]));
    __m128 fi = _mm_cvtepi32_ps(_mm_set_epi32(16777217, -16777219, 33554435, 7));
    __m128d q = _mm_div_pd(_mm_set_pd(dv[5], 1.0), _mm_set_pd(3.0, 3.0));
    __m128 s = _mm_sqrt_ps(_mm_set_ps(2.0f, 3.0f, 5.0f, 7.0f));
    __m128 a = _mm_add_ps(_mm_set1_ps(fv[3]), _mm_set_ps(1.0f, -1.0f, 0.5f, 3.0f));
    int32_t o[4];
    float g[4];
    double e[2];
    _mm_storeu_si128((__m128i *)o, ri);
    printf("  cvtpd2dq %d %d", o[0], o[1]);
    _mm_storeu_si128((__m128i *)o, ti);
    printf(" cvttpd2dq %d %d", o[0], o[1]);
    _mm_storeu_si128((__m128i *)o, rf);
    printf(" cvtps2dq %d %d %d %d", o[0], o[1], o[2], o[3]);
    _mm_storeu_si128((__m128i *)o, tf);
    printf(" cvttps2dq %d %d %d %d\n", o[0], o[1], o[2], o[3]);
    _mm_storeu_ps(g, nd);
    printf("  cvtpd2ps %a %a", g[0], g[1]);
    _mm_storeu_ps(g, fi);
    printf(" cvtdq2ps %a %a %a %a\n", g[0], g[1], g[2], g[3]);
    _mm_storeu_pd(e, q);
    printf("  divpd %a %a", e[0], e[1]);
    _mm_storeu_ps(g, s);
    printf(" sqrtps %a %a %a %a", g[0], g[1], g[2], g[3]);
    _mm_storeu_ps(g, a);
    printf(" addps %a %a %a %a\n", g[0], g[1], g[2], g[3]);
    printf("  cvtsd2si %d cvtss2si %d cvtsd2si64 %lld\n", _mm_cvtsd_si32(_mm_set_sd(dv[0])),
           _mm_cvtss_si32(_mm_set_ss(fv[1])), (long long)_mm_cvtsd_si64(_mm_set_sd(dv[7])));
}

int main(void) {
    for (int m = 0; m < 4; m++) {
        if (fesetround(modes[m]) != 0) {
            printf("fesetround %s failed\n", names[m]);
            return 1;
        }
        printf("%s (fegetround matches %d):\n", names[m], fegetround() == modes[m]);
        scalar();
        packed();
    }
    fesetround(FE_TONEAREST);
    return 0;
}
