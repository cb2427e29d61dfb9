// POSIX threads: create and join with return values, detach, contended
// atomics and a mutex with an exact final count, thread-local data
// (__thread and pthread keys with destructors), condition variables,
// read-write locks, barriers, semaphores and many short-lived threads
// (SHORT_LIVED, or as many as argv[1] says).
// Everything printed is computed after the joins, so the output does not
// depend on scheduling.
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { THREADS = 16, ROUNDS = 20000, SHORT_LIVED = 300 };

static atomic_long atomic_count;
static long locked_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread long mine;
static pthread_key_t key;
static atomic_int destructed;

static void destructor(void *p) {
    atomic_fetch_add(&destructed, 1);
    free(p);
}

static void *worker(void *arg) {
    long id = (long)(intptr_t)arg;
    long *slot = malloc(sizeof *slot);
    *slot = id;
    pthread_setspecific(key, slot);
    for (int i = 0; i < ROUNDS; i++) {
        atomic_fetch_add_explicit(&atomic_count, 1, memory_order_relaxed);
        pthread_mutex_lock(&lock);
        locked_count++;
        pthread_mutex_unlock(&lock);
        mine += id;
    }
    long *back = pthread_getspecific(key);
    return (void *)(intptr_t)(mine / ROUNDS + *back * 1000);
}

// A bounded queue handed from one producer to two consumers.
enum { QUEUE = 4, ITEMS = 2000 };
static int queue[QUEUE], head, tail, count, done;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;

static void *producer(void *arg) {
    (void)arg;
    for (int i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&qlock);
        while (count == QUEUE) pthread_cond_wait(&not_full, &qlock);
        queue[tail] = i;
        tail = (tail + 1) % QUEUE;
        count++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&qlock);
    }
    pthread_mutex_lock(&qlock);
    done = 1;
    pthread_cond_broadcast(&not_empty);
    pthread_mutex_unlock(&qlock);
    return NULL;
}

static void *consumer(void *arg) {
    long *sum = arg;
    for (;;) {
        pthread_mutex_lock(&qlock);
        while (count == 0 && !done) pthread_cond_wait(&not_empty, &qlock);
        if (count == 0) {
            pthread_mutex_unlock(&qlock);
            return NULL;
        }
        *sum += queue[head];
        head = (head + 1) % QUEUE;
        count--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&qlock);
    }
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long table[64];
static pthread_barrier_t barrier;
static sem_t sem;
static atomic_int in_section, most_in_section;

static void *rw_worker(void *arg) {
    long id = (long)(intptr_t)arg;
    pthread_barrier_wait(&barrier);
    long seen = 0;
    for (int i = 0; i < 2000; i++) {
        if (i % 10 == 0) {
            pthread_rwlock_wrlock(&rw);
            table[(id + i) % 64] += 1;
            pthread_rwlock_unlock(&rw);
        } else {
            pthread_rwlock_rdlock(&rw);
            seen += table[i % 64] >= 0;
            pthread_rwlock_unlock(&rw);
        }
    }
    // At most two threads inside at once.
    sem_wait(&sem);
    int now = atomic_fetch_add(&in_section, 1) + 1;
    int most = atomic_load(&most_in_section);
    while (now > most && !atomic_compare_exchange_weak(&most_in_section, &most, now)) {
    }
    usleep(1000);
    atomic_fetch_sub(&in_section, 1);
    sem_post(&sem);
    return (void *)(intptr_t)seen;
}

static atomic_int short_ran;

static void *short_lived(void *arg) {
    (void)arg;
    atomic_fetch_add(&short_ran, 1);
    return NULL;
}

// A detached thread counts itself in a thread-specific data destructor,
// which runs after pthread_exit has unwound its stack: main may then exit
// (its exit deregisters the unwind tables) without racing the unwinder.
static atomic_int detached_ran;
static pthread_key_t exit_key;

static void exited(void *p) {
    (void)p;
    atomic_fetch_add(&detached_ran, 1);
}

static void *detached(void *arg) {
    pthread_setspecific(exit_key, arg);
    pthread_exit(NULL);
}

int main(int argc, char **argv) {
    int short_lived_count = argc > 1 ? atoi(argv[1]) : SHORT_LIVED;
    pthread_key_create(&key, destructor);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    long results = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        results += (long)(intptr_t)r;
    }
    printf("atomic %ld locked %ld results %ld destructors %d main's own %ld\n", (long)atomic_count, locked_count,
           results, (int)destructed, mine);

    pthread_t p, c[2];
    long sums[2] = {0, 0};
    pthread_create(&p, NULL, producer, NULL);
    for (int i = 0; i < 2; i++) pthread_create(&c[i], NULL, consumer, &sums[i]);
    pthread_join(p, NULL);
    for (int i = 0; i < 2; i++) pthread_join(c[i], NULL);
    printf("queue total %ld (expected %ld)\n", sums[0] + sums[1], (long)ITEMS * (ITEMS + 1) / 2);

    pthread_barrier_init(&barrier, NULL, 8);
    sem_init(&sem, 0, 2);
    pthread_t r[8];
    long seen = 0;
    for (long i = 0; i < 8; i++) pthread_create(&r[i], NULL, rw_worker, (void *)(intptr_t)i);
    for (int i = 0; i < 8; i++) {
        void *v;
        pthread_join(r[i], &v);
        seen += (long)(intptr_t)v;
    }
    long writes = 0;
    for (int i = 0; i < 64; i++) writes += table[i];
    // How many threads overlapped inside depends on scheduling (1 or 2);
    // that the semaphore's count of 2 was never exceeded does not.
    printf("rwlock reads %ld writes %ld; semaphore kept %s\n", seen, writes,
           most_in_section >= 1 && most_in_section <= 2 ? "at most 2 inside" : "TOO MANY inside");

    for (int i = 0; i < short_lived_count; i++) {
        pthread_t s;
        pthread_create(&s, NULL, short_lived, NULL);
        pthread_join(s, NULL);
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_key_create(&exit_key, exited);
    for (int i = 0; i < 4; i++) {
        pthread_t d;
        pthread_create(&d, &attr, detached, &attr);
    }
    while (atomic_load(&detached_ran) < 4) usleep(1000);
    printf("short-lived %d detached %d\n", (int)short_ran, (int)detached_ran);
    return 0;
}
