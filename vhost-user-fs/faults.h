/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --faults: replies spoiled on purpose, so that a guest test can break the
 * one request of its choice and check that only that request fails.
 *
 * A layer that a test switches on: dispatch.c asks fault__of() only under
 * --faults, and calls the other three only for a fault it returned (not
 * FAULT_NONE); without --faults no request comes here.
 */
#ifndef VHOST_USER_FS_FAULTS_H
#define VHOST_USER_FS_FAULTS_H

#include <stddef.h>
#include <stdint.h>

struct fuse_ctx;

enum fault {
	FAULT_NONE,
	FAULT_LEN_OVER,		/* used length beyond the writable buffers */
	FAULT_LEN_UNDER,	/* used length shorter than an out header */
	FAULT_LEN_ZERO,		/* used length 0 */
	FAULT_HDR_LEN,		/* out header's len disagrees with the used length */
	FAULT_UNIQUE,		/* out header answers another request */
	FAULT_ERROR_RANGE,	/* error outside -4095..0 */
	FAULT_ERROR_529,	/* error -529, -EIOCBQUEUED: kernel-internal */
	FAULT_DOUBLE,		/* the buffer is put on the used ring twice */
	FAULT_NEVER,		/* the buffer is never used */
	FAULT_CLOSE,		/* the socket is shut down, nothing is used */
	FAULT_DELAY,		/* answered right, after N s (vfs-fault-delay.N) */
	FAULT_COUNT
};

/*
 * The fault the request in ctx->in (in_len bytes long) asks for, logged
 * to stderr when there is one.
 */
enum fault fault__of(const struct fuse_ctx *ctx, size_t in_len);
/* Spoils the reply in ctx->out, of length *len, as f asks. */
void fault__spoil_reply(enum fault f, struct fuse_ctx *ctx, size_t *len);
/* The used length to report for a reply of len bytes in wr_len of room. */
uint32_t fault__used_len(enum fault f, uint32_t len, uint32_t wr_len);
/* How many times the chain goes on the used ring: 0, 1 or 2. */
unsigned int fault__pushes(enum fault f);

#endif
