// SPDX-License-Identifier: GPL-2.0
/*
 * fpstate: the vector registers of threads that share one address space
 * survive the switches between them.
 *
 * In User-Mode Linux the threads of a guest process run in one host
 * process, so on every switch between them the UML kernel saves one
 * thread's FP registers and loads the other's through ptrace. Each thread
 * here loads its own pattern into ymm0-15 (and zmm16-31 and k1-k7 where
 * the CPU has AVX-512), yields inside the same asm block, stores the
 * registers back and compares: a register that comes back with another
 * thread's bytes, or with its upper half lost, fails the test.
 *
 *   fpstate [THREADS [ROUNDS]]     (default 4 threads, 2000 rounds)
 *
 * Exit status 0: every round of every thread got its registers back;
 * 1: a mismatch (the first is printed); 2: bad arguments or no AVX.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define YMM_BYTES	(16 * 32)
#define ZMM_BYTES	(16 * 64)
#define K_BYTES		(7 * 8)

static int rounds = 2000;
static int have_avx512;

struct thread {
	pthread_t tid;
	int id;
	int bad;	/* the first mismatch: round + 1, 0 if none */
	char what[96];
};

static void fill(uint8_t *p, size_t n, int id, int round)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(id * 131 + round * 7 + i * 13 + 1);
}

/* ymm0-15 loaded from @in, a sched_yield(), then stored to @out */
static void ymm_round(const uint8_t *in, uint8_t *out)
{
	long nr = SYS_sched_yield;

	__asm__ volatile(
		"vmovdqu 0(%1), %%ymm0\n\t"    "vmovdqu 32(%1), %%ymm1\n\t"
		"vmovdqu 64(%1), %%ymm2\n\t"   "vmovdqu 96(%1), %%ymm3\n\t"
		"vmovdqu 128(%1), %%ymm4\n\t"  "vmovdqu 160(%1), %%ymm5\n\t"
		"vmovdqu 192(%1), %%ymm6\n\t"  "vmovdqu 224(%1), %%ymm7\n\t"
		"vmovdqu 256(%1), %%ymm8\n\t"  "vmovdqu 288(%1), %%ymm9\n\t"
		"vmovdqu 320(%1), %%ymm10\n\t" "vmovdqu 352(%1), %%ymm11\n\t"
		"vmovdqu 384(%1), %%ymm12\n\t" "vmovdqu 416(%1), %%ymm13\n\t"
		"vmovdqu 448(%1), %%ymm14\n\t" "vmovdqu 480(%1), %%ymm15\n\t"
		"syscall\n\t"
		"vmovdqu %%ymm0, 0(%2)\n\t"    "vmovdqu %%ymm1, 32(%2)\n\t"
		"vmovdqu %%ymm2, 64(%2)\n\t"   "vmovdqu %%ymm3, 96(%2)\n\t"
		"vmovdqu %%ymm4, 128(%2)\n\t"  "vmovdqu %%ymm5, 160(%2)\n\t"
		"vmovdqu %%ymm6, 192(%2)\n\t"  "vmovdqu %%ymm7, 224(%2)\n\t"
		"vmovdqu %%ymm8, 256(%2)\n\t"  "vmovdqu %%ymm9, 288(%2)\n\t"
		"vmovdqu %%ymm10, 320(%2)\n\t" "vmovdqu %%ymm11, 352(%2)\n\t"
		"vmovdqu %%ymm12, 384(%2)\n\t" "vmovdqu %%ymm13, 416(%2)\n\t"
		"vmovdqu %%ymm14, 448(%2)\n\t" "vmovdqu %%ymm15, 480(%2)\n\t"
		"vzeroupper\n\t"
		: "+a"(nr)
		: "r"(in), "r"(out)
		: "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
		  "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
		  "xmm12", "xmm13", "xmm14", "xmm15");
}

