/* Tests multiply-shift hashing loops (FNV-1a, Fibonacci hashing, murmur finalizer, open addressing); exits 42. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t fnv1a(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static uint32_t fib_hash(uint64_t key, unsigned bits)
{
    return (uint32_t)((key * 11400714819323198485ULL) >> (64 - bits));
}

static uint32_t mult_shift32(uint32_t x, uint32_t a, unsigned bits)
{
    return (a * x) >> (32 - bits);
}

#define TABLE_BITS 12
#define TABLE_SIZE (1u << TABLE_BITS)

static uint64_t keys[TABLE_SIZE];
static uint32_t vals[TABLE_SIZE];
static unsigned char used[TABLE_SIZE];

static unsigned long probes;

static void put(uint64_t key, uint32_t val)
{
    uint32_t i = fib_hash(key, TABLE_BITS);
    for (;;) {
        probes++;
        if (!used[i]) {
            used[i] = 1;
            keys[i] = key;
            vals[i] = val;
            return;
        }
        if (keys[i] == key) {
            vals[i] += val;
            return;
        }
        i = (i + 1) & (TABLE_SIZE - 1);
    }
}

static int get(uint64_t key, uint32_t *val)
{
    uint32_t i = fib_hash(key, TABLE_BITS);
    while (used[i]) {
        probes++;
        if (keys[i] == key) {
            *val = vals[i];
            return 1;
        }
        i = (i + 1) & (TABLE_SIZE - 1);
    }
    return 0;
}

int main(void)
{
    const char *strs[] = {"", "a", "ab", "abc", "hello, world", "The quick brown fox",
                          "aarchx", "x86-64 on arm64"};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        printf("fnv1a(\"%s\") = %016" PRIx64 "\n", strs[i], fnv1a(strs[i], strlen(strs[i])));

    uint64_t acc = 0;
    for (uint64_t i = 0; i < 100000; i++) acc += fmix64(i) >> 7;
    printf("fmix64 sum = %016" PRIx64 "\n", acc);

    unsigned buckets[16] = {0};
    for (uint32_t i = 0; i < 40000; i++) buckets[mult_shift32(i * 2654435761u + 1, 0x9E3779B1u, 4)]++;
    printf("buckets:");
    for (int i = 0; i < 16; i++) printf(" %u", buckets[i]);
    printf("\n");

    /* open-addressing table, ~70% load */
    for (uint32_t i = 0; i < 2800; i++) put(fmix64(i % 2500) ^ 0x1234, i);
    unsigned hits = 0;
    uint64_t vsum = 0;
    for (uint32_t i = 0; i < 3000; i++) {
        uint32_t v;
        if (get(fmix64(i) ^ 0x1234, &v)) {
            hits++;
            vsum += v;
        }
    }
    printf("table hits=%u vsum=%" PRIu64 " probes=%lu\n", hits, vsum, probes);

    /* hash a generated buffer in blocks */
    static unsigned char data[16384];
    uint32_t s = 1;
    for (size_t i = 0; i < sizeof data; i++) {
        s = s * 1664525u + 1013904223u;
        data[i] = (unsigned char)(s >> 24);
    }
    uint64_t block_mix = 0;
    for (size_t off = 0; off < sizeof data; off += 1024)
        block_mix = fmix64(block_mix ^ fnv1a(data + off, 1024));
    printf("block mix = %016" PRIx64 "\n", block_mix);

    fprintf(stderr, "hash done, exiting with 42\n");
    return 42;
}
