/* Tests a tiny stack-based bytecode interpreter loop (indirect dispatch, calls, branches). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

enum op {
    OP_HALT, OP_PUSH, OP_POP, OP_DUP, OP_SWAP, OP_OVER,
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_AND, OP_XOR, OP_SHL, OP_SHR,
    OP_LT, OP_EQ, OP_JMP, OP_JZ, OP_JNZ,
    OP_LOAD, OP_STORE, OP_CALL, OP_RET, OP_PRINT,
};

struct vm {
    int64_t stack[256];
    int sp;
    int64_t vars[16];
    int rstack[64];
    int rsp;
    uint64_t steps;
};

static int run(struct vm *m, const int64_t *code, int pc)
{
    for (;;) {
        m->steps++;
        int64_t op = code[pc++];
        int64_t a, b;
        switch (op) {
        case OP_HALT: return 0;
        case OP_PUSH: m->stack[m->sp++] = code[pc++]; break;
        case OP_POP: m->sp--; break;
        case OP_DUP: m->stack[m->sp] = m->stack[m->sp - 1]; m->sp++; break;
        case OP_SWAP:
            a = m->stack[m->sp - 1];
            m->stack[m->sp - 1] = m->stack[m->sp - 2];
            m->stack[m->sp - 2] = a;
            break;
        case OP_OVER: m->stack[m->sp] = m->stack[m->sp - 2]; m->sp++; break;
#define BIN(expr)                          \
    b = m->stack[--m->sp];                 \
    a = m->stack[m->sp - 1];               \
    m->stack[m->sp - 1] = (expr);          \
    break;
        case OP_ADD: BIN((int64_t)((uint64_t)a + (uint64_t)b))
        case OP_SUB: BIN((int64_t)((uint64_t)a - (uint64_t)b))
        case OP_MUL: BIN((int64_t)((uint64_t)a * (uint64_t)b))
        case OP_DIV: BIN(b ? a / b : 0)
        case OP_MOD: BIN(b ? a % b : 0)
        case OP_AND: BIN(a & b)
        case OP_XOR: BIN(a ^ b)
        case OP_SHL: BIN((int64_t)((uint64_t)a << (b & 63)))
        case OP_SHR: BIN((int64_t)((uint64_t)a >> (b & 63)))
        case OP_LT: BIN(a < b)
        case OP_EQ: BIN(a == b)
#undef BIN
        case OP_JMP: pc = (int)code[pc]; break;
        case OP_JZ: pc = m->stack[--m->sp] == 0 ? (int)code[pc] : pc + 1; break;
        case OP_JNZ: pc = m->stack[--m->sp] != 0 ? (int)code[pc] : pc + 1; break;
        case OP_LOAD: m->stack[m->sp++] = m->vars[code[pc++]]; break;
        case OP_STORE: m->vars[code[pc++]] = m->stack[--m->sp]; break;
        case OP_CALL: m->rstack[m->rsp++] = pc + 1; pc = (int)code[pc]; break;
        case OP_RET: pc = m->rstack[--m->rsp]; break;
        case OP_PRINT: printf("vm: %" PRId64 "\n", m->stack[--m->sp]); break;
        default: printf("bad opcode %" PRId64 " at %d\n", op, pc - 1); return 1;
        }
        if (m->sp < 0 || m->sp > 250 || m->rsp < 0 || m->rsp > 60) {
            printf("stack fault at pc %d\n", pc);
            return 2;
        }
    }
}

/*
 * Program:
 *   v0 = 0; v1 = 0
 *   while v1 < 3000: v0 += v1*v1 ^ (v1 << 3); v1++       -> print v0
 *   fib(90) iteratively                                   -> print
 *   count primes < 600 by trial division (subroutine)    -> print
 *   collatz steps of 27                                   -> print
 */
/* The program is assembled at run time so jump offsets are computed, not hand-counted. */
static int64_t code[1024];
static int len;
static void e(int64_t v) { code[len++] = v; }
static int here(void) { return len; }
static void patch(int at, int target) { code[at] = target; }

