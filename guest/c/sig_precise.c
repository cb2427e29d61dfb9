/* A faulting instruction leaves the registers as they were before it,
 * even one that would also change rsp, rsi or rdi: pop to a bad address,
 * push from one, a call through one, movsq with a bad destination. The
 * SIGSEGV handler reports what it sees and resumes after the instruction
 * (each is followed by a label) with REG_RIP. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

extern char pop_end[], push_end[], call_end[], movs_end[];
static char *resume;
static greg_t seen_rsp, seen_rsi, seen_rdi;
static uintptr_t seen_addr;

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    (void)sig;
    ucontext_t *uc = ctx;
    greg_t *g = uc->uc_mcontext.gregs;
    seen_rsp = g[REG_RSP];
    seen_rsi = g[REG_RSI];
    seen_rdi = g[REG_RDI];
    seen_addr = (uintptr_t)si->si_addr;
    g[REG_RIP] = (greg_t)resume;
}

static void report(const char *what, long rsp_moved, long rsi_moved, long rdi_moved) {
    printf("%s: si_addr %#lx, rsp moved %ld, rsi moved %ld, rdi moved %ld\n", what, (unsigned long)seen_addr, rsp_moved,
           rsi_moved, rdi_moved);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    uint64_t rsp;
    resume = pop_end;
    __asm__ volatile("push $7\n\t"
                     "mov %%rsp, %0\n\t"
                     "pop (%1)\n\t"
                     ".globl pop_end\npop_end:\n\t"
                     "add $8, %%rsp\n\t"
                     : "=&r"(rsp)
                     : "r"(0x30L)
                     : "memory");
    report("pop to a bad address", (long)(seen_rsp - (greg_t)rsp), 0, 0);
    resume = push_end;
    __asm__ volatile("mov %%rsp, %0\n\t"
                     "push (%1)\n\t"
                     ".globl push_end\npush_end:\n\t"
                     : "=&r"(rsp)
                     : "r"(0x38L)
                     : "memory");
    report("push from a bad address", (long)(seen_rsp - (greg_t)rsp), 0, 0);
    resume = call_end;
    __asm__ volatile("mov %%rsp, %0\n\t"
                     "call *(%1)\n\t"
                     ".globl call_end\ncall_end:\n\t"
                     : "=&r"(rsp)
                     : "r"(0x48L)
                     : "memory");
    report("call through a bad address", (long)(seen_rsp - (greg_t)rsp), 0, 0);
    uint64_t src[2] = {1, 2};
    uint64_t *s = src, *d = (uint64_t *)0x58;
    resume = movs_end;
    __asm__ volatile("cld\n\t"
                     "movsq\n\t"
                     ".globl movs_end\nmovs_end:\n\t"
                     : "+S"(s), "+D"(d)
                     :
                     : "memory");
    report("movsq to a bad address", 0, (long)(seen_rsi - (greg_t)src), (long)(seen_rdi - 0x58));
    return 0;
}
