// SPDX-License-Identifier: GPL-2.0
/*
 * insn-count.so: a QEMU TCG plugin for `make bench` that counts, exactly,
 * how many times each guest kernel instruction runs inside marked windows.
 *
 * The guest opens a window by running tests/bench/mark.c ("begin"), which
 * executes `movabs $MARK_BEGIN, %rax`; "end" executes the same with
 * MARK_END.  The plugin spots those two instructions by their bytes when it
 * translates them and attaches a callback: begin zeroes every counter, end
 * appends the window to the output file:
 *
 *   window N user U kernel K
 *   ffffffffc0a01234 C        (one line per kernel instruction with C > 0)
 *   end N
 *
 * U and K are the user and kernel instructions executed in the window.
 * tests/bench/report.py maps the addresses to functions and modules with
 * the guest's /proc/kallsyms.  Counting is an inline add per instruction:
 * it slows QEMU, not the guest, whose instruction clock (-icount) is
 * unchanged.  One vCPU only (bench runs with one): counters are not atomic.
 *
 * Usage: qemu-system-x86_64 ... -plugin PATH/insn-count.so,out=FILE
 *
 * The declarations below are the part of QEMU's plugin API (version 1, as
 * in Debian 12's QEMU 7.2) that this file uses; Debian ships no
 * qemu-plugin.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
		enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
		void (*cb)(unsigned int vcpu, void *udata),
		enum qemu_plugin_cb_flags flags, void *udata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t id, void *udata), void *udata);
void qemu_plugin_outs(const char *string);

EXPORT int qemu_plugin_version = 1;

/* keep in sync with tests/bench/mark.c */
#define MARK_BEGIN 0x4e4947454d564e52ULL	/* "RNVMEGIN" */
#define MARK_END 0x444e45454d564e52ULL		/* "RNVMEEND" */
#define KERNEL_START 0xffff800000000000ULL

/* One counter per kernel instruction address.  Counters live in chunks that
 * never move (the translated code holds their addresses); an open-addressing
 * table maps an address to its counter and grows by rehashing. */
struct counter {
	uint64_t addr;
	uint64_t count;
};

#define CHUNK 65536
static struct counter **chunks;
static size_t nchunks, ncounters;
static struct counter **table;
static size_t table_size;	/* power of two */
static uint64_t user_insns;
static FILE *out;
static unsigned long windows;
static int in_window;

static size_t slot_of(uint64_t addr, size_t size)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 20) & (size - 1);
}

static void table_grow(void)
{
	size_t size = table_size ? table_size * 2 : 1 << 18, i;
	struct counter **t = calloc(size, sizeof(*t));

	if (!t) {
		fprintf(stderr, "insn-count: out of memory\n");
		abort();
	}
	for (i = 0; i < table_size; i++) {
		struct counter *c = table[i];
		size_t s;

		if (!c)
			continue;
		for (s = slot_of(c->addr, size); t[s]; s = (s + 1) & (size - 1))
			;
		t[s] = c;
	}
	free(table);
	table = t;
	table_size = size;
}

static struct counter *counter_of(uint64_t addr)
{
	size_t s;
	struct counter *c;

	if (2 * (ncounters + 1) > table_size)
		table_grow();
	for (s = slot_of(addr, table_size); table[s]; s = (s + 1) & (table_size - 1))
		if (table[s]->addr == addr)
			return table[s];
	if (ncounters == nchunks * CHUNK) {
		struct counter **n = realloc(chunks, (nchunks + 1) * sizeof(*n));

		if (!n || !(n[nchunks] = calloc(CHUNK, sizeof(struct counter)))) {
			fprintf(stderr, "insn-count: out of memory\n");
			abort();
		}
		chunks = n;
		nchunks++;
	}
	c = &chunks[ncounters / CHUNK][ncounters % CHUNK];
	ncounters++;
	c->addr = addr;
	table[s] = c;
	return c;
}

static void window_begin(unsigned int vcpu, void *udata)
{
	size_t i;

	(void)vcpu;
	(void)udata;
	for (i = 0; i < ncounters; i++)
		chunks[i / CHUNK][i % CHUNK].count = 0;
	user_insns = 0;
	in_window = 1;
}

static void window_end(unsigned int vcpu, void *udata)
{
	uint64_t kernel = 0;
	size_t i;

	(void)vcpu;
	(void)udata;
	if (!in_window) {
		fprintf(out, "# end marker without a begin marker: ignored\n");
		return;
	}
	in_window = 0;
	for (i = 0; i < ncounters; i++)
		kernel += chunks[i / CHUNK][i % CHUNK].count;
	fprintf(out, "window %lu user %llu kernel %llu\n", windows,
		(unsigned long long)user_insns, (unsigned long long)kernel);
	for (i = 0; i < ncounters; i++) {
		struct counter *c = &chunks[i / CHUNK][i % CHUNK];

		if (c->count)
			fprintf(out, "%llx %llu\n", (unsigned long long)c->addr,
				(unsigned long long)c->count);
	}
	fprintf(out, "end %lu\n", windows);
	fflush(out);
	windows++;
}

/* movabs $imm64, %rax: REX.W + B8, then the immediate */
static int is_mark(const struct qemu_plugin_insn *insn, uint64_t magic)
{
	const unsigned char *b = qemu_plugin_insn_data(insn);
	uint64_t imm;

	if (qemu_plugin_insn_size(insn) != 10 || b[0] != 0x48 || b[1] != 0xb8)
		return 0;
	memcpy(&imm, b + 2, sizeof(imm));
	return imm == magic;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);

		if (va >= KERNEL_START) {
			qemu_plugin_register_vcpu_insn_exec_inline(insn,
				QEMU_PLUGIN_INLINE_ADD_U64, &counter_of(va)->count, 1);
			continue;
		}
		qemu_plugin_register_vcpu_insn_exec_inline(insn,
			QEMU_PLUGIN_INLINE_ADD_U64, &user_insns, 1);
		if (is_mark(insn, MARK_BEGIN))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, window_begin,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
		else if (is_mark(insn, MARK_END))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, window_end,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	fprintf(out, "# %lu windows, %zu kernel instruction addresses seen\n",
		windows, ncounters);
	fclose(out);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info *info,
			       int argc, char **argv)
{
	const char *path = NULL;
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
	if (!path) {
		fprintf(stderr, "insn-count: usage: -plugin insn-count.so,out=FILE\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return -1;
	}
	table_grow();
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
