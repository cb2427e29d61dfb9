/* sockets: AF_UNIX socket pairs (stream and datagram) passing a descriptor
 * with SCM_RIGHTS, an AF_UNIX listener on a path in a fresh temporary
 * directory, TCP on 127.0.0.1 (port 0, found with getsockname), socket
 * options set and read back, sendmmsg/recvmmsg, shutdown. One process, no
 * threads: connections to a listener complete in its backlog. Prints no
 * ports, pids or addresses, only results and relations. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>

static const char *err(int e)
{
    switch (e) {
    case EAGAIN: return "EAGAIN";
    case EINVAL: return "EINVAL";
    case ENOTSOCK: return "ENOTSOCK";
    case EBADF: return "EBADF";
    case ECONNREFUSED: return "ECONNREFUSED";
    case ENOENT: return "ENOENT";
    case EADDRINUSE: return "EADDRINUSE";
    case ENOPROTOOPT: return "ENOPROTOOPT";
    case EPIPE: return "EPIPE";
    default: return "other";
    }
}

static void check(const char *what, long r)
{
    if (r < 0)
        printf("%-40s -1 %s\n", what, err(errno));
    else
        printf("%-40s %ld\n", what, r);
}

/* Sends `fd` and a byte over `sock` with SCM_RIGHTS. */
static long send_fd(int sock, int fd, char byte)
{
    char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = { &byte, 1 };
    struct msghdr m = { 0 };
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(sock, &m, 0);
}

