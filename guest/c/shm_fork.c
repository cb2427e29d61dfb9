// Memory shared between processes: an anonymous MAP_SHARED page that a
// fork shares, where parent and child hand a token back and forth and
// count with atomics (under memory_model: Auto the translation goes
// ordered at the mapping), and a memfd mapped twice, where a store
// through one mapping is read through the other.
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { ROUNDS = 2000 };

struct page {
    atomic_int turn;
    atomic_long count;
    long log[2 * ROUNDS];
};

static void play(struct page *p, int me) {
    for (int i = 0; i < ROUNDS; i++) {
        while (atomic_load_explicit(&p->turn, memory_order_acquire) != me) {
        }
        // A plain write published by the release store below.
        p->log[2 * i + me] = (long)i * 10 + me;
        atomic_fetch_add(&p->count, i);
        atomic_store_explicit(&p->turn, 1 - me, memory_order_release);
    }
}

int main(void) {
    struct page *p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        play(p, 1);
        _exit(0);
    }
    play(p, 0);
    int status;
    waitpid(child, &status, 0);
    long sum = 0, bad = 0;
    for (int i = 0; i < 2 * ROUNDS; i++) {
        sum += p->log[i];
        bad += p->log[i] != (long)(i / 2) * 10 + i % 2;
    }
    printf("child status %d, count %ld, log sum %ld, out of place %ld\n", status, (long)p->count, sum, bad);

    int fd = memfd_create("shm_fork", 0);
    if (fd < 0 || ftruncate(fd, 4096) != 0) {
        perror("memfd");
        return 1;
    }
    volatile int *a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    volatile int *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED || b == MAP_FAILED) {
        perror("mmap memfd");
        return 1;
    }
    a[10] = 1234;
    b[11] = 5678;
    printf("memfd: b sees %d, a sees %d\n", b[10], a[11]);
    return 0;
}
