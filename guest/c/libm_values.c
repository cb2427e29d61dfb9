/*
 * libm_values.c: fingerprints glibc libm results so that two runs can be
 * compared bit for bit: native and under aarchx (host/tests/guests.rs,
 * libm_matches_native_at_v1_and_v3), or the x86-64 build against an
 * aarch64 one (bench/native/compare.sh: which host libm functions native
 * mode could bridge, docs/native.md "Which libm results are the same").
 *
 * For each tested function (double and float forms) a deterministic set of
 * NINPUT inputs is generated: special values (+-0, +-inf, NaNs, denormals,
 * extremes), structured values (integers, half-integers, multiples of pi/2
 * and their neighbours, powers of two and ten, huge arguments), random
 * values in a range useful for that function, random values with a
 * log-uniform magnitude, and fully random bit patterns.  Input generation
 * uses only integer arithmetic and plain IEEE double operations (build with
 * -ffp-contract=off), so every platform sees the same inputs; the "in" hash
 * lets you check that.
 *
 * Before each call errno is set to 0 and all FP exceptions are cleared;
 * after it the result bits, errno and the raised exceptions (mapped to a
 * platform independent mask) are recorded.
 *
 * Usage:
 *   libm_values              one line per function:
 *                            name count in=H res=H resq=H errno=H fe=H
 *                            res:  FNV-1a 64 of the exact result bits (plus
 *                                  the second output of frexp/modf/lgamma)
 *                            resq: same, with every NaN replaced by one
 *                                  canonical NaN (ignores NaN sign/payload)
 *                            errno, fe: hashes of errno / exception masks
 *   libm_values dump NAME    one line per input of function NAME (e.g. sin,
 *                            sinf): index, input bits, result bits, second
 *                            output, errno, exception mask, all in hex;
 *                            diff two such dumps to find the differences.
 *   libm_values list         list the function names.
 *
 * Build: cc -O2 -fno-builtin -ffp-contract=off libm_values.c -lm
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NINPUT 20000

/* ---- hashing ------------------------------------------------------------ */

typedef struct { uint64_t h; } fnv_t;

static void fnv_init(fnv_t *f) { f->h = 0xcbf29ce484222325ULL; }

static void fnv_u64(fnv_t *f, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        f->h ^= (v >> (8 * i)) & 0xff;
        f->h *= 0x100000001b3ULL;
    }
}

/* ---- bit helpers -------------------------------------------------------- */

