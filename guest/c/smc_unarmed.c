/* Code a thread rewrites and calls on a page another thread keeps
 * storing to: the other thread's stores make the page writable again
 * whenever it was protected for its code, so the writer's own stores
 * usually land without a fault of its own, and its next call must still
 * run the new code (x86 shows a thread its own code changes at once).
 * One helper thread stores a counter on the current page in a loop; the
 * main thread rewrites `mov eax, imm32; ret` at the page's start and
 * calls it through a pointer a few times per page (a page written often
 * turns self-checking, which this is not about), over many pages. Every
 * call's result is checked. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 150
#define ROUNDS 6

typedef uint32_t (*fn0)(void);

static unsigned char *volatile current;
static volatile int done;

static void *storer(void *arg) {
    (void)arg;
    uint64_t n = 0;
    while (!done) {
        unsigned char *p = current;
        if (p)
            __atomic_fetch_add((uint64_t *)(p + 2048), 1, __ATOMIC_RELAXED);
        n++;
    }
    return (void *)(uintptr_t)n;
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

int main(void) {
    alarm(600);
    unsigned char *pages = mmap(NULL, 4096 * PAGES, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                                -1, 0);
    if (pages == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, storer, NULL) != 0) {
        printf("pthread_create failed\n");
        return 1;
    }
    unsigned wrong = 0, calls = 0;
    for (unsigned p = 0; p < PAGES; p++) {
        unsigned char *page = pages + 4096 * p;
        current = page;
        for (uint32_t r = 0; r < ROUNDS; r++) {
            uint32_t v = p * 1000 + r;
            emit_const(page, v);
            uint32_t got = ((fn0)page)();
            calls++;
            if (got != v && wrong++ < 5)
                printf("page %u round %u: the code returned %u, expected %u\n", p, r, got, v);
        }
    }
    current = NULL;
    done = 1;
    pthread_join(t, NULL);
    printf("%u calls, %u returned old code\n", calls, wrong);
    return 0;
}
