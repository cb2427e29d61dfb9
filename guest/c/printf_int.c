/* Tests printf of integers: all widths and conversions, padding, flags, negative values, limits. */
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int main(void)
{
    static const long long vals[] = {
        0, 1, -1, 7, -7, 42, 255, 256, -128, 127, 32767, -32768, 65535,
        2147483647LL, -2147483647LL - 1, 4294967295LL, 1234567890123LL,
        LLONG_MAX, LLONG_MIN,
    };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        long long v = vals[i];
        printf("[%lld] hhd=%hhd hd=%hd d=%d ld=%ld lld=%lld\n", v, (signed char)v, (short)v, (int)v,
               (long)v, v);
        printf("  hhu=%hhu hu=%hu u=%u lu=%lu llu=%llu\n", (unsigned char)v, (unsigned short)v,
               (unsigned)v, (unsigned long)v, (unsigned long long)v);
        printf("  x=%x X=%X lx=%lx llX=%llX #x=%#x #llx=%#llx\n", (unsigned)v, (unsigned)v,
               (unsigned long)v, (unsigned long long)v, (unsigned)v, (unsigned long long)v);
        printf("  o=%o #o=%#o llo=%llo\n", (unsigned)v, (unsigned)v, (unsigned long long)v);
    }

    /* padding and flags */
    int ns[] = {0, 5, -5, 123, -123, 99999};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int n = ns[i];
        printf("|%8d|%-8d|%08d|%+d|% d|%+8d|%-+8d|% 08d|%.5d|%8.3d|%-8.3d|%.0d|\n", n, n, n, n, n,
               n, n, n, n, n, n, n);
        printf("|%8x|%-8x|%08x|%#8x|%#08x|%.6x|%#.6o|\n", (unsigned)n, (unsigned)n, (unsigned)n,
               (unsigned)n, (unsigned)n, (unsigned)n, (unsigned)n);
    }
    /* star width/precision */
    for (int w = 0; w <= 12; w += 4)
        printf("|%*d|%-*d|%.*d|%*.*d|\n", w, 42, w, -42, w, 42, w, w / 2, -42);

    /* fixed-width types */
    printf("int8 %" PRId8 " %" PRIu8 " %" PRIx8 "\n", INT8_MIN, UINT8_MAX, (uint8_t)0xAB);
    printf("int16 %" PRId16 " %" PRIu16 " %" PRIx16 "\n", INT16_MIN, UINT16_MAX, (uint16_t)0xBEEF);
    printf("int32 %" PRId32 " %" PRIu32 " %" PRIx32 "\n", INT32_MIN, UINT32_MAX, (uint32_t)0xDEADBEEF);
    printf("int64 %" PRId64 " %" PRIu64 " %" PRIx64 "\n", INT64_MIN, UINT64_MAX,
           (uint64_t)0xDEADBEEFCAFEBABEULL);
    printf("size_t %zu ptrdiff %td intmax %jd uintmax %ju\n", (size_t)-1, (ptrdiff_t)-12345,
           (intmax_t)INTMAX_MIN, (uintmax_t)UINTMAX_MAX);

    /* chars and strings */
    printf("|%c|%5c|%-5c|%s|%10s|%-10s|%.3s|%10.2s|%%|\n", 'A', 'b', 'c', "hello", "right", "left",
           "truncate", "xy-cut");

    /* snprintf truncation and return value */
    char buf[16];
    volatile size_t cap = sizeof buf; /* run-time size: truncation here is intended */
    int r = snprintf(buf, cap, "%d-%d-%d-%d", 123456, 789012, 345678, 901234);
    printf("snprintf returned %d, buf=\"%s\"\n", r, buf);
    r = snprintf(NULL, 0, "%lld", LLONG_MIN);
    printf("snprintf(NULL) length %d\n", r);

    /* large table: checksum of many formatted numbers */
    unsigned long sum = 0;
    char line[64];
    for (int i = -500; i <= 500; i += 7) {
        int len = snprintf(line, sizeof line, "%d %x %o %+05d", i * 977, (unsigned)(i * 977),
                           (unsigned)i & 0777u, i);
        for (int k = 0; k < len; k++) sum = sum * 131 + (unsigned char)line[k];
    }
    printf("format checksum %lu\n", sum);

    fprintf(stderr, "stderr: %d %x %s\n", -1, 0xC0FFEEu, "done");
    return 0;
}
