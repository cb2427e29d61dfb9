// MMX: the instructions older code and libraries use (packed arithmetic,
// saturation, packs and unpacks, shifts, compares, shuffles, movemask,
// maskmovq, movntq, the MMX/SSE conversions, movq2dq/movdq2q) over a
// table of values, a checksum per instruction printed; the x87 state an MMX instruction leaves (TOP, tags, the
// registers' exponent words, seen through fnstenv and fxsave), x87
// arithmetic after emms, and an mm register across a signal handler
// (which sees it in its frame's FP state), and an MMX load that faults,
// which leaves the x87 state as it was.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

// gcc implements the __m64 intrinsics with SSE on x86-64: the MMX
// instructions are written out.

/// `insn mm1, mm0` on mm0 = a, mm1 = b: mm0 after.
#define MMX_RR(name, insn)                                                                                          \
    static uint64_t name(uint64_t a, uint64_t b) {                                                                \
        uint64_t r;                                                                                               \
        __asm__("movq %1, %%mm0\n\tmovq %2, %%mm1\n\t" insn " %%mm1, %%mm0\n\tmovq %%mm0, %0"                     \
                : "=r"(r)                                                                                         \
                : "r"(a), "r"(b)                                                                                  \
                : "mm0", "mm1");                                                                                  \
        return r;                                                                                                 \
    }
/// `insn m64, mm0` on mm0 = a, m64 = b: mm0 after.
#define MMX_RM(name, insn)                                                                                          \
    static uint64_t name(uint64_t a, uint64_t b) {                                                                \
        uint64_t r;                                                                                               \
        __asm__("movq %1, %%mm0\n\t" insn " %2, %%mm0\n\tmovq %%mm0, %0" : "=r"(r) : "r"(a), "m"(b) : "mm0");     \
        return r;                                                                                                 \
    }
/// An instruction with mm0 = a, mm1 = b, eax = b: mm0 after (or eax).
#define MMX_ANY(name, body, out)                                                                                    \
    static uint64_t name(uint64_t a, uint64_t b) {                                                                \
        uint64_t r;                                                                                               \
        __asm__("movq %1, %%mm0\n\tmovq %2, %%mm1\n\tmov %2, %%rax\n\t" body "\n\t" out                           \
                : "=r"(r)                                                                                         \
                : "r"(a), "r"(b)                                                                                  \
                : "mm0", "mm1", "rax");                                                                           \
        return r;                                                                                                 \
    }

MMX_RR(paddb, "paddb")
MMX_RR(paddw, "paddw")
MMX_RR(paddd, "paddd")
MMX_RR(paddq, "paddq")
MMX_RR(psubb, "psubb")
MMX_RM(psubw, "psubw")
MMX_RR(psubd, "psubd")
MMX_RR(psubq, "psubq")
MMX_RR(paddsb, "paddsb")
MMX_RR(paddsw, "paddsw")
MMX_RR(paddusb, "paddusb")
MMX_RM(paddusw, "paddusw")
MMX_RR(psubsb, "psubsb")
MMX_RR(psubsw, "psubsw")
MMX_RR(psubusb, "psubusb")
MMX_RR(psubusw, "psubusw")
MMX_RR(pmullw, "pmullw")
MMX_RR(pmulhw, "pmulhw")
MMX_RR(pmulhuw, "pmulhuw")
MMX_RM(pmuludq, "pmuludq")
MMX_RR(pmaddwd, "pmaddwd")
MMX_RR(pand, "pand")
MMX_RR(pandn, "pandn")
MMX_RM(por, "por")
MMX_RR(pxor, "pxor")
MMX_RR(pcmpeqb, "pcmpeqb")
MMX_RR(pcmpeqw, "pcmpeqw")
MMX_RR(pcmpeqd, "pcmpeqd")
MMX_RR(pcmpgtb, "pcmpgtb")
MMX_RR(pcmpgtw, "pcmpgtw")
MMX_RM(pcmpgtd, "pcmpgtd")
MMX_RR(packsswb, "packsswb")
MMX_RR(packssdw, "packssdw")
MMX_RM(packuswb, "packuswb")
MMX_RR(punpcklbw, "punpcklbw")
MMX_RR(punpcklwd, "punpcklwd")
MMX_RR(punpckldq, "punpckldq")
MMX_RR(punpckhbw, "punpckhbw")
MMX_RM(punpckhwd, "punpckhwd")
MMX_RR(punpckhdq, "punpckhdq")
MMX_RR(psllw, "psllw")
MMX_RR(pslld, "pslld")
MMX_RR(psllq, "psllq")
MMX_RR(psrlw, "psrlw")
MMX_RM(psrld, "psrld")
MMX_RR(psrlq, "psrlq")
MMX_RR(psraw, "psraw")
MMX_RR(psrad, "psrad")
MMX_RR(pavgb, "pavgb")
MMX_RR(pavgw, "pavgw")
MMX_RR(pminub, "pminub")
MMX_RR(pmaxub, "pmaxub")
MMX_RM(pminsw, "pminsw")
MMX_RR(pmaxsw, "pmaxsw")
MMX_RR(psadbw, "psadbw")
MMX_ANY(psllw_imm, "psllw $3, %%mm0", "movq %%mm0, %0")
MMX_ANY(psrad_imm, "psrad $9, %%mm0", "movq %%mm0, %0")
MMX_ANY(psrlq_imm, "psrlq $33, %%mm0", "movq %%mm0, %0")
MMX_ANY(pshufw, "pshufw $0x1b, %%mm1, %%mm0", "movq %%mm0, %0")
MMX_ANY(pextrw, "pextrw $3, %%mm1, %%eax", "mov %%rax, %0")
MMX_ANY(pinsrw, "pinsrw $1, %%eax, %%mm0", "movq %%mm0, %0")
MMX_ANY(pmovmskb, "pmovmskb %%mm0, %%eax", "mov %%rax, %0")
MMX_ANY(movd_in, "movd %%eax, %%mm0", "movq %%mm0, %0")
MMX_ANY(movd_out, "movd %%mm1, %%eax", "mov %%rax, %0")
MMX_ANY(movq_mm, "movq %%mm1, %%mm0", "movq %%mm0, %0")

