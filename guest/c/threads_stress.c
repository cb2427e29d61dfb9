/* Threads that generate code while they update shared counters with
 * atomic instructions on the same pages: every store, atomic or not,
 * happens exactly once even when a store to code on the page is seen
 * (and let through) in the middle of a run. Each thread rewrites and
 * calls a function in a page that also holds its counters, moving to a
 * fresh page now and then (so stores keep meeting write-protected code),
 * and all threads rewrite their own slots of one shared page of code
 * that also holds shared counters. Totals are checked against sums
 * computed here, and printed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define THREADS 32
#define ROUNDS 400
#define PAGE_EVERY 5

typedef uint32_t (*fn0)(void);

static unsigned char *shared_page;
static uint64_t total_xadd, total_inc, total_cas;

static unsigned char *map_rwx(void) {
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        _exit(1);
    }
    return p;
}

/* mov eax, imm32; ret */
static void emit_const(volatile unsigned char *at, uint32_t v) {
    at[0] = 0xb8;
    at[1] = v & 0xff;
    at[2] = (v >> 8) & 0xff;
    at[3] = (v >> 16) & 0xff;
    at[4] = v >> 24;
    at[5] = 0xc3;
}

static void xadd(uint64_t *at, uint64_t v) {
    __asm__ volatile("lock xaddq %0, %1" : "+r"(v), "+m"(*at) : : "memory");
}

static void inc(uint64_t *at) {
    __asm__ volatile("lock incq %0" : "+m"(*at) : : "memory");
}

static void cas_add(uint64_t *at, uint64_t v) {
    uint64_t old = __atomic_load_n(at, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(at, &old, old + v, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
}

static void *worker(void *arg) {
    uint32_t id = (uint32_t)(uintptr_t)arg;
    unsigned char *page = NULL;
    uint64_t own_sum = 0, expect_own = 0, expect_local = 0;
    /* The shared page: code slots of 64 bytes from 0, counters at 3072. */
    unsigned char *slot = shared_page + 64 * id;
    uint64_t *shared_xadd = (uint64_t *)(shared_page + 3072);
    uint64_t *shared_inc = shared_xadd + 1;
    for (uint32_t r = 0; r < ROUNDS; r++) {
        if (r % PAGE_EVERY == 0) {
            if (page)
                munmap(page, 4096);
            page = map_rwx();
            expect_local = 0;
        }
        uint64_t *local = (uint64_t *)(page + 2048);
        uint32_t v = id * 100000 + r;
        /* A counter update, then a store into code on the same page, in
         * one stretch of straight-line code. */
        xadd(local, v);
        expect_local += v;
        emit_const(page, v);
        own_sum += ((fn0)page)();
        expect_own += v;
        xadd(shared_xadd, v);
        emit_const(slot, v ^ 0x5a5a);
        inc(shared_inc);
        own_sum += ((fn0)slot)();
        expect_own += v ^ 0x5a5a;
        if (*local != expect_local)
            printf("thread %u round %u: the counter beside its code is %llu, expected %llu\n", id, r,
                   (unsigned long long)*local, (unsigned long long)expect_local);
        xadd(&total_xadd, 1);
        inc(&total_inc);
        cas_add(&total_cas, 3);
    }
    if (own_sum != expect_own)
        printf("thread %u: generated code returned %llu in all, expected %llu\n", id, (unsigned long long)own_sum,
               (unsigned long long)expect_own);
    munmap(page, 4096);
    return NULL;
}

int main(void) {
    alarm(600);
    shared_page = map_rwx();
    for (int i = 0; i < THREADS; i++)
        emit_const(shared_page + 64 * i, 0);
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
            printf("pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    uint64_t expect_xadd = 0;
    for (uint64_t id = 0; id < THREADS; id++)
        for (uint64_t r = 0; r < ROUNDS; r++)
            expect_xadd += id * 100000 + r;
    uint64_t *shared_xadd = (uint64_t *)(shared_page + 3072);
    printf("shared page: xadd %llu (expected %llu), inc %llu (expected %d)\n", (unsigned long long)shared_xadd[0],
           (unsigned long long)expect_xadd, (unsigned long long)shared_xadd[1], THREADS * ROUNDS);
    printf("globals: xadd %llu inc %llu cas %llu (expected %d %d %d)\n", (unsigned long long)total_xadd,
           (unsigned long long)total_inc, (unsigned long long)total_cas, THREADS * ROUNDS, THREADS * ROUNDS,
           3 * THREADS * ROUNDS);
    return 0;
}
