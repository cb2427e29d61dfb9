// Signals and processes in a threaded program: pthread_kill reaches the
// thread it names, a process-directed signal reaches the one thread that
// does not block it, sigwait on a helper thread takes a signal the others
// block, and fork from a threaded program followed by exec.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_t target;
static atomic_int handled_on_target, handled_elsewhere;
static atomic_int ready, stop;

static void on_usr1(int sig) {
    (void)sig;
    if (pthread_equal(pthread_self(), target))
        atomic_fetch_add(&handled_on_target, 1);
    else
        atomic_fetch_add(&handled_elsewhere, 1);
}

// Unblocks SIGUSR1 (the others block it) and waits for the signals.
static void *receiver(void *arg) {
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    atomic_store(&ready, 1);
    while (!atomic_load(&stop)) usleep(1000);
    return NULL;
}

static void *waiter(void *arg) {
    sigset_t *set = arg;
    int sig = 0;
    sigwait(set, &sig);
    return (void *)(long)sig;
}

int main(void) {
    signal(SIGUSR1, on_usr1);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    // Every thread created from here starts with SIGUSR1 blocked.
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    pthread_create(&target, NULL, receiver, NULL);
    while (!atomic_load(&ready)) usleep(1000);

    pthread_kill(target, SIGUSR1);
    while (atomic_load(&handled_on_target) < 1) usleep(1000);
    // Process-directed: only the receiver does not block it.
    kill(getpid(), SIGUSR1);
    while (atomic_load(&handled_on_target) < 2) usleep(1000);
    atomic_store(&stop, 1);
    pthread_join(target, NULL);
    printf("handled on the target %d, elsewhere %d\n", (int)handled_on_target, (int)handled_elsewhere);

    // sigwait on a helper thread; SIGUSR2 blocked everywhere.
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    pthread_t w;
    pthread_create(&w, NULL, waiter, &usr2);
    usleep(20000);
    kill(getpid(), SIGUSR2);
    void *got;
    pthread_join(w, &got);
    printf("sigwait got %s\n", (long)got == SIGUSR2 ? "SIGUSR2" : "something else");

    // fork and exec with another thread running.
    atomic_store(&stop, 0);
    atomic_store(&ready, 0);
    pthread_t busy;
    pthread_create(&busy, NULL, receiver, NULL);
    while (!atomic_load(&ready)) usleep(1000);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/echo", "echo", "the child of a threaded program runs echo", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    atomic_store(&stop, 1);
    pthread_join(busy, NULL);
    printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
