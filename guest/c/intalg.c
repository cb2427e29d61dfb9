/* Tests integer algorithms: gcd, prime sieve, fibonacci, hand-rolled vs builtin popcount/clz/ctz. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int64_t gcd_signed(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    return (int64_t)gcd((uint64_t)a, (uint64_t)b);
}

static int popcount_hand(uint64_t x)
{
    int n = 0;
    while (x) {
        x &= x - 1;
        n++;
    }
    return n;
}

static int popcount_swar(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

static int clz_hand(uint64_t x)
{
    if (x == 0) return 64;
    int n = 0;
    for (uint64_t bit = 1ULL << 63; !(x & bit); bit >>= 1) n++;
    return n;
}

static int ctz_hand(uint64_t x)
{
    if (x == 0) return 64;
    int n = 0;
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
}

static uint32_t bitrev32(uint32_t x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    return (x >> 16) | (x << 16);
}

static uint64_t rotl64(uint64_t x, unsigned r)
{
    r &= 63;
    return r ? (x << r) | (x >> (64 - r)) : x;
}

#define SIEVE_N 20000
static unsigned char composite[SIEVE_N + 1];

int main(void)
{
    /* gcd */
    static const uint64_t pairs[][2] = {
        {48, 18}, {1071, 462}, {0, 5}, {5, 0}, {17, 13},
        {1ULL << 40, 1ULL << 20}, {600851475143ULL, 6857ULL * 71},
        {0xFFFFFFFFFFFFFFFFULL, 0xFFFFFFFFULL}, {832040, 514229},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        printf("gcd(%" PRIu64 ", %" PRIu64 ") = %" PRIu64 "\n",
               pairs[i][0], pairs[i][1], gcd(pairs[i][0], pairs[i][1]));
    printf("gcd_signed(-84, 36) = %" PRId64 "\n", gcd_signed(-84, 36));
    printf("gcd_signed(84, -120) = %" PRId64 "\n", gcd_signed(84, -120));

    /* sieve */
    memset(composite, 0, sizeof composite);
    composite[0] = composite[1] = 1;
    for (unsigned i = 2; i * i <= SIEVE_N; i++)
        if (!composite[i])
            for (unsigned j = i * i; j <= SIEVE_N; j += i) composite[j] = 1;
    unsigned count = 0, last = 0;
    uint64_t sum = 0;
    for (unsigned i = 0; i <= SIEVE_N; i++) {
        if (!composite[i]) {
            count++;
            sum += i;
            last = i;
        }
    }
    printf("primes <= %d: count=%u sum=%" PRIu64 " last=%u\n", SIEVE_N, count, sum, last);
    printf("first primes:");
    for (unsigned i = 0, shown = 0; shown < 25; i++)
        if (!composite[i]) {
            printf(" %u", i);
            shown++;
        }
    printf("\n");

    /* fibonacci, iterative, wrapping unsigned arithmetic past fib(93) */
    uint64_t a = 0, b = 1;
    for (int i = 0; i <= 100; i++) {
        if (i <= 10 || i % 10 == 0 || i == 93)
            printf("fib(%d) = %" PRIu64 "\n", i, a);
        uint64_t t = a + b;
        a = b;
        b = t;
    }

    /* bit tricks */
    static const uint64_t vals[] = {
        0, 1, 2, 3, 0x80, 0xFF, 0x8000000000000000ULL, 0xFFFFFFFFFFFFFFFFULL,
        0x0123456789ABCDEFULL, 0xDEADBEEFCAFEBABEULL, 0x00000000FFFF0000ULL,
        0x5555555555555555ULL, 1ULL << 31, 1ULL << 32, 12345678901234567ULL,
    };
    int mismatches = 0;
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint64_t v = vals[i];
        int ph = popcount_hand(v), ps = popcount_swar(v), pb = __builtin_popcountll(v);
        int ch = clz_hand(v), cb = v ? __builtin_clzll(v) : 64;
        int th = ctz_hand(v), tb = v ? __builtin_ctzll(v) : 64;
        int par = __builtin_parityll(v);
        printf("%016" PRIx64 " pop=%d/%d/%d clz=%d/%d ctz=%d/%d parity=%d bswap=%016" PRIx64
               " rev32=%08" PRIx32 " rotl13=%016" PRIx64 "\n",
               v, ph, ps, pb, ch, cb, th, tb, par, __builtin_bswap64(v),
               bitrev32((uint32_t)v), rotl64(v, 13));
        if (ph != pb || ps != pb || ch != cb || th != tb) mismatches++;
    }
    /* 32-bit builtins */
    for (uint32_t v = 1; v != 0; v <<= 3)
        printf("u32 %08" PRIx32 " clz=%d ctz=%d pop=%d ffs=%d\n", v, __builtin_clz(v),
               __builtin_ctz(v), __builtin_popcount(v), __builtin_ffs((int)v));
    /* isolate lowest set bit, round up to power of two */
    for (uint64_t v = 3; v < 100000; v = v * 7 + 1) {
        uint64_t low = v & -v;
        uint64_t p2 = v;
        p2--;
        p2 |= p2 >> 1; p2 |= p2 >> 2; p2 |= p2 >> 4;
        p2 |= p2 >> 8; p2 |= p2 >> 16; p2 |= p2 >> 32;
        p2++;
        printf("v=%" PRIu64 " lowbit=%" PRIu64 " nextpow2=%" PRIu64 "\n", v, low, p2);
    }
    printf("mismatches=%d\n", mismatches);
    return mismatches == 0 ? 0 : 1;
}
