// SPDX-License-Identifier: GPL-2.0
/*
 * hostcost: what a hand-off between two host threads costs on this host,
 * the price every interrupt-driven request pays (and a sync request pays
 * once when its handler runs on another CPU than the vCPU).
 *
 *   hostcost [--rounds N] [--iters N] CPU_A CPU_B
 *
 * Two threads, one pinned to CPU_A and one to CPU_B, pass a token back and
 * forth: through a pair of pipes (a blocking read() each way, as an
 * eventfd kick and its completion are) and through a futex word (FUTEX_WAIT
 * and FUTEX_WAKE, as a condition variable hand-off is). Each is measured
 * with both threads on CPU_A and B (cross) and with both on CPU_A (same).
 * A round is ITERS round trips, timed as a whole with CLOCK_MONOTONIC; a
 * line per kind and layout gives the median, minimum and maximum over
 * ROUNDS rounds of the mean round trip, in microseconds:
 *
 *   hostcost kind=pipe layout=cross cpus=0,1 rtt_us_median=41.52 rtt_us_min=40.10 rtt_us_max=44.87 rounds=9 iters=2000
 *
 * The first round of each is a warm-up and is not counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum kind { K_PIPE, K_FUTEX };

struct pingpong {
	enum kind kind;
	int cpu;			/* the echo thread's CPU */
	long iters;
	int to_echo[2], to_main[2];	/* pipes */
	_Atomic int word;		/* futex: 0 main's turn to send, 1 echo's */
};

static void die(const char *what)
{
	fprintf(stderr, "hostcost: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void futex_wait(_Atomic int *w, int val)
{
	while (atomic_load_explicit(w, memory_order_acquire) == val)
		if (syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0) &&
		    errno != EAGAIN && errno != EINTR)
			die("FUTEX_WAIT");
}

static void futex_set(_Atomic int *w, int val)
{
	atomic_store_explicit(w, val, memory_order_release);
	if (syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) < 0)
		die("FUTEX_WAKE");
}

static void xread(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		die("read");
}

static void xwrite(int fd)
{
	if (write(fd, "x", 1) != 1)
		die("write");
}

/* The echo thread: answers every token until main has sent iters of them. */
static void *echo(void *arg)
{
	struct pingpong *p = arg;
	long i;

	pin(p->cpu);
	for (i = 0; i < p->iters; i++) {
		if (p->kind == K_PIPE) {
			xread(p->to_echo[0]);
			xwrite(p->to_main[1]);
		} else {
			futex_wait(&p->word, 0);
			futex_set(&p->word, 0);
		}
	}
	return NULL;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* One round: iters round trips between main (on cpu_a) and echo (cpu_b). */
static double round_trip_us(enum kind kind, int cpu_a, int cpu_b, long iters)
{
	struct pingpong p = { .kind = kind, .cpu = cpu_b, .iters = iters };
	pthread_t t;
	double t0, t1;
	long i;

	pin(cpu_a);
	if (pipe(p.to_echo) || pipe(p.to_main))
		die("pipe");
	if (pthread_create(&t, NULL, echo, &p))
		die("pthread_create");
	t0 = now_us();
	for (i = 0; i < iters; i++) {
		if (kind == K_PIPE) {
			xwrite(p.to_echo[1]);
			xread(p.to_main[0]);
		} else {
			futex_set(&p.word, 1);
			futex_wait(&p.word, 1);
		}
	}
	t1 = now_us();
	pthread_join(t, NULL);
	close(p.to_echo[0]);
	close(p.to_echo[1]);
	close(p.to_main[0]);
	close(p.to_main[1]);
	return (t1 - t0) / iters;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void measure(enum kind kind, const char *layout, int cpu_a, int cpu_b,
		    int rounds, long iters)
{
	double *v = calloc(rounds, sizeof(*v));
	int r;

	if (!v)
		die("calloc");
	round_trip_us(kind, cpu_a, cpu_b, iters);	/* warm-up */
	for (r = 0; r < rounds; r++)
		v[r] = round_trip_us(kind, cpu_a, cpu_b, iters);
	qsort(v, rounds, sizeof(*v), cmp);
	printf("hostcost kind=%s layout=%s cpus=%d,%d rtt_us_median=%.2f rtt_us_min=%.2f rtt_us_max=%.2f rounds=%d iters=%ld\n",
	       kind == K_PIPE ? "pipe" : "futex", layout, cpu_a, cpu_b,
	       rounds % 2 ? v[rounds / 2] : (v[rounds / 2 - 1] + v[rounds / 2]) / 2,
	       v[0], v[rounds - 1], rounds, iters);
	fflush(stdout);
	free(v);
}

static void usage(void)
{
	fprintf(stderr, "usage: hostcost [--rounds N] [--iters N] CPU_A CPU_B\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int rounds = 9, i = 1, cpu_a, cpu_b;
	long iters = 2000;

	for (; i < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--iters"))
			iters = atol(argv[i + 1]);
		else
			usage();
	}
	if (argc - i != 2 || rounds < 1 || iters < 1)
		usage();
	cpu_a = atoi(argv[i]);
	cpu_b = atoi(argv[i + 1]);
	measure(K_PIPE, "cross", cpu_a, cpu_b, rounds, iters);
	measure(K_PIPE, "same", cpu_a, cpu_a, rounds, iters);
	measure(K_FUTEX, "cross", cpu_a, cpu_b, rounds, iters);
	measure(K_FUTEX, "same", cpu_a, cpu_a, rounds, iters);
	return 0;
}
