/* What a program built with -Ofast runs under: crtfastmath's start-up
 * code sets MXCSR's FTZ and DAZ (0x8040) before main, as the constructor
 * here does, and the program's float code then runs with denormal
 * operands and results flushed to zero. A decaying recurrence, a
 * relaxation whose tails underflow, packed products and conversions, in
 * float and double; results are printed exactly, and the sticky flags.
 * aarchx runs it on the JIT (FPCR.FZ, see docs/architecture.md, "SSE
 * floating point"). */
#include <emmintrin.h>
#include <stdio.h>

__attribute__((constructor)) static void fast_math(void) {
    _mm_setcsr(_mm_getcsr() | 0x8040);
}

static volatile double seed = 1.0, rate = 0.75, denormal = 0x1.8p-1060;
static volatile float fseed = 1.0f, frate = 0.75f;
static double u[256];

int main(void) {
    printf("mxcsr %#x\n", _mm_getcsr());
    double x = seed;
    int steps = 0;
    while (x != 0.0) {
        x *= rate;
        steps++;
    }
    float f = fseed;
    int fsteps = 0;
    while (f != 0.0f) {
        f *= frate;
        fsteps++;
    }
    printf("decay to zero: double %d steps, float %d steps\n", steps, fsteps);
    u[128] = seed;
    for (int sweep = 0; sweep < 2000; sweep++) {
        for (int i = 1; i < 255; i++) {
            u[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
        }
    }
    double sum = 0.0;
    int zeros = 0;
    for (int i = 0; i < 256; i++) {
        sum += u[i];
        zeros += u[i] == 0.0;
    }
    printf("relaxation: sum %a u[1] %a u[128] %a u[254] %a zeros %d\n", sum, u[1], u[128], u[254], zeros);
    __m128d p = _mm_mul_pd(_mm_set_pd(0x1p-1000 * seed, 0x1p-1020 * seed), _mm_set1_pd(0x1p-30 * seed));
    __m128 q = _mm_mul_ps(_mm_set_ps(0x1p-100f * fseed, 0x1p-120f * fseed, 1.0f, -0x1p-126f * fseed),
                          _mm_set1_ps(0x1p-10f * fseed));
    double pd[2];
    float ps[4];
    _mm_storeu_pd(pd, p);
    _mm_storeu_ps(ps, q);
    printf("packed %a %a | %a %a %a %a\n", pd[0], pd[1], ps[0], ps[1], ps[2], ps[3]);
    printf("denormal: + 1 %a * 2^100 %a < 0x1p-1070 %d (int) %d (float) %a\n", denormal + 1.0, denormal * 0x1p100,
           denormal < 0x1p-1070, _mm_cvtsd_si32(_mm_set_sd(denormal)), (float)(denormal * 0x1p900));
    printf("flags %#x\n", _mm_getcsr() & 0x3f);
    return 0;
}
