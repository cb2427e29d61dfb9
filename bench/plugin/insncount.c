/*
 * bench/plugin/insncount.c: owns the QEMU TCG plugin that counts executed
 * guest instructions (for qemu-aarch64: arm64 instructions) for the
 * benchmark harness (bench/run.py).
 *
 *   qemu-aarch64 -plugin bench/build/libinsncount.so[,out=FILE][,mode=insn] -d plugin PROG...
 *
 * At exit it writes one line "insns N" to FILE (if given, truncating it) or
 * through qemu_plugin_outs (stderr with `-d plugin`).
 *
 * mode=tb (default): one inline 64-bit add of the block's instruction count
 * per executed translation block. Exact as long as a block runs to its end;
 * a block left half-way by a fault counts its whole length (the harness
 * differences two runs, so such start-up effects cancel).
 * mode=insn: one inline add per executed instruction: exact even across
 * faults, and slower.
 * mode=blocks: as mode=tb, and also counts executions per block start
 * address; at exit it writes the TOP (default 40, top=N) blocks by
 * instructions executed as "block VADDR insns N execs E total T" lines, for
 * finding where translated code spends its instructions (docs/codegen.md).
 *
 * Debian's qemu-user 7.2 ships no qemu-plugin.h; the declarations below are
 * the few this plugin needs, written from QEMU's documented plugin API
 * (include/qemu/qemu-plugin.h, API version 1 as in QEMU 7.2). Build:
 *   gcc -O2 -shared -fPIC -fvisibility=hidden -o libinsncount.so insncount.c
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- QEMU plugin API, version 1 (subset) ---- */
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_VERSION 1

typedef uint64_t qemu_plugin_id_t;

typedef struct qemu_info_t {
    const char *target_name;
    struct {
        int min;
        int cur;
    } version;
    bool system_emulation;
    union {
        struct {
            int smp_vcpus;
            int max_vcpus;
        } system;
    };
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_op {
    QEMU_PLUGIN_INLINE_ADD_U64,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
                                               struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                              enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
                                                enum qemu_plugin_op op,
                                                void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
                                                 size_t idx);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
/* ---- end of the API subset ---- */

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* Not atomic: the benchmark kernels are single-threaded. */
static uint64_t insn_count;
static uint64_t tb_translations;
static bool per_insn;
static char *out_path;

/* mode=blocks: one record per translation (a block translated twice has
 * two, summed by address at exit). */
struct block {
    uint64_t vaddr, insns, execs;
};
static bool per_block;
static size_t top_blocks = 40;
static struct block **blocks;
static size_t n_blocks, cap_blocks;

static void count_block(struct qemu_plugin_tb *tb, size_t n)
{
    struct block *b = calloc(1, sizeof *b);
    if (!b) {
        return;
    }
    if (n_blocks == cap_blocks) {
        size_t cap = cap_blocks ? 2 * cap_blocks : 1024;
        struct block **grown = realloc(blocks, cap * sizeof *grown);
        if (!grown) {
            free(b);
            return;
        }
        blocks = grown;
        cap_blocks = cap;
    }
    b->vaddr = qemu_plugin_tb_vaddr(tb);
    b->insns = n;
    blocks[n_blocks++] = b;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                             &b->execs, 1);
}

static int by_vaddr(const void *a, const void *b)
{
    const struct block *x = *(struct block *const *)a, *y = *(struct block *const *)b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int by_total(const void *a, const void *b)
{
    const struct block *x = *(struct block *const *)a, *y = *(struct block *const *)b;
    uint64_t tx = x->insns * x->execs, ty = y->insns * y->execs;
    return tx > ty ? -1 : tx < ty;
}

/* Merges the records of each address (executions summed, the longest
 * translation's length kept) and writes the hottest to f. */
static void write_blocks(FILE *f)
{
    size_t m = 0;
    qsort(blocks, n_blocks, sizeof *blocks, by_vaddr);
    for (size_t i = 0; i < n_blocks; i++) {
        if (m > 0 && blocks[m - 1]->vaddr == blocks[i]->vaddr) {
            blocks[m - 1]->execs += blocks[i]->execs;
            if (blocks[i]->insns > blocks[m - 1]->insns) {
                blocks[m - 1]->insns = blocks[i]->insns;
            }
        } else {
            blocks[m++] = blocks[i];
        }
    }
    qsort(blocks, m, sizeof *blocks, by_total);
    for (size_t i = 0; i < m && i < top_blocks; i++) {
        fprintf(f, "block 0x%" PRIx64 " insns %" PRIu64 " execs %" PRIu64
                " total %" PRIu64 "\n", blocks[i]->vaddr, blocks[i]->insns,
                blocks[i]->execs, blocks[i]->insns * blocks[i]->execs);
    }
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    tb_translations++;
    if (per_insn) {
        for (size_t i = 0; i < n; i++) {
            qemu_plugin_register_vcpu_insn_exec_inline(
                qemu_plugin_tb_get_insn(tb, i), QEMU_PLUGIN_INLINE_ADD_U64,
                &insn_count, 1);
        }
    } else {
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                                 &insn_count, n);
    }
    if (per_block) {
        count_block(tb, n);
    }
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
    char line[128];
    (void)id;
    (void)userdata;
    snprintf(line, sizeof line, "insns %" PRIu64 "\ntbs %" PRIu64 "\n",
             insn_count, tb_translations);
    if (out_path) {
        FILE *f = fopen(out_path, "w");
        if (f) {
            fputs(line, f);
            if (per_block) {
                write_blocks(f);
            }
            fclose(f);
            return;
        }
    }
    qemu_plugin_outs(line);
    if (per_block) {
        write_blocks(stderr);
    }
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                           const qemu_info_t *info,
                                           int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            out_path = strdup(argv[i] + 4);
        } else if (strcmp(argv[i], "mode=insn") == 0) {
            per_insn = true;
        } else if (strcmp(argv[i], "mode=tb") == 0) {
            per_insn = false;
        } else if (strcmp(argv[i], "mode=blocks") == 0) {
            per_block = true;
        } else if (strncmp(argv[i], "top=", 4) == 0 && atoi(argv[i] + 4) > 0) {
            top_blocks = (size_t)atoi(argv[i] + 4);
        } else {
            fprintf(stderr, "insncount: unknown argument '%s' (expected out=FILE, "
                    "mode=tb, mode=insn, mode=blocks or top=N)\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
