/* fdevents: descriptors for events and moving data between descriptors:
 * eventfd (counter, EFD_SEMAPHORE, nonblocking, the old eventfd by
 * number), timerfd (one-shot and interval timers, gettime, expirations),
 * inotify on a fresh temporary directory, memfd_create, sendfile, splice
 * and tee. Prints counts and relations, never times. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static void result(const char *what, long r)
{
    if (r < 0)
        printf("%-40s -1 %s\n", what, errno == EAGAIN ? "EAGAIN" : errno == EINVAL ? "EINVAL" : errno == EBADF ? "EBADF" : "other");
    else
        printf("%-40s %ld\n", what, r);
}

static void eventfds(void)
{
    int e = eventfd(5, EFD_NONBLOCK | EFD_CLOEXEC);
    printf("eventfd flags: O_NONBLOCK %d FD_CLOEXEC %d\n", !!(fcntl(e, F_GETFL) & O_NONBLOCK), fcntl(e, F_GETFD));
    uint64_t v = 7;
    result("write 7", write(e, &v, 8));
    result("read", read(e, &v, 8));
    printf("  counter %llu\n", (unsigned long long)v);
    result("read when zero", read(e, &v, 8));
    result("read 4 bytes", read(e, &v, 4));
    v = UINT64_MAX;
    result("write UINT64_MAX", write(e, &v, 8));
    close(e);
    int s = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
    for (int i = 0; i < 4; i++) {
        v = 0;
        long r = read(s, &v, 8);
        printf("semaphore read %d: %ld value %llu\n", i, r, (unsigned long long)v);
    }
    close(s);
    int old = syscall(SYS_eventfd, 2);
    result("eventfd by number", old >= 0 ? 0 : -1);
    result("  read", read(old, &v, 8));
    printf("  counter %llu, flags %#x\n", (unsigned long long)v, fcntl(old, F_GETFL) & ~O_LARGEFILE);
    close(old);
    result("eventfd2 bad flags", eventfd(0, 0x10));
}

static void timerfds(void)
{
    int t = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    result("timerfd_create", t >= 0 ? 0 : -1);
    struct itimerspec its = { { 0, 0 }, { 60, 0 } }, cur;
    result("settime 60 s one-shot", timerfd_settime(t, 0, &its, NULL));
    result("gettime", timerfd_gettime(t, &cur));
    printf("  left in (0, 60 s]: %d, interval %ld.%09ld\n",
           cur.it_value.tv_sec < 60 || (cur.it_value.tv_sec == 60 && cur.it_value.tv_nsec == 0),
           (long)cur.it_interval.tv_sec, cur.it_interval.tv_nsec);
    its.it_value = (struct timespec){ 0, 20 * 1000000 };
    result("settime 20 ms one-shot", timerfd_settime(t, 0, &its, NULL));
    uint64_t n = 0;
    result("read (blocks until it fires)", read(t, &n, 8));
    printf("  expirations %llu\n", (unsigned long long)n);
    result("gettime after", timerfd_gettime(t, &cur));
    printf("  disarmed %d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0);
    its = (struct itimerspec){ { 3, 500 }, { 100, 0 } };
    struct itimerspec prev;
    result("settime interval 3.000000500 s", timerfd_settime(t, 0, &its, &prev));
    printf("  previous disarmed %d\n", prev.it_value.tv_sec == 0 && prev.it_value.tv_nsec == 0);
    result("gettime", timerfd_gettime(t, &cur));
    printf("  interval %ld.%09ld, value under 100 s %d\n", (long)cur.it_interval.tv_sec, cur.it_interval.tv_nsec,
           cur.it_value.tv_sec < 100);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    its = (struct itimerspec){ { 0, 0 }, { now.tv_sec - 10, 0 } };
    int rt = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    result("absolute time in the past", timerfd_settime(rt, TFD_TIMER_ABSTIME, &its, NULL));
    result("read (fired at once)", read(rt, &n, 8));
    printf("  expirations %llu\n", (unsigned long long)n);
    result("read again (nonblocking)", read(rt, &n, 8));
    its.it_value.tv_nsec = 1000000000;
    result("settime tv_nsec = 1e9", timerfd_settime(rt, 0, &its, NULL));
    result("timerfd_create bad clock", timerfd_create(12345, 0));
    close(rt);
    close(t);
}

static void inotify(void)
{
    char dir[] = "/tmp/aarchx-fdevents-XXXXXX";
    if (!mkdtemp(dir))
        return;
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    result("inotify_init1", in >= 0 ? 0 : -1);
    int wd = inotify_add_watch(in, dir, IN_CREATE | IN_DELETE);
    result("add_watch", wd > 0 ? 0 : -1);
    char path[128];
    snprintf(path, sizeof path, "%s/new-file", dir);
    int f = open(path, O_CREAT | O_WRONLY, 0600);
    close(f);
    unlink(path);
    char buf[4096] __attribute__((aligned(8)));
    long n = read(in, buf, sizeof buf);
    for (char *p = buf; n > 0 && p < buf + n;) {
        struct inotify_event *ev = (struct inotify_event *)p;
        printf("  event wd ok %d mask %#x len>0 %d name %s\n", ev->wd == wd, ev->mask, ev->len > 0, ev->name);
        p += sizeof *ev + ev->len;
    }
    result("read with nothing new", read(in, buf, sizeof buf));
    result("rm_watch", inotify_rm_watch(in, wd));
    result("rm_watch again", inotify_rm_watch(in, wd));
    close(in);
    int old = syscall(SYS_inotify_init);
    result("inotify_init by number", old >= 0 ? 0 : -1);
    close(old);
    rmdir(dir);
}

static void moving_data(void)
{
    int m = memfd_create("aarchx-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    result("memfd_create", m >= 0 ? 0 : -1);
    result("write", write(m, "0123456789abcdef", 16));
    result("F_ADD_SEALS F_SEAL_GROW", fcntl(m, F_ADD_SEALS, F_SEAL_GROW));
    result("write past the end (sealed)", pwrite(m, "x", 1, 16));
    int p[2];
    if (pipe(p))
        return;
    off_t off = 4;
    result("sendfile 6 bytes from offset 4", sendfile(p[1], m, &off, 6));
    printf("  offset now %ld\n", (long)off);
    char buf[32] = { 0 };
    result("read pipe", read(p[0], buf, sizeof buf - 1));
    printf("  %s\n", buf);
    int q[2];
    if (pipe(q))
        return;
    result("write pipe", write(p[1], "spliced!", 8));
    result("tee 3 bytes", tee(p[0], q[1], 3, 0));
    result("splice to the memfd at 0", splice(p[0], NULL, m, &(loff_t){ 0 }, 8, 0));
    memset(buf, 0, sizeof buf);
    result("pread memfd", pread(m, buf, 16, 0));
    printf("  %s\n", buf);
    memset(buf, 0, sizeof buf);
    result("read teed pipe", read(q[0], buf, sizeof buf - 1));
    printf("  %s\n", buf);
    result("sendfile from a pipe", sendfile(q[1], p[0], NULL, 4));
    close(p[0]);
    close(p[1]);
    close(q[0]);
    close(q[1]);
    close(m);
}

int main(void)
{
    eventfds();
    timerfds();
    inotify();
    moving_data();
    return 0;
}
