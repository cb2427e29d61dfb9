/* Tests exit() from a nested call: atexit handlers run in reverse order and buffered stdout is flushed; exits 5. */
#include <stdio.h>
#include <stdlib.h>

static int counter;

static void first(void) { printf("atexit first (registered first, runs last) counter=%d\n", counter); }
static void second(void) { printf("atexit second counter=%d\n", counter++); }
static void third(void)
{
    fprintf(stderr, "atexit third on stderr\n");
    counter += 10;
}

__attribute__((noinline)) static void leave(int depth)
{
    if (depth < 0) return;
    if (depth == 0) {
        printf("calling exit(5) from depth 0\n");
        exit(5);
    }
    leave(depth - 1);
    printf("not reached\n");
}

int main(void)
{
    atexit(first);
    atexit(second);
    atexit(third);
    for (int i = 0; i < 5; i++) printf("line %d buffered\n", i);
    leave(20);
    return 0;
}
