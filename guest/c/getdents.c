/* getdents: the old x86-64 getdents system call (by number; glibc uses
 * getdents64) on a fresh temporary directory: struct linux_dirent with
 * d_type in each record's last byte, record lengths, several calls with a
 * small buffer, a buffer too small, and the same names as getdents64.
 * Names are printed sorted; inode numbers and offsets are not printed. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent {
    unsigned long d_ino;
    unsigned long d_off;
    unsigned short d_reclen;
    char d_name[];
};

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *names[64];
static int count;

/* Lists `dir` with getdents (old = 1) or getdents64 into a buffer of
 * `size` bytes, collecting "name type" strings. */
static void list(const char *dir, int old, size_t size)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    char *buf = malloc(size);
    int calls = 0, lengths_ok = 1;
    count = 0;
    for (;;) {
        long n = syscall(old ? SYS_getdents : SYS_getdents64, fd, buf, size);
        if (n < 0) {
            printf("  getdents%s: -1 %s\n", old ? "" : "64", errno == EINVAL ? "EINVAL" : "other");
            break;
        }
        if (n == 0)
            break;
        calls++;
        for (long at = 0; at < n;) {
            const char *name;
            unsigned reclen, type;
            if (old) {
                struct linux_dirent *d = (struct linux_dirent *)(buf + at);
                reclen = d->d_reclen;
                name = d->d_name;
                type = (unsigned char)buf[at + reclen - 1];
                lengths_ok &= reclen == ((offsetof(struct linux_dirent, d_name) + strlen(name) + 2 + 7) & ~7u);
            } else {
                struct dirent64 *d = (struct dirent64 *)(buf + at);
                reclen = d->d_reclen;
                name = d->d_name;
                type = d->d_type;
            }
            char *s = malloc(strlen(name) + 8);
            sprintf(s, "%s %s", name, type == DT_DIR ? "dir" : type == DT_REG ? "file" : type == DT_LNK ? "link" : type == DT_FIFO ? "fifo" : "other");
            if (count < 64)
                names[count++] = s;
            at += reclen;
        }
    }
    qsort(names, count, sizeof names[0], cmp);
    printf("getdents%s, %zu-byte buffer: %d names, %s calls, record lengths %s\n", old ? "" : "64", size, count,
           calls > 1 ? "several" : calls == 1 ? "one" : "no", lengths_ok ? "ok" : "WRONG");
    for (int i = 0; i < count; i++)
        printf("  %s\n", names[i]);
    free(buf);
    close(fd);
}

int main(void)
{
    char dir[] = "/tmp/aarchx-getdents-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const char *files[] = { "b", "a", "c.txt", "a-longer-name-of-28-chars-xx", "1234567" };
    char path[256];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        close(open(path, O_CREAT | O_WRONLY, 0600));
    }
    snprintf(path, sizeof path, "%s/subdir", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/link", dir);
    if (symlink("b", path))
        return 1;
    snprintf(path, sizeof path, "%s/fifo", dir);
    mkfifo(path, 0600);

    list(dir, 1, 4096);
    list(dir, 1, 48);
    list(dir, 0, 4096);
    list(dir, 1, 10);
    long r = syscall(SYS_getdents, 999, path, sizeof path);
    printf("getdents on a closed descriptor: %ld %s\n", r, errno == EBADF ? "EBADF" : "other");
    int fd = open("/dev/null", O_RDONLY);
    r = syscall(SYS_getdents, fd, path, sizeof path);
    printf("getdents on /dev/null: %ld %s\n", r, errno == ENOTDIR ? "ENOTDIR" : "other");
    close(fd);

    const char *rm[] = { "b", "a", "c.txt", "a-longer-name-of-28-chars-xx", "1234567", "link", "fifo" };
    for (size_t i = 0; i < sizeof rm / sizeof *rm; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, rm[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/subdir", dir);
    rmdir(path);
    rmdir(dir);
    return 0;
}
