// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for virtio_fs_sync: the pure parts (CPU->queue maps, the
 * sync-queue eligibility policy, reply validation, configuration parsing,
 * queue sizes, stats lines) and the virtio side's queue engine driven
 * against real split rings (vring_new_virtqueue()) served by a small
 * in-test device. The FUSE side's policy and reply check are pure
 * functions of the FUSE wire format; the engine sees only test buffers.
 * Shapes with many CPUs are tested through CPU id lists, so they run on
 * uniprocessor UML as well.
 *
 * One KUnit module for the driver, so one kunit.filter_glob runs all of
 * it and the in-test device is shared by the suites that drive the queue
 * engine.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/fcntl.h>
#include <linux/fuse.h>
#include <linux/gfp.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "../../fuse_glue.h"
#include "../../virtio_fs_sync.h"

#define TEST_FIRST_VQ	5
#define TEST_MAP_LEN	1024

/* CPU id lists: dense 0..n-1, every other id, and irregular gaps */
static unsigned int *make_cpus(struct kunit *test, unsigned int n,
			       unsigned int stride, unsigned int offset)
{
	unsigned int *cpus = kunit_kcalloc(test, n, sizeof(*cpus), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, cpus);
	for (i = 0; i < n; i++)
		cpus[i] = offset + i * stride + (stride > 2 ? i % 3 : 0);
	return cpus;
}

static const unsigned int test_ncpus[] = { 1, 2, 3, 4, 7, 8, 16, 63, 64, 255 };
static const unsigned int test_nqueues[] = { 1, 2, 3, 4, 8, 13, 64, 300 };
static const unsigned int test_strides[] = { 1, 2, 3 };

static void check_unlisted(struct kunit *test, const unsigned int *map,
			   const unsigned int *cpus, unsigned int ncpus)
{
	unsigned int id, i;
	bool listed;

	for (id = 0; id < TEST_MAP_LEN; id++) {
		listed = false;
		for (i = 0; i < ncpus; i++)
			listed |= cpus[i] == id;
		if (!listed)
			KUNIT_EXPECT_EQ(test, map[id], TEST_FIRST_VQ);
	}
}

struct map_buffers {
	unsigned int *map;
	unsigned int *used;
};

static void map_buffers_init(struct kunit *test, struct map_buffers *mb)
{
	mb->map = kunit_kcalloc(test, TEST_MAP_LEN, sizeof(*mb->map),
				GFP_KERNEL);
	mb->used = kunit_kcalloc(test, 512, sizeof(*mb->used), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mb->map);
	KUNIT_ASSERT_NOT_NULL(test, mb->used);
}

static void check_sync_shape(struct kunit *test, struct map_buffers *mb,
			     unsigned int n, unsigned int s,
			     unsigned int stride)
{
	unsigned int *cpus = make_cpus(test, n, stride, stride - 1);
	unsigned int i, q;

	vfsync_map_sync(mb->map, TEST_MAP_LEN, cpus, n, s, TEST_FIRST_VQ);

	memset(mb->used, 0, 512 * sizeof(*mb->used));
	for (i = 0; i < n; i++) {
		q = mb->map[cpus[i]] - TEST_FIRST_VQ;
		KUNIT_ASSERT_LT(test, q, s);
		/* The contract: CPU c uses queue c mod S, by id */
		KUNIT_EXPECT_EQ(test, q, cpus[i] % s);
		mb->used[q]++;
	}
	/* Dense ids: every queue has a CPU, none has two more than another */
	if (stride == 1) {
		for (i = 0; i < min(n, s); i++)
			KUNIT_EXPECT_GE_MSG(test, mb->used[i], n / s,
					    "ncpus %u sync %u queue %u", n, s, i);
		for (i = 0; i < s; i++)
			KUNIT_EXPECT_LE(test, mb->used[i], DIV_ROUND_UP(n, s));
	}
	check_unlisted(test, mb->map, cpus, n);
}

static void check_spread_shape(struct kunit *test, struct map_buffers *mb,
			       unsigned int n, unsigned int r,
			       unsigned int stride)
{
	unsigned int *cpus = make_cpus(test, n, stride, stride - 1);
	unsigned int i, q, prev = 0;

	vfsync_map_spread(mb->map, TEST_MAP_LEN, cpus, n, r, TEST_FIRST_VQ);

	memset(mb->used, 0, 512 * sizeof(*mb->used));
	for (i = 0; i < n; i++) {
		q = mb->map[cpus[i]] - TEST_FIRST_VQ;
		KUNIT_ASSERT_LT(test, q, r);
		/* Contiguous groups */
		KUNIT_EXPECT_GE(test, q, prev);
		prev = q;
		mb->used[q]++;
	}
	for (i = 0; i < r; i++) {
		KUNIT_EXPECT_GE_MSG(test, mb->used[i], n / r,
				    "ncpus %u request %u queue %u", n, r, i);
		KUNIT_EXPECT_LE(test, mb->used[i], DIV_ROUND_UP(n, r));
	}
	check_unlisted(test, mb->map, cpus, n);
}

static void vfsync_test_map_sync(struct kunit *test)
{
	struct map_buffers mb;
	unsigned int a, b, c;

	map_buffers_init(test, &mb);
	for (c = 0; c < ARRAY_SIZE(test_strides); c++) {
		for (a = 0; a < ARRAY_SIZE(test_ncpus); a++) {
			for (b = 0; b < ARRAY_SIZE(test_nqueues); b++)
				check_sync_shape(test, &mb, test_ncpus[a],
						 test_nqueues[b],
						 test_strides[c]);
		}
	}
}

static void vfsync_test_map_spread(struct kunit *test)
{
	struct map_buffers mb;
	unsigned int a, b, c;

	map_buffers_init(test, &mb);
	for (c = 0; c < ARRAY_SIZE(test_strides); c++) {
		for (a = 0; a < ARRAY_SIZE(test_ncpus); a++) {
			/* Never more request queues mapped than CPUs */
			for (b = 0; b < ARRAY_SIZE(test_nqueues); b++)
				check_spread_shape(test, &mb, test_ncpus[a],
						   min(test_nqueues[b],
						       test_ncpus[a]),
						   test_strides[c]);
		}
	}
}

static void vfsync_test_map_edges(struct kunit *test)
{
	unsigned int map[8], cpus[] = { 3, 7, 200 };
	unsigned int i;

	/* Ids beyond the map are ignored, not written; 3 and 7 mod 2 = 1 */
	vfsync_map_sync(map, ARRAY_SIZE(map), cpus, ARRAY_SIZE(cpus), 2, 1);
	KUNIT_EXPECT_EQ(test, map[3], 2U);
	KUNIT_EXPECT_EQ(test, map[7], 2U);
	for (i = 0; i < ARRAY_SIZE(map); i++)
		KUNIT_EXPECT_LE(test, map[i], 2U);

	/* No queues: every CPU on the first one */
	vfsync_map_sync(map, ARRAY_SIZE(map), cpus, ARRAY_SIZE(cpus), 0, 4);
	vfsync_map_spread(map, ARRAY_SIZE(map), cpus, ARRAY_SIZE(cpus), 0, 4);
	for (i = 0; i < ARRAY_SIZE(map); i++)
		KUNIT_EXPECT_EQ(test, map[i], 4U);

	/* No CPUs listed */
	vfsync_map_spread(map, ARRAY_SIZE(map), cpus, 0, 3, 1);
	for (i = 0; i < ARRAY_SIZE(map); i++)
		KUNIT_EXPECT_EQ(test, map[i], 1U);
}

/*
 * Never on a sync queue: no reply, blocking without bound whatever the
 * host promises, the session or the memory map, or not an opcode the
 * driver knows.
 */
static bool opcode_never_sync(u32 opcode)
{
	return opcode == 0 || opcode == 7 || opcode == 19 || opcode > 53 ||
	       opcode == FUSE_SETLKW || opcode == FUSE_IOCTL ||
	       opcode == FUSE_POLL || opcode == FUSE_INTERRUPT ||
	       opcode == FUSE_NOTIFY_REPLY || opcode == FUSE_FORGET ||
	       opcode == FUSE_BATCH_FORGET || opcode == FUSE_DESTROY ||
	       opcode == FUSE_INIT || opcode == FUSE_SETUPMAPPING ||
	       opcode == FUSE_REMOVEMAPPING;
}

/* On a sync queue only with a host that keeps a budget */
static bool opcode_needs_budget(u32 opcode)
{
	return opcode == FUSE_COPY_FILE_RANGE ||
	       opcode == FUSE_COPY_FILE_RANGE_64 ||
	       opcode == FUSE_FALLOCATE || opcode == FUSE_FSYNC ||
	       opcode == FUSE_FSYNCDIR || opcode == FUSE_SYNCFS ||
	       opcode == FUSE_FLUSH || opcode == FUSE_RELEASE ||
	       opcode == FUSE_UNLINK || opcode == FUSE_RENAME ||
	       opcode == FUSE_RENAME2;
}