/* Receives a byte and a descriptor sent by send_fd; -1 if none came. */
static int recv_fd(int sock, char *byte)
{
    char ctl[CMSG_SPACE(sizeof(int)) + 64];
    struct iovec iov = { byte, 1 };
    struct msghdr m = { 0 };
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    long n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    printf("recvmsg: %ld bytes, flags %d, controllen %zu\n", n, m.msg_flags, (size_t)m.msg_controllen);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (n != 1 || !c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    printf("  cmsg len %zu, received fd cloexec %d\n", (size_t)c->cmsg_len, fcntl(fd, F_GETFD) & FD_CLOEXEC);
    return fd;
}

/* Passes a pipe's write end over `sock` to itself and writes through it. */
static void pass_pipe(const char *kind, int a, int b)
{
    int p[2];
    if (pipe(p))
        return;
    printf("%s: ", kind);
    check("send_fd", send_fd(a, p[1], 'x'));
    char byte = 0;
    int fd = recv_fd(b, &byte);
    printf("  byte %c, got fd %s\n", byte, fd >= 0 && fd != p[1] ? "new" : "none");
    if (fd >= 0) {
        check("  write through passed fd", write(fd, "via-fd", 6));
        char buf[16] = { 0 };
        check("  read pipe", read(p[0], buf, sizeof buf));
        printf("  pipe says %s\n", buf);
        close(fd);
    }
    close(p[0]);
    close(p[1]);
}

static void int_option(const char *what, int s, int level, int name)
{
    int v = -1;
    socklen_t len = sizeof v;
    long r = getsockopt(s, level, name, &v, &len);
    if (r < 0)
        printf("%-40s -1 %s\n", what, err(errno));
    else
        printf("%-40s %d (len %u)\n", what, v, (unsigned)len);
}

static void socket_pairs(void)
{
    int sv[2];
    check("socketpair stream", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    pass_pipe("stream", sv[0], sv[1]);
    check("send", send(sv[1], "hello", 5, 0));
    char buf[64] = { 0 };
    check("recv MSG_PEEK", recv(sv[0], buf, 3, MSG_PEEK));
    check("recv", recv(sv[0], buf, sizeof buf - 1, 0));
    printf("  data %s\n", buf);
    check("recv MSG_DONTWAIT empty", recv(sv[0], buf, sizeof buf, MSG_DONTWAIT));
    struct ucred cred;
    socklen_t len = sizeof cred;
    check("getsockopt SO_PEERCRED", getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cred, &len));
    printf("  len %u, pid is ours %d, uid is ours %d\n", (unsigned)len, cred.pid == getpid(), cred.uid == getuid());
    check("shutdown SHUT_WR", shutdown(sv[1], SHUT_WR));
    check("recv after peer shutdown", recv(sv[0], buf, sizeof buf, 0));
    check("send on shut down side", send(sv[1], "x", 1, MSG_NOSIGNAL));
    close(sv[0]);
    close(sv[1]);

    check("socketpair dgram nonblock|cloexec", socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv));
    printf("  O_NONBLOCK %d FD_CLOEXEC %d\n", !!(fcntl(sv[0], F_GETFL) & O_NONBLOCK), fcntl(sv[1], F_GETFD) & FD_CLOEXEC);
    pass_pipe("dgram", sv[1], sv[0]);
    check("sendto", sendto(sv[0], "d1", 2, 0, NULL, 0));
    struct sockaddr_un from;
    memset(&from, 0, sizeof from);
    socklen_t flen = sizeof from;
    memset(buf, 0, sizeof buf);
    check("recvfrom", recvfrom(sv[1], buf, sizeof buf, 0, (struct sockaddr *)&from, &flen));
    printf("  data %s, from len %u family %d\n", buf, (unsigned)flen, from.sun_family);
    check("recvfrom empty (nonblocking)", recvfrom(sv[1], buf, sizeof buf, 0, NULL, NULL));

    struct mmsghdr msgs[3];
    struct iovec iov[3];
    char out[3][8] = { "one", "two", "three" }, in[3][8];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < 3; i++) {
        iov[i].iov_base = out[i];
        iov[i].iov_len = strlen(out[i]);
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    check("sendmmsg", sendmmsg(sv[0], msgs, 3, 0));
    memset(msgs, 0, sizeof msgs);
    memset(in, 0, sizeof in);
    for (int i = 0; i < 3; i++) {
        iov[i].iov_base = in[i];
        iov[i].iov_len = sizeof in[i] - 1;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    struct timespec t = { 1, 0 };
    check("recvmmsg", recvmmsg(sv[1], msgs, 3, 0, &t));
    for (int i = 0; i < 3; i++)
        printf("  msg %d: len %u %s\n", i, msgs[i].msg_len, in[i]);
    int_option("SO_TYPE (dgram)", sv[0], SOL_SOCKET, SO_TYPE);
    close(sv[0]);
    close(sv[1]);
}

static void unix_listener(void)
{
    char dir[] = "/tmp/aarchx-sockets-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return;
    }
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "%s/sock", dir);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    int c0 = socket(AF_UNIX, SOCK_STREAM, 0);
    check("connect before bind", connect(c0, (struct sockaddr *)&a, sizeof a));
    close(c0);
    check("bind unix path", bind(l, (struct sockaddr *)&a, sizeof a));
    int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
    check("bind the same path again", bind(l2, (struct sockaddr *)&a, sizeof a));
    close(l2);
    check("listen", listen(l, 4));
    int_option("SO_ACCEPTCONN", l, SOL_SOCKET, SO_ACCEPTCONN);
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    check("connect", connect(c, (struct sockaddr *)&a, sizeof a));
    struct sockaddr_un peer;
    socklen_t plen = sizeof peer;
    int s = accept4(l, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
    check("accept4 SOCK_CLOEXEC", s >= 0 ? 0 : -1);
    printf("  peer addr len %u, FD_CLOEXEC %d\n", (unsigned)plen, fcntl(s, F_GETFD) & FD_CLOEXEC);
    struct sockaddr_un name;
    socklen_t nlen = sizeof name;
    check("getpeername (client)", getpeername(c, (struct sockaddr *)&name, &nlen));
    printf("  is the path %d\n", strcmp(name.sun_path, a.sun_path) == 0);
    nlen = sizeof name;
    check("getsockname (accepted)", getsockname(s, (struct sockaddr *)&name, &nlen));
    printf("  is the path %d\n", strcmp(name.sun_path, a.sun_path) == 0);
    check("write", write(c, "over unix", 9));
    char buf[32] = { 0 };
    check("read", read(s, buf, sizeof buf));
    printf("  data %s\n", buf);
    check("accept nonblocking, none waiting", (fcntl(l, F_SETFL, O_NONBLOCK), accept(l, NULL, NULL)));
    close(s);
    close(c);
    close(l);
    unlink(a.sun_path);
    rmdir(dir);
}

