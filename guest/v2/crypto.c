// AES-NI and PCLMULQDQ through their intrinsics (-O3 -march=x86-64-v2,
// with aes and pclmul enabled below): the AES-128 key schedule by
// aeskeygenassist for every round constant, the FIPS-197 example block,
// CTR encryption of generated data, CBC decryption with the aesimc'd
// schedule and the round trip, aesenclast/aesdeclast alone; carry-less
// products with every half selector, a GCM-style GF(2^128) multiply with
// its reduction, and a CRC-32 folded with pclmulqdq against the bitwise
// one. Each part prints what the native run must match.
#pragma GCC target("aes,pclmul")
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wmmintrin.h>
#include <emmintrin.h>

#define BLOCKS 4096

static uint32_t seed = 4242;

static uint32_t next(void) {
    seed = seed * 1103515245u + 12345u;
    return seed >> 3;
}

static uint64_t next64(void) {
    return (uint64_t)next() << 40 ^ (uint64_t)next() << 20 ^ next();
}

static uint64_t mix(uint64_t h, __m128i v) {
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(v), hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
    h = (h ^ lo) * 0x100000001b3ull;
    return (h ^ hi) * 0x100000001b3ull;
}

static void print_block(const char *what, __m128i v) {
    uint8_t b[16];
    _mm_storeu_si128((__m128i *)b, v);
    printf("%s ", what);
    for (int i = 0; i < 16; i++) printf("%02x", b[i]);
    printf("\n");
}

// One step of the AES-128 key schedule: the previous round key and
// aeskeygenassist's result for this round's constant.
static __m128i expand_step(__m128i key, __m128i assist) {
    assist = _mm_shuffle_epi32(assist, 0xff);
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    return _mm_xor_si128(key, assist);
}

#define STEP(i, rcon) k[i] = expand_step(k[i - 1], _mm_aeskeygenassist_si128(k[i - 1], rcon))

static void expand(__m128i key, __m128i k[11]) {
    k[0] = key;
    STEP(1, 0x01);
    STEP(2, 0x02);
    STEP(3, 0x04);
    STEP(4, 0x08);
    STEP(5, 0x10);
    STEP(6, 0x20);
    STEP(7, 0x40);
    STEP(8, 0x80);
    STEP(9, 0x1b);
    STEP(10, 0x36);
}

static __m128i encrypt(const __m128i k[11], __m128i b) {
    b = _mm_xor_si128(b, k[0]);
    for (int r = 1; r < 10; r++) b = _mm_aesenc_si128(b, k[r]);
    return _mm_aesenclast_si128(b, k[10]);
}

// The equivalent inverse cipher's schedule: the middle keys through
// aesimc.
static void decryption_keys(const __m128i k[11], __m128i d[11]) {
    d[0] = k[10];
    for (int r = 1; r < 10; r++) d[r] = _mm_aesimc_si128(k[10 - r]);
    d[10] = k[0];
}

static __m128i decrypt(const __m128i d[11], __m128i b) {
    b = _mm_xor_si128(b, d[0]);
    for (int r = 1; r < 10; r++) b = _mm_aesdec_si128(b, d[r]);
    return _mm_aesdeclast_si128(b, d[10]);
}

static __m128i plain[BLOCKS], cipher[BLOCKS], back[BLOCKS];

static void aes(void) {
    // FIPS-197 appendix C.1.
    uint8_t key_bytes[16], pt_bytes[16];
    for (int i = 0; i < 16; i++) {
        key_bytes[i] = (uint8_t)i;
        pt_bytes[i] = (uint8_t)(i * 0x11);
    }
    __m128i k[11], d[11];
    expand(_mm_loadu_si128((const __m128i *)key_bytes), k);
    print_block("fips-197 round key 10", k[10]);
    print_block("fips-197 ciphertext", encrypt(k, _mm_loadu_si128((const __m128i *)pt_bytes)));

    // CTR over generated data with a generated key, then CBC one way and
    // back with the decryption schedule.
    expand(_mm_set_epi64x((long long)next64(), (long long)next64()), k);
    decryption_keys(k, d);
    for (int i = 0; i < BLOCKS; i++) plain[i] = _mm_set_epi64x((long long)next64(), (long long)next64());
    uint64_t h = 0;
    __m128i counter = _mm_set_epi64x(0x0123456789abcdefll, 0);
    for (int i = 0; i < BLOCKS; i++) {
        __m128i ks = encrypt(k, _mm_add_epi64(counter, _mm_set_epi64x(0, i)));
        h = mix(h, _mm_xor_si128(plain[i], ks));
    }
    printf("ctr checksum %016llx\n", (unsigned long long)h);
    __m128i iv = _mm_set_epi64x(0x0f0e0d0c0b0a0908ll, 0x0706050403020100ll), prev = iv;
    for (int i = 0; i < BLOCKS; i++) prev = cipher[i] = encrypt(k, _mm_xor_si128(plain[i], prev));
    prev = iv;
    for (int i = 0; i < BLOCKS; i++) {
        back[i] = _mm_xor_si128(decrypt(d, cipher[i]), prev);
        prev = cipher[i];
    }
    h = 0;
    for (int i = 0; i < BLOCKS; i++) h = mix(h, cipher[i]);
    printf("cbc checksum %016llx, round trip %s\n", (unsigned long long)h,
           memcmp(plain, back, sizeof plain) == 0 ? "equal" : "DIFFERS");

    // Single rounds and aesimc on generated states and keys, the round
    // constants aeskeygenassist takes beyond AES-128's ten.
    h = 0;
    for (int i = 0; i < 2000; i++) {
        __m128i s = plain[i], key = plain[i + 1];
        h = mix(h, _mm_aesenc_si128(s, key));
        h = mix(h, _mm_aesenclast_si128(s, key));
        h = mix(h, _mm_aesdec_si128(s, key));
        h = mix(h, _mm_aesdeclast_si128(s, key));
        h = mix(h, _mm_aesimc_si128(s));
    }
    h = mix(h, _mm_aeskeygenassist_si128(plain[7], 0x00));
    h = mix(h, _mm_aeskeygenassist_si128(plain[8], 0x6c));
    h = mix(h, _mm_aeskeygenassist_si128(plain[9], 0xff));
    printf("rounds checksum %016llx\n", (unsigned long long)h);
}

