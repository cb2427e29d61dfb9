// fork + execve: of /bin/echo (a host x86-64 program, re-entering the
// translator), of this program itself through /proc/self/exe with its own
// argv[0], of a #! script, and of a missing file; close-on-exec
// descriptors must be closed in the new program. Children send stderr to
// /dev/null (the translator may report there). Deterministic output.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int run(char *const argv[], const char *path) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        execv(path, argv);
        printf("exec %s failed: %s\n", path, errno == ENOENT ? "ENOENT" : "other");
        fflush(stdout);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "child") == 0) {
        printf("child: argv[0]=%s argc=%d", argv[0], argc);
        for (int i = 2; i < argc; i++) printf(" [%s]", argv[i]);
        printf("\n");
        return 7;
    }
    if (argc == 3 && strcmp(argv[1], "checkfd") == 0) {
        int fd = atoi(argv[2]);
        printf("checkfd: cloexec fd %s\n", fcntl(fd, F_GETFD) == -1 && errno == EBADF ? "closed" : "open");
        return 0;
    }
    printf("echo: %d\n", run((char *[]){"echo", "hello", "from echo", NULL}, "/bin/echo"));
    printf("self: %d\n", run((char *[]){"selfname", "child", "a b", "", NULL}, "/proc/self/exe"));
    printf("missing: %d\n", run((char *[]){"nothing", NULL}, "/nonexistent/aarchx-program"));
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return 1;
    char fd[16];
    snprintf(fd, sizeof fd, "%d", fds[1]);
    printf("checkfd: %d\n", run((char *[]){"selfname", "checkfd", fd, NULL}, "/proc/self/exe"));
    char script[] = "/tmp/aarchx-fork-exec-XXXXXX";
    int sfd = mkstemp(script);
    if (sfd < 0) return 2;
    const char *text = "#!/bin/sh -e\necho script: \"$1\" $#\nexit 3\n";
    if (write(sfd, text, strlen(text)) != (ssize_t)strlen(text)) return 3;
    fchmod(sfd, 0700);
    close(sfd);
    int status = run((char *[]){"ignored", "arg1", NULL}, script);
    unlink(script);
    printf("script: %d\n", status);
    return 0;
}
