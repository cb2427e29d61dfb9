/* Self-modifying and generated code: a store to code takes effect the
 * next time that code runs, whoever stores and however the code was
 * written. Rewriting a function in an RWX page between calls, patching
 * one immediate byte of hot code, code that increments a counter on its
 * own page, W^X flips with mprotect, code read() into a page over code
 * that ran, code written by one thread and run by another, and a memfd
 * mapped twice (written through one view, run through the other). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int (*fn0)(void);
typedef int (*fn1)(int);

static unsigned char *map(int prot) {
    void *p = mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        _exit(1);
    }
    return p;
}

/* mov eax, imm32; ret */
static void emit_const(unsigned char *at, uint32_t v) {
    at[0] = 0xb8;
    memcpy(at + 1, &v, 4);
    at[5] = 0xc3;
}

static void rewrite_between_calls(void) {
    unsigned char *page = map(PROT_READ | PROT_WRITE | PROT_EXEC);
    long sum = 0;
    for (uint32_t i = 0; i < 2000; i++) {
        emit_const(page, i * 7 + 1);
        sum += ((fn0)page)();
    }
    printf("rewrite between calls: %ld\n", sum);
}

static void patch_hot_immediate(void) {
    unsigned char *page = map(PROT_READ | PROT_WRITE | PROT_EXEC);
    /* mov eax, edi; add eax, imm8; ret */
    static const unsigned char code[] = {0x89, 0xf8, 0x83, 0xc0, 0x01, 0xc3};
    memcpy(page, code, sizeof code);
    long sum = 0;
    for (int i = 0; i < 20000; i++) {
        if (i % 100 == 0)
            page[4] = (unsigned char)(i / 100);
        sum += ((fn1)page)(i);
    }
    printf("patch hot immediate: %ld\n", sum);
}

static void counter_beside_code(void) {
    unsigned char *page = map(PROT_READ | PROT_WRITE | PROT_EXEC);
    /* add dword [rip + disp32], imm8; mov eax, [rip + disp32]; ret: the
     * counter at page + 2048, on the code's own page. */
    int32_t disp1 = 2048 - 7, disp2 = 2048 - 13;
    unsigned char *c = page;
    *c++ = 0x83; *c++ = 0x05; memcpy(c, &disp1, 4); c += 4; *c++ = 1;
    *c++ = 0x8b; *c++ = 0x05; memcpy(c, &disp2, 4); c += 4;
    *c++ = 0xc3;
    long sum = 0;
    for (int i = 0; i < 3000; i++) {
        sum += ((fn0)page)();
        if (i == 1500)
            page[6] = 3; /* now adds 3 */
    }
    int32_t counter;
    memcpy(&counter, page + 2048, 4);
    printf("counter beside code: %d sum %ld\n", counter, sum);
}

static void wx_flips(void) {
    unsigned char *page = map(PROT_READ | PROT_WRITE);
    long sum = 0;
    for (uint32_t i = 0; i < 200; i++) {
        if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0)
            perror("mprotect rw");
        emit_const(page, 1000 + i);
        if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
            perror("mprotect rx");
        sum += ((fn0)page)();
    }
    printf("W^X flips: %ld\n", sum);
}

static void read_into_code(void) {
    unsigned char *page = map(PROT_READ | PROT_WRITE | PROT_EXEC);
    emit_const(page, 11);
    int first = ((fn0)page)();
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        return;
    }
    unsigned char next[6];
    emit_const(next, 22);
    if (write(fds[1], next, sizeof next) != (ssize_t)sizeof next)
        perror("write");
    ssize_t got = read(fds[0], page, sizeof next);
    int second = ((fn0)page)();
    printf("read into code: %d %zd %d\n", first, got, second);
    close(fds[0]);
    close(fds[1]);
}

static unsigned char *shared_page;
static pthread_barrier_t barrier;

static void *writer(void *arg) {
    (void)arg;
    for (uint32_t i = 0; i < 50; i++) {
        emit_const(shared_page, 500 + i);
        pthread_barrier_wait(&barrier); /* written */
        pthread_barrier_wait(&barrier); /* run */
    }
    return NULL;
}

static void written_by_another_thread(void) {
    shared_page = map(PROT_READ | PROT_WRITE | PROT_EXEC);
    emit_const(shared_page, 1);
    long sum = ((fn0)shared_page)();
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    for (int i = 0; i < 50; i++) {
        pthread_barrier_wait(&barrier);
        sum += ((fn0)shared_page)();
        pthread_barrier_wait(&barrier);
    }
    pthread_join(t, NULL);
    printf("written by another thread: %ld\n", sum);
}

static void memfd_double_mapping(void) {
    int fd = memfd_create("smc", 0);
    if (fd < 0 || ftruncate(fd, 4096) != 0) {
        perror("memfd");
        return;
    }
    unsigned char *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    unsigned char *x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    if (w == MAP_FAILED || x == MAP_FAILED) {
        perror("mmap memfd");
        return;
    }
    long sum = 0;
    for (uint32_t i = 0; i < 300; i++) {
        emit_const(w, 3 * i + 2);
        sum += ((fn0)x)();
    }
    printf("memfd double mapping: %ld\n", sum);
    close(fd);
}

int main(void) {
    rewrite_between_calls();
    patch_hot_immediate();
    counter_beside_code();
    wx_flips();
    read_into_code();
    written_by_another_thread();
    memfd_double_mapping();
    return 0;
}
