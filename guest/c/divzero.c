/* Tests an integer divide by a run-time zero with no handler installed: the process dies of SIGFPE. */
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argv;
    volatile int divisor = argc - 1; /* 0 when run without arguments */
    int dividend = 1000;
    printf("dividing %d by %d\n", dividend, divisor);
    fflush(stdout);
    fprintf(stderr, "about to trap\n");
    int q = dividend / divisor;
    printf("not reached: %d\n", q);
    return 0;
}