static void tcp(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    check("setsockopt SO_REUSEADDR", setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
    int_option("SO_REUSEADDR", l, SOL_SOCKET, SO_REUSEADDR);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    check("bind 127.0.0.1:0", bind(l, (struct sockaddr *)&a, sizeof a));
    socklen_t alen = sizeof a;
    check("getsockname", getsockname(l, (struct sockaddr *)&a, &alen));
    printf("  len %u, family %d, port assigned %d, addr %s\n", (unsigned)alen, a.sin_family, a.sin_port != 0,
           inet_ntoa(a.sin_addr));
    check("listen", listen(l, 1));
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    check("setsockopt TCP_NODELAY", setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one));
    int_option("TCP_NODELAY", c, IPPROTO_TCP, TCP_NODELAY);
    int size = 65536;
    check("setsockopt SO_RCVBUF 65536", setsockopt(c, SOL_SOCKET, SO_RCVBUF, &size, sizeof size));
    int_option("SO_RCVBUF (the kernel doubles it)", c, SOL_SOCKET, SO_RCVBUF);
    struct timeval tv = { 2, 500000 }, tv2 = { 0, 0 };
    check("setsockopt SO_RCVTIMEO", setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv));
    socklen_t tlen = sizeof tv2;
    check("getsockopt SO_RCVTIMEO", getsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv2, &tlen));
    printf("  %ld.%06ld len %u\n", (long)tv2.tv_sec, (long)tv2.tv_usec, (unsigned)tlen);
    struct linger lg = { 1, 7 }, lg2 = { 0, 0 };
    check("setsockopt SO_LINGER", setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg));
    socklen_t llen = sizeof lg2;
    check("getsockopt SO_LINGER", getsockopt(c, SOL_SOCKET, SO_LINGER, &lg2, &llen));
    printf("  onoff %d linger %d len %u\n", lg2.l_onoff, lg2.l_linger, (unsigned)llen);
    int_option("SO_TYPE", c, SOL_SOCKET, SO_TYPE);
    int_option("SO_DOMAIN", c, SOL_SOCKET, SO_DOMAIN);
    int_option("SO_PROTOCOL", c, SOL_SOCKET, SO_PROTOCOL);
    int_option("unknown option 9999", c, SOL_SOCKET, 9999);
    check("connect", connect(c, (struct sockaddr *)&a, sizeof a));
    int_option("SO_ERROR", c, SOL_SOCKET, SO_ERROR);
    struct sockaddr_in peer, mine;
    socklen_t plen = sizeof peer, mlen = sizeof mine;
    int s = accept(l, (struct sockaddr *)&peer, &plen);
    check("accept", s >= 0 ? 0 : -1);
    check("getsockname (client)", getsockname(c, (struct sockaddr *)&mine, &mlen));
    printf("  accepted peer is the client %d\n", plen == mlen && memcmp(&peer, &mine, plen) == 0);
    check("send", send(c, "tcp data", 8, 0));
    char buf[32] = { 0 };
    check("recv MSG_WAITALL", recv(s, buf, 8, MSG_WAITALL));
    printf("  data %s\n", buf);
    check("shutdown SHUT_RDWR", shutdown(c, SHUT_RDWR));
    check("recv at end", recv(s, buf, sizeof buf, 0));
    close(s);
    close(c);
    close(l);
    int bad = socket(AF_INET, SOCK_STREAM, 0);
    check("connect to the closed port", connect(bad, (struct sockaddr *)&a, sizeof a));
    close(bad);
    check("socket AF_INET SOCK_DGRAM|SOCK_NONBLOCK", (bad = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0)) >= 0 ? 0 : -1);
    printf("  O_NONBLOCK %d\n", !!(fcntl(bad, F_GETFL) & O_NONBLOCK));
    close(bad);
    int p[2];
    if (pipe(p) == 0) {
        socklen_t olen = sizeof one;
        check("getsockopt on a pipe", getsockopt(p[0], SOL_SOCKET, SO_TYPE, &one, &olen));
        close(p[0]);
        close(p[1]);
    }
}

int main(void)
{
    socket_pairs();
    unix_listener();
    tcp();
    return 0;
}
