/* Memory written earlier in a block that then faults: the SIGSEGV
 * handler sees the write done once. Each block read-modify-writes a
 * counter (add to memory, a load/add/store sequence, xadd, a push of a
 * value loaded from memory) and then faults on a load or a store in the
 * same straight-line code; the handler resumes after the faulting
 * instruction (each is followed by a label) with REG_RIP. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

extern char add_end[], seq_end[], xadd_end[], push_end[];
static char *resume;
static int faults;

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    (void)sig;
    (void)si;
    ucontext_t *uc = ctx;
    faults++;
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)resume;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    volatile uint32_t counter = 0;
    volatile uint64_t sum = 5, slot = 0;
    for (int i = 0; i < 10; i++) {
        resume = add_end;
        __asm__ volatile("addl $1, (%0)\n\t"
                         "movl (%1), %%eax\n\t"
                         ".globl add_end\nadd_end:\n\t"
                         :
                         : "r"(&counter), "r"(0x40L)
                         : "rax", "memory", "cc");
        resume = seq_end;
        __asm__ volatile("movq (%0), %%rax\n\t"
                         "leaq 3(%%rax,%%rax), %%rax\n\t"
                         "movq %%rax, (%0)\n\t"
                         "movq %%rax, (%1)\n\t"
                         ".globl seq_end\nseq_end:\n\t"
                         :
                         : "r"(&sum), "r"(0x48L)
                         : "rax", "memory");
        resume = xadd_end;
        __asm__ volatile("movl $2, %%eax\n\t"
                         "lock xaddl %%eax, (%0)\n\t"
                         "movl (%1), %%eax\n\t"
                         ".globl xadd_end\nxadd_end:\n\t"
                         :
                         : "r"(&counter), "r"(0x50L)
                         : "rax", "memory", "cc");
        resume = push_end;
        __asm__ volatile("pushq (%0)\n\t"
                         "addq $1, (%%rsp)\n\t"
                         "popq (%0)\n\t"
                         "movq (%1), %%rax\n\t"
                         ".globl push_end\npush_end:\n\t"
                         :
                         : "r"(&slot), "r"(0x58L)
                         : "rax", "memory", "cc");
    }
    printf("faults %d, counter %u, sum %llu, slot %llu\n", faults, (unsigned)counter, (unsigned long long)sum,
           (unsigned long long)slot);
    return 0;
}
