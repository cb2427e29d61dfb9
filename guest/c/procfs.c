/* procfs: /proc/self/auxv holds the auxiliary vector the program was
 * started with (every entry but the hardware capabilities equals
 * getauxval's answer, AT_NULL last), and
 * /proc/cpuinfo describes an x86-64 CPU: one entry per online processor,
 * the baseline flags every x86-64 CPU has, the vendor cpuid names. The
 * output is the same natively and under a translator that writes these
 * files itself. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

int main(void)
{
    unsigned long pairs[2 * 64];
    int fd = open("/proc/self/auxv", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, pairs, sizeof pairs);
    if (n <= 0 || n % 16) {
        printf("auxv: unreadable\n");
        return 1;
    }
    close(fd);
    int entries = (int)(n / 16), agree = 1, has_null = pairs[2 * (entries - 1)] == AT_NULL;
    int has_pagesz = 0, has_entry = 0, has_random = 0;
    for (int i = 0; i < entries - 1; i++) {
        unsigned long type = pairs[2 * i], value = pairs[2 * i + 1];
        /* glibc answers AT_HWCAP and AT_HWCAP2 from its own view of the CPU. */
        if (type != AT_HWCAP && type != AT_HWCAP2)
            agree &= getauxval(type) == value;
        has_pagesz |= type == AT_PAGESZ && value == (unsigned long)sysconf(_SC_PAGESIZE);
        has_entry |= type == AT_ENTRY;
        has_random |= type == AT_RANDOM;
    }
    printf("auxv: entries agree with getauxval %d, ends in AT_NULL %d, AT_PAGESZ %d, AT_ENTRY %d, AT_RANDOM %d\n",
           agree, has_null, has_pagesz, has_entry, has_random);

    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) {
        printf("cpuinfo: unreadable\n");
        return 1;
    }
    char line[8192];
    int processors = 0, baseline = 1, vendor_ok = 1;
    unsigned a, b, c, d;
    __cpuid(0, a, b, c, d);
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    static const char *const base[] = { " fpu ", " tsc ", " cx8 ", " cmov ", " mmx ", " fxsr ", " sse ", " sse2 ", " lm " };
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "processor", 9) == 0)
            processors++;
        if (strncmp(line, "vendor_id", 9) == 0)
            vendor_ok &= strstr(line, vendor) != NULL;
        if (strncmp(line, "flags", 5) == 0) {
            char padded[8200];
            snprintf(padded, sizeof padded, " %s", strchr(line, ':') + 1);
            padded[strcspn(padded, "\n")] = ' ';
            for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
                baseline &= strstr(padded, base[i]) != NULL;
        }
    }
    fclose(f);
    printf("cpuinfo: one entry per online processor %d, baseline flags %d, vendor as cpuid %d\n",
           processors == sysconf(_SC_NPROCESSORS_ONLN), baseline, vendor_ok);
    return 0;
}