static uint64_t dbits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static double bitsd(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Neighbour of x by one unit of the representation (towards larger |x| for
 * k > 0); does not go through libm. */
static double dstep(double x, int k) { return bitsd(dbits(x) + (int64_t)k); }

/* ---- random numbers (xorshift64*) --------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

static double rnd_uniform(double lo, double hi)
{
    return lo + (hi - lo) * rnd_unit();
}

/* Random sign, random mantissa, binary exponent uniform in [elo, ehi]. */
static double rnd_logu(int elo, int ehi, int allow_neg)
{
    uint64_t r = rnd();
    int e = elo + (int)(r % (uint64_t)(ehi - elo + 1));
    uint64_t sign = (allow_neg && (r >> 63)) ? 1ULL << 63 : 0;
    uint64_t mant = rnd() >> 12;
    return bitsd(sign | ((uint64_t)(e + 1023) << 52) | mant);
}

/* ---- exception flags ---------------------------------------------------- */

enum { P_INVALID = 1, P_DIVBYZERO = 2, P_OVERFLOW = 4, P_UNDERFLOW = 8,
       P_INEXACT = 16 };

static unsigned fe_portable(void)
{
    int f = fetestexcept(FE_ALL_EXCEPT);
    return ((f & FE_INVALID) ? P_INVALID : 0) |
           ((f & FE_DIVBYZERO) ? P_DIVBYZERO : 0) |
           ((f & FE_OVERFLOW) ? P_OVERFLOW : 0) |
           ((f & FE_UNDERFLOW) ? P_UNDERFLOW : 0) |
           ((f & FE_INEXACT) ? P_INEXACT : 0);
}

/* ---- function table ----------------------------------------------------- */

enum kind { K_UN, K_BIN, K_LDEXP, K_FREXP, K_MODF, K_LGAMMA };

struct fn {
    const char *name;
    enum kind kind;
    int is_float;
    void *f;           /* real type depends on kind/is_float */
    double lo, hi;     /* uniform range for x */
    double ylo, yhi;   /* uniform range for y (binary functions) */
    int elo, ehi;      /* log-uniform binary exponent range */
    int pos;           /* log-uniform values positive only */
};

/* The lgamma wrappers also report signgam as the second output. */
static double lgamma_d(double x, int *s) { double r = lgamma(x); *s = signgam; return r; }
static float lgamma_f(float x, int *s) { float r = lgammaf(x); *s = signgam; return r; }

#define UN(n, lo, hi, lf, hf, elo, ehi, pos) \
    { #n, K_UN, 0, (void *)n, lo, hi, 0, 0, elo, ehi, pos }, \
    { #n "f", K_UN, 1, (void *)n##f, lf, hf, 0, 0, elo, ehi, pos }
#define BIN(n, lo, hi, ylo, yhi, yflo, yfhi, elo, ehi) \
    { #n, K_BIN, 0, (void *)n, lo, hi, ylo, yhi, elo, ehi, 0 }, \
    { #n "f", K_BIN, 1, (void *)n##f, lo, hi, yflo, yfhi, elo, ehi, 0 }

static const struct fn fns[] = {
    UN(sin, -10, 10, -10, 10, -40, 75, 0),
    UN(cos, -10, 10, -10, 10, -40, 75, 0),
    UN(tan, -10, 10, -10, 10, -40, 75, 0),
    UN(exp, -746, 710, -104, 89, -60, 10, 0),
    UN(exp2, -1075, 1024, -150, 128, -60, 11, 0),
    UN(exp10, -324, 309, -46, 39, -60, 9, 0),
    UN(expm1, -40, 710, -20, 89, -60, 10, 0),
    UN(log, 0, 4, 0, 4, -1022, 1023, 1),
    UN(log2, 0, 4, 0, 4, -1022, 1023, 1),
    UN(log10, 0, 4, 0, 4, -1022, 1023, 1),
    UN(log1p, -1, 4, -1, 4, -60, 60, 0),
    BIN(pow, 0, 8, -60, 60, -20, 20, -30, 30),
    UN(atan, -10, 10, -10, 10, -60, 60, 0),
    BIN(atan2, -10, 10, -10, 10, -10, 10, -60, 60),
    UN(asin, -1, 1, -1, 1, -60, 0, 0),
    UN(acos, -1, 1, -1, 1, -60, 0, 0),
    UN(sinh, -720, 720, -90, 90, -60, 10, 0),
    UN(cosh, -720, 720, -90, 90, -60, 10, 0),
    UN(tanh, -20, 20, -10, 10, -60, 6, 0),
    UN(asinh, -10, 10, -10, 10, -60, 60, 0),
    UN(acosh, 1, 10, 1, 10, 0, 60, 1),
    UN(atanh, -1, 1, -1, 1, -60, 0, 0),
    BIN(fmod, -1e6, 1e6, -10, 10, -10, 10, -60, 60),
    BIN(hypot, -1e3, 1e3, -1e3, 1e3, -1e3, 1e3, -80, 80),
    UN(cbrt, -1e3, 1e3, -1e3, 1e3, -1022, 1023, 0),
    UN(erf, -6, 6, -4, 4, -60, 3, 0),
    UN(erfc, -6, 28, -4, 10, -60, 5, 0),
    UN(tgamma, -180, 180, -40, 40, -60, 8, 0),
    { "lgamma", K_LGAMMA, 0, (void *)lgamma_d, -200, 200, 0, 0, -60, 60, 0 },
    { "lgammaf", K_LGAMMA, 1, (void *)lgamma_f, -50, 50, 0, 0, -60, 60, 0 },
    UN(sqrt, 0, 100, 0, 100, -1022, 1023, 1),
    UN(floor, -100, 100, -100, 100, -10, 60, 0),
    UN(ceil, -100, 100, -100, 100, -10, 60, 0),
    UN(trunc, -100, 100, -100, 100, -10, 60, 0),
    UN(round, -100, 100, -100, 100, -10, 60, 0),
    UN(rint, -100, 100, -100, 100, -10, 60, 0),
    UN(nearbyint, -100, 100, -100, 100, -10, 60, 0),
    UN(fabs, -10, 10, -10, 10, -1022, 1023, 0),
    BIN(copysign, -10, 10, -10, 10, -10, 10, -1022, 1023),
    BIN(remainder, -1e6, 1e6, -10, 10, -10, 10, -60, 60),
    BIN(fmin, -10, 10, -10, 10, -10, 10, -60, 60),
    BIN(fmax, -10, 10, -10, 10, -10, 10, -60, 60),
    { "ldexp", K_LDEXP, 0, (void *)ldexp, -10, 10, -1100, 1100, -60, 60, 0 },
    { "ldexpf", K_LDEXP, 1, (void *)ldexpf, -10, 10, -300, 300, -60, 60, 0 },
    { "frexp", K_FREXP, 0, (void *)frexp, -1e6, 1e6, 0, 0, -1022, 1023, 0 },
    { "frexpf", K_FREXP, 1, (void *)frexpf, -1e6, 1e6, 0, 0, -1022, 1023, 0 },
    { "modf", K_MODF, 0, (void *)modf, -1e6, 1e6, 0, 0, -10, 60, 0 },
    { "modff", K_MODF, 1, (void *)modff, -1e6, 1e6, 0, 0, -10, 30, 0 },
};
#define NFNS (sizeof fns / sizeof fns[0])

/* ---- input generation --------------------------------------------------- */

/* Inputs are kept as 64-bit patterns: a double's bits, or for float
 * functions a float's bits in the low 32 bits.  The second operand is a
 * pattern of the same kind, or an int for ldexp. */
static uint64_t in_x[NINPUT], in_y[NINPUT];

static const double specials[] = {
    0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN,
    0x1p-1074, -0x1p-1074, 0x1.ffffffffffffep-1023, 0x1p-1022, -0x1p-1022,
    0x1p-149, 0x1p-126, 0x1p-1000, 0x1p-60, -0x1p-60, 0x1p-30, 0x1p-27,
    1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 10.0, 0.1, -0.1,
    0x1.fffffffffffffp-1, 0x1.0000000000001p0, -0x1.fffffffffffffp-1,
    0x1.fffffep-1, 0x1.000002p0,
    2.718281828459045, 3.141592653589793, 1.5707963267948966,
    0.7853981633974483, -1.5707963267948966, 4.71238898038469,
    1e10, 1e15, 1e16, 1e22, -1e22, 1e100, 1e300, -1e300, 0x1p52, 0x1p53,
    0x1p63, 0x1p64, 0x1p1023,
};

static int fill_special(uint64_t *v, int n, int is_float)
{
    static const uint64_t extra_d[] = {
        0x7ff4000000000000ULL, /* signalling NaN */
        0x7ff8000000000001ULL, /* quiet NaN with payload */
        0xfff8000000000000ULL, /* negative default NaN */
        0x7fefffffffffffffULL, /* DBL_MAX */
        0xffefffffffffffffULL, /* -DBL_MAX */
        0x000fffffffffffffULL, /* largest denormal */
        0x8000000000000001ULL, /* -smallest denormal */
        0x40862e42fefa39efULL, /* ~ log(DBL_MAX) */
        0x40862e42fefa39f0ULL,
        0xc0874910d52d3051ULL, /* ~ -745.13 */
        0xc0874910d52d3052ULL,
        0x4056bbbbbbbbbbbcULL, /* ~ 90.9 */
        0x40562e42fefa39efULL, /* ~ 88.72 */
        0x4090000000000000ULL, /* 1024 */
        0xc090c80000000000ULL, /* -1074 */
        0x4073400000000000ULL, /* 308 */
        0xc074400000000000ULL, /* -324 */
        0x4065800000000000ULL, /* 172 */
        0x4066000000000000ULL, /* 176 */
        0xc066000000000000ULL, /* -176 */
    };
    static const uint32_t extra_f[] = {
        0x7fa00000U, 0x7fc00001U, 0xffc00000U, 0x7f7fffffU, 0xff7fffffU,
        0x007fffffU, 0x80000001U, 0x00000001U, 0x00800000U,
        0x42b17218U, 0x42b17217U, 0xc2cff1b5U, 0xc2ce8ed0U, 0x43000000U,
        0xc3150000U, 0x421a209bU, 0xc2340000U, 0x420c0000U,
    };
    int k = 0;
    int ns = (int)(sizeof specials / sizeof specials[0]);
    for (int i = 0; i < ns && k < n; i++)
        v[k++] = is_float ? fbits((float)specials[i]) : dbits(specials[i]);
    if (is_float)
        for (size_t i = 0; i < sizeof extra_f / 4 && k < n; i++)
            v[k++] = extra_f[i];
    else
        for (size_t i = 0; i < sizeof extra_d / 8 && k < n; i++)
            v[k++] = extra_d[i];
    return k;
}

static uint64_t pat(double d, int is_float)
{
    return is_float ? fbits((float)d) : dbits(d);
}

/* Structured values: integers, half-integers, multiples of pi/2 and their
 * neighbours, powers of 2 and 10 and their neighbours, huge arguments. */
static int fill_struct(uint64_t *v, int n, int is_float)
{
    int k = 0;
#define PUT(d) do { if (k < n) v[k++] = pat((d), is_float); } while (0)
#define PUTB(u) do { if (k < n) v[k++] = (u); } while (0)
    for (int i = -100; i <= 100; i++)
        PUT((double)i);
    for (int i = -60; i <= 60; i++)
        PUT(i + 0.5);
    for (int i = 1; i <= 50; i++) {
        PUT(i + 0.25);
        PUT(-i - 0.75);
    }
    for (int i = -120; i <= 120; i++) {
        double m = i * 1.5707963267948966;
        if (is_float) {
            uint32_t b = fbits((float)m);
            PUTB(b); PUTB(b + 1); PUTB(b - 1);
        } else {
            PUT(m); PUT(dstep(m, 1)); PUT(dstep(m, -1));
        }
    }
    /* pi/2 multiples at large magnitude (argument reduction) */
    for (int i = 1; i <= 60; i++) {
        double m = (double)(i * 1000003LL) * 1.5707963267948966;
        PUT(m); PUT(-m);
    }
    for (int e = (is_float ? -149 : -1074); e <= (is_float ? 127 : 1023);
         e += (is_float ? 3 : 11)) {
        if (is_float) {
            uint32_t b = e < -126 ? 1U << (e + 149)
                                  : (uint32_t)(e + 127) << 23;
            PUTB(b); PUTB(b + 1); PUTB(b - 1); PUTB(b | 0x80000000U);
        } else {
            uint64_t b = e < -1022 ? 1ULL << (e + 1074)
                                   : (uint64_t)(e + 1023) << 52;
            PUTB(b); PUTB(b + 1); PUTB(b - 1); PUTB(b | (1ULL << 63));
        }
    }
    double p = 1.0;
    for (int i = 0; i <= 40; i++, p *= 10.0) {
        PUT(p);
        PUT(1.0 / p);
        PUT(-p);
    }
    PUT(1e22); PUT(1e23); PUT(5.319372648326541e255); PUT(1e307);
    PUT(2.1e22); PUT(6381956970095103.0 * 0x1p797);
#undef PUT
#undef PUTB
    return k;
}

static uint64_t random_value(const struct fn *F, int which, int yrange)
{
    int is_float = F->is_float;
    double lo = yrange ? F->ylo : F->lo, hi = yrange ? F->yhi : F->hi;
    switch (which) {
    case 0:
        return pat(rnd_uniform(lo, hi), is_float);
    case 1: {
        int elo = F->elo, ehi = F->ehi;
        if (is_float) {
            if (elo < -126) elo = -126;
            if (ehi > 127) ehi = 127;
        }
        return pat(rnd_logu(elo, ehi, !F->pos), is_float);
    }
    default:
        return is_float ? (uint32_t)(rnd() >> 32) : rnd();
    }
}

/* Fills in_x/in_y for function F; returns the number of inputs. */
static int gen_inputs(const struct fn *F)
{
    int n = 0, is_float = F->is_float;
    uint64_t tmp[4096];
    /* seed depends only on the function name */
    rng_state = 0x9E3779B97F4A7C15ULL;
    for (const char *s = F->name; *s; s++)
        rng_state = (rng_state ^ (unsigned char)*s) * 0x100000001b3ULL;
    if (!rng_state)
        rng_state = 1;

    int nsp = fill_special(tmp, 4096, is_float);

    if (F->kind == K_BIN) {
        /* specials x specials */
        for (int i = 0; i < nsp; i++)
            for (int j = 0; j < nsp && n < NINPUT; j++)
                if ((i + j) % 3 == 0 || i < 24) {
                    in_x[n] = tmp[i];
                    in_y[n] = tmp[j];
                    n++;
                }
        /* structured x against random y, random x against structured y */
        int nst = fill_struct(tmp, 4096, is_float);
        for (int i = 0; i < nst && n + 2 <= NINPUT; i++) {
            in_x[n] = tmp[i];
            in_y[n] = random_value(F, i % 2, 1);
            n++;
            in_x[n] = random_value(F, i % 2, 0);
            in_y[n] = tmp[i];
            n++;
        }
        /* integer and half-integer y (pow with negative x, etc.) */
        for (int i = 0; i < 1500 && n < NINPUT; i++) {
            double x = rnd_uniform(-F->hi, F->hi);
            double y = (double)((int64_t)(rnd() % 121) - 60) * 0.5;
            in_x[n] = pat(x, is_float);
            in_y[n] = pat(y, is_float);
            n++;
        }
        int rest = NINPUT - n;
        for (int i = 0; n < NINPUT; i++) {
            int which = i < rest * 45 / 100 ? 0 : i < rest * 85 / 100 ? 1 : 2;
            in_x[n] = random_value(F, which, 0);
            in_y[n] = random_value(F, which, 1);
            n++;
        }
        return n;
    }

    n = nsp;
    memcpy(in_x, tmp, (size_t)nsp * 8);
    n += fill_struct(in_x + n, NINPUT - n, is_float);
    int rest = NINPUT - n;
    for (int i = 0; n < NINPUT; i++) {
        int which = i < rest * 45 / 100 ? 0 : i < rest * 80 / 100 ? 1 : 2;
        in_x[n++] = random_value(F, which, 0);
    }

    if (F->kind == K_LDEXP) {
        static const int ex[] = { 0, 1, -1, 2, -2, 52, 53, -1022, -1074,
            -1075, 1023, 1024, 2046, -2098, 127, 128, -126, -149, -150,
            254, -277, 100000, -100000, 2147483647, -2147483647 - 1 };
        for (int i = 0; i < n; i++) {
            int e;
            if (i % 4 == 0)
                e = ex[(i / 4) % (int)(sizeof ex / sizeof ex[0])];
            else
                e = (int)F->ylo + (int)(rnd() % (uint64_t)(F->yhi - F->ylo + 1));
            in_y[i] = (uint64_t)(uint32_t)e;
        }
    }
    return n;
}

/* ---- evaluation --------------------------------------------------------- */

struct result {
    uint64_t r;    /* result bits */
    uint64_t aux;  /* second output: frexp exponent, modf int part, signgam */
    int err;
    unsigned fe;
};

static void call(const struct fn *F, uint64_t x, uint64_t y, struct result *R)
{
    R->aux = 0;
    if (F->is_float) {
        float fx = bitsf((uint32_t)x), fy = bitsf((uint32_t)y), r = 0, ip = 0;
        int e = 0;
        errno = 0;
        feclearexcept(FE_ALL_EXCEPT);
        switch (F->kind) {
        case K_UN:     r = ((float (*)(float))F->f)(fx); break;
        case K_BIN:    r = ((float (*)(float, float))F->f)(fx, fy); break;
        case K_LDEXP:  r = ((float (*)(float, int))F->f)(fx, (int)(uint32_t)y); break;
        case K_FREXP:  r = ((float (*)(float, int *))F->f)(fx, &e); break;
        case K_MODF:   r = ((float (*)(float, float *))F->f)(fx, &ip); break;
        case K_LGAMMA: r = ((float (*)(float, int *))F->f)(fx, &e); break;
        }
        R->fe = fe_portable();
        R->err = errno;
        R->r = fbits(r);
        if (F->kind == K_FREXP || F->kind == K_LGAMMA)
            R->aux = (uint32_t)e;
        else if (F->kind == K_MODF)
            R->aux = fbits(ip);
    } else {
        double dx = bitsd(x), dy = bitsd(y), r = 0, ip = 0;
        int e = 0;
        errno = 0;
        feclearexcept(FE_ALL_EXCEPT);
        switch (F->kind) {
        case K_UN:     r = ((double (*)(double))F->f)(dx); break;
        case K_BIN:    r = ((double (*)(double, double))F->f)(dx, dy); break;
        case K_LDEXP:  r = ((double (*)(double, int))F->f)(dx, (int)(uint32_t)y); break;
        case K_FREXP:  r = ((double (*)(double, int *))F->f)(dx, &e); break;
        case K_MODF:   r = ((double (*)(double, double *))F->f)(dx, &ip); break;
        case K_LGAMMA: r = ((double (*)(double, int *))F->f)(dx, &e); break;
        }
        R->fe = fe_portable();
        R->err = errno;
        R->r = dbits(r);
        if (F->kind == K_FREXP || F->kind == K_LGAMMA)
            R->aux = (uint32_t)e;
        else if (F->kind == K_MODF)
            R->aux = dbits(ip);
    }
}

static int is_nan_bits(uint64_t b, int is_float)
{
    if (is_float)
        return (b & 0x7f800000U) == 0x7f800000U && (b & 0x007fffffU);
    return (b & 0x7ff0000000000000ULL) == 0x7ff0000000000000ULL &&
           (b & 0x000fffffffffffffULL);
}

static int uses_y(const struct fn *F)
{
    return F->kind == K_BIN || F->kind == K_LDEXP;
}

static void run_summary(const struct fn *F)
{
    fnv_t hin, hres, hresq, herr, hfe;
    fnv_init(&hin); fnv_init(&hres); fnv_init(&hresq);
    fnv_init(&herr); fnv_init(&hfe);
    int n = gen_inputs(F);
    for (int i = 0; i < n; i++) {
        struct result R;
        call(F, in_x[i], in_y[i], &R);
        fnv_u64(&hin, in_x[i]);
        if (uses_y(F))
            fnv_u64(&hin, in_y[i]);
        fnv_u64(&hres, R.r);
        fnv_u64(&hres, R.aux);
        fnv_u64(&hresq, is_nan_bits(R.r, F->is_float) ? 1 : R.r);
        fnv_u64(&hresq, (F->kind == K_MODF && is_nan_bits(R.aux, F->is_float))
                         ? 1 : R.aux);
        fnv_u64(&herr, (uint64_t)R.err);
        fnv_u64(&hfe, R.fe);
    }
    printf("%-11s %5d in=%016llx res=%016llx resq=%016llx errno=%016llx fe=%016llx\n",
           F->name, n, (unsigned long long)hin.h, (unsigned long long)hres.h,
           (unsigned long long)hresq.h, (unsigned long long)herr.h,
           (unsigned long long)hfe.h);
}

static void run_dump(const struct fn *F)
{
    int n = gen_inputs(F);
    int w = F->is_float ? 8 : 16;
    for (int i = 0; i < n; i++) {
        struct result R;
        call(F, in_x[i], in_y[i], &R);
        printf("%5d %0*llx", i, w, (unsigned long long)in_x[i]);
        if (uses_y(F))
            printf(" %0*llx", F->kind == K_LDEXP ? 8 : w,
                   (unsigned long long)in_y[i]);
        printf(" -> %0*llx aux=%llx errno=%d fe=%02x\n", w,
               (unsigned long long)R.r, (unsigned long long)R.aux, R.err, R.fe);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "dump")) {
        for (size_t i = 0; i < NFNS; i++)
            if (!strcmp(fns[i].name, argv[2])) {
                run_dump(&fns[i]);
                return 0;
            }
        fprintf(stderr, "unknown function %s\n", argv[2]);
        return 1;
    }
    if (argc == 2 && !strcmp(argv[1], "list")) {
        for (size_t i = 0; i < NFNS; i++)
            puts(fns[i].name);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: %s [list | dump NAME]\n", argv[0]);
        return 1;
    }
    for (size_t i = 0; i < NFNS; i++)
        run_summary(&fns[i]);
    return 0;
}
