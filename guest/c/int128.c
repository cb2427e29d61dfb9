/* Tests __int128 multiply, divide and modulo (signed and unsigned), printed as hex halves. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

typedef unsigned __int128 u128;
typedef __int128 i128;

static void put(const char *label, u128 v)
{
    printf("%s=%016" PRIx64 ":%016" PRIx64 "\n", label, (uint64_t)(v >> 64), (uint64_t)v);
}

static u128 mk(uint64_t hi, uint64_t lo) { return ((u128)hi << 64) | lo; }

/* decimal rendering via repeated division */
static void put_dec(const char *label, u128 v)
{
    char buf[48];
    int i = 47;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    printf("%s=%s\n", label, buf + i);
}

int main(void)
{
    volatile uint64_t vals[] = {
        0, 1, 3, 10, 0xFFFFFFFFULL, 0x100000000ULL, 0x123456789ABCDEFULL,
        0x8000000000000000ULL, 0xFFFFFFFFFFFFFFFFULL, 0xDEADBEEFCAFEBABEULL,
    };
    const int n = (int)(sizeof vals / sizeof vals[0]);

    u128 acc = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            u128 a = mk(vals[i], vals[j]);
            u128 b = mk(vals[(i + 3) % n] >> (j * 6), vals[(j + 5) % n]);
            u128 prod = a * b;
            acc ^= prod + (u128)i * 977;
            if (b != 0) {
                u128 q = a / b, r = a % b;
                if (q * b + r != a || r >= b) {
                    printf("udiv mismatch at %d,%d\n", i, j);
                    return 1;
                }
                acc += q * 3 + r;
            }
            i128 sa = (i128)a, sb = (i128)b;
            /* avoid INT128_MIN / -1 overflow */
            if (sb != 0 && !(sb == -1 && sa == (i128)((u128)1 << 127))) {
                i128 q = sa / sb, r = sa % sb;
                if (q * sb + r != sa) {
                    printf("sdiv mismatch at %d,%d\n", i, j);
                    return 1;
                }
                acc += (u128)q ^ ((u128)r << 1);
            }
        }
    put("acc", acc);

    u128 x = mk(0x0123456789ABCDEFULL, 0xFEDCBA9876543210ULL);
    u128 y = mk(0, 0x1000000000000001ULL);
    put("x", x);
    put("x*y", x * y);
    put("x/y", x / y);
    put("x%y", x % y);
    put("x<<67", x << 67);
    put("x>>71", x >> 71);
    put("(i128)-x>>9", (u128)(-(i128)x >> 9));

    i128 s = -(i128)mk(0x7, 0x1234);
    i128 d = 1000003;
    put("s", (u128)s);
    put("s/d", (u128)(s / d));
    put("s%d", (u128)(s % d));
    put("s/-d", (u128)(s / -d));
    put("s%-d", (u128)(s % -d));
    put("-s/d", (u128)(-s / d));

    /* 64x64->128 widening multiply and mulhi */
    uint64_t p = 0xFFFFFFFFFFFFFFFFULL, q = 0xFFFFFFFFFFFFFFFEULL;
    put("p*q", (u128)p * q);
    int64_t sp = INT64_MIN, sq = 3;
    put("sp*sq", (u128)((i128)sp * sq));

    /* factorial of 30 fits in u128 */
    u128 f = 1;
    for (int i = 2; i <= 30; i++) f *= (u128)i;
    put("30!", f);
    put_dec("30!dec", f);
    put_dec("u128max", ~(u128)0);

    /* comparisons and min/max */
    i128 neg = -1;
    u128 big = (u128)1 << 127;
    printf("cmp: neg<0=%d (u128)neg>big=%d big>x=%d\n", neg < 0, (u128)neg > big, big > x);
    return 0;
}