/* One opcode and size, background or not, with and without a budget */
static void vfsync_expect_eligible(struct kunit *test, u32 opcode, bool bg,
				   size_t size, size_t max)
{
	bool want = !opcode_never_sync(opcode) && !bg &&
		    !opcode_needs_budget(opcode) && size <= max;

	KUNIT_EXPECT_EQ_MSG(test,
			    vfsync_sync_eligible(opcode, bg, false, size, max),
			    want, "opcode %u bg %d size %zu max %zu",
			    opcode, bg, size, max);
	/* With a budget the limit does not count */
	want = !opcode_never_sync(opcode) && !bg;
	KUNIT_EXPECT_EQ_MSG(test,
			    vfsync_sync_eligible(opcode, bg, true, size, max),
			    want, "budget: opcode %u bg %d size %zu",
			    opcode, bg, size);
}

static void vfsync_test_eligible(struct kunit *test)
{
	static const size_t sizes[] = { 0, 64, 4096, 20480, 20481, 262143,
					262144, 262145, SIZE_MAX };
	static const size_t maxes[] = { 0, 4096, 20480, 262144 };
	unsigned int s, m, opcode;

	for (opcode = 0; opcode <= 64; opcode++)
		for (s = 0; s < ARRAY_SIZE(sizes); s++)
			for (m = 0; m < ARRAY_SIZE(maxes); m++) {
				vfsync_expect_eligible(test, opcode, false,
						       sizes[s], maxes[m]);
				vfsync_expect_eligible(test, opcode, true,
						       sizes[s], maxes[m]);
			}

	/* No background request, whatever its size and the limit */
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_READ, false, false, 4096, 4096));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_READ, true, false, 4096, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_FSYNC, true, false, 1, SIZE_MAX));

	/* Opcodes the driver does not know, and DAX mappings, never */
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(CUSE_INIT, false, false, 100, 4096));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(U32_MAX, false, false, 100, 4096));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(54, false, false, 100, 4096));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_SETUPMAPPING, false, false, 1,
						      SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_REMOVEMAPPING, false, false, 1,
						      SIZE_MAX));

	/* The ones the contract names */
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_SETLKW, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_IOCTL, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_POLL, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_INTERRUPT, false, false, 1,
						      SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_NOTIFY_REPLY, false, false, 1,
						      SIZE_MAX));
	/* Host time not bounded by the request's size, however small it is */
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_COPY_FILE_RANGE, false, false, 1,
						      SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_FALLOCATE, false, false, 1,
						      SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_FSYNC, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_FSYNCDIR, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_SYNCFS, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_FLUSH, false, false, 1, SIZE_MAX));
	/* close() on the host may write the file back, as FLUSH does */
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_RELEASE, false, false, 1, SIZE_MAX));
	/* may drop the last link of a large file: the host frees its blocks */
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_UNLINK, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_RENAME, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_RENAME2, false, false, 1, SIZE_MAX));
	/* the host's end of the session: whatever it flushes */
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_DESTROY, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_RELEASEDIR, false, false, 1,
						     SIZE_MAX));
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_RMDIR, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_GETATTR, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_SETLK, false, false, 1, SIZE_MAX));
	/* A host that keeps a budget takes every request a task waits for */
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_UNLINK, false, true, 1, 0));
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_COPY_FILE_RANGE_64, false,
						     true, 1, 0));
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_WRITE, false, true, SIZE_MAX,
						     4096));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_WRITE, true, true, 1,
						      SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_SETUPMAPPING, false, true, 1,
						      SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(54, false, true, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_SETLKW, false, true, 1,
						      SIZE_MAX));
}

/* Truncation through an otherwise short request: off sync queues */
static void vfsync_test_long_request(struct kunit *test)
{
	struct fuse_setattr_in sa = { .valid = FATTR_MODE | FATTR_UID };
	struct fuse_open_in op = { .flags = O_RDWR };
	struct fuse_create_in cr = { .flags = O_RDWR | O_CREAT };

	KUNIT_EXPECT_FALSE(test, vfsync_long_request(FUSE_SETATTR, &sa, sizeof(sa)));
	sa.valid |= FATTR_SIZE;
	KUNIT_EXPECT_TRUE(test, vfsync_long_request(FUSE_SETATTR, &sa, sizeof(sa)));
	KUNIT_EXPECT_FALSE(test, vfsync_long_request(FUSE_OPEN, &op, sizeof(op)));
	op.flags |= O_TRUNC;
	KUNIT_EXPECT_TRUE(test, vfsync_long_request(FUSE_OPEN, &op, sizeof(op)));
	KUNIT_EXPECT_FALSE(test, vfsync_long_request(FUSE_CREATE, &cr, sizeof(cr)));
	cr.flags |= O_TRUNC;
	KUNIT_EXPECT_TRUE(test, vfsync_long_request(FUSE_CREATE, &cr, sizeof(cr)));
	/* Too short to tell: taken as long */
	KUNIT_EXPECT_TRUE(test, vfsync_long_request(FUSE_SETATTR, &sa, 4));
	KUNIT_EXPECT_TRUE(test, vfsync_long_request(FUSE_OPEN, NULL, 0));
	KUNIT_EXPECT_TRUE(test, vfsync_long_request(FUSE_CREATE, &cr, 0));
	/* Other opcodes: their first argument does not matter */
	KUNIT_EXPECT_FALSE(test, vfsync_long_request(FUSE_GETATTR, &sa, sizeof(sa)));
	KUNIT_EXPECT_FALSE(test, vfsync_long_request(FUSE_WRITE, NULL, 0));
	KUNIT_EXPECT_FALSE(test, vfsync_long_request(FUSE_OPENDIR, &op, sizeof(op)));
}

/* A device-config capability that claims more than its BAR has */
static void vfsync_test_cfg_room(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vfsync_cfg_room(0, 48, 4096), (size_t)48);
	KUNIT_EXPECT_EQ(test, vfsync_cfg_room(0x2000, 48, 0x4000), (size_t)48);
	/* Beyond the BAR: what the BAR has from the offset */
	KUNIT_EXPECT_EQ(test, vfsync_cfg_room(0x3ff0, 48, 0x4000), (size_t)16);
	KUNIT_EXPECT_EQ(test, vfsync_cfg_room(0x4000, 48, 0x4000), (size_t)0);
	KUNIT_EXPECT_EQ(test, vfsync_cfg_room(U32_MAX, U32_MAX, 0x4000), (size_t)0);
	KUNIT_EXPECT_EQ(test, vfsync_cfg_room(0, 48, 0), (size_t)0);
	/* At most a page, what virtio-pci maps */
	KUNIT_EXPECT_EQ(test, vfsync_cfg_room(0, U32_MAX, U64_MAX), (size_t)PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, vfsync_cfg_room(16, U32_MAX, 0x100000000ULL),
			(size_t)PAGE_SIZE);
}

struct reply_case {
	const char *what;
	u32 len;
	s32 error;
	u64 unique;
	unsigned int used, offered, out_args, last;
	bool argvar;
	int want;
};

#define OH	((u32)sizeof(struct fuse_out_header))

