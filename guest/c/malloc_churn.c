/* Tests malloc/free/realloc/calloc churn over many sizes with a checksum of block contents. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 256

static uint32_t rng = 2463534242u;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

struct block {
    unsigned char *p;
    size_t size;
    unsigned char tag;
};

/* Large blocks are touched sparsely (plus their last byte) to keep the instruction count small. */
static size_t stride(size_t size) { return size <= 256 ? 1 : size <= 16384 ? 61 : 4093; }

static void fill(struct block *b)
{
    size_t st = stride(b->size);
    for (size_t i = 0; i < b->size; i += st) b->p[i] = (unsigned char)(b->tag + i * 7);
    if (b->size) b->p[b->size - 1] = (unsigned char)(b->tag + (b->size - 1) * 7);
}

static int verify(const struct block *b, size_t upto)
{
    size_t st = stride(b->size);
    for (size_t i = 0; i < upto; i += st)
        if (b->p[i] != (unsigned char)(b->tag + i * 7)) return 0;
    if (upto == b->size && upto && b->p[upto - 1] != (unsigned char)(b->tag + (upto - 1) * 7))
        return 0;
    return 1;
}

static size_t pick_size(void)
{
    uint32_t r = next();
    switch (r % 8) {
    case 0: return r >> 28;                 /* 0..15 */
    case 1: case 2: case 3: return 16 + (r >> 24); /* small */
    case 4: case 5: return 256 + (r >> 22); /* medium, up to ~1.3K */
    case 6: return 4096 + (r >> 20);        /* up to ~8K */
    default: return (r >> 16) % 200000 + 1; /* large, may use mmap */
    }
}

int main(void)
{
    struct block slots[SLOTS];
    memset(slots, 0, sizeof slots);
    uint64_t checksum = 0;
    unsigned long allocs = 0, frees = 0, reallocs = 0, callocs = 0, errors = 0;

    for (int iter = 0; iter < 2000; iter++) {
        uint32_t r = next();
        struct block *b = &slots[r % SLOTS];
        unsigned action = (r >> 8) % 4;
        if (b->p == NULL || action == 0) {
            if (b->p) {
                if (!verify(b, b->size)) errors++;
                free(b->p);
                frees++;
            }
            b->size = pick_size();
            b->tag = (unsigned char)(r >> 16);
            if (action == 1) {
                b->p = calloc(b->size ? b->size : 1, 1);
                callocs++;
                if (!b->p) return 2;
                for (size_t i = 0; i < b->size; i += stride(b->size))
                    if (b->p[i] != 0) errors++;
            } else {
                b->p = malloc(b->size ? b->size : 1);
                allocs++;
                if (!b->p) return 2;
            }
            fill(b);
        } else if (action == 1) {
            size_t ns = pick_size();
            size_t keep = ns < b->size ? ns : b->size;
            unsigned char *np = realloc(b->p, ns ? ns : 1);
            reallocs++;
            if (!np) return 2;
            b->p = np;
            if (!verify(b, keep)) errors++; /* b->size is still the old size here */
            b->size = ns;
            fill(b);
        } else if (action == 2) {
            if (!verify(b, b->size)) errors++;
            free(b->p);
            frees++;
            b->p = NULL;
            b->size = 0;
        } else {
            for (size_t i = 0; i < b->size; i += stride(b->size))
                checksum = checksum * 1099511628211ULL ^ b->p[i];
        }
    }
    for (int i = 0; i < SLOTS; i++) {
        if (slots[i].p) {
            if (!verify(&slots[i], slots[i].size)) errors++;
            checksum += slots[i].size;
            free(slots[i].p);
            frees++;
        }
    }

    /* array-of-pointers growth via realloc */
    char **strs = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 500; i++) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            char **ns = realloc(strs, cap * sizeof *ns);
            if (!ns) return 2;
            strs = ns;
        }
        char tmp[32];
        int len = snprintf(tmp, sizeof tmp, "item-%d", i * i);
        strs[n] = malloc((size_t)len + 1);
        if (!strs[n]) return 2;
        memcpy(strs[n], tmp, (size_t)len + 1);
        n++;
    }
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++) {
        for (const char *s = strs[i]; *s; s++) h = h * 31 + (unsigned char)*s;
        free(strs[i]);
    }
    free(strs);

    printf("allocs=%lu callocs=%lu reallocs=%lu frees=%lu errors=%lu\n", allocs, callocs, reallocs,
           frees, errors);
    printf("checksum=%016" PRIx64 "\n", checksum);
    printf("strings n=%zu cap=%zu hash=%016" PRIx64 "\n", n, cap, h);
    return errors == 0 ? 0 : 1;
}
