// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the pure parts of virtio_fs_sync: CPU->queue maps,
 * the sync-queue eligibility policy, reply validation and configuration
 * parsing. Shapes with many CPUs are tested through CPU id lists, so they
 * run on uniprocessor UML as well.
 */

#include <kunit/test.h>
#include <linux/fuse.h>
#include <linux/module.h>
#include <linux/slab.h>

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
		/* Dense ids: CPU c uses queue c mod S */
		KUNIT_EXPECT_EQ(test, q, i % s);
		mb->used[q]++;
	}
	/* Every queue has a CPU, and none has two more than another */
	for (i = 0; i < min(n, s); i++)
		KUNIT_EXPECT_GE_MSG(test, mb->used[i], n / s,
				    "ncpus %u sync %u queue %u", n, s, i);
	for (i = 0; i < s; i++)
		KUNIT_EXPECT_LE(test, mb->used[i], DIV_ROUND_UP(n, s));
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

	/* Ids beyond the map are ignored, not written */
	vfsync_map_sync(map, ARRAY_SIZE(map), cpus, ARRAY_SIZE(cpus), 2, 1);
	KUNIT_EXPECT_EQ(test, map[3], 1U);
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

static bool opcode_may_block(u32 opcode)
{
	return opcode == FUSE_SETLKW || opcode == FUSE_IOCTL ||
	       opcode == FUSE_POLL || opcode == FUSE_INTERRUPT ||
	       opcode == FUSE_NOTIFY_REPLY || opcode == FUSE_FORGET ||
	       opcode == FUSE_BATCH_FORGET;
}

static void vfsync_test_eligible(struct kunit *test)
{
	static const size_t sizes[] = { 0, 64, 4096, 262143, 262144, 262145,
					SIZE_MAX };
	static const size_t maxes[] = { 0, 4096, 262144 };
	unsigned int s, m, flags, opcode;
	bool bg, hiprio, want;

	for (opcode = 0; opcode <= 64; opcode++) {
		for (flags = 0; flags < 4 * ARRAY_SIZE(maxes) * ARRAY_SIZE(sizes); flags++) {
			bg = flags & 1;
			hiprio = flags & 2;
			m = (flags / 4) % ARRAY_SIZE(maxes);
			s = flags / 4 / ARRAY_SIZE(maxes);
			want = !bg && !hiprio && !opcode_may_block(opcode) &&
			       sizes[s] <= maxes[m];
			KUNIT_EXPECT_EQ_MSG(test,
					    vfsync_sync_eligible(opcode, bg, hiprio,
								 sizes[s], maxes[m]),
					    want, "opcode %u bg %d hiprio %d size %zu max %zu",
					    opcode, bg, hiprio, sizes[s], maxes[m]);
		}
	}

	/* CUSE_INIT and unknown opcodes follow the size rule */
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(CUSE_INIT, false, false, 100, 4096));
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(U32_MAX, false, false, 100, 4096));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(U32_MAX, false, false, 4097, 4096));

	/* The ones the contract names */
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_SETLKW, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_IOCTL, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_POLL, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_INTERRUPT, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_NOTIFY_REPLY, false, false, 1,
						      SIZE_MAX));
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_GETATTR, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_TRUE(test, vfsync_sync_eligible(FUSE_SETLK, false, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_READ, true, false, 1, SIZE_MAX));
	KUNIT_EXPECT_FALSE(test, vfsync_sync_eligible(FUSE_READ, false, true, 1, SIZE_MAX));
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
	{ "error -4095", OH, -4095, 42, OH, OH, 0, 0, false, 0 },
	{ "error -4096", OH, -4096, 42, OH, OH, 0, 0, false, -EIO },
	{ "error positive", OH, 1, 42, OH, OH, 0, 0, false, -EIO },
	{ "error INT_MIN", OH, INT_MIN, 42, OH, OH, 0, 0, false, -EIO },
	{ "error with payload", OH + 8, -EIO, 42, OH + 8, OH + 8, 8, 8, false, -EIO },
	{ "used 0", 0, 0, 42, 0, OH + 8, 8, 8, false, -EIO },
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

static struct kunit_case vfsync_map_cases[] = {
	KUNIT_CASE(vfsync_test_map_sync),
	KUNIT_CASE(vfsync_test_map_spread),
	KUNIT_CASE(vfsync_test_map_edges),
	{}
};

static struct kunit_case vfsync_policy_cases[] = {
	KUNIT_CASE(vfsync_test_eligible),
	KUNIT_CASE(vfsync_test_reply),
	KUNIT_CASE(vfsync_test_config),
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

kunit_test_suites(&vfsync_map_suite, &vfsync_policy_suite);

MODULE_DESCRIPTION("KUnit tests for virtio_fs_sync");
MODULE_LICENSE("GPL");
COMPAT_MODULE_IMPORT_KUNIT_NS();
