// Kernels built for x86-64-v3 (-O3 -march=x86-64-v3): auto-vectorised
// 256-bit loops (AVX2 integer arithmetic, FMA-contracted float loops,
// widening moves), AVX2, FMA and F16C intrinsics (permutes, broadcasts,
// gathers, masked moves, variable shifts, half-precision conversions),
// BMI1/BMI2 bit tricks and glibc's AVX2 string routines (in the
// dynamically linked build), each printing a checksum the native run must
// match.
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024

static uint32_t seed = 2024;

static uint32_t next(void) {
    seed = seed * 1103515245u + 12345u;
    return seed >> 7;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    return (h ^ v) * 0x100000001b3ull;
}

static uint64_t hash256(uint64_t h, __m256i v) {
    uint64_t w[4];
    memcpy(w, &v, sizeof w);
    for (int i = 0; i < 4; i++) h = mix(h, w[i]);
    return h;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = mix(h, b[i]);
    return h;
}

static int32_t a32[N], b32[N], c32[N];
static int16_t s16[N];
static uint8_t u8[N];
static float fa[N], fb[N], fc[N];
static double da[N], db[N], dc[N];

// Vectorised by the compiler: vpmulld, vpminsd, vpmovsxwd, vfmadd*ps/pd.
static uint64_t loops(void) {
    uint64_t h = 0;
    for (int i = 0; i < N; i++) c32[i] = a32[i] * b32[i] + (a32[i] < b32[i] ? a32[i] : b32[i]);
    for (int i = 0; i < N; i++) h = mix(h, (uint32_t)c32[i]);
    for (int i = 0; i < N; i++) c32[i] = s16[i] * 3 + u8[i];
    for (int i = 0; i < N; i++) h = mix(h, (uint32_t)c32[i]);
    for (int i = 0; i < N; i++) fc[i] = fa[i] * fb[i] + fc[i];
    h = hash_bytes(h, fc, sizeof fc);
    for (int i = 0; i < N; i++) dc[i] = da[i] * db[i] - dc[i] * 0.5;
    h = hash_bytes(h, dc, sizeof dc);
    return h;
}

static uint64_t intrinsics(void) {
    uint64_t h = 0;
    for (int i = 0; i + 8 <= N; i += 8) {
        __m256i a = _mm256_loadu_si256((const __m256i *)&a32[i]);
        __m256i b = _mm256_loadu_si256((const __m256i *)&b32[i]);
        __m256i idx = _mm256_and_si256(b, _mm256_set1_epi32(7));
        h = hash256(h, _mm256_permutevar8x32_epi32(a, idx));
        h = hash256(h, _mm256_permute4x64_epi64(a, 0x4e));
        h = hash256(h, _mm256_permute2x128_si256(a, b, 0x21));
        h = hash256(h, _mm256_sllv_epi32(a, _mm256_and_si256(b, _mm256_set1_epi32(31))));
        h = hash256(h, _mm256_srav_epi32(a, idx));
        h = hash256(h, _mm256_shuffle_epi8(a, b));
        h = hash256(h, _mm256_blend_epi32(a, b, 0xa5));
        h = mix(h, (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(a, b)));
        h = mix(h, (uint32_t)_mm256_testz_si256(a, b));
        __m256i gidx = _mm256_and_si256(b, _mm256_set1_epi32(N - 1));
        h = hash256(h, _mm256_i32gather_epi32(a32, gidx, 4));
        __m256i mask = _mm256_cmpgt_epi32(a, _mm256_setzero_si256());
        h = hash256(h, _mm256_mask_i32gather_epi32(b, c32, _mm256_and_si256(a, _mm256_set1_epi32(N - 1)), mask, 4));
        h = hash256(h, _mm256_maskload_epi32(&b32[i], mask));
        _mm256_maskstore_epi32(&c32[i], mask, a);
        h = hash256(h, _mm256_broadcastd_epi32(_mm256_castsi256_si128(a)));
        h = hash256(h, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)&u8[i])));
        h = hash256(h, _mm256_inserti128_si256(a, _mm256_extracti128_si256(b, 1), 0));
    }
    h = hash_bytes(h, c32, sizeof c32);
    for (int i = 0; i + 4 <= N; i += 4) {
        __m256d x = _mm256_loadu_pd(&da[i]), y = _mm256_loadu_pd(&db[i]), z = _mm256_loadu_pd(&dc[i]);
        h = hash256(h, _mm256_castpd_si256(_mm256_fmadd_pd(x, y, z)));
        h = hash256(h, _mm256_castpd_si256(_mm256_fnmsub_pd(x, y, z)));
        h = hash256(h, _mm256_castpd_si256(_mm256_fmaddsub_pd(x, y, z)));
        __m128 f = _mm_loadu_ps(&fa[i]);
        __m128i half = _mm_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
        h = hash256(h, _mm256_castps_si256(_mm256_cvtph_ps(_mm_unpacklo_epi64(half, half))));
        h = mix(h, (uint64_t)_mm_cvtsi128_si64(_mm_cvtps_ph(f, _MM_FROUND_TO_ZERO)));
        __m256 p = _mm256_loadu_ps(&fa[i]);
        h = hash256(h, _mm256_castps_si256(_mm256_cmp_ps(p, _mm256_loadu_ps(&fb[i]), _CMP_NGE_UQ)));
        h = hash256(h, _mm256_castps_si256(_mm256_permute_ps(p, 0x1b)));
    }
    return h;
}