static const struct reply_case reply_cases[] = {
	{ "exact", OH + 8, 0, 42, OH + 8, OH + 8, 8, 8, false, 0 },
	{ "no out args", OH, 0, 42, OH, OH, 0, 0, false, 0 },
	{ "error only", OH, -ENOENT, 42, OH, OH + 128, 128, 128, false, 0 },
	{ "error -1", OH, -1, 42, OH, OH, 0, 0, false, 0 },
	{ "error -511", OH, -511, 42, OH, OH, 0, 0, false, 0 },
	/* what fuse_dev_do_write() refuses: kernel-internal codes */
	{ "error -512 (ERESTARTSYS)", OH, -512, 42, OH, OH, 0, 0, false, -EIO },
	{ "error -517 (EPROBE_DEFER)", OH, -517, 42, OH, OH, 0, 0, false, -EIO },
	{ "error -529 (EIOCBQUEUED)", OH, -529, 42, OH, OH, 0, 0, false, -EIO },
	{ "error -4095", OH, -4095, 42, OH, OH, 0, 0, false, -EIO },
	{ "error -4096", OH, -4096, 42, OH, OH, 0, 0, false, -EIO },
	{ "error positive", OH, 1, 42, OH, OH, 0, 0, false, -EIO },
	{ "error INT_MIN", OH, INT_MIN, 42, OH, OH, 0, 0, false, -EIO },
	{ "error with payload", OH + 8, -EIO, 42, OH + 8, OH + 8, 8, 8, false, -EIO },
	{ "used 0", 0, 0, 42, 0, OH + 8, 8, 8, false, -EIO },
	/* libkrun reports 0 for every buffer: the header says it */
	{ "used 0, header fine", OH + 8, 0, 42, 0, OH + 8, 8, 8, false, 0 },
	{ "used 0, error reply", OH, -ENOENT, 42, 0, OH + 8, 8, 8, false, 0 },
	{ "used 0, header past offered", OH + 16, 0, 42, 0, OH + 8, 8, 8, true, -EIO },
	{ "used 0, header below its size", OH - 1, 0, 42, 0, OH + 8, 8, 8, true, -EIO },
	{ "used 0, wrong unique", OH + 8, 0, 43, 0, OH + 8, 8, 8, false, -EIO },
	{ "used below header", OH - 1, 0, 42, OH - 1, OH + 8, 8, 8, false, -EIO },
	{ "used above offered", OH + 16, 0, 42, OH + 16, OH + 8, 8, 8, false, -EIO },
	{ "used huge", UINT_MAX, 0, 42, UINT_MAX, OH + 8, 8, 8, false, -EIO },
	{ "len != used", OH + 4, 0, 42, OH + 8, OH + 8, 8, 8, true, -EIO },
	{ "len > used", OH + 8, 0, 42, OH, OH + 8, 8, 8, true, -EIO },
	{ "len huge", UINT_MAX, 0, 42, OH + 8, OH + 8, 8, 8, false, -EIO },
	{ "wrong unique", OH + 8, 0, 43, OH + 8, OH + 8, 8, 8, false, -EIO },
	{ "zero unique", OH + 8, 0, 0, OH + 8, OH + 8, 8, 8, false, -EIO },
	{ "short, fixed args", OH + 4, 0, 42, OH + 4, OH + 8, 8, 8, false, -EIO },
	{ "short, argvar", OH + 4, 0, 42, OH + 4, OH + 8, 8, 8, true, 0 },
	{ "empty, argvar", OH, 0, 42, OH, OH + 4096, 4096, 4096, true, 0 },
	{ "argvar cuts a fixed arg", OH + 8, 0, 42, OH + 8, OH + 24, 24, 8, true, -EIO },
	{ "argvar keeps fixed args", OH + 16, 0, 42, OH + 16, OH + 24, 24, 8, true, 0 },
	{ "longer than args", OH + 16, 0, 42, OH + 16, OH + 32, 8, 8, true, -EIO },
};

static void vfsync_test_reply(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(reply_cases); i++) {
		const struct reply_case *c = &reply_cases[i];
		struct fuse_out_header oh = {
			.len = c->len,
			.error = c->error,
			.unique = c->unique,
		};

		KUNIT_EXPECT_EQ_MSG(test,
				    vfsync_check_reply(&oh, 42, c->used,
						       c->offered, c->out_args,
						       c->last, c->argvar),
				    c->want, "%s", c->what);
	}
}

static void vfsync_test_config(struct kunit *test)
{
	struct vfsync_qconf conf;

	/* In-tree behaviour: no sync queues */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(1, 0, false, 4, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_request_queues, 1U);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 0U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 2U);

	/* No request queue at all */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(0, 4, true, 4, &conf), -EINVAL);
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(0, 0, false, 4, &conf), -EINVAL);

	/* Feature negotiated, config says 0 */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(2, 0, true, 4, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 0U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 3U);

	/* Count present but feature not negotiated (sync=0) */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(2, 4, false, 4, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 0U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 3U);

	/* Normal sync layout */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(1, 4, true, 4, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_request_queues, 1U);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 4U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 6U);

	/* More sync queues than CPUs: the extra ones are never used */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(1, 8, true, 2, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 2U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 4U);

	/* More request queues than CPUs, no sync: truncated as in-tree */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(16, 0, false, 4, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_request_queues, 4U);
	KUNIT_EXPECT_EQ(test, conf.num_mapped_request_queues, 4U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 5U);

	/* ...with sync: all instantiated, so sync queues keep their index */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(16, 2, true, 4, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_request_queues, 16U);
	KUNIT_EXPECT_EQ(test, conf.num_mapped_request_queues, 4U);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 2U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 19U);

	/* Absurd counts */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(U32_MAX, U32_MAX, true, 8, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 0U);
	KUNIT_EXPECT_EQ(test, conf.num_request_queues, 8U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 9U);
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(1, U32_MAX, true, 8, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 8U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 10U);
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(VFSYNC_MAX_VQS, 4, true, 8, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 0U);
	KUNIT_EXPECT_LE(test, conf.nvqs, (unsigned int)VFSYNC_MAX_VQS);
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(VFSYNC_MAX_VQS - 5, 4, true, 8, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.num_sync_queues, 4U);
	KUNIT_EXPECT_EQ(test, conf.nvqs, (unsigned int)VFSYNC_MAX_VQS);

	/* Uniprocessor */
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(1, 1, true, 1, &conf), 0);
	KUNIT_EXPECT_EQ(test, conf.nvqs, 3U);
	KUNIT_EXPECT_EQ(test, vfsync_parse_config(1, 1, true, 0, &conf), -EINVAL);
}

/*
 * Every queue count at and around the driver's limit, from any CPU count:
 * the layout always fits VFSYNC_MAX_VQS, sync queues only where a CPU can
 * use them and after every request queue, no count wraps.
 */
static void vfsync_test_config_bounds(struct kunit *test)
{
	static const u32 counts[] = {
		1, 2, 3, VFSYNC_MAX_VQS - 3, VFSYNC_MAX_VQS - 2,
		VFSYNC_MAX_VQS - 1, VFSYNC_MAX_VQS, VFSYNC_MAX_VQS + 1,
		2 * VFSYNC_MAX_VQS, 4096, U32_MAX / 2, U32_MAX - 1, U32_MAX,
	};
	static const unsigned int cpus[] = {
		1, 2, 64, VFSYNC_MAX_VQS - 2, VFSYNC_MAX_VQS - 1,
		VFSYNC_MAX_VQS, VFSYNC_MAX_VQS + 1, 4096, 8192,
	};
	struct vfsync_qconf conf;
	unsigned int r, s, c;
	u32 req, sync;

	for (c = 0; c < ARRAY_SIZE(cpus); c++)
		for (r = 0; r < ARRAY_SIZE(counts); r++)
			for (s = 0; s <= ARRAY_SIZE(counts); s++) {
				req = counts[r];
				sync = s ? counts[s - 1] : 0;
				KUNIT_ASSERT_EQ(test, vfsync_parse_config(req, sync, true,
									  cpus[c], &conf), 0);
				KUNIT_EXPECT_LE_MSG(test, conf.nvqs, (unsigned int)VFSYNC_MAX_VQS,
						    "req %u sync %u cpus %u", req, sync, cpus[c]);
				KUNIT_EXPECT_EQ_MSG(test, conf.nvqs,
						    1 + conf.num_request_queues +
						    conf.num_sync_queues,
						    "req %u sync %u cpus %u", req, sync, cpus[c]);
				KUNIT_EXPECT_GE(test, conf.num_request_queues, 1U);
				KUNIT_EXPECT_LE(test, conf.num_mapped_request_queues,
						conf.num_request_queues);
				KUNIT_EXPECT_LE(test, conf.num_mapped_request_queues, cpus[c]);
				KUNIT_EXPECT_LE(test, conf.num_sync_queues, sync);
				KUNIT_EXPECT_LE(test, conf.num_sync_queues, cpus[c]);
				/* Sync queues follow all R request queues */
				if (conf.num_sync_queues)
					KUNIT_EXPECT_EQ(test, conf.num_request_queues, req);
				/* As many as fit, up to one per CPU */
				if (req < VFSYNC_MAX_VQS - 1)
					KUNIT_EXPECT_EQ_MSG(test, conf.num_sync_queues,
							    min3(sync, (u32)cpus[c],
								 VFSYNC_MAX_VQS - 1 - req),
							    "req %u sync %u cpus %u",
							    req, sync, cpus[c]);
			}
}

static void vfsync_test_queue_size(struct kunit *test)
{
	static const enum vfsync_vq_kind kinds[] = {
		VFSYNC_KIND_HIPRIO, VFSYNC_KIND_REQUEST, VFSYNC_KIND_REQUEST,
		VFSYNC_KIND_SYNC, VFSYNC_KIND_SYNC,
	};
	static const unsigned int sizes[] = { 2, 256, 128, 16, 64 };

	/* A small sync queue does not shrink what every request may carry */
	KUNIT_EXPECT_EQ(test, vfsync_min_queue_size(sizes, kinds, 5, VFSYNC_KIND_REQUEST),
			128U);
	KUNIT_EXPECT_EQ(test, vfsync_min_queue_size(sizes, kinds, 5, VFSYNC_KIND_SYNC), 16U);
	KUNIT_EXPECT_EQ(test, vfsync_min_queue_size(sizes, kinds, 3, VFSYNC_KIND_SYNC),
			UINT_MAX);
}

