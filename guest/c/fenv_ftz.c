/* FTZ (MXCSR bit 15: tiny results flushed to zero) and DAZ (bit 6:
 * denormal operands read as zero), set with _mm_setcsr as crtfastmath
 * does for -Ofast, alone and together, with the flags each operation
 * raises (MXCSR bits 0-5). Scalar and packed, float and double. Not in
 * the default mode: the JIT runs that one and does not raise DE, the
 * denormal-operand flag (docs/architecture.md, "SSE floating point"). */
#include <emmintrin.h>
#include <stdio.h>

static volatile double sub = 0x1.8p-1060, tiny = 0x1p-1000, one = 1.0, half = 0.5;
static volatile float fsub = 0x1p-140f, ftiny = 0x1p-100f;

static void run(const char *name, unsigned bits) {
    _mm_setcsr(0x1f80 | bits);
    volatile double r[8];
    volatile float f[4];
    r[0] = sub + 0.0;
    r[1] = sub * one;
    r[2] = tiny * tiny;
    r[3] = tiny * 0x1p-60;
    r[4] = sub * 0x1p60;
    r[5] = one / (sub * 0x1p50);
    r[6] = sub - sub * half;
    r[7] = (double)(fsub * 1.0f);
    f[0] = fsub + 0.0f;
    f[1] = ftiny * ftiny;
    f[2] = (float)(tiny * 0x1p800);
    f[3] = (float)sub;
    unsigned flags = _mm_getcsr() & 0x3f;
    __m128d p = _mm_mul_pd(_mm_set_pd(sub, tiny), _mm_set_pd(0x1p10, 0x1p-70));
    double pd[2];
    _mm_storeu_pd(pd, p);
    int lt = sub > 0.0;
    printf("%-8s", name);
    for (int i = 0; i < 8; i++) {
        printf(" %a", r[i]);
    }
    for (int i = 0; i < 4; i++) {
        printf(" %a", f[i]);
    }
    printf(" | packed %a %a | sub>0 %d | flags %02x %02x\n", pd[0], pd[1], lt, flags, _mm_getcsr() & 0x3f);
    _mm_setcsr(0x1f80);
}

int main(void) {
    run("ftz", 0x8000);
    run("daz", 0x40);
    run("ftz+daz", 0x8040);
    /* Rounding toward zero with FTZ, and a result that rounds up to the
       smallest normal. */
    run("ftz+rz", 0xe000);
    return 0;
}
