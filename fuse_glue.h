/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FUSE side's pure functions (fuse_glue.c), for KUnit. They need only
 * the FUSE wire format of <linux/fuse.h>, not the kernel's fuse_i.h.
 */
#ifndef _VIRTIO_FS_SYNC_FUSE_GLUE_H
#define _VIRTIO_FS_SYNC_FUSE_GLUE_H

#include <linux/fuse.h>
#include <linux/types.h>

/*
 * FORGETs wait on their connection's list and go to the hiprio queue as
 * one message once VFSYNC_FORGET_BATCH are pending, forget_delay_ms
 * (module parameter, default VFSYNC_FORGET_DELAY_MS) after the first of
 * them, or at unmount.
 */
#define VFSYNC_FORGET_BATCH		64
#define VFSYNC_FORGET_DELAY_MS		5
#define VFSYNC_FORGET_DELAY_MAX_MS	1000

/* A hiprio FORGET message: FUSE_FORGET for one node, else BATCH_FORGET */
struct vfsync_forget_msg {
	struct fuse_in_header ih;
	union {
		struct fuse_forget_in one;
		struct {
			struct fuse_batch_forget_in in;
			struct fuse_forget_one ones[VFSYNC_FORGET_BATCH];
		} batch;
	};
};

bool vfsync_sync_eligible(u32 opcode, bool background, bool budget,
			  size_t bytes, size_t max_bytes);
bool vfsync_long_request(u32 opcode, const void *arg, size_t len);
int vfsync_check_reply(const struct fuse_out_header *oh, u64 unique,
		       unsigned int used_len, unsigned int offered_len,
		       unsigned int out_args_len, unsigned int last_arg_len,
		       bool argvar);
size_t vfsync_forget_msg_init(struct vfsync_forget_msg *m, u64 unique,
			      unsigned int count);

#endif /* _VIRTIO_FS_SYNC_FUSE_GLUE_H */
