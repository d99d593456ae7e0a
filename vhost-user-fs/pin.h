/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --pin-sync and --pin-workers: which host CPUs the device's threads may
 * run on (sched_setaffinity), and the affinity each thread really got.
 */
#ifndef VHOST_USER_FS_PIN_H
#define VHOST_USER_FS_PIN_H

#include <stddef.h>

#include "options.h"

/* "0,2-3" into l, CPUs in the order given; 0, or -1 for a bad list. */
int pin__parse(struct pin_cpus *l, const char *s);
/* Every CPU of l is one this process may run on now: 0, or the first that is not. */
int pin__allowed(const struct pin_cpus *l, unsigned int *bad);

/*
 * Records the process's affinity at start, before any thread is pinned,
 * so that a thread born of a pinned one can be given it back.
 */
void pin__init(void);
/*
 * Pins the calling thread to the n CPUs of l (not empty) from index first,
 * modulo l->n (all of them for first = 0, n = l->n), and logs
 * "vhost-user-fs: WHO (thread TID): CPUs LIST" with the affinity read back.
 * 0 or -errno.
 */
int pin__self(const struct pin_cpus *l, unsigned int first, unsigned int n,
	      const char *who);
/* Gives the calling thread the affinity recorded by pin__init. */
void pin__reset(void);

#endif
