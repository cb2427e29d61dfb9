/* Tests INT64_MIN / -1 (x86 #DE overflow) with no handler installed: the process dies of SIGFPE. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

int main(void)
{
    volatile int64_t num = INT64_MIN;
    volatile int64_t den = -1;
    printf("ok: %" PRId64 " / 7 = %" PRId64 "\n", num, num / 7);
    printf("dividing %" PRId64 " by %" PRId64 "\n", num, den);
    fflush(stdout);
    int64_t q = num / den;
    printf("not reached: %" PRId64 "\n", q);
    return 0;
}
