/* SSE arithmetic on NaNs, infinities, zeros and denormals: which NaN each
 * of add, sub, mul, div and sqrt returns (x86: the first NaN operand,
 * quieted, signalling or not; the negative default NaN for an invalid
 * operation), what min and max return (the second operand, as it is, for
 * a NaN or two zeros) and the MXCSR flags each raises, scalar and packed,
 * float and double, printed as bits. The JIT gets these by checks after the ops, or
 * by FEAT_AFP's FPCR.AH (policy `afp`): both must print what the CPU does. */
#include <emmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const uint64_t D[] = {
    0x3ff8000000000000ull, /* 1.5 */
    0xc000000000000000ull, /* -2 */
    0x0000000000000000ull, /* +0 */
    0x8000000000000000ull, /* -0 */
    0x7ff0000000000000ull, /* inf */
    0xfff0000000000000ull, /* -inf */
    0x7ff8000000000a0aull, /* quiet NaN, payload */
    0xfff80000000b0b00ull, /* negative quiet NaN */
    0x7ff00000000c0c0cull, /* signalling NaN */
    0xfff4000000000d0dull, /* negative signalling NaN */
    0x000000000000beefull, /* denormal */
};
static const uint32_t F[] = {
    0x3fc00000u, 0xc0000000u, 0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
    0x7fc00a0au, 0xffc0b0b0u, 0x7f800c0cu, 0xffa00d0du, 0x0000beefu,
};
#define N (sizeof D / sizeof D[0])

/* The flags raised since the last call, then none. DE (denormal operand,
 * 0x02) is left out: translated code never raises it (docs/architecture.md,
 * "SSE floating point"). */
static unsigned flags(void) {
    unsigned f = _mm_getcsr() & 0x3d;
    _mm_setcsr(0x1f80);
    return f;
}

static double dbl(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static float flt(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static uint64_t dbits(__m128d v) { uint64_t b; memcpy(&b, &v, 8); return b; }
static uint32_t fbits(__m128 v) { uint32_t b; memcpy(&b, &v, 4); return b; }

int main(void) {
    static const char *ops = "+-*/<>";
    unsigned long sum = 0;
    _mm_setcsr(0x1f80);
    for (unsigned i = 0; i < N; i++) {
        for (unsigned j = 0; j < N; j++) {
            volatile __m128d a = _mm_set_sd(dbl(D[i])), b = _mm_set_sd(dbl(D[j]));
            volatile __m128 fa = _mm_set_ss(flt(F[i])), fb = _mm_set_ss(flt(F[j]));
            for (int op = 0; op < 6; op++) {
                __m128d r;
                __m128 fr;
                flags();
                switch (op) {
                case 0: r = _mm_add_sd(a, b); break;
                case 1: r = _mm_sub_sd(a, b); break;
                case 2: r = _mm_mul_sd(a, b); break;
                case 3: r = _mm_div_sd(a, b); break;
                case 4: r = _mm_min_sd(a, b); break;
                default: r = _mm_max_sd(a, b); break;
                }
                unsigned df = flags();
                switch (op) {
                case 0: fr = _mm_add_ss(fa, fb); break;
                case 1: fr = _mm_sub_ss(fa, fb); break;
                case 2: fr = _mm_mul_ss(fa, fb); break;
                case 3: fr = _mm_div_ss(fa, fb); break;
                case 4: fr = _mm_min_ss(fa, fb); break;
                default: fr = _mm_max_ss(fa, fb); break;
                }
                unsigned ff = flags();
                printf("%2u %c %2u: sd %016llx %02x ss %08x %02x\n", i, ops[op], j, (unsigned long long)dbits(r), df,
                       (unsigned)fbits(fr), ff);
                sum += dbits(r) ^ fbits(fr);
            }
        }
        volatile __m128d a = _mm_set_sd(dbl(D[i]));
        volatile __m128 fa = _mm_set_ss(flt(F[i]));
        flags();
        __m128d r = _mm_sqrt_sd(a, a);
        unsigned df = flags();
        __m128 fr = _mm_sqrt_ss(fa);
        unsigned ff = flags();
        printf("sqrt %2u: sd %016llx %02x ss %08x %02x\n", i, (unsigned long long)dbits(r), df, (unsigned)fbits(fr), ff);
    }
    /* Packed: every lane its own pair, the flags of all lanes together. */
    for (unsigned i = 0; i + 1 < N; i++) {
        volatile __m128d a = _mm_set_pd(dbl(D[i + 1]), dbl(D[i])), b = _mm_set_pd(dbl(D[N - 1 - i]), dbl(D[(i + 3) % N]));
        volatile __m128 fa = _mm_set_ps(flt(F[i]), flt(F[(i + 5) % N]), flt(F[i + 1]), flt(F[(i + 7) % N]));
        volatile __m128 fb = _mm_set_ps(flt(F[N - 1 - i]), flt(F[(i + 2) % N]), flt(F[(i + 9) % N]), flt(F[i]));
        __m128d rs[6] = {_mm_add_pd(a, b), _mm_sub_pd(a, b), _mm_mul_pd(a, b),
                         _mm_div_pd(a, b), _mm_min_pd(a, b), _mm_max_pd(a, b)};
        unsigned df = flags();
        __m128 fs[6] = {_mm_add_ps(fa, fb), _mm_sub_ps(fa, fb), _mm_mul_ps(fa, fb),
                        _mm_div_ps(fa, fb), _mm_min_ps(fa, fb), _mm_max_ps(fa, fb)};
        unsigned ff = flags();
        for (int op = 0; op < 6; op++) {
            uint64_t d[2];
            uint32_t f[4];
            memcpy(d, &rs[op], 16);
            memcpy(f, &fs[op], 16);
            printf("packed %2u %c: pd %016llx %016llx ps %08x %08x %08x %08x\n", i, ops[op], (unsigned long long)d[0],
                   (unsigned long long)d[1], (unsigned)f[0], (unsigned)f[1], (unsigned)f[2], (unsigned)f[3]);
        }
        printf("packed %2u flags: pd %02x ps %02x\n", i, df, ff);
    }
    printf("checksum %lx\n", sum);
    return 0;
}