/* FORGET messages: one entry is a FUSE_FORGET, more a FUSE_BATCH_FORGET */
static void vfsync_test_forget_msg(struct kunit *test)
{
	struct vfsync_forget_msg *m;
	unsigned int i, n;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);

	KUNIT_EXPECT_EQ(test, vfsync_forget_msg_init(m, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, vfsync_forget_msg_init(m, 1, VFSYNC_FORGET_BATCH + 1), 0);

	/* One: the plain FORGET, nodeid in the header, nlookup after it */
	memset(m, 0xa5, sizeof(*m));
	m->batch.ones[0].nodeid = 0x1122334455667788ULL;
	m->batch.ones[0].nlookup = 3;
	KUNIT_EXPECT_EQ(test, vfsync_forget_msg_init(m, 42, 1),
			sizeof(struct fuse_in_header) + sizeof(struct fuse_forget_in));
	KUNIT_EXPECT_EQ(test, m->ih.opcode, FUSE_FORGET);
	KUNIT_EXPECT_EQ(test, m->ih.len, 48);
	KUNIT_EXPECT_EQ(test, m->ih.unique, 42);
	KUNIT_EXPECT_EQ(test, m->ih.nodeid, 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, m->ih.uid, 0);
	KUNIT_EXPECT_EQ(test, m->one.nlookup, 3);

	/* More: count, dummy 0, the entries untouched right after */
	for (n = 2; n <= VFSYNC_FORGET_BATCH; n += VFSYNC_FORGET_BATCH - 2) {
		memset(m, 0xa5, sizeof(*m));
		for (i = 0; i < n; i++) {
			m->batch.ones[i].nodeid = 100 + i;
			m->batch.ones[i].nlookup = i + 1;
		}
		KUNIT_EXPECT_EQ(test, vfsync_forget_msg_init(m, 7, n),
				40 + 8 + 16 * n);
		KUNIT_EXPECT_EQ(test, m->ih.opcode, FUSE_BATCH_FORGET);
		KUNIT_EXPECT_EQ(test, m->ih.len, 40 + 8 + 16 * n);
		KUNIT_EXPECT_EQ(test, m->ih.unique, 7);
		KUNIT_EXPECT_EQ(test, m->ih.nodeid, 0);
		KUNIT_EXPECT_EQ(test, m->batch.in.count, n);
		KUNIT_EXPECT_EQ(test, m->batch.in.dummy, 0);
		for (i = 0; i < n; i++) {
			KUNIT_EXPECT_EQ(test, m->batch.ones[i].nodeid, 100 + i);
			KUNIT_EXPECT_EQ(test, m->batch.ones[i].nlookup, i + 1);
		}
	}
	/* A full batch is the whole message */
	KUNIT_EXPECT_EQ(test, m->ih.len, sizeof(*m));
}

static void vfsync_test_stats_line(struct kunit *test)
{
	char name[VFSYNC_VQ_NAME_LEN], line[VFSYNC_STATS_LINE + 1];
	struct vfsync_stats st;
	int n;

	memset(name, 'q', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	atomic64_set(&st.submitted, -1);
	atomic64_set(&st.inline_done, -1);
	atomic64_set(&st.deferred, -1);
	atomic64_set(&st.fallback, -1);
	atomic64_set(&st.full, -1);
	atomic64_set(&st.bad_reply, -1);
	atomic64_set(&st.busy, -1);
	atomic64_set(&st.demoted, -1);

	/* The longest line fits, whole, in VFSYNC_STATS_LINE */
	n = vfsync_stats_line(line, sizeof(line), name, &st);
	KUNIT_EXPECT_LT(test, n, VFSYNC_STATS_LINE);
	KUNIT_EXPECT_EQ(test, line[n - 1], '\n');
	KUNIT_EXPECT_NOT_NULL(test, strstr(line, " busy=18446744073709551615 "));
	KUNIT_EXPECT_NOT_NULL(test, strstr(line, " demoted=18446744073709551615\n"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(line, " submitted=18446744073709551615 "));
	KUNIT_EXPECT_NOT_NULL(test, strstr(line, " inline=18446744073709551615 "));
}

/*
 * The queue engine against real split rings. The in-test device serves
 * each ring from the driver's notify: it completes new buffers at once
 * (as a sync queue's device does inside the kick), holds them, or uses
 * them twice; held buffers are completed later, with an interrupt when
 * the driver's ring asks for one.
 */
#define TEST_RING	8
#define TEST_FIT	(TEST_RING / 2)	/* two descriptors a buffer, no indirect */
#define TEST_NVQS	3
#define TEST_HIPRIO	0
#define TEST_REQ	1
#define TEST_SYNC	2

/* TEST_LAG: each kick completes what the previous one left and holds its own */
enum test_mode { TEST_INLINE, TEST_HOLD, TEST_DOUBLE, TEST_LAG };

struct test_ring {
	void *pages;
	/*
	 * A device runs one queue's notifications one at a time: the test's
	 * kicks (a submitter's, a dispatch work's on another CPU) and
	 * releases too. Protects the fields below.
	 */
	spinlock_t lock;
	struct vring vr;
	u16 last_avail, used_idx;
	enum test_mode mode;
	bool release_on_kick;	/* complete the held buffers after new ones */
	bool mute;		/* never call the driver's callback */
	bool notify_fails;	/* the transport cannot deliver a kick */
	u16 held[TEST_RING];
	unsigned int nheld;
	unsigned int kicks, kicks_armed, irqs;
};

struct test_dev {
	struct virtio_device vdev;
	struct vfsync_dev fs;
	struct vfsync_vq vqs[TEST_NVQS];
	struct test_ring rings[TEST_NVQS];
	unsigned int reaper_tries;	/* the played reaper lets go after these */
};

struct test_buf {
	struct vfsync_buf buf;
	struct scatterlist sg[2];
	struct scatterlist *sgs[2];
	u8 data[64];
	unsigned int sent, completed, failed;
	int err;
	struct task_struct *completer;	/* who ended it */
};

static struct test_buf *to_tb(struct vfsync_buf *buf)
{
	return container_of(buf, struct test_buf, buf);
}

static void test_sent_locked(struct vfsync_buf *buf)
{
	to_tb(buf)->sent++;
}

static int test_complete(struct vfsync_buf *buf)
{
	to_tb(buf)->completed++;
	to_tb(buf)->err = buf->error;
	to_tb(buf)->completer = current;
	return 0;
}

static void test_fail(struct vfsync_buf *buf, int err)
{
	to_tb(buf)->failed++;
	to_tb(buf)->err = err;
}

static const struct vfsync_buf_ops test_buf_ops = {
	.sent_locked = test_sent_locked,
	.complete = test_complete,
	.fail = test_fail,
};

/* A buffer the upper layer let take a sync queue (@sync) or not */
static struct test_buf *test_buf(struct kunit *test, bool sync)
{
	struct test_buf *tb = kunit_kzalloc(test, sizeof(*tb), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tb);
	sg_init_one(&tb->sg[0], tb->data, 32);
	sg_init_one(&tb->sg[1], tb->data + 32, 32);
	tb->sgs[0] = &tb->sg[0];
	tb->sgs[1] = &tb->sg[1];
	tb->buf.ops = &test_buf_ops;
	tb->buf.sgs = tb->sgs;
	tb->buf.out_sgs = 1;
	tb->buf.in_sgs = 1;
	tb->buf.out_bytes = 32;
	tb->buf.in_bytes = 32;
	tb->buf.sync = sync;
	INIT_LIST_HEAD(&tb->buf.list);
	return tb;
}

#define TEST_SYNC_OK	true	/* e.g. GETATTR */
#define TEST_ASYNC	false	/* e.g. FSYNC or a background request */

/* Park one buffer: fill the held request ring and submit one more */
static void test_fill_request_ring(struct kunit *test, struct test_dev *td,
				   struct test_buf **tb)
{
	unsigned int i;

	td->rings[TEST_REQ].mode = TEST_HOLD;
	for (i = 0; i <= TEST_FIT; i++) {
		tb[i] = test_buf(test, TEST_ASYNC);
		KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &tb[i]->buf), 0);
	}
}

static struct test_dev *to_td(struct virtqueue *vq)
{
	return container_of(vq->vdev, struct test_dev, vdev);
}

static void test_push(struct test_dev *td, unsigned int index, u16 head)
{
	struct test_ring *r = &td->rings[index];
	struct vring_used_elem *e = &r->vr.used->ring[r->used_idx % TEST_RING];

	lockdep_assert_held(&r->lock);
	e->id = cpu_to_virtio32(&td->vdev, head);
	e->len = cpu_to_virtio32(&td->vdev, 0);
	virtio_wmb(true);
	r->used_idx++;
	r->vr.used->idx = cpu_to_virtio16(&td->vdev, r->used_idx);
	virtio_mb(true);
	if (!(virtio16_to_cpu(&td->vdev, r->vr.avail->flags) &
	      VRING_AVAIL_F_NO_INTERRUPT)) {
		r->irqs++;
		if (!r->mute)
			vring_interrupt(0, td->vqs[index].vq);
	}
}

