/* The C library routines aarchx's leaf-inline pass replaces (strlen,
 * strnlen, memchr, rawmemchr, memrchr, strchr, strrchr, memset, memcpy,
 * mempcpy, memmove, memcmp, bcmp, strcmp, strncmp, strcpy, stpcpy,
 * __memcpy_chk, __memset_chk), called through volatile pointers so the
 * compiler cannot inline them: every length from
 * 0 to 300 at every alignment of both operands within 64 bytes, strings and
 * ranges that end at the last byte before an inaccessible page, overlapping
 * moves (which the arm64 memmove declines) and reads that run into the
 * inaccessible page (which fault in the guest's own code: the handler
 * prints where). The output is a checksum per routine and each fault's
 * offset from the page, so any difference from the real CPU shows. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

void *__memcpy_chk(void *, const void *, size_t, size_t);
void *__memset_chk(void *, int, size_t, size_t);

static size_t (*volatile strlen_p)(const char *) = strlen;
static void *(*volatile memchr_p)(const void *, int, size_t) = memchr;
static void *(*volatile memset_p)(void *, int, size_t) = memset;
static void *(*volatile memcpy_p)(void *, const void *, size_t) = memcpy;
static void *(*volatile memmove_p)(void *, const void *, size_t) = memmove;
static int (*volatile memcmp_p)(const void *, const void *, size_t) = memcmp;
static int (*volatile bcmp_p)(const void *, const void *, size_t) = bcmp;
static int (*volatile strcmp_p)(const char *, const char *) = strcmp;
static char *(*volatile strchr_p)(const char *, int) = strchr;
static size_t (*volatile strnlen_p)(const char *, size_t) = strnlen;
static int (*volatile strncmp_p)(const char *, const char *, size_t) = strncmp;
static void *(*volatile memcpy_chk_p)(void *, const void *, size_t, size_t) = __memcpy_chk;
static void *(*volatile memset_chk_p)(void *, int, size_t, size_t) = __memset_chk;
static void *(*volatile mempcpy_p)(void *, const void *, size_t) = mempcpy;
static void *(*volatile rawmemchr_p)(const void *, int) = rawmemchr;
static char *(*volatile strrchr_p)(const char *, int) = strrchr;
static void *(*volatile memrchr_p)(const void *, int, size_t) = memrchr;
static char *(*volatile strcpy_p)(char *, const char *) = strcpy;
static char *(*volatile stpcpy_p)(char *, const char *) = stpcpy;

static uint64_t sum;

static void mix(uint64_t v) {
    sum = (sum ^ v) * 0x100000001b3ull;
}

/* memcmp's value beyond its sign differs between glibc's variants. */
static uint64_t sign(int v) {
    return (uint64_t)((v > 0) - (v < 0));
}

static unsigned char pool[1024], other[1024];
static unsigned long seed = 12345;

static unsigned rnd(void) {
    seed = seed * 6364136223846793005ul + 1442695040888963407ul;
    return (unsigned)(seed >> 33);
}

static void fill(unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(1 + rnd() % 250);
}

static void report(const char *what) {
    printf("%s %016llx\n", what, (unsigned long long)sum);
    sum = 0;
}

static sigjmp_buf back;
static volatile uintptr_t fault_page;
/* Set for a routine whose first read depends on glibc's variant (which
 * follows the CPU's features): only the page is printed. */
static volatile int fault_page_only;

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    long at = (long)((uintptr_t)si->si_addr - fault_page);
    if (fault_page_only)
        printf("  fault in page%+ld\n", at / 4096);
    else
        printf("  fault at page%+ld\n", at);
    siglongjmp(back, 1);
}

