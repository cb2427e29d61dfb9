/* procctl: process controls that are the same on x86-64 and arm64: prctl
 * (the thread name round trip, also through /proc/self/comm, the parent
 * death signal, dumpable, no_new_privs, timer slack, an unknown option;
 * not those qemu-user, which runs the arm64 build in the tests, lacks),
 * personality, scheduler priorities and affinity, getcpu, nice values,
 * capget, mlock, sync. Prints values that do not change between runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void result(const char *what, long r)
{
    if (r < 0)
        printf("%-44s -1 %s\n", what, errno == EINVAL ? "EINVAL" : errno == EPERM ? "EPERM" : errno == EFAULT ? "EFAULT" : errno == ESRCH ? "ESRCH" : "other");
    else
        printf("%-44s %ld\n", what, r);
}

int main(void)
{
    char name[32] = { 0 };
    result("PR_SET_NAME", prctl(PR_SET_NAME, "aarchx-name-is-long", 0, 0, 0));
    result("PR_GET_NAME", prctl(PR_GET_NAME, name, 0, 0, 0));
    printf("  name %s (%zu bytes)\n", name, strlen(name));
    char comm[32] = { 0 };
    int fd = open("/proc/self/comm", O_RDONLY);
    if (fd >= 0 && read(fd, comm, sizeof comm - 1) > 0)
        printf("  /proc/self/comm %s", comm);
    close(fd);
    int sig = -1;
    result("PR_SET_PDEATHSIG SIGUSR2", prctl(PR_SET_PDEATHSIG, 12, 0, 0, 0));
    result("PR_GET_PDEATHSIG", prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0));
    printf("  signal %d\n", sig);
    result("PR_SET_PDEATHSIG 0", prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0));
    result("PR_SET_PDEATHSIG 99", prctl(PR_SET_PDEATHSIG, 99, 0, 0, 0));
    result("PR_GET_DUMPABLE", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
    result("PR_SET_DUMPABLE 0", prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
    result("PR_GET_DUMPABLE", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
    result("PR_SET_DUMPABLE 1", prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
    result("PR_SET_TIMERSLACK 12345", prctl(PR_SET_TIMERSLACK, 12345, 0, 0, 0));
    result("PR_GET_TIMERSLACK", prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
    result("PR_GET_NO_NEW_PRIVS", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    result("PR_SET_NO_NEW_PRIVS", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
    result("PR_GET_NO_NEW_PRIVS", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    result("PR_CAPBSET_READ CAP_CHOWN", prctl(PR_CAPBSET_READ, 0, 0, 0, 0) >= 0 ? 0 : -1);
    result("prctl option 12345", prctl(12345, 0, 0, 0, 0));

    result("personality query", personality(0xffffffff));
    result("personality PER_LINUX", personality(PER_LINUX));

    result("sched_get_priority_max SCHED_FIFO", sched_get_priority_max(SCHED_FIFO));
    result("sched_get_priority_min SCHED_FIFO", sched_get_priority_min(SCHED_FIFO));
    result("sched_get_priority_max SCHED_OTHER", sched_get_priority_max(SCHED_OTHER));
    result("sched_get_priority_max 99", sched_get_priority_max(99));
    result("sched_getscheduler", sched_getscheduler(0));
    struct sched_param sp = { 5 };
    result("sched_getparam", sched_getparam(0, &sp));
    printf("  priority %d\n", sp.sched_priority);
    cpu_set_t set;
    CPU_ZERO(&set);
    result("sched_getaffinity", sched_getaffinity(0, sizeof set, &set));
    int first = -1;
    for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
        if (CPU_ISSET(i, &set))
            first = i;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    result("sched_setaffinity to its first CPU", sched_setaffinity(0, sizeof one, &one));
    unsigned cpu = 12345, node = 12345;
    result("getcpu", syscall(SYS_getcpu, &cpu, &node, NULL));
    printf("  on that CPU %d, node set %d\n", (int)cpu == first, node != 12345);
    result("sched_setaffinity back", sched_setaffinity(0, sizeof set, &set));
    CPU_ZERO(&one);
    result("sched_setaffinity to no CPU", sched_setaffinity(0, sizeof one, &one));

    errno = 0;
    int nice0 = getpriority(PRIO_PROCESS, 0);
    printf("getpriority errno %d\n", errno);
    result("setpriority +1", setpriority(PRIO_PROCESS, 0, nice0 + 1));
    printf("  nice went up by %d\n", getpriority(PRIO_PROCESS, 0) - nice0);
    result("getpriority raw (20 - nice) consistent", syscall(SYS_getpriority, PRIO_PROCESS, 0) == 20 - (nice0 + 1) ? 0 : -1);
    result("getpriority bad which", getpriority(99, 0));

    struct __user_cap_header_struct hdr = { 0, 0 };
    result("capget version probe", syscall(SYS_capget, &hdr, NULL));
    printf("  version %#x\n", hdr.version);
    struct __user_cap_data_struct data[2];
    hdr.pid = 0;
    result("capget", syscall(SYS_capget, &hdr, data));

    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    long lr = mlock(page, 4096);
    result("mlock a page", lr);
    if (lr == 0)
        result("munlock", munlock(page, 4096));
    result("mlock unaligned length 1", mlock(page, 1) == lr ? 0 : -1);
    munlock(page, 4096);
    unsigned char vec = 0xff;
    result("mincore", mincore(page, 4096, &vec));
    printf("  resident bit %d\n", vec & 1);
    ((char *)page)[0] = 1;
    result("mincore after a write", mincore(page, 4096, &vec));
    printf("  resident bit %d\n", vec & 1);
    result("msync MS_SYNC", msync(page, 4096, MS_SYNC));
    result("msync bad flags", msync(page, 4096, MS_SYNC | MS_ASYNC));
    munmap(page, 4096);
    sync();
    result("syncfs on stdout's filesystem", syncfs(1) == 0 || errno == EBADF ? 0 : -1);
    return 0;
}
