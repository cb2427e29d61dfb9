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
/* ---- end of the API subset ---- */

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* Not atomic: the benchmark kernels are single-threaded. */
static uint64_t insn_count;
static uint64_t tb_translations;
static bool per_insn;
static char *out_path;

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
            fclose(f);
            return;
        }
    }
    qemu_plugin_outs(line);
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
        } else {
            fprintf(stderr, "insncount: unknown argument '%s' "
                    "(expected out=FILE, mode=tb or mode=insn)\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
