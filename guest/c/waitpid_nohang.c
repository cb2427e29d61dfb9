// waitpid with WNOHANG: 0 while the child runs (it blocks on a pipe until
// the parent writes), then the child's status once it has exited.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    // Children send stderr to /dev/null (the translator may report there
    // when they exit); the parent's is put back before it returns.
    int saved_stderr = dup(2);
    int null = open("/dev/null", O_WRONLY);
    if (saved_stderr < 0 || null < 0 || dup2(null, 2) < 0) return 10;
    int go[2];
    if (pipe(go) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(go[1]);
        _exit(read(go[0], &c, 1) == 1 ? c - '0' : 99);
    }
    close(go[0]);
    int status = 0;
    printf("while blocked: %d\n", waitpid(pid, &status, WNOHANG));
    if (write(go[1], "4", 1) != 1) return 2;
    int polls = 0;
    pid_t r;
    struct timespec ms = {0, 1000000};
    while ((r = waitpid(pid, &status, WNOHANG)) == 0) {
        polls++;
        nanosleep(&ms, NULL);
    }
    printf("reaped: %d exited %d status %d polled %s\n", r == pid, WIFEXITED(status), WEXITSTATUS(status), polls < 10000 ? "ok" : "too long");
    printf("again: %d\n", waitpid(pid, &status, WNOHANG));
    dup2(saved_stderr, 2);
    return 0;
}