// GCM's multiply in GF(2^128) (bit-reflected, polynomial x^128 + x^7 +
// x^2 + x + 1): four carry-less products and the two-step reduction.
static __m128i gf_mul(__m128i a, __m128i b) {
    __m128i lo = _mm_clmulepi64_si128(a, b, 0x00);
    __m128i mid = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x10), _mm_clmulepi64_si128(a, b, 0x01));
    __m128i hi = _mm_clmulepi64_si128(a, b, 0x11);
    lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
    hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
    // Shift the 256-bit product left by one (the reflection).
    __m128i lo_carry = _mm_srli_epi32(lo, 31), hi_carry = _mm_srli_epi32(hi, 31);
    lo = _mm_slli_epi32(lo, 1);
    hi = _mm_slli_epi32(hi, 1);
    hi = _mm_or_si128(hi, _mm_or_si128(_mm_slli_si128(hi_carry, 4), _mm_srli_si128(lo_carry, 12)));
    lo = _mm_or_si128(lo, _mm_slli_si128(lo_carry, 4));
    // Reduce.
    __m128i t = _mm_xor_si128(_mm_xor_si128(_mm_slli_epi32(lo, 31), _mm_slli_epi32(lo, 30)), _mm_slli_epi32(lo, 25));
    lo = _mm_xor_si128(lo, _mm_slli_si128(t, 12));
    __m128i u = _mm_xor_si128(_mm_xor_si128(_mm_srli_epi32(lo, 1), _mm_srli_epi32(lo, 2)), _mm_srli_epi32(lo, 7));
    u = _mm_xor_si128(u, _mm_srli_si128(t, 4));
    return _mm_xor_si128(hi, _mm_xor_si128(lo, u));
}

static uint32_t crc_bitwise(const uint8_t *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & -(c & 1));
    }
    return ~c;
}

// CRC-32 (the zlib polynomial) of 16-byte multiples by folding with
// pclmulqdq, then a bitwise finish of the folded 16 bytes.
static uint32_t crc_folded(const uint8_t *p, size_t n) {
    // x^(128+32) and x^(128-32) mod P, bit-reflected (the constants of
    // Intel's "Fast CRC computation" paper for this polynomial).
    const __m128i k = _mm_set_epi64x(0x00000000ccaa009ell, 0x00000001751997d0ll);
    __m128i acc = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)0xffffffffu));
    for (size_t i = 16; i < n; i += 16) {
        __m128i lo = _mm_clmulepi64_si128(acc, k, 0x00), hi = _mm_clmulepi64_si128(acc, k, 0x11);
        acc = _mm_xor_si128(_mm_xor_si128(lo, hi), _mm_loadu_si128((const __m128i *)(p + i)));
    }
    uint8_t last[16];
    _mm_storeu_si128((__m128i *)last, acc);
    uint32_t c = 0;
    for (int i = 0; i < 16; i++) {
        c ^= last[i];
        for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0xedb88320u & -(c & 1));
    }
    return ~c;
}

static void clmul(void) {
    uint64_t h = 0;
    for (int i = 0; i < 3000; i++) {
        __m128i a = plain[i], b = plain[i + 1];
        h = mix(h, _mm_clmulepi64_si128(a, b, 0x00));
        h = mix(h, _mm_clmulepi64_si128(a, b, 0x01));
        h = mix(h, _mm_clmulepi64_si128(a, b, 0x10));
        h = mix(h, _mm_clmulepi64_si128(a, b, 0x11));
    }
    __m128i all_ones = _mm_set1_epi32(-1);
    h = mix(h, _mm_clmulepi64_si128(all_ones, all_ones, 0x11));
    printf("clmul checksum %016llx\n", (unsigned long long)h);

    __m128i x = _mm_set_epi64x(0x66e94bd4ef8a2c3bll, 0x884cfa59ca342b2ell), y = plain[0];
    for (int i = 0; i < 1000; i++) y = gf_mul(y, x);
    print_block("gf(2^128) power", y);

    static uint8_t data[16 * 1024];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)next();
    uint32_t folded = crc_folded(data, sizeof data), bitwise = crc_bitwise(data, sizeof data);
    printf("crc32 folded %08x bitwise %08x\n", folded, bitwise);
}

int main(void) {
    aes();
    clmul();
    return 0;
}