int main(void)
{
    /* --- sum loop --- */
    e(OP_PUSH); e(0); e(OP_STORE); e(0);
    e(OP_PUSH); e(0); e(OP_STORE); e(1);
    int loop1 = here();
    e(OP_LOAD); e(1); e(OP_PUSH); e(3000); e(OP_LT); e(OP_JZ); int j1 = here(); e(0);
    e(OP_LOAD); e(0); e(OP_LOAD); e(1); e(OP_DUP); e(OP_MUL);
    e(OP_LOAD); e(1); e(OP_PUSH); e(3); e(OP_SHL); e(OP_XOR); e(OP_ADD); e(OP_STORE); e(0);
    e(OP_LOAD); e(1); e(OP_PUSH); e(1); e(OP_ADD); e(OP_STORE); e(1);
    e(OP_JMP); e(loop1);
    patch(j1, here());
    e(OP_LOAD); e(0); e(OP_PRINT);

    /* --- fib(90): stack holds a b --- */
    e(OP_PUSH); e(0); e(OP_PUSH); e(1); e(OP_PUSH); e(90); e(OP_STORE); e(2);
    int loop2 = here();
    e(OP_LOAD); e(2); e(OP_JZ); int j2 = here(); e(0);
    e(OP_DUP); e(OP_STORE); e(3);          /* v3 = b */
    e(OP_ADD);                             /* a+b */
    e(OP_LOAD); e(3); e(OP_SWAP);          /* b, a+b */
    e(OP_LOAD); e(2); e(OP_PUSH); e(-1); e(OP_ADD); e(OP_STORE); e(2);
    e(OP_JMP); e(loop2);
    patch(j2, here());
    e(OP_POP); e(OP_PRINT);                /* prints fib(90) */

    /* --- count primes below 600 using subroutine isprime(v4) -> stack --- */
    e(OP_PUSH); e(0); e(OP_STORE); e(5);   /* count */
    e(OP_PUSH); e(2); e(OP_STORE); e(4);   /* n */
    int loop3 = here();
    e(OP_LOAD); e(4); e(OP_PUSH); e(600); e(OP_LT); e(OP_JZ); int j3 = here(); e(0);
    e(OP_CALL); int c1 = here(); e(0);
    e(OP_LOAD); e(5); e(OP_ADD); e(OP_STORE); e(5);
    e(OP_LOAD); e(4); e(OP_PUSH); e(1); e(OP_ADD); e(OP_STORE); e(4);
    e(OP_JMP); e(loop3);
    patch(j3, here());
    e(OP_LOAD); e(5); e(OP_PRINT);

    /* --- collatz steps of 27 --- */
    e(OP_PUSH); e(27); e(OP_STORE); e(7); e(OP_PUSH); e(0); e(OP_STORE); e(8);
    int loop4 = here();
    e(OP_LOAD); e(7); e(OP_PUSH); e(1); e(OP_EQ); e(OP_JNZ); int j4 = here(); e(0);
    e(OP_LOAD); e(7); e(OP_PUSH); e(1); e(OP_AND); e(OP_JZ); int jeven = here(); e(0);
    e(OP_LOAD); e(7); e(OP_PUSH); e(3); e(OP_MUL); e(OP_PUSH); e(1); e(OP_ADD); e(OP_STORE); e(7);
    e(OP_JMP); int jjoin = here(); e(0);
    patch(jeven, here());
    e(OP_LOAD); e(7); e(OP_PUSH); e(1); e(OP_SHR); e(OP_STORE); e(7);
    patch(jjoin, here());
    e(OP_LOAD); e(8); e(OP_PUSH); e(1); e(OP_ADD); e(OP_STORE); e(8);
    e(OP_JMP); e(loop4);
    patch(j4, here());
    e(OP_LOAD); e(8); e(OP_PRINT);
    e(OP_HALT);

    /* isprime subroutine: uses v4 (n), v6 (d); pushes 1 or 0 */
    patch(c1, here());
    e(OP_PUSH); e(2); e(OP_STORE); e(6);
    int ploop = here();
    e(OP_LOAD); e(6); e(OP_DUP); e(OP_MUL); e(OP_LOAD); e(4); e(OP_SWAP); e(OP_LT); /* n < d*d */
    e(OP_JNZ); int jprime = here(); e(0);
    e(OP_LOAD); e(4); e(OP_LOAD); e(6); e(OP_MOD); e(OP_JZ); int jcomp = here(); e(0);
    e(OP_LOAD); e(6); e(OP_PUSH); e(1); e(OP_ADD); e(OP_STORE); e(6);
    e(OP_JMP); e(ploop);
    patch(jprime, here());
    e(OP_PUSH); e(1); e(OP_RET);
    patch(jcomp, here());
    e(OP_PUSH); e(0); e(OP_RET);

    struct vm m = {.sp = 0, .rsp = 0, .steps = 0};
    int rc = run(&m, code, 0);
    printf("vm rc=%d steps=%" PRIu64 " code_len=%d final_sp=%d\n", rc, m.steps, len, m.sp);

    /* run a bad program to exercise the error path */
    static const int64_t bad[] = {OP_PUSH, 5, 99};
    struct vm m2 = {.sp = 0};
    int rc2 = run(&m2, bad, 0);
    printf("bad program rc=%d\n", rc2);
    return rc;
}