static uint64_t (*const OPS[])(uint64_t, uint64_t) = {
    paddb,     paddw,     paddd,     paddq,     psubb,     psubw,    psubd,     psubq,     paddsb,    paddsw,
    paddusb,   paddusw,   psubsb,    psubsw,    psubusb,   psubusw,  pmullw,    pmulhw,    pmulhuw,   pmuludq,
    pmaddwd,   pand,      pandn,     por,       pxor,      pcmpeqb,  pcmpeqw,   pcmpeqd,   pcmpgtb,   pcmpgtw,
    pcmpgtd,   packsswb,  packssdw,  packuswb,  punpcklbw, punpcklwd, punpckldq, punpckhbw, punpckhwd, punpckhdq,
    psllw,     pslld,     psllq,     psrlw,     psrld,     psrlq,    psraw,     psrad,     pavgb,     pavgw,
    pminub,    pmaxub,    pminsw,    pmaxsw,    psadbw,    psllw_imm, psrad_imm, psrlq_imm, pshufw,   pextrw,
    pinsrw,    pmovmskb,  movd_in,   movd_out,  movq_mm,
};

static const uint64_t VALUES[] = {
    0x0000000000000000, 0xffffffffffffffff, 0x7fff80007fff8000, 0x0123456789abcdef, 0x8000000180000001,
    0x00ff00ff7f7f8080, 0xfedcba9876543210, 0x5555aaaa3333cccc, 0x0000000000000007, 0x0000000000000021,
};
#define N (sizeof VALUES / sizeof VALUES[0])

static void arithmetic(void) {
    for (unsigned k = 0; k < sizeof OPS / sizeof OPS[0]; k++) {
        uint64_t sum = 0;
        for (unsigned i = 0; i < N; i++) {
            for (unsigned j = 0; j < N; j++) {
                sum = sum * 31 + OPS[k](VALUES[i], VALUES[j]);
            }
        }
        __asm__ volatile("emms");
        printf("op %2u: %016llx\n", k, (unsigned long long)sum);
    }
}

static void moves_and_conversions(void) {
    unsigned char out[8];
    memset(out, 0x11, sizeof out);
    uint64_t data = 0x8877665544332211, mask = 0x80007f80ff000180;
    __asm__ volatile("movq %1, %%mm1\n\tmovq %2, %%mm2\n\tmaskmovq %%mm2, %%mm1"
                     : "+m"(out)
                     : "r"(data), "r"(mask), "D"(out)
                     : "mm1", "mm2", "memory");
    float f[4] = {-1.75f, 2.5f, -3.5f, 4.5f};
    double pd[2] = {1e10, -2.5};
    int32_t ints[2] = {5, -7};
    uint64_t cvt, cvtt, cvtpd;
    float back[4] = {9, 9, 9, 9};
    double dback[2];
    __asm__ volatile("movups %3, %%xmm0\n\t"
                     "cvtps2pi %%xmm0, %%mm0\n\tmovq %%mm0, %0\n\t"
                     "cvttps2pi %%xmm0, %%mm0\n\tmovq %%mm0, %1\n\t"
                     "movupd %4, %%xmm1\n\t"
                     "cvtpd2pi %%xmm1, %%mm0\n\tmovq %%mm0, %2\n\t"
                     : "=m"(cvt), "=m"(cvtt), "=m"(cvtpd)
                     : "m"(f), "m"(pd)
                     : "mm0", "xmm0", "xmm1");
    __asm__ volatile("movups %0, %%xmm2\n\tmovq %2, %%mm3\n\tcvtpi2ps %%mm3, %%xmm2\n\tmovups %%xmm2, %0\n\t"
                     "cvtpi2pd %%mm3, %%xmm3\n\tmovupd %%xmm3, %1"
                     : "+m"(back), "=m"(dback)
                     : "m"(ints)
                     : "mm3", "xmm2", "xmm3");
    uint64_t q2dq, dq2q;
    __asm__ volatile("movq %2, %%mm4\n\tmovq2dq %%mm4, %%xmm4\n\tmovq %%xmm4, %0\n\t"
                     "pcmpeqd %%xmm5, %%xmm5\n\tpsrlq $4, %%xmm5\n\tmovdq2q %%xmm5, %%mm5\n\tmovq %%mm5, %1\n\t"
                     "movq %%mm5, %%mm6\n\tmovntq %%mm6, %1\n\tsfence"
                     : "=r"(q2dq), "=m"(dq2q)
                     : "r"(0x0102030405060708ULL)
                     : "mm4", "mm5", "mm6", "xmm4", "xmm5");
    __asm__ volatile("emms");
    printf("maskmovq %02x %02x %02x %02x %02x %02x %02x %02x\n", out[0], out[1], out[2], out[3], out[4], out[5],
           out[6], out[7]);
    printf("cvtps2pi %016llx cvttps2pi %016llx cvtpd2pi %016llx\n", (unsigned long long)cvt,
           (unsigned long long)cvtt, (unsigned long long)cvtpd);
    printf("cvtpi2ps %g %g %g %g cvtpi2pd %g %g\n", back[0], back[1], back[2], back[3], dback[0], dback[1]);
    printf("movq2dq %016llx movdq2q %016llx\n", (unsigned long long)q2dq, (unsigned long long)dq2q);
}

