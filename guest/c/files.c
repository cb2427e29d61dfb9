/* files: open flags whose bits differ between x86-64 and arm64
 * (O_DIRECTORY, O_NOFOLLOW, O_DIRECT), and stat field values, in a fresh
 * temporary directory. Prints only what is the same on every run:
 * results, errno names and relations between fields, never inode numbers
 * or the current time. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static const char *err(int e)
{
    switch (e) {
    case 0: return "ok";
    case ENOTDIR: return "ENOTDIR";
    case ELOOP: return "ELOOP";
    case EISDIR: return "EISDIR";
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case EEXIST: return "EEXIST";
    default: return "other";
    }
}

/* open(path, flags), reporting ok or the errno's name, and closing. */
static void try_open(const char *what, const char *path, int flags)
{
    int fd = open(path, flags, 0600);
    printf("%-34s %s\n", what, fd >= 0 ? "ok" : err(errno));
    if (fd >= 0)
        close(fd);
}

int main(void)
{
    char dir[] = "/tmp/aarchx-files-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char file[256], link[256], sub[256];
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);

    int fd = open(file, O_CREAT | O_WRONLY | O_EXCL, 0640);
    if (fd < 0 || write(fd, "0123456789abcdef", 16) != 16) {
        perror("create");
        return 1;
    }
    close(fd);
    if (symlink("file", link) || mkdir(sub, 0750)) {
        perror("setup");
        return 1;
    }

    try_open("directory, O_DIRECTORY", dir, O_RDONLY | O_DIRECTORY);
    try_open("file, O_DIRECTORY", file, O_RDONLY | O_DIRECTORY);
    try_open("symlink, O_NOFOLLOW", link, O_RDONLY | O_NOFOLLOW);
    try_open("symlink, O_NOFOLLOW|O_PATH", link, O_PATH | O_NOFOLLOW);
    try_open("symlink, followed", link, O_RDONLY);
    try_open("file, O_CREAT|O_EXCL", file, O_CREAT | O_EXCL | O_WRONLY);
    try_open("directory, O_WRONLY", sub, O_WRONLY);
    try_open("missing, O_RDONLY", "/tmp/aarchx-files-missing/x", O_RDONLY);

    /* fcntl(F_GETFL) reports the x86-64 bits of the flags it was given. */
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    int fl = fcntl(fd, F_GETFL);
    printf("F_GETFL has O_DIRECTORY %d O_NOFOLLOW %d\n", !!(fl & O_DIRECTORY), !!(fl & O_NOFOLLOW));
    close(fd);

    /* A fixed modification time, then the stat fields. */
    struct timespec times[2] = { { 1000000000, 123456789 }, { 1234567890, 987654321 } };
    if (utimensat(AT_FDCWD, file, times, 0)) {
        perror("utimensat");
        return 1;
    }
    struct stat st, lst, fst;
    if (stat(file, &st) || lstat(link, &lst) || (fd = open(file, O_RDONLY)) < 0 || fstat(fd, &fst)) {
        perror("stat");
        return 1;
    }
    close(fd);
    printf("file: regular %d mode %o size %lld nlink %lu uid-is-mine %d gid-is-mine %d\n", S_ISREG(st.st_mode),
           st.st_mode & 07777, (long long)st.st_size, (unsigned long)st.st_nlink, st.st_uid == getuid(),
           st.st_gid == getgid());
    printf("file: atime %lld.%09ld mtime %lld.%09ld blocks>0 %d blksize>0 %d\n", (long long)st.st_atim.tv_sec,
           st.st_atim.tv_nsec, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_blocks > 0, st.st_blksize > 0);
    printf("fstat is stat: %d\n", fst.st_ino == st.st_ino && fst.st_dev == st.st_dev && fst.st_size == st.st_size &&
                                      fst.st_mtim.tv_nsec == st.st_mtim.tv_nsec);
    printf("link: symlink %d size %lld\n", S_ISLNK(lst.st_mode), (long long)lst.st_size);
    struct stat dst;
    if (stat(sub, &dst)) {
        perror("stat sub");
        return 1;
    }
    printf("sub: directory %d mode %o nlink %lu\n", S_ISDIR(dst.st_mode), dst.st_mode & 07777,
           (unsigned long)dst.st_nlink);
    char target[64];
    ssize_t n = readlink(link, target, sizeof target);
    printf("readlink: %.*s\n", (int)(n > 0 ? n : 0), target);

    unlink(link);
    unlink(file);
    rmdir(sub);
    rmdir(dir);
    return 0;
}
