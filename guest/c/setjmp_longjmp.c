/* Tests setjmp/longjmp: simple, nested jump buffers, and unwinding out of deep recursion. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf outer_env, inner_env, deep_env;
static int trace[64];
static int ntrace;

static void note(int v)
{
    if (ntrace < 64) trace[ntrace++] = v;
}

__attribute__((noinline)) static void thrower(jmp_buf env, int value)
{
    note(100 + value);
    longjmp(env, value);
}

__attribute__((noinline)) static int recurse(int depth, int limit, volatile long *acc)
{
    if (depth > limit) return 0;
    *acc += depth;
    if (depth == limit) longjmp(deep_env, depth);
    return recurse(depth + 1, limit, acc) + 1; /* not a tail call */
}

static int nested(int k)
{
    volatile int local = k * 10;
    int r = setjmp(inner_env);
    if (r == 0) {
        note(1);
        local += 1;
        if (k & 1) thrower(inner_env, 3);
        else thrower(outer_env, 4);
        note(-1); /* unreachable */
    }
    note(2);
    return local + r;
}

int main(void)
{
    /* longjmp(env, 0) must make setjmp return 1 */
    volatile int count = 0;
    int r = setjmp(outer_env);
    count++;
    printf("setjmp returned %d (count=%d)\n", r, count);
    if (count == 1) longjmp(outer_env, 0);
    if (count == 2) longjmp(outer_env, 77);

    /* nested: odd k jumps to inner, even k jumps out to outer */
    for (volatile int k = 1; k <= 4; k++) {
        int o = setjmp(outer_env);
        if (o == 0) {
            int v = nested(k);
            printf("k=%d nested returned %d\n", k, v);
        } else {
            printf("k=%d caught at outer: %d\n", k, o);
        }
    }

    /* deep recursion unwound by longjmp */
    static const int limits[] = {10, 1000, 20000};
    for (volatile int i = 0; i < 3; i++) {
        volatile long acc = 0;
        int d = setjmp(deep_env);
        if (d == 0) {
            recurse(0, limits[i], &acc);
            printf("not reached\n");
        } else {
            printf("deep: jumped from depth %d, acc=%ld\n", d, acc);
        }
    }

    /* repeated jumps in a loop */
    volatile int loops = 0;
    jmp_buf loop_env;
    if (setjmp(loop_env) < 500) {
        loops++;
        longjmp(loop_env, loops);
    }
    printf("loop jumps=%d\n", loops);

    printf("trace:");
    for (int i = 0; i < ntrace; i++) printf(" %d", trace[i]);
    printf("\n");
    return 0;
}