/* zmm16-31 and k1-k7 loaded, a sched_yield(), then stored */
__attribute__((target("avx512f")))
static void zmm_round(const uint8_t *in, uint8_t *out, const uint8_t *kin,
		      uint8_t *kout)
{
	long nr = SYS_sched_yield;

	__asm__ volatile(
		"vmovdqu64 0(%1), %%zmm16\n\t"   "vmovdqu64 64(%1), %%zmm17\n\t"
		"vmovdqu64 128(%1), %%zmm18\n\t" "vmovdqu64 192(%1), %%zmm19\n\t"
		"vmovdqu64 256(%1), %%zmm20\n\t" "vmovdqu64 320(%1), %%zmm21\n\t"
		"vmovdqu64 384(%1), %%zmm22\n\t" "vmovdqu64 448(%1), %%zmm23\n\t"
		"vmovdqu64 512(%1), %%zmm24\n\t" "vmovdqu64 576(%1), %%zmm25\n\t"
		"vmovdqu64 640(%1), %%zmm26\n\t" "vmovdqu64 704(%1), %%zmm27\n\t"
		"vmovdqu64 768(%1), %%zmm28\n\t" "vmovdqu64 832(%1), %%zmm29\n\t"
		"vmovdqu64 896(%1), %%zmm30\n\t" "vmovdqu64 960(%1), %%zmm31\n\t"
		"kmovw 0(%3), %%k1\n\t"  "kmovw 8(%3), %%k2\n\t"
		"kmovw 16(%3), %%k3\n\t" "kmovw 24(%3), %%k4\n\t"
		"kmovw 32(%3), %%k5\n\t" "kmovw 40(%3), %%k6\n\t"
		"kmovw 48(%3), %%k7\n\t"
		"syscall\n\t"
		"vmovdqu64 %%zmm16, 0(%2)\n\t"   "vmovdqu64 %%zmm17, 64(%2)\n\t"
		"vmovdqu64 %%zmm18, 128(%2)\n\t" "vmovdqu64 %%zmm19, 192(%2)\n\t"
		"vmovdqu64 %%zmm20, 256(%2)\n\t" "vmovdqu64 %%zmm21, 320(%2)\n\t"
		"vmovdqu64 %%zmm22, 384(%2)\n\t" "vmovdqu64 %%zmm23, 448(%2)\n\t"
		"vmovdqu64 %%zmm24, 512(%2)\n\t" "vmovdqu64 %%zmm25, 576(%2)\n\t"
		"vmovdqu64 %%zmm26, 640(%2)\n\t" "vmovdqu64 %%zmm27, 704(%2)\n\t"
		"vmovdqu64 %%zmm28, 768(%2)\n\t" "vmovdqu64 %%zmm29, 832(%2)\n\t"
		"vmovdqu64 %%zmm30, 896(%2)\n\t" "vmovdqu64 %%zmm31, 960(%2)\n\t"
		"kmovw %%k1, 0(%4)\n\t"  "kmovw %%k2, 8(%4)\n\t"
		"kmovw %%k3, 16(%4)\n\t" "kmovw %%k4, 24(%4)\n\t"
		"kmovw %%k5, 32(%4)\n\t" "kmovw %%k6, 40(%4)\n\t"
		"kmovw %%k7, 48(%4)\n\t"
		"vzeroupper\n\t"
		: "+a"(nr)
		: "r"(in), "r"(out), "r"(kin), "r"(kout)
		: "rcx", "r11", "memory", "xmm16", "xmm17", "xmm18", "xmm19",
		  "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26",
		  "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "k3",
		  "k4", "k5", "k6", "k7");
}

/* Only the low 16 bits of each k register are kmovw's */
static void k_fill(uint8_t *p, int id, int round)
{
	int i;

	memset(p, 0, K_BYTES);
	for (i = 0; i < 7; i++) {
		p[i * 8] = (uint8_t)(id * 17 + round + i);
		p[i * 8 + 1] = (uint8_t)(id + round * 3 + i * 5);
	}
}

static int differs(struct thread *t, int round, const char *what,
		   const uint8_t *want, const uint8_t *got, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (want[i] != got[i]) {
			t->bad = round + 1;
			snprintf(t->what, sizeof(t->what),
				 "%s byte %zu: 0x%02x, not 0x%02x", what, i,
				 got[i], want[i]);
			return 1;
		}
	}
	return 0;
}

static void *run(void *arg)
{
	struct thread *t = arg;
	uint8_t in[ZMM_BYTES], out[ZMM_BYTES], kin[K_BYTES], kout[K_BYTES];
	int r;

	for (r = 0; r < rounds; r++) {
		fill(in, YMM_BYTES, t->id, r);
		memset(out, 0, YMM_BYTES);
		ymm_round(in, out);
		if (differs(t, r, "ymm", in, out, YMM_BYTES))
			break;
		if (!have_avx512)
			continue;
		fill(in, ZMM_BYTES, t->id + 64, r);
		memset(out, 0, ZMM_BYTES);
		k_fill(kin, t->id, r);
		memset(kout, 0, K_BYTES);
		zmm_round(in, out, kin, kout);
		if (differs(t, r, "zmm16-31", in, out, ZMM_BYTES))
			break;
		if (differs(t, r, "k1-k7", kin, kout, K_BYTES))
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4, i, bad = 0;
	struct thread *t;

	if (argc > 2)
		rounds = atoi(argv[2]);
	if (n < 2 || n > 64 || rounds < 1) {
		fprintf(stderr, "usage: fpstate [THREADS (2-64) [ROUNDS]]\n");
		return 2;
	}
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx")) {
		fprintf(stderr, "fpstate: this CPU has no AVX\n");
		return 2;
	}
	have_avx512 = __builtin_cpu_supports("avx512f");
	t = calloc(n, sizeof(*t));
	if (!t)
		return 2;
	for (i = 0; i < n; i++) {
		t[i].id = i;
		if (pthread_create(&t[i].tid, NULL, run, &t[i])) {
			fprintf(stderr, "fpstate: pthread_create failed\n");
			return 2;
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i].tid, NULL);
		if (t[i].bad && !bad++)
			printf("FAIL: thread %d round %d: %s\n", i, t[i].bad - 1,
			       t[i].what);
	}
	if (bad) {
		printf("FAIL: %d of %d threads lost their vector registers\n",
		       bad, n);
		return 1;
	}
	printf("ok: %d threads x %d rounds kept ymm0-15%s across sched_yield()\n",
	       n, rounds, have_avx512 ? ", zmm16-31 and k1-k7" : "");
	return 0;
}
