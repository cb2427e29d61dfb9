/* epoll: the packed x86-64 struct epoll_event (u64 data at offset 4) in
 * both directions, with data values a wrong layout would mangle; several
 * events per wait, fewer than ready (maxevents), level and edge triggered,
 * EPOLL_CTL_MOD and DEL, errors, epoll_pwait with a mask, and the old
 * epoll_create and epoll_wait by number. (Not epoll_pwait2: qemu-user,
 * which runs the arm64 build in the tests, lacks it.) */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *err(int e)
{
    switch (e) {
    case EINVAL: return "EINVAL";
    case EEXIST: return "EEXIST";
    case ENOENT: return "ENOENT";
    case EBADF: return "EBADF";
    case EFAULT: return "EFAULT";
    case EPERM: return "EPERM";
    case ENOSYS: return "ENOSYS";
    default: return "other";
    }
}

static void result(const char *what, long r)
{
    if (r < 0)
        printf("%-40s -1 %s\n", what, err(errno));
    else
        printf("%-40s %ld\n", what, r);
}

static int by_data(const void *a, const void *b)
{
    uint64_t x = ((const struct epoll_event *)a)->data.u64, y = ((const struct epoll_event *)b)->data.u64;
    return x < y ? -1 : x > y;
}

/* Prints the `n` events of a wait (sorted by data) and checks the entries
 * after them were not written. */
static void show(const char *what, struct epoll_event *ev, long n, int cap)
{
    result(what, n);
    if (n < 0)
        return;
    qsort(ev, n, sizeof *ev, by_data);
    for (long i = 0; i < n; i++)
        printf("  events %#06x data %#018llx\n", ev[i].events, (unsigned long long)ev[i].data.u64);
    int untouched = 1;
    for (int i = n; i < cap; i++)
        untouched &= ev[i].events == 0xa5a5a5a5 && ev[i].data.u64 == 0xa5a5a5a5a5a5a5a5ull;
    printf("  entries after them untouched %d\n", untouched);
}

static void fill(struct epoll_event *ev, int cap)
{
    memset(ev, 0xa5, cap * sizeof *ev);
}

int main(void)
{
    printf("sizeof(struct epoll_event) %zu\n", sizeof(struct epoll_event));
    int ep = epoll_create1(EPOLL_CLOEXEC);
    result("epoll_create1(EPOLL_CLOEXEC)", ep >= 0 ? 0 : -1);
    int p1[2], p2[2], p3[2];
    if (pipe(p1) || pipe(p2) || pipe(p3))
        return 1;
    int efd = eventfd(0, EFD_NONBLOCK);
    uint64_t data[4] = { 0x1122334455667788ull, 0xfedcba9876543210ull, 0x00000000ffffffffull, 0x8000000000000001ull };
    struct epoll_event e = { .events = EPOLLIN, .data.u64 = data[0] };
    result("ADD pipe 1", epoll_ctl(ep, EPOLL_CTL_ADD, p1[0], &e));
    result("ADD pipe 1 again", epoll_ctl(ep, EPOLL_CTL_ADD, p1[0], &e));
    e = (struct epoll_event){ .events = EPOLLIN | EPOLLET, .data.u64 = data[1] };
    result("ADD pipe 2 edge-triggered", epoll_ctl(ep, EPOLL_CTL_ADD, p2[0], &e));
    e = (struct epoll_event){ .events = EPOLLOUT, .data.u64 = data[2] };
    result("ADD pipe 3 write end", epoll_ctl(ep, EPOLL_CTL_ADD, p3[1], &e));
    e = (struct epoll_event){ .events = EPOLLIN, .data.u64 = data[3] };
    result("ADD eventfd", epoll_ctl(ep, EPOLL_CTL_ADD, efd, &e));
    result("ADD the epoll fd to itself", epoll_ctl(ep, EPOLL_CTL_ADD, ep, &e));
    result("ADD with the event at address 8", epoll_ctl(ep, EPOLL_CTL_ADD, p3[0], (struct epoll_event *)8));
    result("MOD a descriptor not added", epoll_ctl(ep, EPOLL_CTL_MOD, p3[0], &e));
    result("op 99", epoll_ctl(ep, 99, p3[0], &e));

    struct epoll_event ev[8];
    fill(ev, 8);
    show("wait: only the writable pipe", ev, epoll_wait(ep, ev, 8, 0), 8);
    if (write(p1[1], "a", 1) != 1 || write(p2[1], "b", 1) != 1 || eventfd_write(efd, 3))
        return 1;
    fill(ev, 8);
    show("wait: four ready", ev, epoll_wait(ep, ev, 8, 1000), 8);
    fill(ev, 8);
    show("wait again: edge-triggered one gone", ev, epoll_wait(ep, ev, 8, 0), 8);
    fill(ev, 8);
    long n1 = epoll_wait(ep, ev, 2, 0);
    long n2 = epoll_wait(ep, ev + 2, 2, 0);
    printf("maxevents 2 twice: %ld + %ld\n", n1, n2);
    fill(ev, 8);
    show("maxevents 1", ev, epoll_wait(ep, ev, 1, 0), 8);

    e = (struct epoll_event){ .events = EPOLLIN, .data.u64 = 0x0123456789abcdefull };
    result("MOD pipe 3 write end to EPOLLIN", epoll_ctl(ep, EPOLL_CTL_MOD, p3[1], &e));
    result("DEL pipe 1 (event NULL)", epoll_ctl(ep, EPOLL_CTL_DEL, p1[0], NULL));
    result("DEL pipe 1 again", epoll_ctl(ep, EPOLL_CTL_DEL, p1[0], NULL));
    fill(ev, 8);
    show("wait: eventfd only", ev, epoll_wait(ep, ev, 8, 0), 8);
    uint64_t v;
    eventfd_read(efd, &v);
    printf("eventfd counter %llu\n", (unsigned long long)v);
    fill(ev, 8);
    show("wait 10 ms: nothing ready", ev, epoll_wait(ep, ev, 8, 10), 8);

    result("maxevents 0", epoll_wait(ep, ev, 0, 0));
    result("maxevents -1", syscall(SYS_epoll_wait, ep, ev, -1, 0));
    result("wait on a pipe", epoll_wait(p1[0], ev, 8, 0));
    result("wait on a closed descriptor", epoll_wait(999, ev, 8, 0));

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    if (write(p2[1], "c", 1) != 1)
        return 1;
    fill(ev, 8);
    show("epoll_pwait with a mask", ev, epoll_pwait(ep, ev, 8, 100, &mask), 8);
    result("epoll_pwait, sigsetsize 4", syscall(SYS_epoll_pwait, ep, ev, 8, 0, &mask, 4));

    int old = syscall(SYS_epoll_create, 4);
    result("epoll_create(4) by number", old >= 0 ? 0 : -1);
    result("epoll_create(0) by number", syscall(SYS_epoll_create, 0));
    e = (struct epoll_event){ .events = EPOLLOUT, .data.u64 = 0xdeadbeefcafef00dull };
    result("ADD", epoll_ctl(old, EPOLL_CTL_ADD, p1[1], &e));
    fill(ev, 8);
    show("epoll_wait by number", ev, syscall(SYS_epoll_wait, old, ev, 8, 0), 8);
    return 0;
}
