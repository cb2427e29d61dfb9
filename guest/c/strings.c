/* Tests string/memory functions on unaligned buffers at offsets 0..15 (libc SIMD paths). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t h = 1469598103934665603ULL;
static void mix(uint64_t v) { h = (h ^ v) * 1099511628211ULL; }
static unsigned failures;

static void check(int cond, const char *what, int off, int len)
{
    if (!cond) {
        failures++;
        if (failures <= 20) fprintf(stderr, "FAIL %s off=%d len=%d\n", what, off, len);
    }
}

static _Alignas(64) char buf[512];
static _Alignas(64) char buf2[512];

static size_t ref_strlen(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static int sign(int x) { return (x > 0) - (x < 0); }

int main(void)
{
    static const int lens[] = {0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 200};
    const size_t nlens = sizeof lens / sizeof lens[0];

    for (int off = 0; off < 16; off++) {
        for (size_t li = 0; li < nlens; li++) {
            int len = lens[li];
            char *s = buf + off;
            char *d = buf2 + 15 - off;
            memset(buf, 'x', sizeof buf);
            memset(buf2, 'y', sizeof buf2);
            for (int i = 0; i < len; i++) s[i] = (char)('a' + (i * 7 + off) % 26);
            s[len] = '\0';

            /* strlen */
            size_t sl = strlen(s);
            check(sl == (size_t)len && sl == ref_strlen(s), "strlen", off, len);
            mix(sl);

            /* strcpy / strcmp / strncmp / memcmp */
            char *rp = strcpy(d, s);
            check(rp == d, "strcpy ret", off, len);
            check(strcmp(d, s) == 0, "strcmp eq", off, len);
            check(d[len] == '\0' && d[len + 1] == 'y', "strcpy bounds", off, len);
            if (len > 0) {
                d[len - 1] = (char)(d[len - 1] + 1);
                check(strcmp(d, s) > 0, "strcmp gt", off, len);
                check(strcmp(s, d) < 0, "strcmp lt", off, len);
                check(strncmp(d, s, (size_t)len - 1) == 0, "strncmp prefix", off, len);
                check(strncmp(d, s, (size_t)len) > 0, "strncmp full", off, len);
                check(memcmp(d, s, (size_t)len) > 0, "memcmp gt", off, len);
                check(memcmp(s, d, (size_t)len - 1) == 0, "memcmp prefix", off, len);
                mix((uint64_t)sign(memcmp(s, d, (size_t)len)) + 5);
                d[len - 1] = s[len - 1];
            }
            /* a high-bit byte: comparisons are unsigned char */
            if (len > 2) {
                char save = d[1];
                d[1] = (char)0xE9;
                check(strcmp(d, s) > 0, "strcmp highbit", off, len);
                check(memcmp(d, s, (size_t)len) > 0, "memcmp highbit", off, len);
                d[1] = save;
            }

            /* strchr / strrchr / memchr */
            char *c = strchr(s, 'a' + (off % 26));
            mix(c ? (uint64_t)(c - s) : 999);
            char *rc = strrchr(s, 'a' + ((len / 2 * 7 + off) % 26));
            mix(rc ? (uint64_t)(rc - s) : 999);
            check(strchr(s, '\0') == s + len, "strchr nul", off, len);
            check(strrchr(s, '\0') == s + len, "strrchr nul", off, len);
            check(strchr(s, '#') == NULL, "strchr missing", off, len);
            if (len > 0) check(memchr(s, s[len - 1], (size_t)len) != NULL, "memchr", off, len);

            /* strstr */
            if (len >= 6) {
                char needle[8];
                memcpy(needle, s + len - 5, 4);
                needle[4] = '\0';
                char *ss = strstr(s, needle);
                check(ss != NULL && memcmp(ss, needle, 4) == 0, "strstr", off, len);
                mix(ss ? (uint64_t)(ss - s) : 999);
            }
            check(strstr(s, "") == s, "strstr empty", off, len);
            check(strstr(s, "#q") == NULL, "strstr missing", off, len);

            /* strcat */
            d[0] = '\0';
            strcat(d, s);
            strcat(d, "-TAIL");
            check(strlen(d) == (size_t)len + 5, "strcat len", off, len);
            check(memcmp(d + len, "-TAIL", 6) == 0, "strcat tail", off, len);
            mix(strlen(d));

            /* memcpy */
            memset(buf2, 0, sizeof buf2);
            memcpy(buf2 + off, s, (size_t)len);
            check(memcmp(buf2 + off, s, (size_t)len) == 0, "memcpy", off, len);
            check(off == 0 || buf2[off - 1] == 0, "memcpy before", off, len);
            check(buf2[off + len] == 0, "memcpy after", off, len);

            /* memset */
            memset(buf2 + off, 0x5A, (size_t)len);
            int ok = 1;
            for (int i = 0; i < len; i++) ok &= buf2[off + i] == 0x5A;
            check(ok && buf2[off + len] == 0, "memset", off, len);

            /* memmove, overlapping forward and backward */
            for (int i = 0; i < 300; i++) buf2[i] = (char)i;
            memmove(buf2 + off + 3, buf2 + off, (size_t)len);
            ok = 1;
            for (int i = 0; i < len; i++) ok &= buf2[off + 3 + i] == (char)(off + i);
            check(ok, "memmove fwd", off, len);
            for (int i = 0; i < 300; i++) buf2[i] = (char)i;
            memmove(buf2 + off, buf2 + off + 5, (size_t)len);
            ok = 1;
            for (int i = 0; i < len; i++) ok &= buf2[off + i] == (char)(off + 5 + i);
            check(ok, "memmove back", off, len);
            uint64_t sum = 0;
            for (int i = 0; i < 300; i++) sum = sum * 3 + (unsigned char)buf2[i];
            mix(sum);
        }
    }

    /* a few printed results */
    const char *text = "the quick brown fox jumps over the lazy dog";
    printf("strlen=%zu\n", strlen(text));
    printf("strchr(o)=%td strrchr(o)=%td\n", strchr(text, 'o') - text, strrchr(text, 'o') - text);
    printf("strstr(the)=%td strstr(lazy)=%td\n", strstr(text + 1, "the") - text,
           strstr(text, "lazy") - text);
    printf("strspn=%zu strcspn=%zu\n", strspn(text, "the "), strcspn(text, "xyz"));
    printf("strncmp=%d memcmp=%d\n", sign(strncmp("abcd", "abce", 4)), sign(memcmp("abc", "abb", 3)));
    char tmp[64];
    strcpy(tmp, "over");
    volatile size_t nbound = 4; /* run-time bound: truncation here is intended */
    strncat(tmp, "lapping-stuff", nbound);
    printf("strncat=%s\n", tmp);

    printf("hash=%016" PRIx64 " failures=%u\n", h, failures);
    return failures == 0 ? 0 : 1;
}
