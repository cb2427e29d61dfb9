/* Tests printf of doubles: %f %e %g %.17g %a, specials (inf, nan, -0.0), tiny, huge, rounding. */
#include <float.h>
#include <math.h>
#include <stdio.h>

static const double PI = 3.14159265358979323846;

int main(void)
{
    volatile double zero = 0.0;
    const double vals[] = {
        0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.5, 2.5, -2.5, 3.14159265358979323846,
        2.718281828459045, 1.0 / 3.0, 2.0 / 3.0, 100.0, 1e6, 123456789.0, 1e15, 1e16,
        1e21, 1e22, 1e100, 1e300, DBL_MAX, -DBL_MAX, 1e-5, 1e-10, 1e-100, 1e-300,
        DBL_MIN, DBL_MIN / 2.0, 4.9406564584124654e-324, DBL_EPSILON, 0.125, 9.999999,
        0.000123456, 5e-324 * 3, 1.0 / zero, -1.0 / zero, 0.0 / zero,
    };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        double v = vals[i];
        printf("%2zu: f=%f e=%e g=%g\n", i, v, v, v);
        printf("    .17g=%.17g a=%a A=%A\n", v, v, v);
        printf("    .0f=%.0f .3e=%.3e .10g=%.10g #g=%#g\n", v, v, v, v);
        printf("    |%15.4f|%-15.4e|%+.2f|% .3g|%015.3f|\n", v, v, v, v, v);
    }
    /* float promoted */
    float fv[] = {1.1f, -0.3f, 16777216.0f, 16777217.0f, 3.4028235e38f, 1.17549435e-38f};
    for (size_t i = 0; i < sizeof fv / sizeof fv[0]; i++)
        printf("float %.9g %a %e\n", fv[i], fv[i], fv[i]);
    /* rounding behaviour of halves */
    for (double d = 0.5; d < 8.0; d += 1.0) printf("%.0f ", d);
    printf("\n");
    for (double d = 0.05; d < 0.6; d += 0.1) printf("%.1f ", d);
    printf("\n");

    /* precision sweep */
    for (int p = 0; p <= 20; p += 4) printf("pi %.*f | %.*e | %.*g\n", p, PI, p, PI, p, PI);

    /* specials via math functions */
    printf("isnan=%d isinf=%d signbit(-0.0)=%d signbit(nan)=%d\n", isnan(0.0 / zero),
           isinf(1.0 / zero), signbit(-0.0), signbit(0.0 / zero) != 0);
    printf("%5.1f|%-6f|%+f|%e|%g\n", -1.0 / zero, 1.0 / zero, 0.0 / zero, -(0.0 / zero),
           -1.0 / zero);

    /* powers of two and ten */
    double p2 = 1.0;
    for (int i = 0; i < 70; i += 7, p2 *= 128.0) printf("2^%d=%.17g ", i, p2);
    printf("\n");
    double p10 = 1.0;
    for (int i = 0; i <= 30; i += 3, p10 *= 1000.0) printf("1e%d=%.17g ", i, p10);
    printf("\n");

    fprintf(stderr, "stderr: %.3f %g\n", 2.0 / 7.0, 1e-7);
    return 0;
}
