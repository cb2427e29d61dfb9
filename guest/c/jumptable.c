/* Tests a dense switch that gcc lowers to an indirect jump table, executed in a loop. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t counts[20];

__attribute__((noinline)) static uint64_t step(unsigned op, uint64_t acc, uint64_t x)
{
    switch (op) {
    case 0: counts[0]++; return acc + x;
    case 1: counts[1]++; return acc - x;
    case 2: counts[2]++; return acc * (x | 1);
    case 3: counts[3]++; return acc ^ (x << 7);
    case 4: counts[4]++; return acc | (x >> 3);
    case 5: counts[5]++; return acc & ~(x << 11);
    case 6: counts[6]++; return (acc << 5) | (acc >> 59);
    case 7: counts[7]++; return acc / ((x & 0xff) + 1);
    case 8: counts[8]++; return acc % ((x & 0xffff) + 3);
    case 9: counts[9]++; return acc + 0x9E3779B97F4A7C15ULL;
    case 10: counts[10]++; return ~acc;
    case 11: counts[11]++; return acc * 3 + 1;
    case 12: counts[12]++; return acc >> (x & 31);
    case 13: counts[13]++; return acc + (uint64_t)__builtin_popcountll(x);
    case 14: counts[14]++; return acc - (acc >> 17);
    case 15: counts[15]++; return acc ^ (acc >> 29);
    case 16: counts[16]++; return acc + x * x;
    case 17: counts[17]++; return (acc & 0xffffffff) * 0x2545F491u;
    default: counts[18]++; return acc + 1;
    }
}

/* A second dense switch returning strings (also typically a table). */
__attribute__((noinline)) static const char *name_of(int d)
{
    switch (d) {
    case 0: return "zero";
    case 1: return "one";
    case 2: return "two";
    case 3: return "three";
    case 4: return "four";
    case 5: return "five";
    case 6: return "six";
    case 7: return "seven";
    case 8: return "eight";
    case 9: return "nine";
    default: return "?";
    }
}

int main(void)
{
    uint64_t acc = 1, x = 0x123456789ULL;
    for (unsigned i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned op = (unsigned)(x >> 59) % 20; /* 0..19, 18 and 19 hit default */
        acc = step(op, acc, x);
        if (i % 2500 == 0) printf("i=%u op=%u acc=%016" PRIx64 "\n", i, op, acc);
    }
    for (int i = 0; i < 19; i++) printf("case %d: %" PRIu64 "\n", i, counts[i]);
    printf("final acc=%016" PRIx64 "\n", acc);

    for (int n = 9876; n >= 0; n -= 1234) {
        printf("%d:", n);
        int digits[8], k = 0, v = n;
        do {
            digits[k++] = v % 10;
            v /= 10;
        } while (v);
        while (k) printf(" %s", name_of(digits[--k]));
        printf("\n");
    }
    printf("%s\n", name_of(-1));
    return 7;
}
