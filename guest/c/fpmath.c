/* Tests scalar floating point: sqrt, fabs, floor/ceil via casts, int/float/double conversions, NaN compares, min/max. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* floor/ceil with casts, valid for |x| < 2^62 */
static double my_floor(double x)
{
    double t = (double)(int64_t)x;
    return t > x ? t - 1.0 : t;
}

static double my_ceil(double x)
{
    double t = (double)(int64_t)x;
    return t < x ? t + 1.0 : t;
}

static double my_fabs(double x) { return x < 0 ? -x : (x == 0 ? 0.0 : x); }

static double dmin(double a, double b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }

int main(void)
{
    volatile double vzero = 0.0;
    const double nan_v = vzero / vzero;
    const double inf_v = 1.0 / vzero;

    static const double xs[] = {0.0, -0.0, 0.25, 1.0, 2.0, 2.5, -2.5, 3.7, -3.7, 10.0, 1e-8,
                                123456.789, -987654.321, 4503599627370495.5, 1e15 + 0.5};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        double x = xs[i];
        printf("x=%.17g sqrt=%.17g fabs=%.17g/%.17g floor=%.17g/%.17g ceil=%.17g/%.17g\n", x,
               sqrt(my_fabs(x)), fabs(x), my_fabs(x), floor(x), my_floor(x), ceil(x), my_ceil(x));
        printf("  trunc=%.17g round=%.17g rint=%.17g (long)=%ld lround=%ld\n", trunc(x), round(x),
               rint(x), (long)x, lround(x));
    }

    /* int <-> double <-> float conversions */
    static const int64_t is[] = {0, 1, -1, 16777217, -16777217, 9007199254740993LL,
                                 INT64_MAX, INT64_MIN, 123456789012345LL};
    for (size_t i = 0; i < sizeof is / sizeof is[0]; i++) {
        double d = (double)is[i];
        float f = (float)is[i];
        printf("i64 %" PRId64 " -> double %.17g (%016" PRIx64 ") -> float %.9g (%08" PRIx32 ")\n",
               is[i], d, bits(d), (double)f, fbits(f));
    }
    static const uint64_t us[] = {0, 1ULL << 63, (1ULL << 63) + 1025, UINT64_MAX, 12345678901234567890ULL};
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
        double d = (double)us[i];
        printf("u64 %" PRIu64 " -> double %.17g -> u64 %" PRIu64 "\n", us[i], d,
               d < 18446744073709551616.0 ? (uint64_t)d : 0);
    }
    static const double ds[] = {0.5, -0.5, 1.9999999, -1.9999999, 2147483647.9, -2147483648.9,
                                3.4e38, 1e-46, 16777217.0, 0.1};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        double d = ds[i];
        float f = (float)d;
        int32_t i32 = (d > -2147483649.0 && d < 2147483648.0) ? (int32_t)d : 0;
        printf("double %.17g -> float %.9g (%08" PRIx32 ") -> back %.17g i32=%" PRId32
               " u32=%" PRIu32 "\n",
               d, (double)f, fbits(f), (double)f, i32, (d >= 0 && d < 4294967296.0) ? (uint32_t)d : 0u);
    }
    float fsum = 0.0f;
    for (int i = 1; i <= 1000; i++) fsum += 1.0f / (float)i;
    double dsum = 0.0;
    for (int i = 1; i <= 1000; i++) dsum += 1.0 / i;
    printf("harmonic(1000) float=%.9g double=%.17g\n", (double)fsum, dsum);

    /* comparisons including NaN */
    const double cmpv[] = {-1.0, 0.0, -0.0, 1.0, inf_v, -inf_v, nan_v};
    const char *names[] = {"-1", "0", "-0", "1", "inf", "-inf", "nan"};
    for (int i = 0; i < 7; i++) {
        printf("%4s:", names[i]);
        for (int j = 0; j < 7; j++) {
            double a = cmpv[i], b = cmpv[j];
            int code = (a < b) | (a <= b) << 1 | (a == b) << 2 | (a != b) << 3 | (a > b) << 4 |
                       (a >= b) << 5 | isunordered(a, b) << 6 | isless(a, b) << 7;
            printf(" %3d", code);
        }
        printf("\n");
    }
    printf("nan==nan %d nan!=nan %d isnan %d isinf(-inf) %d isfinite(1e308) %d\n",
           nan_v == nan_v, nan_v != nan_v, isnan(nan_v) != 0, isinf(-inf_v) != 0,
           isfinite(1e308) != 0);

    /* min/max: the ternary form is order sensitive with NaN and signed zeros; fmin/fmax are not */
    printf("dmin(1,nan)=%g dmin(nan,1)=%g fmin(nan,1)=%g fmax(1,nan)=%g\n", dmin(1.0, nan_v),
           dmin(nan_v, 1.0), fmin(nan_v, 1.0),
           fmax(1.0, nan_v));
    printf("dmax(-0,0) sign=%d dmax(0,-0) sign=%d dmin(2,3)=%g dmax(2,3)=%g\n",
           signbit(dmax(-0.0, 0.0)) != 0, signbit(dmax(0.0, -0.0)) != 0, dmin(2.0, 3.0),
           dmax(2.0, 3.0));

    /* arithmetic edge cases, printed as bit patterns */
    printf("inf-inf=%016" PRIx64 " 0*inf=%016" PRIx64 " sqrt(-1)=%016" PRIx64 "\n",
           bits(inf_v - inf_v), bits(vzero * inf_v), bits(sqrt(-1.0 + vzero)));
    printf("-0+0=%016" PRIx64 " -0*-0=%016" PRIx64 " 1/-inf=%016" PRIx64 "\n", bits(-0.0 + vzero),
           bits(-vzero * -vzero), bits(1.0 / -inf_v));
    printf("denorm*2=%.17g DBL_MIN/3=%.17g DBL_MAX*2=%g\n", DBL_MIN / 4 * 2, DBL_MIN / 3,
           DBL_MAX * (2.0 + vzero));
    printf("fma-ish: %.17g %.17g\n", 0.1 * 3.0, 0.1 + 0.2);
    return 0;
}
