/* sigaltstack: a handler with SA_ONSTACK runs on the alternate stack (its
 * locals are inside it, sigaltstack reports SS_ONSTACK there), one
 * without it runs on the normal stack; SS_DISABLE turns it off. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *alt;
static size_t alt_size = 1 << 16;

static void on_usr(int sig) {
    char local;
    stack_t now;
    sigaltstack(NULL, &now);
    int inside = (uintptr_t)&local >= (uintptr_t)alt && (uintptr_t)&local < (uintptr_t)alt + alt_size;
    printf("signal %d: on the alternate stack %d, SS_ONSTACK %d\n", sig, inside, (now.ss_flags & SS_ONSTACK) != 0);
}

int main(void) {
    alt = malloc(alt_size);
    stack_t ss = {.ss_sp = alt, .ss_size = alt_size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        return 1;
    }
    stack_t old;
    sigaltstack(NULL, &old);
    printf("registered: size ok %d, flags %d\n", old.ss_size == alt_size && old.ss_sp == alt, old.ss_flags);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_flags = 0;
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR1);
    raise(SIGUSR2);
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    raise(SIGUSR1);
    stack_t small = {.ss_sp = alt, .ss_size = 100, .ss_flags = 0};
    printf("too small: %d\n", sigaltstack(&small, NULL));
    return 0;
}