static uint64_t bits(void) {
    uint64_t h = 0;
    for (int i = 0; i < N; i++) {
        uint64_t x = (uint64_t)next() << 32 | next();
        h = mix(h, _pext_u64(x, 0x0f0f00ff00f0f0f0ull));
        h = mix(h, _pdep_u64(x, 0xf0f0f0f0ull));
        h = mix(h, _bzhi_u64(x, i & 63));
        h = mix(h, _blsr_u64(x) ^ _blsmsk_u64(x) ^ _andn_u64(x, h));
        h = mix(h, _lzcnt_u64(x >> (i & 63)) + _tzcnt_u64(x << (i & 63)));
        h = mix(h, __builtin_popcountll(x) + (x >> (i & 31)) + (x << (i & 31)));
    }
    return h;
}

// glibc's string and memory routines: their AVX2 versions in the
// dynamically linked build on a CPU that reports AVX2.
static uint64_t strings(void) {
    static char text[4096 + 64];
    for (int i = 0; i < 4096; i++) text[i] = (char)('a' + next() % 26);
    text[4096] = 0;
    uint64_t h = strlen(text);
    for (int i = 0; i < 64; i++) {
        char c = (char)('a' + i % 26);
        char *p = memchr(text + i, c, 4096 - i);
        h = mix(h, p ? (uint64_t)(p - text) : 0);
        p = strrchr(text + i, c);
        h = mix(h, p ? (uint64_t)(p - text) : 0);
        h = mix(h, (uint64_t)(memcmp(text + i, text + 2 * i, 100) > 0));
        h = mix(h, strspn(text + i, "abcdefgh"));
        char needle[4] = {text[100 + i], text[101 + i], text[102 + i], 0};
        p = strstr(text, needle);
        h = mix(h, p ? (uint64_t)(p - text) : 0);
    }
    char *copy = malloc(5000);
    for (int len = 0; len < 300; len += 7) {
        memset(copy, len, 5000);
        memcpy(copy + (len & 31), text + len, len * 3);
        memmove(copy + 5, copy + 1, len * 2);
        h = hash_bytes(h, copy, 700);
    }
    free(copy);
    return h;
}

int main(void) {
    for (int i = 0; i < N; i++) {
        a32[i] = (int32_t)next() - (1 << 23);
        b32[i] = (int32_t)next();
        s16[i] = (int16_t)next();
        u8[i] = (uint8_t)next();
        fa[i] = (float)((int32_t)next() - (1 << 23)) / 4096.0f;
        fb[i] = (float)next() / 65536.0f;
        fc[i] = (float)i;
        da[i] = (double)((int32_t)next()) / 3.0;
        db[i] = (double)next() / 7.0;
        dc[i] = (double)i / 5.0;
    }
    printf("loops %016llx\n", (unsigned long long)loops());
    printf("intrinsics %016llx\n", (unsigned long long)intrinsics());
    printf("bits %016llx\n", (unsigned long long)bits());
    printf("strings %016llx\n", (unsigned long long)strings());
    return 0;
}
