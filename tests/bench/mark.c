// SPDX-License-Identifier: GPL-2.0
/*
 * mark begin|end [STATFILE]: open or close a counting window of the bench's
 * QEMU plugin (tests/bench/insn-count.c) by executing its marker
 * instruction, `movabs $MAGIC, %rax`.  With STATFILE (a /sys/block/X/stat)
 * it prints the reads + writes completed, read just before "begin" and just
 * after "end", so I/Os and instructions cover the same window.  Without the
 * plugin the instruction is an ordinary move.
 */
#include <stdio.h>
#include <string.h>

static long long ios(const char *path)
{
	long long v[11] = { 0 };
	FILE *f = fopen(path, "r");
	int n;

	if (!f) {
		perror(path);
		return -1;
	}
	n = fscanf(f, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
		   &v[8], &v[9], &v[10]);
	fclose(f);
	if (n < 5) {
		fprintf(stderr, "mark: cannot parse %s\n", path);
		return -1;
	}
	return v[0] + v[4];
}

int main(int argc, char **argv)
{
	const char *stat = argc > 2 ? argv[2] : NULL;
	long long n = 0;

	if (argc < 2 || (strcmp(argv[1], "begin") && strcmp(argv[1], "end"))) {
		fprintf(stderr, "usage: mark begin|end [/sys/block/DEV/stat]\n");
		return 2;
	}
	if (!strcmp(argv[1], "begin")) {
		if (stat && (n = ios(stat)) < 0)
			return 1;
		/* keep in sync with tests/bench/insn-count.c */
		__asm__ volatile("movabs $0x4e4947454d564e52, %%rax" ::: "rax", "memory");
	} else {
		__asm__ volatile("movabs $0x444e45454d564e52, %%rax" ::: "rax", "memory");
		if (stat && (n = ios(stat)) < 0)
			return 1;
	}
	if (stat)
		printf("%lld\n", n);
	return 0;
}
