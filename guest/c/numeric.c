/* Tests small numerical loops: Newton iterations, matrix multiply, series, integration, printed with %.17g. */
#include <stdio.h>

#define N 12

static double newton_sqrt(double a, int *iters)
{
    double x = a > 1.0 ? a : 1.0;
    int i = 0;
    for (; i < 100; i++) {
        double nx = 0.5 * (x + a / x);
        if (nx == x) break;
        x = nx;
    }
    *iters = i;
    return x;
}

/* Newton on f(x) = x^3 - 2x - 5 */
static double newton_cubic(double x, int steps)
{
    for (int i = 0; i < steps; i++) x -= (x * x * x - 2 * x - 5) / (3 * x * x - 2);
    return x;
}

static void matmul(const double a[N][N], const double b[N][N], double c[N][N])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
}

static float dotf(const float *a, const float *b, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

int main(void)
{
    static const double inputs[] = {2.0, 3.0, 0.5, 10.0, 1e10, 1e-6, 12345.6789};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        int it;
        double r = newton_sqrt(inputs[i], &it);
        printf("newton_sqrt(%.17g) = %.17g after %d iters, r*r=%.17g\n", inputs[i], r, it, r * r);
    }
    for (int s = 1; s <= 6; s++) printf("cubic root step %d: %.17g\n", s, newton_cubic(2.0, s));

    static double a[N][N], b[N][N], c[N][N], d[N][N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = 1.0 / (i + j + 1); /* Hilbert matrix */
            b[i][j] = (i == j) ? 2.0 : ((i + 2 * j) % 5 - 2) * 0.125;
        }
    matmul(a, b, c);
    matmul(c, a, d);
    double trace = 0.0, fro = 0.0;
    for (int i = 0; i < N; i++) {
        trace += d[i][i];
        for (int j = 0; j < N; j++) fro += d[i][j] * d[i][j];
    }
    printf("c[0][0]=%.17g c[3][7]=%.17g c[11][11]=%.17g\n", c[0][0], c[3][7], c[11][11]);
    printf("d trace=%.17g frob^2=%.17g\n", trace, fro);
    for (int i = 0; i < 4; i++)
        printf("d row %d: %.17g %.17g %.17g %.17g\n", i, d[i][0], d[i][1], d[i][2], d[i][3]);

    /* power iteration for dominant eigenvalue of the Hilbert matrix */
    double v[N], w[N];
    for (int i = 0; i < N; i++) v[i] = 1.0;
    double lambda = 0.0;
    for (int it = 0; it < 50; it++) {
        double norm = 0.0;
        for (int i = 0; i < N; i++) {
            double s = 0.0;
            for (int j = 0; j < N; j++) s += a[i][j] * v[j];
            w[i] = s;
            norm += s * s;
        }
        double num = 0.0, den = 0.0;
        for (int i = 0; i < N; i++) {
            num += v[i] * w[i];
            den += v[i] * v[i];
        }
        lambda = num / den;
        double inv = 1.0 / newton_sqrt(norm, &(int){0});
        for (int i = 0; i < N; i++) v[i] = w[i] * inv;
    }
    printf("hilbert dominant eigenvalue ~ %.17g, v0=%.17g\n", lambda, v[0]);

    /* series: pi via Leibniz (partial) and via Nilakantha */
    double pl = 0.0;
    for (int k = 0; k < 20000; k++) pl += (k % 2 ? -4.0 : 4.0) / (2 * k + 1);
    double pn = 3.0;
    for (int k = 1; k <= 200; k++) {
        double t = 4.0 / ((2.0 * k) * (2.0 * k + 1) * (2.0 * k + 2));
        pn += (k % 2) ? t : -t;
    }
    printf("pi leibniz=%.17g nilakantha=%.17g\n", pl, pn);

    /* Simpson integration of 1/(1+x^2) on [0,1] (= pi/4) */
    const int n = 1000;
    double hstep = 1.0 / n, sum = 0.0;
    for (int i = 0; i <= n; i++) {
        double x = i * hstep, fx = 1.0 / (1.0 + x * x);
        sum += (i == 0 || i == n) ? fx : (i % 2 ? 4 * fx : 2 * fx);
    }
    printf("simpson 4*int=%.17g\n", 4.0 * sum * hstep / 3.0);

    /* exp via Taylor series, float dot product */
    double e = 1.0, term = 1.0;
    for (int k = 1; k < 25; k++) {
        term /= k;
        e += term;
    }
    printf("e=%.17g\n", e);
    float fa[64], fb[64];
    for (int i = 0; i < 64; i++) {
        fa[i] = (float)i * 0.1f;
        fb[i] = 1.0f / (float)(i + 1);
    }
    printf("dotf=%.9g\n", (double)dotf(fa, fb, 64));

    /* logistic map, chaotic: sensitive to exact rounding */
    double x = 0.1;
    for (int i = 0; i < 1000; i++) x = 3.9 * x * (1.0 - x);
    printf("logistic after 1000: %.17g\n", x);
    return 0;
}
