// String search with SSE4.2's packed string compares (-O3
// -march=x86-64-v2): substring search (equal ordered), span and
// break-set scans (equal any, both polarities), character-class ranges,
// equal each, explicit lengths, word elements and the mask forms, over
// generated text; and glibc's strspn, strcspn, strpbrk and strstr, which
// the dynamic build takes from glibc's SSE4.2 variants when the CPU
// reports sse4_2. Each part prints a checksum the native run must match.
#include <nmmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TEXT 8192

static char text[TEXT + 32];
static uint32_t seed = 777;

static uint32_t next(void) {
    seed = seed * 1103515245u + 12345u;
    return seed >> 7;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    return (h ^ v) * 0x100000001b3ull;
}

// Lowercase words over a small alphabet, with punctuation and digits.
static void make_text(void) {
    static const char alphabet[] = "abcdeabcdeabcde ,.;0123-_XYZ";
    for (int i = 0; i < TEXT; i++) text[i] = alphabet[next() % (sizeof alphabet - 1)];
    text[TEXT] = 0;
}

static __m128i load16(const char *p) {
    return _mm_loadu_si128((const __m128i *)p);
}

// The first occurrence of needle (at most 16 bytes) at or after p, by
// equal ordered over 16-byte windows; -1 if none.
static long find(const char *hay, long len, const char *needle) {
    __m128i n = load16(needle);
    for (long i = 0; i + 16 <= len + 16; i += 16) {
        int k = _mm_cmpistri(n, load16(hay + i), _SIDD_UBYTE_OPS | _SIDD_CMP_EQUAL_ORDERED);
        if (k < 16) {
            long at = i + k;
            if (strncmp(hay + at, needle, strlen(needle)) == 0) return at;
            i = at - 15;
        } else if (_mm_cmpistrz(n, load16(hay + i), _SIDD_UBYTE_OPS | _SIDD_CMP_EQUAL_ORDERED)) {
            return -1;
        }
    }
    return -1;
}

static uint64_t substrings(void) {
    static const char *needles[] = {"abc", "cab", "de,", "0123", "XYZ", "eee", "a", "zz", "d.e", "bcdea"};
    uint64_t h = 0;
    for (unsigned k = 0; k < sizeof needles / sizeof *needles; k++) {
        char needle[32] = {0};
        strcpy(needle, needles[k]);
        for (long from = 0; from < TEXT; from += 97) {
            long at = find(text + from, TEXT - from, needle);
            h = mix(h, (uint64_t)at);
            h = mix(h, (uint64_t)(strstr(text + from, needle) ? strstr(text + from, needle) - text : -1));
        }
    }
    return h;
}

// Equal any (both polarities, both index ends) and ranges, byte elements;
// the flags through cmpistrc/z/s/o/a.
static uint64_t classes(void) {
    __m128i set = _mm_setr_epi8(' ', ',', '.', ';', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    __m128i ranges = _mm_setr_epi8('a', 'z', '0', '9', 'A', 'Z', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    uint64_t h = 0;
    for (int i = 0; i + 16 <= TEXT; i += 5) {
        __m128i s = load16(text + i);
        h = mix(h, (uint64_t)_mm_cmpistri(set, s, _SIDD_CMP_EQUAL_ANY));
        h = mix(h, (uint64_t)_mm_cmpistri(set, s, _SIDD_CMP_EQUAL_ANY | _SIDD_NEGATIVE_POLARITY));
        h = mix(h, (uint64_t)_mm_cmpistri(set, s, _SIDD_CMP_EQUAL_ANY | _SIDD_MOST_SIGNIFICANT));
        h = mix(h, (uint64_t)_mm_cmpistri(ranges, s, _SIDD_CMP_RANGES | _SIDD_MASKED_NEGATIVE_POLARITY));
        h = mix(h, (uint64_t)_mm_cmpistri(ranges, s, _SIDD_SBYTE_OPS | _SIDD_CMP_RANGES));
        h = mix(h, (uint64_t)_mm_cmpistrc(set, s, _SIDD_CMP_EQUAL_ANY));
        h = mix(h, (uint64_t)_mm_cmpistrs(set, s, _SIDD_CMP_EQUAL_ANY) << 1 | (uint64_t)_mm_cmpistro(set, s, _SIDD_CMP_EQUAL_ANY));
        h = mix(h, (uint64_t)_mm_cmpistra(ranges, s, _SIDD_CMP_RANGES));
        __m128i m = _mm_cmpistrm(set, s, _SIDD_CMP_EQUAL_ANY | _SIDD_UNIT_MASK);
        h = mix(h, (uint64_t)_mm_movemask_epi8(m));
        __m128i b = _mm_cmpistrm(ranges, s, _SIDD_CMP_RANGES | _SIDD_BIT_MASK);
        h = mix(h, (uint64_t)_mm_cvtsi128_si32(b));
    }
    return h;
}

// Explicit lengths (cmpestri/cmpestrm), equal each and word elements.
static uint64_t explicit_lengths(void) {
    uint64_t h = 0;
    for (int i = 0; i + 32 <= TEXT; i += 11) {
        __m128i a = load16(text + i), b = load16(text + i + 7);
        int la = (int)(next() % 40) - 20, lb = (int)(next() % 40) - 20;
        h = mix(h, (uint64_t)_mm_cmpestri(a, la, b, lb, _SIDD_CMP_EQUAL_EACH));
        h = mix(h, (uint64_t)_mm_cmpestri(a, la, b, lb, _SIDD_CMP_EQUAL_ORDERED | _SIDD_MOST_SIGNIFICANT));
        h = mix(h, (uint64_t)_mm_cmpestri(a, la, b, lb, _SIDD_UWORD_OPS | _SIDD_CMP_EQUAL_ANY));
        h = mix(h, (uint64_t)_mm_cmpestri(a, la, b, lb, _SIDD_SWORD_OPS | _SIDD_CMP_RANGES));
        h = mix(h, (uint64_t)_mm_cmpestrz(a, la, b, lb, _SIDD_CMP_EQUAL_EACH));
        __m128i m = _mm_cmpestrm(a, la, b, lb, _SIDD_UWORD_OPS | _SIDD_CMP_EQUAL_EACH | _SIDD_UNIT_MASK);
        h = mix(h, (uint64_t)_mm_movemask_epi8(m));
        h = mix(h, (uint64_t)_mm_cvtsi128_si32(_mm_cmpistrm(a, b, _SIDD_UWORD_OPS | _SIDD_CMP_EQUAL_ORDERED)));
    }
    return h;
}

// glibc's string routines (SSE4.2 variants in the dynamic build).
static uint64_t libc_scans(void) {
    uint64_t h = 0;
    for (int i = 0; i < TEXT; i += 13) {
        h = mix(h, strspn(text + i, "abcde"));
        h = mix(h, strcspn(text + i, ",.;"));
        const char *p = strpbrk(text + i, "XYZ0");
        h = mix(h, p ? (uint64_t)(p - text) : 0);
    }
    return h;
}

int main(void) {
    make_text();
    printf("substrings %016llx\n", (unsigned long long)substrings());
    printf("classes %016llx\n", (unsigned long long)classes());
    printf("explicit %016llx\n", (unsigned long long)explicit_lengths());
    printf("libc %016llx\n", (unsigned long long)libc_scans());
    return 0;
}
