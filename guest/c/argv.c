/* Tests argv passing: prints argc and each argument, then exits with status 3. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    printf("argc=%d\n", argc);
    /* argv[0] depends on how the program was started, so only its basename is printed */
    const char *base = strrchr(argv[0], '/');
    printf("argv[0] basename=%s\n", base ? base + 1 : argv[0]);
    size_t total = 0;
    for (int i = 1; i < argc; i++) {
        printf("argv[%d]=\"%s\" (len %zu)\n", i, argv[i], strlen(argv[i]));
        total += strlen(argv[i]);
    }
    printf("argv[argc]=%s\n", argv[argc] == NULL ? "NULL" : "non-NULL");
    fprintf(stderr, "total arg length %zu\n", total);
    return 3;
}
