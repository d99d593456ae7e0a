/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Assertion helpers shared by the fstest cases.
 *
 * A case is a function returning R_PASS, R_FAIL or R_SKIP; on failure or
 * skip it leaves its one-line reason in why[].  The macros return from the
 * case on the first broken expectation, so the reason names the exact call
 * and line, the errno name and text, and what was expected.  Cases run in
 * a forked child, so an early return may leak fds and memory: harmless.
 */
#ifndef FSTEST_H
#define FSTEST_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { R_PASS = 0, R_FAIL = 1, R_SKIP = 2 };

#define WHY_MAX 1024
/* Lives in a shared anonymous mapping so the parent reads the child's text. */
extern char *why;

static inline const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

#define fail(fmt, ...)							\
	do {								\
		snprintf(why, WHY_MAX, fmt " [line %d]", ##__VA_ARGS__,	\
			 __LINE__);					\
		return R_FAIL;						\
	} while (0)

#define skip(fmt, ...)							\
	do {								\
		snprintf(why, WHY_MAX, fmt, ##__VA_ARGS__);		\
		return R_SKIP;						\
	} while (0)

/* The call must not return -1; evaluates to its result. */
#define SYS(call)							\
	({								\
		long _r = (long)(call);					\
		if (_r == -1) {						\
			int _e = errno;					\
			fail("%s: %s (%s)", #call, errname(_e),		\
			     strerror(_e));				\
		}							\
		_r;							\
	})

/*
 * The call must fail with errno @e (or @e2).  @text is the call as written:
 * stringified here, not in a nested macro, so flag names stay unexpanded.
 */
#define EXPECT_ERR_TEXT(text, call, e, e2)				\
	do {								\
		long _r;						\
		int _e;							\
		errno = 0;						\
		_r = (long)(call);					\
		_e = errno;						\
		if (_r != -1)						\
			fail("%s: expected %s, got success (%ld)",	\
			     text, errname(e), _r);			\
		if (_e != (e) && _e != (e2))				\
			fail("%s: expected %s, got %s (%s)", text,	\
			     errname(e), errname(_e), strerror(_e));	\
	} while (0)

#define EXPECT_ERR2(call, e, e2) EXPECT_ERR_TEXT(#call, call, e, e2)
#define EXPECT_ERR(call, e) EXPECT_ERR_TEXT(#call, call, e, e)

#define EQ(got, want)							\
	do {								\
		long long _g = (long long)(got);			\
		long long _w = (long long)(want);			\
		if (_g != _w)						\
			fail("%s = %lld, expected %lld", #got, _g, _w);	\
	} while (0)

/* Same, printed in octal: for modes. */
#define EQ_O(got, want)							\
	do {								\
		long long _g = (long long)(got);			\
		long long _w = (long long)(want);			\
		if (_g != _w)						\
			fail("%s = 0%llo, expected 0%llo", #got, _g, _w); \
	} while (0)

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			fail("%s: " fmt, #cond, ##__VA_ARGS__);		\
	} while (0)

/* Propagate a helper's R_FAIL/R_SKIP (and its why[]) to the case. */
#define TRY(call)							\
	do {								\
		int _t = (call);					\
		if (_t != R_PASS)					\
			return _t;					\
	} while (0)

#endif /* FSTEST_H */
