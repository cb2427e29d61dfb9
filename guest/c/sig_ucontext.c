/* A SIGSEGV handler reads the faulting context (si_addr, si_code, rip,
 * registers) and edits it: skips the faulting load by moving REG_RIP past
 * it and sets REG_RAX, which the interrupted code then sees. Also SIGILL
 * from ud2 and SIGTRAP from int3, resumed the same way. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

extern char load_insn[], load_end[], ud2_insn[], ud2_end[], int3_end[];

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    greg_t *g = uc->uc_mcontext.gregs;
    printf("SIGSEGV %d: si_signo %d si_code %d si_addr %#lx\n", sig, si->si_signo, si->si_code,
           (unsigned long)(uintptr_t)si->si_addr);
    printf("  rip at the load: %s, rdi %#llx, rbx %#llx\n", g[REG_RIP] == (greg_t)load_insn ? "yes" : "no",
           (unsigned long long)g[REG_RDI], (unsigned long long)g[REG_RBX]);
    printf("  rsp+8 aligned in handler: %s\n", ((uintptr_t)__builtin_frame_address(0) % 16) == 0 ? "yes" : "no");
    g[REG_RIP] = (greg_t)load_end;
    g[REG_RAX] = 42;
}

static void on_ill(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    printf("SIGILL %d: si_code %d, si_addr is the ud2: %s\n", sig, si->si_code,
           si->si_addr == (void *)ud2_insn ? "yes" : "no");
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)ud2_end;
    uc->uc_mcontext.gregs[REG_RCX] = 7;
}

static void on_trap(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    printf("SIGTRAP %d: si_code %#x, rip after the int3: %s\n", sig, si->si_code,
           uc->uc_mcontext.gregs[REG_RIP] == (greg_t)int3_end ? "yes" : "no");
}

static void install(int sig, void (*f)(int, siginfo_t *, void *)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = f;
    sa.sa_flags = SA_SIGINFO;
    sigaction(sig, &sa, NULL);
}

int main(void) {
    install(SIGSEGV, on_segv);
    install(SIGILL, on_ill);
    install(SIGTRAP, on_trap);
    long rax;
    __asm__ volatile("mov $0x1234, %%rdi\n\t"
                     "mov $0x5678, %%rbx\n\t"
                     "mov $0x10, %%rax\n\t"
                     ".globl load_insn\nload_insn:\n\t"
                     "movq (%%rax), %%rax\n\t"
                     ".globl load_end\nload_end:\n\t"
                     : "=a"(rax)
                     :
                     : "rdi", "rbx", "memory");
    printf("after the load: rax = %ld\n", rax);
    long rcx;
    __asm__ volatile("mov $1, %%rcx\n\t"
                     ".globl ud2_insn\nud2_insn:\n\t"
                     "ud2\n\t"
                     ".globl ud2_end\nud2_end:\n\t"
                     : "=c"(rcx)
                     :
                     : "memory");
    printf("after ud2: rcx = %ld\n", rcx);
    __asm__ volatile("int3\n\t.globl int3_end\nint3_end:\n\t" ::: "memory");
    printf("after int3\n");
    return 0;
}
