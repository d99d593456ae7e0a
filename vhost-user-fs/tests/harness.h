/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VHOST_USER_FS_TEST_HARNESS_H
#define VHOST_USER_FS_TEST_HARNESS_H

#include <stdbool.h>
#include <stdio.h>

extern const char *test_name;
extern bool test_failed;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("FAIL %s: %s (%s:%d)\n", test_name, #cond,	\
		       __FILE__, __LINE__);				\
		test_failed = true;					\
		return;							\
	}								\
} while (0)

void test_run(const char *name, void (*fn)(void));
/* Drives a vhost-user-fs daemon over its socket like virtio_uml does. */
void vu_tests(const char *daemon);

#endif