static void test_release_locked(struct test_dev *td, unsigned int index)
{
	struct test_ring *r = &td->rings[index];
	unsigned int i;

	lockdep_assert_held(&r->lock);
	for (i = 0; i < r->nheld; i++)
		test_push(td, index, r->held[i]);
	r->nheld = 0;
}

/* Complete what the device holds on ring @index */
static void test_release(struct test_dev *td, unsigned int index)
{
	struct test_ring *r = &td->rings[index];

	spin_lock(&r->lock);
	test_release_locked(td, index);
	spin_unlock(&r->lock);
}

static bool test_notify(struct virtqueue *vq)
{
	struct test_dev *td = to_td(vq);
	struct test_ring *r = &td->rings[vq->index];
	u16 avail, head;
	bool ok;

	spin_lock(&r->lock);
	r->kicks++;
	/* Would this kick's completions interrupt? */
	if (!(virtio16_to_cpu(&td->vdev, r->vr.avail->flags) &
	      VRING_AVAIL_F_NO_INTERRUPT))
		r->kicks_armed++;
	if (r->mode == TEST_LAG)
		test_release_locked(td, vq->index);
	avail = virtio16_to_cpu(&td->vdev, READ_ONCE(r->vr.avail->idx));
	virtio_rmb(true);
	while (r->last_avail != avail) {
		head = virtio16_to_cpu(&td->vdev,
				       r->vr.avail->ring[r->last_avail % TEST_RING]);
		r->last_avail++;
		switch (r->mode) {
		case TEST_HOLD:
		case TEST_LAG:
			r->held[r->nheld++] = head;
			break;
		case TEST_DOUBLE:
			test_push(td, vq->index, head);
			fallthrough;
		case TEST_INLINE:
			test_push(td, vq->index, head);
			break;
		}
	}
	if (r->release_on_kick)
		test_release_locked(td, vq->index);
	ok = !r->notify_fails;
	spin_unlock(&r->lock);
	return ok;
}

/* The driver's own callback */
static void test_callback(struct virtqueue *vq)
{
	vfsync_vq_done(vq);
}

/* Wait, a bounded time, for a buffer's end that a work item makes */
static void test_wait_end(struct test_buf *tb)
{
	unsigned int i;

	for (i = 0; i < 100 && !READ_ONCE(tb->completed) &&
	     !READ_ONCE(tb->failed); i++)
		msleep(20);
}

static void test_reset(struct virtio_device *vdev)
{
}

/* The virtio core's config lock, which config_changed is called under */
static DEFINE_SPINLOCK(test_config_lock);
/* The status a test device reports; reading it may sleep (virtio-ccw) */
static u8 test_status;
static bool test_status_atomic;	/* it was read where sleeping is not allowed */

static u8 test_get_status(struct virtio_device *vdev)
{
	if (!preemptible())
		test_status_atomic = true;
	return test_status;
}

static const struct virtio_config_ops test_config_ops = {
	.reset = test_reset,
	.get_status = test_get_status,
};

/* Another CPU inside its kick holds the sync queue's lock */
static bool test_lock_taken(struct vfsync_vq *fsvq)
{
	return true;
}

static bool test_kicking(struct vfsync_vq *fsvq)
{
	return true;
}

static void test_busy(struct kunit *test, bool busy)
{
	if (busy) {
		kunit_activate_static_stub(test, vfsync_sync_lock_taken,
					   test_lock_taken);
		kunit_activate_static_stub(test, vfsync_sync_kicking,
					   test_kicking);
	} else {
		kunit_deactivate_static_stub(test, vfsync_sync_lock_taken);
		kunit_deactivate_static_stub(test, vfsync_sync_kicking);
	}
}

/* A reaper holds it for td->reaper_tries tries */
static bool test_reaper_holds(struct vfsync_vq *fsvq)
{
	struct test_dev *td = kunit_get_current_test()->priv;

	if (!td->reaper_tries)
		return false;
	td->reaper_tries--;
	return true;
}

static int vfsync_engine_init(struct kunit *test)
{
	static const enum vfsync_vq_kind kinds[TEST_NVQS] = {
		VFSYNC_KIND_HIPRIO, VFSYNC_KIND_REQUEST, VFSYNC_KIND_SYNC,
	};
	static const char *const names[TEST_NVQS] = {
		"hiprio", "request.0", "sync.0",
	};
	size_t size = vring_size(TEST_RING, PAGE_SIZE);
	struct test_dev *td;
	unsigned int i;

	/* The driver's workqueue, also where its init is blacklisted */
	KUNIT_ASSERT_EQ(test, vfsync_wq_init(), 0);
	td = kunit_kzalloc(test, sizeof(*td), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, td);
	INIT_LIST_HEAD(&td->vdev.vqs);
	spin_lock_init(&td->vdev.vqs_list_lock);
	td->vdev.config = &test_config_ops;
	td->vdev.priv = &td->fs;

	vfsync_init_dev(&td->fs);
	td->fs.vdev = &td->vdev;
	td->fs.vqs = td->vqs;
	td->fs.nvqs = TEST_NVQS;
	td->fs.num_request_queues = 1;
	td->fs.num_sync_queues = 1;
	td->fs.request_queue_size = TEST_RING;
	td->fs.sync_queue_size = TEST_RING;
	td->fs.req_map = kunit_kcalloc(test, nr_cpu_ids, sizeof(unsigned int),
				       GFP_KERNEL);
	td->fs.sync_map = kunit_kcalloc(test, nr_cpu_ids, sizeof(unsigned int),
					GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, td->fs.req_map);
	KUNIT_ASSERT_NOT_NULL(test, td->fs.sync_map);
	for (i = 0; i < nr_cpu_ids; i++) {
		td->fs.req_map[i] = TEST_REQ;
		td->fs.sync_map[i] = TEST_SYNC;
	}

	for (i = 0; i < TEST_NVQS; i++) {
		struct test_ring *r = &td->rings[i];

		spin_lock_init(&r->lock);
		vfsync_init_vq(&td->fs, &td->vqs[i], kinds[i], names[i]);
		r->pages = alloc_pages_exact(size, GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, r->pages);
		vring_init(&r->vr, TEST_RING, r->pages, PAGE_SIZE);
		td->vqs[i].vq = vring_new_virtqueue(i, TEST_RING, PAGE_SIZE,
						    &td->vdev, true, false,
						    r->pages, test_notify,
						    test_callback, names[i]);
		KUNIT_ASSERT_NOT_NULL(test, td->vqs[i].vq);
		if (kinds[i] == VFSYNC_KIND_SYNC)
			virtqueue_disable_cb(td->vqs[i].vq);
	}
	vfsync_start_all_queues(&td->fs);
	test->priv = td;
	return 0;
}

static void vfsync_engine_exit(struct kunit *test)
{
	struct test_dev *td = test->priv;
	unsigned int i;

	if (!td)
		return;
	flush_work(&td->fs.fail_work);
	for (i = 0; i < TEST_NVQS; i++) {
		flush_work(&td->vqs[i].done_work);
		flush_work(&td->vqs[i].dispatch_work);
	}
	for (i = 0; i < TEST_NVQS; i++) {
		if (td->vqs[i].vq)
			vring_del_virtqueue(td->vqs[i].vq);
		free_pages_exact(td->rings[i].pages,
				 vring_size(TEST_RING, PAGE_SIZE));
	}
}

#define STAT(td, q, f)	atomic64_read(&(td)->vqs[q].stats.f)

/* A sync request completes inside its kick: inline, no interrupt. */
static void vfsync_test_engine_inline(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_buf *a = test_buf(test, TEST_SYNC_OK);

	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, inline_done), 1);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, deferred), 0);
	KUNIT_EXPECT_EQ(test, td->rings[TEST_SYNC].irqs, 0U);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&td->vqs[TEST_SYNC].in_flight), 0);
	KUNIT_EXPECT_EQ(test, td->vqs[TEST_SYNC].outstanding, 0U);
}

/*
 * A sync queue is kicked whatever the device's ring says: the device runs
 * the request inside the notification, so a kick left out on a device's
 * suppression hint would leave the kicker reaping nothing.
 */
static void vfsync_test_engine_kick_suppressed(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_ring *r = &td->rings[TEST_SYNC];
	struct test_buf *a = test_buf(test, TEST_SYNC_OK);

	r->vr.used->flags = cpu_to_virtio16(&td->vdev, VRING_USED_F_NO_NOTIFY);
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	KUNIT_EXPECT_EQ(test, r->kicks, 1U);
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, inline_done), 1);
}

