// SPDX-License-Identifier: GPL-2.0
/* Thread affinity for --pin-sync and --pin-workers (pin.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pin.h"

static cpu_set_t start_set;
static bool start_known;

int pin__parse(struct pin_cpus *l, const char *s)
{
	const char *p = s;

	l->n = 0;
	for (;;) {
		char *end;
		unsigned long a, b;

		errno = 0;
		a = strtoul(p, &end, 10);
		if (errno || end == p || *p == '-' || *p == '+')
			return -1;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (errno || end == p || *p == '-' || *p == '+' || b < a)
				return -1;
		}
		if (b >= CPU_SETSIZE)
			return -1;
		for (; a <= b; a++) {
			if (l->n == PIN_MAX_CPUS)
				return -1;
			l->cpu[l->n++] = a;
		}
		if (!*end)
			return 0;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
}

int pin__allowed(const struct pin_cpus *l, unsigned int *bad)
{
	cpu_set_t set;
	unsigned int i;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (i = 0; i < l->n; i++) {
		if (!CPU_ISSET(l->cpu[i], &set)) {
			*bad = l->cpu[i];
			return -EINVAL;
		}
	}
	return 0;
}

void pin__init(void)
{
	start_known = !sched_getaffinity(0, sizeof(start_set), &start_set);
}

/* "0-1,3" */
static void format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t n = 0;
	int c, first = -1;

	buf[0] = '\0';
	for (c = 0; c <= CPU_SETSIZE && n < len; c++) {
		bool in = c < CPU_SETSIZE && CPU_ISSET(c, set);

		if (in && first < 0)
			first = c;
		if (in || first < 0)
			continue;
		if (first == c - 1)
			n += snprintf(buf + n, len - n, "%s%d", n ? "," : "",
				      first);
		else
			n += snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "",
				      first, c - 1);
		first = -1;
	}
}

int pin__self(const struct pin_cpus *l, unsigned int first, unsigned int n,
	      const char *who)
{
	cpu_set_t set;
	char list[256];
	unsigned int i;

	CPU_ZERO(&set);
	for (i = 0; i < n; i++)
		CPU_SET(l->cpu[(first + i) % l->n], &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		int err = errno;

		fprintf(stderr, "vhost-user-fs: %s (thread %d): cannot pin: %s\n",
			who, (int)gettid(), strerror(err));
		return -err;
	}
	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	format(&set, list, sizeof(list));
	fprintf(stderr, "vhost-user-fs: %s (thread %d): CPUs %s\n", who,
		(int)gettid(), list);
	return 0;
}

void pin__reset(void)
{
	if (start_known)
		sched_setaffinity(0, sizeof(start_set), &start_set);
}
