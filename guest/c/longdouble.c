/* Tests long double (x87 80-bit) arithmetic: + - * / with rounding at
 * the 64th bit, sqrtl, fmodl/remainderl (fprem/fprem1), rintl (frndint),
 * logbl, conversions to and from integers, float and double, comparisons
 * and selects, strtold, and printf %Lf %Le %Lg %La of the results. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long double sink;

static void show(const char *what, long double v)
{
    printf("%-10s %.21Lg | %La | %.6Le | %Lf\n", what, v, v, v, v);
}

int main(void)
{
    volatile long double third = 1.0L / 3.0L, ten = 10.0L, tiny = LDBL_MIN, big = LDBL_MAX;
    show("1/3", third);
    show("2/3", 2.0L * third);
    show("1/3*3", third * 3.0L);
    show("10/3", ten / 3.0L);
    show("0.1", 0.1L);
    show("sum", 0.1L + 0.2L);
    show("diff", 1.0L - 0.9L);
    show("1+eps", 1.0L + LDBL_EPSILON);
    show("1+eps/2", 1.0L + LDBL_EPSILON / 2);
    show("sqrt2", sqrtl(2.0L));
    show("sqrt1/3", sqrtl(third));
    show("fmod", fmodl(1e30L, 7.0L));
    show("fmod-", fmodl(-123.456L, 0.5L));
    show("remainder", remainderl(10.5L, 3.0L));
    show("rint", rintl(2.5L));
    show("rint-", rintl(-3.5000000001L));
    show("logb", logbl(12345.678L));
    show("tiny/3", tiny / 3.0L);
    show("big*2", big * 2.0L);
    show("-big*2", -big * 2.0L);
    show("0/0", (ten - ten) / (ten - ten));
    show("-0", -(ten - ten));
    show("fabs", fabsl(-third));

    /* A long sum keeps more digits than double would. */
    long double acc = 0.0L;
    double dacc = 0.0;
    for (int i = 1; i <= 100000; i++) {
        acc += 1.0L / ((long double)i * i);
        dacc += 1.0 / ((double)i * i);
    }
    show("zeta2", acc);
    printf("double     %.17g\n", dacc);

    /* Conversions. */
    long double vals[] = {0.5L, 1.5L, -2.5L, 1e18L, -9.2233720368547758e18L, 123456789.987654321L, 3.4e38L, 1e-40L};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        long double v = vals[i];
        int64_t n = (int64_t)v;
        int32_t k = (int32_t)(v / 1e12L);
        printf("conv %.21Lg -> %lld %d %.9g %.17g %lld\n", v, (long long)n, k, (float)v, (double)v, llrintl(v));
        sink = (long double)n + (long double)(uint32_t)k;
    }

    /* Comparisons and selects. */
    long double a = third, b = 0.333333333333333333L, nan = nanl("");
    printf("cmp %d %d %d %d %d\n", a < b, a > b, a == b, a != nan, a < nan);
    printf("max %.21Lg min %.21Lg\n", a > b ? a : b, a < b ? a : b);
    printf("fmax %.21Lg\n", fmaxl(a, b));

    /* Parsing. */
    const char *texts[] = {"3.14159265358979323846264338327950288", "1e-4940", "0x1.fffffffffffffffep16383",
                           "1.18973149535723176502e+4932", "-0.0", "123456789012345678901234567890"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        show("strtold", strtold(texts[i], NULL));
    return 0;
}
