/* Loads and stores of 2, 4 and 8 bytes at every misalignment, each site run
 * many times: under the ordered memory model the JIT's acquire/release
 * accesses fault on a misaligned address and are resumed, then patched, to
 * a fenced plain access. The checksum must match the native run. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

static unsigned char buf[96];

int main(void)
{
    uint64_t sum = 0;
    for (int i = 0; i < (int)sizeof buf; i++) buf[i] = (unsigned char)(i * 7 + 1);
    for (int round = 0; round < 50; round++) {
        for (int off = 0; off < 16; off++) {
            volatile uint64_t *p64 = (uint64_t *)(buf + off);
            volatile uint32_t *p32 = (uint32_t *)(buf + 24 + off);
            volatile uint16_t *p16 = (uint16_t *)(buf + 48 + off);
            sum = sum * 31 + *p64 + *p32 + *p16;
            *p64 = sum;
            *p32 = (uint32_t)(sum >> 7);
            *p16 = (uint16_t)(sum >> 3);
        }
    }
    for (int i = 0; i < (int)sizeof buf; i++) sum = sum * 3 + buf[i];
    printf("%016" PRIx64 "\n", sum);
    return 0;
}