/*
 * A device that stops completing sync requests inside the kick (QEMU after
 * its timeout runs the queue as an ordinary one) would have every request
 * kicked with preemption off and then wait for an interrupt: after
 * VFSYNC_DEMOTE_MISSES such kicks in a row the queue is set aside and its
 * CPU's requests take the request queue; a probe that completes inline
 * takes it back.
 */
static void vfsync_test_engine_demote(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_ring *r = &td->rings[TEST_SYNC];
	struct test_buf *tb;
	unsigned int i, req_kicks;

	r->mode = TEST_LAG;
	for (i = 0; i < VFSYNC_DEMOTE_MISSES; i++) {
		tb = test_buf(test, TEST_SYNC_OK);
		KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &tb->buf), 0);
	}
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, inline_done), 0);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, demoted), 1);
	KUNIT_EXPECT_EQ(test, r->kicks, VFSYNC_DEMOTE_MISSES);

	/* Set aside: the next ones take the request queue, no sync kick */
	req_kicks = td->rings[TEST_REQ].kicks;
	tb = test_buf(test, TEST_SYNC_OK);
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &tb->buf), 0);
	test_wait_end(tb);
	KUNIT_EXPECT_EQ(test, tb->completed, 1U);
	KUNIT_EXPECT_EQ(test, r->kicks, VFSYNC_DEMOTE_MISSES);
	KUNIT_EXPECT_EQ(test, td->rings[TEST_REQ].kicks, req_kicks + 1);

	/* The device recovers: a probe finds it and the queue is back */
	r->mode = TEST_INLINE;
	test_release(td, TEST_SYNC);
	for (i = 1; i < VFSYNC_DEMOTED_PROBE && !STAT(td, TEST_SYNC, inline_done);
	     i++) {
		tb = test_buf(test, TEST_SYNC_OK);
		KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &tb->buf), 0);
	}
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, inline_done), 1);
	KUNIT_EXPECT_EQ(test, r->kicks, VFSYNC_DEMOTE_MISSES + 1);
	tb = test_buf(test, TEST_SYNC_OK);
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &tb->buf), 0);
	KUNIT_EXPECT_EQ(test, tb->completed, 1U);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, inline_done), 2);
	flush_work(&td->vqs[TEST_REQ].done_work);
}

/*
 * On a shared interrupt line the callback runs for any used buffer, also
 * one a kicker reaps itself: with nothing outstanding (the callback not
 * armed) it must not queue the reaping work. Preemption stays off so that
 * the work, if queued, cannot have run by the time it is looked at.
 */
static void vfsync_test_engine_shared_irq(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_buf *a = test_buf(test, TEST_SYNC_OK);
	bool pending;

	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	KUNIT_ASSERT_EQ(test, a->completed, 1U);
	preempt_disable();
	vfsync_vq_done(td->vqs[TEST_SYNC].vq);
	pending = work_pending(&td->vqs[TEST_SYNC].done_work);
	preempt_enable();
	KUNIT_EXPECT_FALSE_MSG(test, pending,
			       "an unarmed sync queue's callback queued its work");
}

/*
 * While an earlier buffer is outstanding, the
 * next kick goes out with the callback disabled (its inline completion
 * raises no interrupt), and of what the kicker reaps only its own buffer
 * counts as inline; the earlier one is deferred.
 */
static void vfsync_test_engine_deferred_by_kicker(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_ring *r = &td->rings[TEST_SYNC];
	struct test_buf *a = test_buf(test, TEST_SYNC_OK);
	struct test_buf *b = test_buf(test, TEST_SYNC_OK);

	r->mode = TEST_HOLD;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	KUNIT_EXPECT_EQ(test, a->completed, 0U);
	KUNIT_EXPECT_EQ(test, td->vqs[TEST_SYNC].outstanding, 1U);
	/* Outstanding: the callback is armed between kicks */
	KUNIT_EXPECT_FALSE(test, virtio16_to_cpu(&td->vdev, r->vr.avail->flags) &
			   VRING_AVAIL_F_NO_INTERRUPT);

	r->mode = TEST_INLINE;
	r->release_on_kick = true;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &b->buf), 0);
	flush_work(&td->vqs[TEST_SYNC].done_work);
	test_wait_end(a);

	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, b->completed, 1U);
	/*
	 * The kicker ends its own request; another task's (or a background
	 * one) is ended by a work item, as in-tree virtiofs ends them all:
	 * never under whatever the kicker holds.
	 */
	KUNIT_EXPECT_PTR_EQ(test, b->completer, current);
	KUNIT_EXPECT_PTR_NE(test, a->completer, current);
	KUNIT_EXPECT_EQ_MSG(test, r->kicks_armed, 0U,
			    "the callback was armed during a kick");
	KUNIT_EXPECT_EQ_MSG(test, r->irqs, 0U,
			    "inline completions raised interrupts");
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, inline_done), 1);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, deferred), 1);
	KUNIT_EXPECT_EQ(test, td->vqs[TEST_SYNC].outstanding, 0U);
	/* Nothing outstanding: disabled again */
	KUNIT_EXPECT_TRUE(test, virtio16_to_cpu(&td->vdev, r->vr.avail->flags) &
			  VRING_AVAIL_F_NO_INTERRUPT);
}

/* A buffer the device finishes later is ended by the callback's work. */
static void vfsync_test_engine_deferred_by_callback(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_ring *r = &td->rings[TEST_SYNC];
	struct test_buf *a = test_buf(test, TEST_SYNC_OK);

	r->mode = TEST_HOLD;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	test_release(td, TEST_SYNC);
	KUNIT_EXPECT_EQ(test, r->irqs, 1U);
	flush_work(&td->vqs[TEST_SYNC].done_work);
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, deferred), 1);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, inline_done), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&td->vqs[TEST_SYNC].in_flight), 0);
}

/*
 * A lock held by a reaper (done_work, which only takes buffers off the
 * used ring) is worth a short wait: the request still completes inside
 * its kick. One held by a kicker, inside a host operation, is not
 * (vfsync_test_engine_busy).
 */
static void vfsync_test_engine_busy_reaper(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_buf *a = test_buf(test, TEST_SYNC_OK);

	td->reaper_tries = 3;
	kunit_activate_static_stub(test, vfsync_sync_lock_taken,
				   test_reaper_holds);
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	kunit_deactivate_static_stub(test, vfsync_sync_lock_taken);
	flush_work(&td->vqs[TEST_REQ].done_work);
	KUNIT_EXPECT_EQ(test, td->reaper_tries, 0U);
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, inline_done), 1);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, busy), 0);
}

/*
 * A sync queue whose lock is taken (on SMP: another CPU
 * inside its kick) is never waited for. The submitter falls back to the
 * request queue (busy, fallback), and done_work leaves the reaping to
 * the holder. Uniprocessor UML cannot have a second CPU in the kick (and
 * a failed trylock is a BUG there): test_busy() plays that CPU.
 */
static void vfsync_test_engine_busy(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct vfsync_vq *sq = &td->vqs[TEST_SYNC];
	struct test_buf *a = test_buf(test, TEST_SYNC_OK);
	struct test_buf *b = test_buf(test, TEST_SYNC_OK);
	struct test_buf *c = test_buf(test, TEST_SYNC_OK);

	/* Busy: the request takes the request queue */
	test_busy(test, true);
	KUNIT_EXPECT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	test_busy(test, false);
	flush_work(&td->vqs[TEST_REQ].done_work);
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, busy), 1);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, fallback), 1);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, submitted), 0);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_REQ, submitted), 1);

	/* done_work meets a held lock: it returns, the holder reaps */
	td->rings[TEST_SYNC].mode = TEST_HOLD;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &b->buf), 0);
	td->rings[TEST_SYNC].mute = true;
	test_release(td, TEST_SYNC);
	test_busy(test, true);
	sq->done_work.func(&sq->done_work);
	test_busy(test, false);
	KUNIT_EXPECT_EQ(test, b->completed, 0U);
	KUNIT_EXPECT_TRUE(test, test_bit(VFSYNC_VQ_REAP, &sq->flags));

	/* The next holder's reap takes it (deferred), its unlock re-runs done_work */
	td->rings[TEST_SYNC].mode = TEST_INLINE;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &c->buf), 0);
	flush_work(&sq->done_work);
	test_wait_end(b);
	KUNIT_EXPECT_EQ(test, b->completed, 1U);
	KUNIT_EXPECT_EQ(test, c->completed, 1U);
	KUNIT_EXPECT_FALSE(test, test_bit(VFSYNC_VQ_REAP, &sq->flags));
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, deferred), 1);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, inline_done), 1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&sq->in_flight), 0);
}

