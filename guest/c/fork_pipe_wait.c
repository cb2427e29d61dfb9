// fork + pipe + wait: children write lines into a pipe, the parent reads
// them all and reaps each child, reporting exit statuses and a child
// killed by a signal. Output is deterministic (no pids).
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    // Children send stderr to /dev/null (the translator may report there
    // when they exit); the parent's is put back before it returns.
    int saved_stderr = dup(2);
    int null = open("/dev/null", O_WRONLY);
    if (saved_stderr < 0 || null < 0 || dup2(null, 2) < 0) return 10;
    int fds[2];
    if (pipe(fds) != 0) return 1;
    pid_t pids[3];
    for (int i = 0; i < 3; i++) {
        pids[i] = fork();
        if (pids[i] < 0) return 2;
        if (pids[i] == 0) {
            close(fds[0]);
            char line[32];
            int n = snprintf(line, sizeof line, "child %d\n", i);
            if (write(fds[1], line, n) != n) _exit(100);
            _exit(i * 10 + 1);
        }
    }
    close(fds[1]);
    char buf[256];
    size_t got = 0;
    ssize_t n;
    while ((n = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0) got += n;
    buf[got] = 0;
    int lines[3] = {0, 0, 0};
    for (char *p = buf; (p = strstr(p, "child ")); p += 6) lines[p[6] - '0']++;
    printf("read %zu bytes, lines %d %d %d\n", got, lines[0], lines[1], lines[2]);
    for (int i = 0; i < 3; i++) {
        int status;
        struct rusage ru;
        pid_t w = wait4(pids[i], &status, 0, &ru);
        printf("child %d: reaped %s, exited %d status %d\n", i, w == pids[i] ? "yes" : "no", WIFEXITED(status), WEXITSTATUS(status));
    }
    pid_t killed = fork();
    if (killed == 0) {
        kill(getpid(), SIGTERM);
        _exit(99);
    }
    int status;
    waitpid(killed, &status, 0);
    printf("killed child: signaled %d signal %d\n", WIFSIGNALED(status), WTERMSIG(status));
    pid_t v = vfork();
    if (v == 0) _exit(5);
    waitpid(v, &status, 0);
    printf("vfork child: exited %d status %d\n", WIFEXITED(status), WEXITSTATUS(status));
    siginfo_t info;
    pid_t c = fork();
    if (c == 0) _exit(9);
    memset(&info, 0, sizeof info);
    int r = waitid(P_PID, c, &info, WEXITED);
    printf("waitid: %d code %d status %d pid ok %d\n", r, info.si_code == CLD_EXITED, info.si_status, info.si_pid == c);
    printf("no children left: %d\n", wait(&status) == -1);
    dup2(saved_stderr, 2);
    return 0;
}
