/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FUSE side's pure functions (fuse_glue.c), for KUnit. They need only
 * the FUSE wire format of <linux/fuse.h>, not the kernel's fuse_i.h.
 */
#ifndef _VIRTIO_FS_SYNC_FUSE_GLUE_H
#define _VIRTIO_FS_SYNC_FUSE_GLUE_H

#include <linux/types.h>

struct fuse_out_header;

bool vfsync_sync_eligible(u32 opcode, bool background, bool hiprio,
			  size_t bytes, size_t max_bytes);
u32 vfsync_init_flags(u32 flags, bool sync_queues);
int vfsync_check_reply(const struct fuse_out_header *oh, u64 unique,
		       unsigned int used_len, unsigned int offered_len,
		       unsigned int out_args_len, unsigned int last_arg_len,
		       bool argvar);

#endif /* _VIRTIO_FS_SYNC_FUSE_GLUE_H */
