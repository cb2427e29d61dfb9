/* codegen_churn: generates and runs code endlessly, as a JIT in the guest
 * would: ITERATIONS times (argv[1]), map a fresh read-write-execute page,
 * write a small function with a different constant at a different offset
 * (mov eax, imm32; add eax, edi; ret), call it, check its result and unmap
 * the page. aarchx translates every one of these functions (the unmap
 * drops the last one's translation), so its memory must not grow with the
 * count: the program reads its resident set size (VmRSS, which under
 * aarchx is aarchx's own) after the first half and at the end and says
 * whether it grew by less than 16 MiB over the second half. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The process's resident set in KiB, from /proc/self/status. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    long page = sysconf(_SC_PAGESIZE);
    unsigned long wrong = 0, sum = 0;
    long half_rss = 0;
    for (long i = 0; i < n; i++) {
        unsigned char *p = mmap(NULL, page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        unsigned char *f = p + (i * 16) % page;
        unsigned int k = 0x9e3779b9u * (unsigned int)i;
        f[0] = 0xb8; /* mov eax, k */
        memcpy(f + 1, &k, 4);
        f[5] = 0x01; /* add eax, edi */
        f[6] = 0xf8;
        f[7] = 0xc3; /* ret */
        unsigned int got = ((unsigned int (*)(unsigned int))(void *)f)((unsigned int)i);
        if (got != k + (unsigned int)i)
            wrong++;
        sum += got;
        if (munmap(p, page) != 0) {
            perror("munmap");
            return 1;
        }
        if (i == n / 2)
            half_rss = rss_kib();
    }
    long end_rss = rss_kib();
    printf("%ld functions generated and run, %lu wrong results, sum %lu\n", n, wrong, sum);
    printf("resident set grew by less than 16 MiB over the second half: %s\n",
           half_rss > 0 && end_rss > 0 && end_rss - half_rss < 16 * 1024 ? "yes" : "no");
    return wrong != 0;
}
