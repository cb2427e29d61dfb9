// Kernels built for x86-64-v2 (-O3 -march=x86-64-v2): auto-vectorised
// loops (SSE4.1 multiplies, minimums, widening moves, blends) and SSSE3
// and SSE4.1 intrinsics, popcnt, crc32 and cmpxchg16b, each printing a checksum
// the native run must match.
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 1024

static uint32_t seed = 12345;

static uint32_t next(void) {
    seed = seed * 1103515245u + 12345u;
    return seed >> 7;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    return (h ^ v) * 0x100000001b3ull;
}

static uint64_t hash128(uint64_t h, __m128i v) {
    uint64_t w[2];
    memcpy(w, &v, sizeof w);
    return mix(mix(h, w[0]), w[1]);
}

static int32_t a32[N], b32[N], c32[N];
static uint8_t bytes[N + 64];
static uint16_t words[N];
static int8_t sbytes[N];
static double dbl[N];

// Vectorised: pmulld, pminsd/pmaxsd, pmovsx/zx, blends.
static uint64_t loops(void) {
    uint64_t h = 0;
    for (int i = 0; i < N; i++) c32[i] = a32[i] * b32[i] + (a32[i] < b32[i] ? a32[i] : b32[i]);
    for (int i = 0; i < N; i++) h = mix(h, (uint32_t)c32[i]);
    int64_t wide = 0;
    for (int i = 0; i < N; i++) wide += (int64_t)sbytes[i] * words[i];
    h = mix(h, (uint64_t)wide);
    uint32_t umax = 0;
    for (int i = 0; i < N; i++) umax = (uint32_t)c32[i] > umax ? (uint32_t)c32[i] : umax;
    h = mix(h, umax);
    for (int i = 0; i < N; i++) c32[i] = (a32[i] & 1) ? b32[i] : a32[i] >> 3;
    for (int i = 0; i < N; i++) h = mix(h, (uint32_t)c32[i]);
    double fl = 0;
    for (int i = 0; i < N; i++) fl += floor(dbl[i]) + ceil(dbl[i] * 0.5) + trunc(-dbl[i]) + nearbyint(dbl[i] * 3);
    h = mix(h, (uint64_t)(int64_t)fl);
    return h;
}

static uint64_t intrinsics(void) {
    uint64_t h = 0;
    const __m128i rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int i = 0; i + 32 <= N; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(bytes + i));
        __m128i y = _mm_loadu_si128((const __m128i *)(bytes + i + 16));
        h = hash128(h, _mm_shuffle_epi8(x, rev));
        h = hash128(h, _mm_shuffle_epi8(x, y));
        h = hash128(h, _mm_alignr_epi8(y, x, 5));
        h = hash128(h, _mm_hadd_epi16(x, y));
        h = hash128(h, _mm_hsubs_epi16(x, y));
        h = hash128(h, _mm_hadd_epi32(x, y));
        h = hash128(h, _mm_maddubs_epi16(x, y));
        h = hash128(h, _mm_mulhrs_epi16(x, y));
        h = hash128(h, _mm_sign_epi8(x, y));
        h = hash128(h, _mm_abs_epi16(y));
        h = hash128(h, _mm_blendv_epi8(x, y, _mm_xor_si128(x, y)));
        h = hash128(h, _mm_blend_epi16(x, y, 0x5a));
        h = hash128(h, _mm_minpos_epu16(x));
        h = hash128(h, _mm_mpsadbw_epu8(x, y, 6));
        h = hash128(h, _mm_cmpgt_epi64(x, y));
        h = hash128(h, _mm_cvtepu8_epi32(y));
        h = hash128(h, _mm_cvtepi16_epi64(x));
        h = hash128(h, _mm_packus_epi32(x, y));
        h = hash128(h, _mm_insert_epi32(x, _mm_extract_epi8(y, 7), 2));
        h = mix(h, (uint64_t)_mm_testz_si128(x, y) << 1 | (uint64_t)_mm_testc_si128(x, y));
        h = mix(h, (uint64_t)_mm_extract_epi64(y, 1));
        __m128 fx = _mm_cvtepi32_ps(_mm_srai_epi32(x, 8));
        __m128 fy = _mm_cvtepi32_ps(_mm_srai_epi32(y, 9));
        h = hash128(h, _mm_castps_si128(_mm_dp_ps(fx, fy, 0xf3)));
        h = hash128(h, _mm_castps_si128(_mm_hadd_ps(fx, fy)));
        h = hash128(h, _mm_castps_si128(_mm_addsub_ps(fx, fy)));
        h = hash128(h, _mm_castps_si128(_mm_movehdup_ps(fx)));
        h = hash128(h, _mm_castps_si128(_mm_insert_ps(fx, fy, 0x5a)));
        __m128d dx = _mm_cvtepi32_pd(x);
        h = hash128(h, _mm_castpd_si128(_mm_round_pd(_mm_div_pd(dx, _mm_set1_pd(7.0)), _MM_FROUND_TO_NEAREST_INT)));
        h = hash128(h, _mm_castpd_si128(_mm_dp_pd(dx, _mm_movedup_pd(dx), 0x31)));
    }
    return h;
}

static uint64_t bits(void) {
    uint64_t h = 0, total = 0;
    for (int i = 0; i < N; i++) total += (uint64_t)__builtin_popcountll(((uint64_t)a32[i] << 32) ^ (uint32_t)b32[i]);
    h = mix(h, total);
    uint64_t crc = 0xffffffff;
    for (int i = 0; i + 8 <= N; i += 8) {
        uint64_t w;
        memcpy(&w, bytes + i, 8);
        crc = _mm_crc32_u64(crc, w);
        crc = _mm_crc32_u8((uint32_t)crc, bytes[i + 3]);
        crc = _mm_crc32_u16((uint32_t)crc, words[i]);
    }
    h = mix(h, crc);
    static unsigned __int128 cell __attribute__((aligned(16)));
    cell = 7;
    for (int i = 0; i < 100; i++) {
        unsigned __int128 old = cell;
        unsigned __int128 new = old * 3 + (unsigned)i;
        if (!__sync_bool_compare_and_swap(&cell, old, new)) return 0;
        if (__sync_bool_compare_and_swap(&cell, old, 1)) return 0;
    }
    return mix(mix(h, (uint64_t)cell), (uint64_t)(cell >> 64));
}

int main(void) {
    for (int i = 0; i < N; i++) {
        a32[i] = (int32_t)(next() * 2654435761u);
        b32[i] = (int32_t)next() - (1 << 23);
        words[i] = (uint16_t)next();
        sbytes[i] = (int8_t)next();
        dbl[i] = ((int32_t)next() - (1 << 23)) / 1024.0;
    }
    for (int i = 0; i < N + 64; i++) bytes[i] = (uint8_t)next();
    printf("loops %016llx\n", (unsigned long long)loops());
    printf("intrinsics %016llx\n", (unsigned long long)intrinsics());
    printf("bits %016llx\n", (unsigned long long)bits());
    return 0;
}