int main(void) {
    long page = sysconf(_SC_PAGESIZE);
    /* Two pages, the second inaccessible: an edge to end data at. */
    unsigned char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || mprotect(map + page, page, PROT_NONE) != 0)
        return 1;
    unsigned char *edge = map + page;
    fault_page = (uintptr_t)edge;

    for (size_t a = 0; a < 64; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            fill(pool + a, n);
            pool[a + n] = 0;
            mix(strlen_p((char *)pool + a));
            unsigned char *e = edge - n - 1;
            memcpy(e, pool + a, n + 1);
            mix(strlen_p((char *)e));
        }
    report("strlen");

    for (size_t a = 0; a < 64; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            fill(pool + a, n + 8);
            int c = pool[a + (n ? rnd() % n : 0)];
            unsigned char *r = memchr_p(pool + a, c, n);
            mix(r ? (uint64_t)(r - pool) : ~0ull);
            mix(memchr_p(pool + a, 0, n) == NULL);
            memcpy(edge - n, pool + a, n);
            r = memchr_p(edge - n, 0, n);
            mix(r ? (uint64_t)(edge - r) : ~0ull);
        }
    report("memchr");

    for (size_t a = 0; a < 64; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            memset(pool, 0x11, sizeof pool);
            mix(memset_p(pool + a, (int)(a * 7 + n), n) == pool + a);
            for (size_t i = 0; i < a + n + 70; i++)
                mix(pool[i]);
            memset_p(edge - n, 0x5a, n);
            mix(edge[-1] + (n ? edge[-(long)n] : 0));
        }
    report("memset");

    for (size_t a = 0; a < 32; a++)
        for (size_t b = 0; b < 32; b += 3)
            for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 11)) {
                fill(other, 400);
                memset(pool, 0, 400);
                mix(memcpy_p(pool + a, other + b, n) == pool + a);
                for (size_t i = 0; i < a + n + 40; i++)
                    mix(pool[i]);
                memcpy_p(edge - n, other + b, n);
                mix(n ? edge[-1] : 0);
            }
    report("memcpy");

    for (size_t d = 0; d < 48; d++)
        for (size_t s = 0; s < 48; s += 5)
            for (size_t n = 0; n <= 200; n += (n < 40 ? 1 : 13)) {
                for (size_t i = 0; i < 400; i++)
                    pool[i] = (unsigned char)i;
                mix(memmove_p(pool + d, pool + s, n) == pool + d);
                for (size_t i = 0; i < 260; i++)
                    mix(pool[i]);
            }
    report("memmove");

    for (size_t a = 0; a < 32; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            fill(pool + a, n);
            memcpy(other + 5, pool + a, n);
            mix(sign(memcmp_p(pool + a, other + 5, n)));
            if (n) {
                size_t i = rnd() % n;
                other[5 + i] = (unsigned char)(other[5 + i] + 1 + rnd() % 200);
                mix(sign(memcmp_p(pool + a, other + 5, n)));
                mix(sign(memcmp_p(other + 5, pool + a, n)));
                mix(bcmp_p(pool + a, other + 5, n) != 0);
            }
            memcpy(edge - n, pool + a, n);
            mix(sign(memcmp_p(edge - n, pool + a, n)));
        }
    report("memcmp");

    for (size_t a = 0; a < 32; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            fill(pool + a, n);
            pool[a + n] = 0;
            memcpy(other + 3, pool + a, n + 1);
            mix((uint64_t)(int64_t)strcmp_p((char *)pool + a, (char *)other + 3));
            if (n) {
                size_t i = rnd() % n;
                other[3 + i] = (unsigned char)(rnd() % 256);
                mix((uint64_t)(int64_t)strcmp_p((char *)pool + a, (char *)other + 3));
                mix((uint64_t)(int64_t)strcmp_p((char *)other + 3, (char *)pool + a));
            }
            memcpy(edge - n - 1, pool + a, n + 1);
            mix((uint64_t)(int64_t)strcmp_p((char *)edge - n - 1, (char *)pool + a));
        }
    report("strcmp");

    for (size_t a = 0; a < 64; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            fill(pool + a, n);
            pool[a + n] = 0;
            int c = n ? pool[a + rnd() % n] : 'x';
            char *r = strchr_p((char *)pool + a, c);
            mix(r ? (uint64_t)(r - (char *)pool) : ~0ull);
            r = strchr_p((char *)pool + a, 0);
            mix((uint64_t)(r - (char *)pool));
            r = strchr_p((char *)pool + a, 255);
            mix(r ? (uint64_t)(r - (char *)pool) : ~0ull);
            memcpy(edge - n - 1, pool + a, n + 1);
            r = strchr_p((char *)edge - n - 1, 'x' + 200);
            mix(r ? (uint64_t)((char *)edge - r) : ~0ull);
        }
    report("strchr");

    for (size_t a = 0; a < 64; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            fill(pool + a, n);
            pool[a + n] = 0;
            size_t m = rnd() % (n + 20);
            mix(strnlen_p((char *)pool + a, m));
            mix(strnlen_p((char *)pool + a, (size_t)-1));
            fill(edge - n, n);
            mix(strnlen_p((char *)edge - n, n));
        }
    report("strnlen");

    for (size_t a = 0; a < 32; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            fill(pool + a, n);
            pool[a + n] = 0;
            memcpy(other + 3, pool + a, n + 1);
            size_t i = n ? rnd() % n : 0;
            if (n)
                other[3 + i] = (unsigned char)(rnd() % 256);
            for (size_t m = 0; m <= n + 2; m += 1 + n / 8) {
                mix((uint64_t)(int64_t)strncmp_p((char *)pool + a, (char *)other + 3, m));
                mix((uint64_t)(int64_t)strncmp_p((char *)other + 3, (char *)pool + a, m));
            }
            memcpy(edge - n, pool + a, n);
            mix((uint64_t)(int64_t)strncmp_p((char *)edge - n, (char *)pool + a, n));
        }
    report("strncmp");

    for (size_t a = 0; a < 32; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 11)) {
            fill(other, 400);
            memset(pool, 0, 400);
            mix(memcpy_chk_p(pool + a, other + 7, n, sizeof pool - a) == pool + a);
            mix(memset_chk_p(pool + a + n, (int)n, n / 2, n / 2 + a) == pool + a + n);
            for (size_t i = 0; i < a + 2 * n + 40; i++)
                mix(pool[i]);
        }
    report("chk");

    for (size_t a = 0; a < 32; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 11)) {
            fill(other, 400);
            memset(pool, 0, 400);
            mix((uint64_t)((unsigned char *)mempcpy_p(pool + a, other + 9, n) - pool));
            for (size_t i = 0; i < a + n + 40; i++)
                mix(pool[i]);
            fill(pool + a, n + 1);
            pool[a + n] = 0;
            int c = pool[a + (n ? rnd() % n : 0)];
            mix((uint64_t)((unsigned char *)rawmemchr_p(pool + a, c) - pool));
            mix((uint64_t)((unsigned char *)rawmemchr_p(pool + a, 0) - pool));
            memcpy(edge - n - 1, pool + a, n + 1);
            mix((uint64_t)(edge - (unsigned char *)rawmemchr_p(edge - n - 1, 0)));
        }
    report("mempcpy rawmemchr");

    /* A four-letter alphabet, so the byte looked for recurs. */
    for (size_t a = 0; a < 64; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            for (size_t i = 0; i < n; i++)
                pool[a + i] = (unsigned char)(1 + rnd() % 4);
            pool[a + n] = 0;
            int c = n ? pool[a + rnd() % n] : 1;
            char *r = strrchr_p((char *)pool + a, c);
            mix(r ? (uint64_t)(r - (char *)pool) : ~0ull);
            r = strrchr_p((char *)pool + a, 0);
            mix((uint64_t)(r - (char *)pool));
            r = strrchr_p((char *)pool + a, 0x105);
            mix(r ? (uint64_t)(r - (char *)pool) : ~0ull);
            memcpy(edge - n - 1, pool + a, n + 1);
            r = strrchr_p((char *)edge - n - 1, 2);
            mix(r ? (uint64_t)((char *)edge - r) : ~0ull);
        }
    report("strrchr");

    /* memrchr: the four-letter alphabet again, ranges ending at the
     * inaccessible page and ranges starting at the accessible page's
     * first byte. */
    for (size_t a = 0; a < 64; a++)
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 7)) {
            for (size_t i = 0; i < n + 8; i++)
                pool[a + i] = (unsigned char)(1 + rnd() % 4);
            int c = n ? pool[a + rnd() % n] : 1;
            unsigned char *r = memrchr_p(pool + a, c, n);
            mix(r ? (uint64_t)(r - pool) : ~0ull);
            mix(memrchr_p(pool + a, 0, n) == NULL);
            r = memrchr_p(pool + a, 0x103, n);
            mix(r ? (uint64_t)(r - pool) : ~0ull);
            memcpy(edge - n, pool + a, n);
            r = memrchr_p(edge - n, 2, n);
            mix(r ? (uint64_t)(edge - r) : ~0ull);
            memcpy(map, pool + a, n);
            r = memrchr_p(map, 3, n);
            mix(r ? (uint64_t)(r - map) : ~0ull);
        }
    report("memrchr");

    for (size_t a = 0; a < 32; a++)
        for (size_t b = 0; b < 32; b += 3)
            for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 11)) {
                fill(other + b, n);
                other[b + n] = 0;
                memset(pool, 0, 400);
                mix(strcpy_p((char *)pool + a, (char *)other + b) == (char *)pool + a);
                for (size_t i = 0; i < a + n + 40; i++)
                    mix(pool[i]);
                memset(pool, 0, 400);
                mix((uint64_t)(stpcpy_p((char *)pool + a, (char *)other + b) - (char *)pool));
                for (size_t i = 0; i < a + n + 40; i++)
                    mix(pool[i]);
                stpcpy_p((char *)edge - n - 1, (char *)other + b);
                mix(edge[-1] + (n ? edge[-(long)n - 1] : 0));
                memcpy(edge - n - 1, other + b, n + 1);
                mix((uint64_t)(stpcpy_p((char *)pool, (char *)edge - n - 1) - (char *)pool));
            }
    report("strcpy stpcpy");

    /* A checking routine whose destination is too small ends the process
     * (glibc's __chk_fail, from the guest's own code once the arm64
     * routine declines). */
    for (int k = 0; k < 2; k++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(open("/dev/null", 1), 2);
            if (k == 0)
                memcpy_chk_p(pool, other, 100, 99);
            else
                memset_chk_p(pool, 0, 100, 50);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        printf("  overflow %d: %s %d\n", k, WIFSIGNALED(status) ? "signal" : "exit",
               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }

    /* Reads into the inaccessible page: the routine's own code faults. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    for (int k = 0; k < 15; k++) {
        memset(edge - 64, 'x', 64);
        if (sigsetjmp(back, 1) == 0) {
            switch (k) {
            case 0: mix(strlen_p((char *)edge - 5)); break;
            case 1: mix((uint64_t)(uintptr_t)memchr_p(edge - 20, 'q', 4096)); break;
            case 2: mix((uint64_t)strcmp_p((char *)edge - 64, (char *)edge - 64)); break;
            case 3: memset_p(edge - 3, 0, 100); break;
            case 4: memcpy_p(edge - 10, pool, 300); break;
            case 5: mix(sign(memcmp_p(edge - 30, edge - 30, 50))); break;
            case 6: mix((uint64_t)(uintptr_t)strchr_p((char *)edge - 64, 'q')); break;
            case 7: mix(strnlen_p((char *)edge - 64, 1000)); break;
            case 8: mix((uint64_t)strncmp_p((char *)edge - 64, (char *)edge - 64, 100)); break;
            case 9: mempcpy_p(edge - 10, pool, 300); break;
            case 10: mix((uint64_t)(uintptr_t)rawmemchr_p(edge - 20, 'q')); break;
            case 11: mix((uint64_t)(uintptr_t)strrchr_p((char *)edge - 64, 'q')); break;
            case 12: strcpy_p((char *)pool, (char *)edge - 10); break;
            case 13: stpcpy_p((char *)edge - 5, "a string longer than five bytes"); break;
            case 14:
                /* From the end down, in vectors of the variant's size. */
                fault_page_only = 1;
                mix((uint64_t)(uintptr_t)memrchr_p(edge - 20, 'x', 100));
                fault_page_only = 0;
                break;
            }
            printf("  call %d returned\n", k);
        }
    }
    report("faults");
    return 0;
}