/*
 * What is off sync queues, or larger than a
 * sync ring can take without indirect descriptors, takes the request
 * queue without counting as a fallback.
 */
static void vfsync_test_engine_routing(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_buf *a = test_buf(test, TEST_ASYNC);
	struct test_buf *b = test_buf(test, TEST_SYNC_OK);

	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	td->fs.sync_queue_size = 1;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &b->buf), 0);
	flush_work(&td->vqs[TEST_REQ].done_work);
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, b->completed, 1U);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_REQ, submitted), 2);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, submitted), 0);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, fallback), 0);
}

/*
 * A request that meets a full queue is parked, stays
 * parked (at the head) while the queue is still full when retried, and
 * goes out once a completion makes room.
 */
static void vfsync_test_engine_park(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct vfsync_vq *rq = &td->vqs[TEST_REQ];
	struct test_buf *tb[TEST_FIT + 1];
	unsigned int i;

	test_fill_request_ring(test, td, tb);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_REQ, full), 1);
	KUNIT_EXPECT_EQ(test, tb[TEST_FIT]->sent, 0U);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&rq->in_flight), TEST_FIT + 1);

	/* A retry while still full keeps it parked */
	rq->dispatch_work.func(&rq->dispatch_work);
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_REQ, full), 2);
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry_or_null(&rq->queued_reqs,
							   struct vfsync_buf, list),
			    &tb[TEST_FIT]->buf);

	/* Room again: done_work schedules the retry, which sends it */
	td->rings[TEST_REQ].mode = TEST_INLINE;
	test_release(td, TEST_REQ);
	flush_work(&rq->done_work);
	flush_work(&rq->dispatch_work);
	flush_work(&rq->done_work);
	for (i = 0; i <= TEST_FIT; i++)
		KUNIT_EXPECT_EQ_MSG(test, tb[i]->completed, 1U, "buffer %u", i);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&rq->in_flight), 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&rq->queued_reqs));
}

/* A completion that frees room right after a retry met the full queue */
static void test_release_now(struct vfsync_vq *rq)
{
	struct test_dev *td = container_of(rq, struct test_dev, vqs[TEST_REQ]);

	td->rings[TEST_REQ].mode = TEST_INLINE;
	td->rings[TEST_REQ].mute = true;
	test_release(td, TEST_REQ);
	td->rings[TEST_REQ].mute = false;
	/* Its interrupt's work, at once */
	rq->done_work.func(&rq->done_work);
}

/*
 * The completion that makes room can land right after
 * a retry met the full queue (test_release_now, put there). The retried
 * request must already be back on the list for that completion's work to
 * see it and schedule another retry; else it stays parked for good.
 */
static void vfsync_test_engine_repark_race(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct vfsync_vq *rq = &td->vqs[TEST_REQ];
	struct test_buf *tb[TEST_FIT + 1];
	unsigned int i;

	test_fill_request_ring(test, td, tb);
	kunit_activate_static_stub(test, vfsync_retry_met_full,
				   test_release_now);
	rq->dispatch_work.func(&rq->dispatch_work);
	kunit_deactivate_static_stub(test, vfsync_retry_met_full);
	flush_work(&rq->dispatch_work);
	flush_work(&rq->done_work);
	for (i = 0; i <= TEST_FIT; i++)
		KUNIT_EXPECT_EQ_MSG(test, tb[i]->completed, 1U, "buffer %u", i);
	KUNIT_EXPECT_TRUE(test, list_empty(&rq->queued_reqs));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&rq->in_flight), 0);
}

/*
 * A device that uses a buffer twice breaks the ring.
 * The driver resets the device and ends what it held with -EIO, so no
 * request (and no unmount draining the queues) waits for it forever.
 */
static void vfsync_test_engine_broken(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct vfsync_vq *sq = &td->vqs[TEST_SYNC];
	struct test_buf *a = test_buf(test, TEST_SYNC_OK);
	struct test_buf *b = test_buf(test, TEST_SYNC_OK);
	struct test_buf *c = test_buf(test, TEST_SYNC_OK);

	td->rings[TEST_SYNC].mode = TEST_HOLD;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	td->rings[TEST_SYNC].mode = TEST_DOUBLE;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &b->buf), 0);
	KUNIT_EXPECT_EQ(test, b->completed, 1U);
	KUNIT_EXPECT_TRUE(test, virtqueue_is_broken(sq->vq));

	flush_work(&td->fs.fail_work);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(td->fs.failed));
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, a->err, -EIO);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&sq->in_flight), 0);

	/* The queues stay stopped, even when a mount starts them */
	vfsync_start_all_queues(&td->fs);
	KUNIT_EXPECT_EQ(test, vfsync_submit(&td->fs, &c->buf), -ENOTCONN);
	KUNIT_EXPECT_EQ(test, c->sent, 0U);
}

/*
 * Removal: once the queues are torn down no work of theirs may run or be
 * scheduled, whatever the device does: the virtqueues are deleted next.
 * A late used element with its interrupt must not reach the ring.
 */
static void vfsync_test_engine_remove_late_irq(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct vfsync_vq *sq = &td->vqs[TEST_SYNC];
	struct test_buf *a = test_buf(test, TEST_SYNC_OK);
	unsigned int i;

	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	vfsync_remove_queues(&td->fs);
	for (i = 0; i < TEST_NVQS; i++) {
		KUNIT_EXPECT_FALSE(test, work_pending(&td->vqs[i].done_work));
		KUNIT_EXPECT_FALSE(test, work_pending(&td->vqs[i].dispatch_work));
	}

	/* A hostile or slow device: a used element after the reset */
	virtqueue_enable_cb(sq->vq);
	spin_lock(&td->rings[TEST_SYNC].lock);
	test_push(td, TEST_SYNC, 0);
	spin_unlock(&td->rings[TEST_SYNC].lock);
	KUNIT_EXPECT_EQ(test, td->rings[TEST_SYNC].irqs, 1U);
	KUNIT_EXPECT_FALSE_MSG(test, work_pending(&sq->done_work),
			       "a queue's work was scheduled after removal");
	flush_work(&sq->done_work);
	KUNIT_EXPECT_FALSE_MSG(test, virtqueue_is_broken(sq->vq),
			       "a queue's work read the ring after removal");
	KUNIT_EXPECT_FALSE(test, work_pending(&td->fs.fail_work));
}

/* The device holds @a on the request queue and @b on the sync queue */
static void hold_two(struct kunit *test, struct test_dev *td,
		     struct test_buf *a, struct test_buf *b)
{
	td->rings[TEST_REQ].mode = TEST_HOLD;
	td->rings[TEST_SYNC].mode = TEST_HOLD;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &b->buf), 0);
}

/*
 * After fail_work for a device that is gone: @a (request queue) and @b
 * (sync queue), which it held, ended with -ENOTCONN, the device is failed
 * and its queues hold nothing.
 */
static void expect_device_gone(struct kunit *test, struct test_dev *td,
			       struct test_buf *a, struct test_buf *b)
{
	flush_work(&td->fs.fail_work);
	test_wait_end(a);
	test_wait_end(b);
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, a->err, -ENOTCONN);
	KUNIT_EXPECT_EQ(test, b->completed, 1U);
	KUNIT_EXPECT_EQ(test, b->err, -ENOTCONN);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(td->fs.failed));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&td->vqs[TEST_REQ].in_flight), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&td->vqs[TEST_SYNC].in_flight), 0);
}

/*
 * Every queue broken at once (the transport gave up on the device): what
 * the queues held ends with -ENOTCONN, the device is reset and kept
 * failed, so that no waiter and no unmount hangs for a removal that may
 * never come. The next submission is what notices it.
 */
static void vfsync_test_engine_all_broken(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_buf *a = test_buf(test, TEST_ASYNC);
	struct test_buf *b = test_buf(test, TEST_SYNC_OK);
	struct test_buf *c = test_buf(test, TEST_ASYNC);

	hold_two(test, td, a, b);
	KUNIT_EXPECT_EQ(test, a->completed + b->completed, 0U);

	virtio_break_device(&td->vdev);
	KUNIT_EXPECT_NE(test, vfsync_submit(&td->fs, &c->buf), 0);
	expect_device_gone(test, td, a, b);
}

/*
 * The device asks for a reset (VIRTIO_CONFIG_S_NEEDS_RESET, through the
 * config change that calls vfsync_needs_reset()): no queue is broken yet,
 * and no submission comes to notice anything. fail_work breaks them all
 * and what they held ends with -ENOTCONN, as for a device that is gone.
 */
static void vfsync_test_engine_needs_reset(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_buf *a = test_buf(test, TEST_ASYNC);
	struct test_buf *b = test_buf(test, TEST_SYNC_OK);

	hold_two(test, td, a, b);

	vfsync_needs_reset(&td->fs);
	expect_device_gone(test, td, a, b);
	KUNIT_EXPECT_TRUE(test, virtqueue_is_broken(td->vqs[TEST_REQ].vq));
}