/// The x87 environment (fnstenv's 28 bytes) and R0's exponent word from
/// fxsave, after an MMX write of mm0 and before emms; then x87
/// arithmetic after emms.
static void x87_state(void) {
    uint16_t env[14];
    unsigned char fx[512] __attribute__((aligned(16)));
    volatile long double one = 1.0L;
    long double before = one / 3.0L;
    __asm__ volatile("fldpi\n\tfldpi\n\tfldpi\n\t"
                     "movq %2, %%mm0\n\t"
                     "fnstenv %0\n\t"
                     "fxsave %1\n\t"
                     "emms"
                     : "=m"(env), "=m"(fx)
                     : "r"(0x0123456789abcdefULL)
                     : "mm0", "st", "st(1)", "st(2)", "memory");
    long double after = one / 3.0L + before;
    uint16_t r0_exponent;
    memcpy(&r0_exponent, fx + 32 + 8, 2);
    printf("after movq mm0: fsw %04x (top %d) ftw %04x, st0 exponent %04x\n", env[2], env[2] >> 11 & 7, env[4],
           r0_exponent);
    printf("x87 after emms: %.18Lg\n", after);
}

static volatile uint64_t seen_in_frame;
static volatile uint16_t seen_exponent;

static void on_usr1(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)info;
    ucontext_t *uc = ctx;
    struct _libc_fpstate *fp = uc->uc_mcontext.fpregs;
    memcpy((void *)&seen_in_frame, &fp->_st[0], 8);
    seen_exponent = fp->_st[0].exponent;
}

static void across_a_signal(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_usr1;
    act.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &act, NULL);
    uint64_t out;
    long pid = getpid();
    __asm__ volatile("movq %1, %%mm0\n\t"
                     "mov %2, %%rdi\n\t"
                     "mov %3, %%esi\n\t"
                     "mov %4, %%eax\n\t"
                     "syscall\n\t"
                     "movq %%mm0, %0\n\t"
                     "emms"
                     : "=r"(out)
                     : "r"(0xdeadbeefcafef00dULL), "r"(pid), "i"(SIGUSR1), "i"(SYS_kill)
                     : "mm0", "rax", "rcx", "rdi", "rsi", "r11", "memory");
    printf("mm0 across a signal %016llx, in the frame %016llx exponent %04x\n", (unsigned long long)out,
           (unsigned long long)seen_in_frame, seen_exponent);
}

static sigjmp_buf out_of_fault;
static volatile uint16_t fault_swd, fault_ftw;

static void on_segv(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)info;
    ucontext_t *uc = ctx;
    fault_swd = uc->uc_mcontext.fpregs->swd;
    fault_ftw = uc->uc_mcontext.fpregs->ftw;
    siglongjmp(out_of_fault, 1);
}

static void faulting_load(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_segv;
    act.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &act, NULL);
    if (!sigsetjmp(out_of_fault, 1)) {
        __asm__ volatile("fninit\n\tfldpi\n\tmovq (%0), %%mm0" : : "r"(16L) : "mm0", "st", "memory");
    }
    __asm__ volatile("fninit");
    printf("faulting movq mm0: fsw %04x (top %d) abridged tags %02x\n", fault_swd, fault_swd >> 11 & 7, fault_ftw);
}

int main(void) {
    arithmetic();
    moves_and_conversions();
    x87_state();
    across_a_signal();
    faulting_load();
    return 0;
}
