// SPDX-License-Identifier: GPL-2.0
/*
 * insncount.c - a QEMU TCG plugin (QEMU 7.2, plugin API version 1): how
 * many times each guest kernel instruction executed.  At exit it writes
 * "<address> <count>" lines (hex, decimal) for every kernel address that
 * ran, to out=FILE (default /tmp/insncount.txt).  Exact counts, unlike
 * sampling: under -icount with IRQs off, perf's samples land after
 * local_irq_restore(), so perf cannot split an IRQs-off section.
 *
 * Build: gcc -O2 -shared -fPIC -o insncount.so insncount.c
 * Use:   selftests/bench/insncount/profile.sh (doc/metering.md, "Cost per I/O").
 *
 * The declarations below are the few entry points of QEMU's
 * include/qemu/qemu-plugin.h it uses (Debian ships no plugin header).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
	enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, void *userdata), void *userdata);

/* Open addressing by address; one counter per kernel instruction. */
#define HSIZE		(1u << 22)
#define KERNEL_BASE	0xffff800000000000ull

struct ent {
	uint64_t va;
	uint64_t cnt;
};

static struct ent *tab;
static const char *outpath = "/tmp/insncount.txt";

static struct ent *slot(uint64_t va)
{
	uint64_t h = (va * 0x9E3779B97F4A7C15ull) >> 42;

	for (;; h++) {
		struct ent *e = &tab[h & (HSIZE - 1)];

		if (e->va == va)
			return e;
		if (!e->va) {
			e->va = va;
			return e;
		}
	}
}

static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	if (qemu_plugin_tb_vaddr(tb) < KERNEL_BASE)
		return;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		struct ent *e = slot(qemu_plugin_insn_vaddr(insn));

		qemu_plugin_register_vcpu_insn_exec_inline(insn,
			QEMU_PLUGIN_INLINE_ADD_U64, &e->cnt, 1);
	}
}

static void dump(qemu_plugin_id_t id, void *u)
{
	FILE *f = fopen(outpath, "w");
	size_t i;

	if (!f)
		return;
	for (i = 0; i < HSIZE; i++)
		if (tab[i].va && tab[i].cnt)
			fprintf(f, "%llx %llu\n", (unsigned long long)tab[i].va,
				(unsigned long long)tab[i].cnt);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			outpath = strdup(argv[i] + 4);
	tab = calloc(HSIZE, sizeof(*tab));
	if (!tab)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
	qemu_plugin_register_atexit_cb(id, dump, NULL);
	return 0;
}