/*
 * A config change comes under the virtio core's config lock (a spinlock,
 * maybe in an interrupt): the status is read later, in process context,
 * and only a device asking for a reset loses its requests.
 */
static void vfsync_test_engine_config_changed(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_buf *a = test_buf(test, TEST_ASYNC);
	struct test_buf *b = test_buf(test, TEST_SYNC_OK);

	hold_two(test, td, a, b);

	test_status_atomic = false;
	test_status = VIRTIO_CONFIG_S_DRIVER_OK;
	spin_lock_irq(&test_config_lock);
	vfsync_config_changed_any(&td->fs);
	spin_unlock_irq(&test_config_lock);
	flush_work(&td->fs.fail_work);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(td->fs.needs_reset));
	KUNIT_EXPECT_FALSE(test, virtqueue_is_broken(td->vqs[TEST_REQ].vq));

	test_status |= VIRTIO_CONFIG_S_NEEDS_RESET;
	spin_lock_irq(&test_config_lock);
	vfsync_config_changed_any(&td->fs);
	spin_unlock_irq(&test_config_lock);
	expect_device_gone(test, td, a, b);
	KUNIT_EXPECT_FALSE_MSG(test, test_status_atomic,
			       "get_status() called in atomic context");
}

/*
 * A kick the transport could not deliver, made outside the queue lock
 * (a request queue's): the queue is broken and nothing else will look at
 * it. Its requests end with -ENOTCONN all the same.
 */
static void vfsync_test_engine_notify_failed(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_buf *a = test_buf(test, TEST_ASYNC);

	td->rings[TEST_REQ].mode = TEST_HOLD;
	td->rings[TEST_REQ].notify_fails = true;
	KUNIT_ASSERT_EQ(test, vfsync_submit(&td->fs, &a->buf), 0);
	KUNIT_EXPECT_TRUE(test, virtqueue_is_broken(td->vqs[TEST_REQ].vq));
	flush_work(&td->fs.fail_work);
	test_wait_end(a);
	KUNIT_EXPECT_EQ(test, a->completed, 1U);
	KUNIT_EXPECT_EQ(test, a->err, -ENOTCONN);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(td->fs.failed));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&td->vqs[TEST_REQ].in_flight), 0);
}

/*
 * The kick floor kicks the sync queue with nothing on
 * it, one timed kick at a time, and refuses what it cannot measure.
 */
static void vfsync_test_engine_floor(struct kunit *test)
{
	struct test_dev *td = test->priv;
	struct test_ring *r = &td->rings[TEST_SYNC];
	struct vfsync_floor *f = &td->fs.floor;

	KUNIT_EXPECT_EQ(test, vfsync_floor_run(&td->fs, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vfsync_floor_run(&td->fs, VFSYNC_FLOOR_MAX + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, r->kicks, 0U);

	KUNIT_ASSERT_EQ(test, vfsync_floor_run(&td->fs, 5), 0);
	KUNIT_EXPECT_EQ(test, r->kicks, 5U);
	KUNIT_EXPECT_EQ(test, f->kicks, 5ULL);
	KUNIT_EXPECT_EQ(test, f->busy, 0ULL);
	KUNIT_EXPECT_LE(test, f->min_ns, f->median_ns);
	KUNIT_EXPECT_LE(test, f->median_ns, f->max_ns);
	KUNIT_EXPECT_LE(test, f->mean_ns, f->max_ns);
	KUNIT_EXPECT_GE(test, f->mean_ns, f->min_ns);
	/* Nothing added, nothing reaped, no interrupt */
	KUNIT_EXPECT_EQ(test, STAT(td, TEST_SYNC, submitted), 0);
	KUNIT_EXPECT_EQ(test, (unsigned int)r->last_avail, 0U);
	KUNIT_EXPECT_EQ(test, r->irqs, 0U);

	/* Another CPU in its kick: skipped and counted, never waited for */
	test_busy(test, true);
	KUNIT_EXPECT_EQ(test, vfsync_floor_run(&td->fs, 3), 0);
	test_busy(test, false);
	KUNIT_EXPECT_EQ(test, f->kicks, 0ULL);
	KUNIT_EXPECT_EQ(test, f->busy, 3ULL);
	KUNIT_EXPECT_EQ(test, r->kicks, 5U);

	td->fs.num_sync_queues = 0;
	KUNIT_EXPECT_EQ(test, vfsync_floor_run(&td->fs, 1), -EOPNOTSUPP);
	td->fs.num_sync_queues = 1;
	WRITE_ONCE(td->fs.failed, true);
	KUNIT_EXPECT_EQ(test, vfsync_floor_run(&td->fs, 1), -ENODEV);
	KUNIT_EXPECT_EQ(test, r->kicks, 5U);
}

static struct kunit_case vfsync_engine_cases[] = {
	KUNIT_CASE(vfsync_test_engine_inline),
	KUNIT_CASE(vfsync_test_engine_kick_suppressed),
	KUNIT_CASE(vfsync_test_engine_shared_irq),
	KUNIT_CASE(vfsync_test_engine_demote),
	KUNIT_CASE(vfsync_test_engine_deferred_by_kicker),
	KUNIT_CASE(vfsync_test_engine_deferred_by_callback),
	KUNIT_CASE(vfsync_test_engine_busy),
	KUNIT_CASE(vfsync_test_engine_busy_reaper),
	KUNIT_CASE(vfsync_test_engine_routing),
	KUNIT_CASE(vfsync_test_engine_park),
	KUNIT_CASE(vfsync_test_engine_repark_race),
	KUNIT_CASE(vfsync_test_engine_broken),
	KUNIT_CASE(vfsync_test_engine_remove_late_irq),
	KUNIT_CASE(vfsync_test_engine_all_broken),
	KUNIT_CASE(vfsync_test_engine_needs_reset),
	KUNIT_CASE(vfsync_test_engine_config_changed),
	KUNIT_CASE(vfsync_test_engine_notify_failed),
	KUNIT_CASE(vfsync_test_engine_floor),
	{}
};

static struct kunit_suite vfsync_engine_suite = {
	.name = "virtio_fs_sync_engine",
	.init = vfsync_engine_init,
	.exit = vfsync_engine_exit,
	.test_cases = vfsync_engine_cases,
};

static void vfsync_test_floor_summary(struct kunit *test)
{
	u64 ns[] = { 5, 1, 3, 2 };
	struct vfsync_floor f;

	vfsync_floor_summary(ns, ARRAY_SIZE(ns), 7, &f);
	KUNIT_EXPECT_EQ(test, f.kicks, 4ULL);
	KUNIT_EXPECT_EQ(test, f.busy, 7ULL);
	KUNIT_EXPECT_EQ(test, f.min_ns, 1ULL);
	KUNIT_EXPECT_EQ(test, f.median_ns, 2ULL);	/* the lower middle */
	KUNIT_EXPECT_EQ(test, f.mean_ns, 2ULL);		/* 11 / 4 */
	KUNIT_EXPECT_EQ(test, f.max_ns, 5ULL);

	vfsync_floor_summary(ns, 0, 0, &f);
	KUNIT_EXPECT_EQ(test, f.kicks, 0ULL);
	KUNIT_EXPECT_EQ(test, f.max_ns, 0ULL);
}

static struct kunit_case vfsync_map_cases[] = {
	KUNIT_CASE(vfsync_test_map_sync),
	KUNIT_CASE(vfsync_test_map_spread),
	KUNIT_CASE(vfsync_test_map_edges),
	{}
};

static struct kunit_case vfsync_policy_cases[] = {
	KUNIT_CASE(vfsync_test_eligible),
	KUNIT_CASE(vfsync_test_long_request),
	KUNIT_CASE(vfsync_test_reply),
	KUNIT_CASE(vfsync_test_config),
	KUNIT_CASE(vfsync_test_config_bounds),
	KUNIT_CASE(vfsync_test_cfg_room),
	KUNIT_CASE(vfsync_test_queue_size),
	KUNIT_CASE(vfsync_test_stats_line),
	KUNIT_CASE(vfsync_test_forget_msg),
	KUNIT_CASE(vfsync_test_floor_summary),
	{}
};

static struct kunit_suite vfsync_map_suite = {
	.name = "virtio_fs_sync_maps",
	.test_cases = vfsync_map_cases,
};

static struct kunit_suite vfsync_policy_suite = {
	.name = "virtio_fs_sync_policy",
	.test_cases = vfsync_policy_cases,
};

kunit_test_suites(&vfsync_map_suite, &vfsync_policy_suite, &vfsync_engine_suite);

MODULE_DESCRIPTION("KUnit tests for virtio_fs_sync");
MODULE_LICENSE("GPL");
COMPAT_MODULE_IMPORT_KUNIT_NS();
