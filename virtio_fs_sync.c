// SPDX-License-Identifier: GPL-2.0
/*
 * virtio_fs_sync: a virtio-fs driver with the experimental VIRTIO_FS_F_SYNC
 * synchronous queues. Queues: 0 hiprio (FORGET), 1..R interrupt-driven
 * request queues and, with VIRTIO_FS_F_SYNC, R+1..R+S sync queues. The
 * device completes a sync queue's buffers before the kick returns, so the
 * submitter reaps its own reply right after the kick, with no interrupt or
 * wake-up. Documentation/virtio-fs-sync.rst has the contract.
 *
 * This file is the device: configuration, queues, CPU maps, instances by
 * tag, DAX, probe and removal. It knows nothing of FUSE (fuse_glue.c),
 * which calls virtio_fs_sync.h and is called back through vfsync_buf_ops.
 */

#include <linux/cpumask.h>
#include <linux/dax.h>
#include <linux/device.h>
#include <linux/ioport.h>
#include <linux/kobject.h>
#include <linux/memremap.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <linux/virtio_fs.h>
#include <linux/virtio_pci.h>

#include "virtio_fs_sync.h"

/* Config space with the sync-queue count appended (ours, see the contract) */
struct vfsync_config {
	u8 tag[36];
	__le32 num_request_queues;
	__le32 notify_buf_size;
	__le32 num_sync_queues;
} __packed;

#define VFSYNC_SYNC_QUEUES_AT	offsetof(struct vfsync_config, num_sync_queues)

static bool vfsync_param_sync = true;
module_param_named(sync, vfsync_param_sync, bool, 0444);
MODULE_PARM_DESC(sync, "Negotiate VIRTIO_FS_F_SYNC and use sync queues (default: 1)");

static unsigned int vfsync_feature_bit = 1;
module_param_named(sync_feature_bit, vfsync_feature_bit, uint, 0444);
MODULE_PARM_DESC(sync_feature_bit,
		 "Feature bit number of VIRTIO_FS_F_SYNC, 1..23 (default: 1)");

/* 40: right after num_request_queues, where libkrun (40 bytes) appends it */
static unsigned int vfsync_sync_queues_at = VFSYNC_SYNC_QUEUES_AT;
module_param_named(sync_queues_at, vfsync_sync_queues_at, uint, 0444);
MODULE_PARM_DESC(sync_queues_at,
		 "Offset of num_sync_queues in the device's config space, 44 or 40 (default: 44)");

/*
 * Instance list; also serialises probe/remove against mount and unmount and
 * keeps the virtqueues of a listed instance alive.
 */
static DEFINE_MUTEX(vfsync_mutex);
static LIST_HEAD(vfsync_instances);	/* protected by vfsync_mutex */
static struct kset *vfsync_kset;	/* /sys/fs/virtio_fs_sync */

/*
 * Request queues beyond the CPU count stay unmapped, as in in-tree
 * virtiofs, but are still instantiated when sync queues follow: virtio
 * numbers queues densely, so the sync queues start at R + 1 regardless.
 */
int vfsync_parse_config(u32 req_queues, u32 sync_queues, bool sync_feature,
			unsigned int nr_cpus, struct vfsync_qconf *conf)
{
	/* Request and sync queues together, after the hiprio queue */
	const u32 room = VFSYNC_MAX_VQS - VFSYNC_VQ_REQUEST;
	u32 nsync = sync_feature ? sync_queues : 0;

	memset(conf, 0, sizeof(*conf));
	if (!req_queues || !nr_cpus)
		return -EINVAL;

	conf->num_mapped_request_queues = min3(req_queues, (u32)nr_cpus, room);
	nsync = min_t(u32, nsync, nr_cpus);
	/*
	 * Keep as many sync queues as fit after all the request queues; the
	 * subtraction is taken only when req_queues < room.
	 */
	if (req_queues >= room)
		nsync = 0;
	else
		nsync = min(nsync, room - req_queues);

	conf->num_sync_queues = nsync;
	conf->num_request_queues = nsync ? req_queues :
				   conf->num_mapped_request_queues;
	conf->nvqs = VFSYNC_VQ_REQUEST + conf->num_request_queues + nsync;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_parse_config);

/*
 * @map: CPU id -> virtqueue; a listed CPU gets @first_vq + pick, other ids
 * @first_vq. @spread cuts the listed CPUs, in order, into @nqueues
 * contiguous groups; otherwise CPU c gets c mod @nqueues.
 */
static void vfsync_map_cpus(unsigned int *map, unsigned int map_len,
			    const unsigned int *cpus, unsigned int ncpus,
			    unsigned int nqueues, unsigned int first_vq,
			    bool spread)
{
	unsigned int i, q;

	for (i = 0; i < map_len; i++)
		map[i] = first_vq;
	if (!nqueues)
		return;
	for (i = 0; i < ncpus; i++) {
		if (cpus[i] >= map_len)
			continue;
		q = spread ? (unsigned int)((u64)i * nqueues / ncpus) :
			     cpus[i] % nqueues;
		map[cpus[i]] = first_vq + q;
	}
}

/* Request-queue map when the transport has no interrupt affinity */
void vfsync_map_spread(unsigned int *map, unsigned int map_len,
		       const unsigned int *cpus, unsigned int ncpus,
		       unsigned int nqueues, unsigned int first_vq)
{
	vfsync_map_cpus(map, map_len, cpus, ncpus, nqueues, first_vq, true);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_map_spread);

/* As the contract says: CPU c submits on sync queue c mod S */
void vfsync_map_sync(unsigned int *map, unsigned int map_len,
		     const unsigned int *cpus, unsigned int ncpus,
		     unsigned int nqueues, unsigned int first_vq)
{
	vfsync_map_cpus(map, map_len, cpus, ncpus, nqueues, first_vq, false);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_map_sync);

/* The smallest ring among the queues of @kind, UINT_MAX if none */
unsigned int vfsync_min_queue_size(const unsigned int *sizes,
				   const enum vfsync_vq_kind *kinds,
				   unsigned int n, enum vfsync_vq_kind kind)
{
	unsigned int i, size = UINT_MAX;

	for (i = 0; i < n; i++)
		if (kinds[i] == kind)
			size = min(size, sizes[i]);
	return size;
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_min_queue_size);

static void vfsync_ktype_release(struct kobject *kobj)
{
	struct vfsync_dev *fs = container_of(kobj, struct vfsync_dev, kobj);

	kfree(fs->sync_map);
	kfree(fs->req_map);
	kfree(fs->vqs);
	kfree(fs->tag);
	kfree(fs);
}

static const struct kobj_type vfsync_ktype = {
	.release = vfsync_ktype_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = vfsync_sysfs_groups,
};

void vfsync_put(struct vfsync_dev *fs)
{
	mutex_lock(&vfsync_mutex);
	kobject_put(&fs->kobj);
	mutex_unlock(&vfsync_mutex);
}

struct vfsync_dev *vfsync_get(const char *tag)
{
	struct vfsync_dev *fs, *found = NULL;

	mutex_lock(&vfsync_mutex);
	list_for_each_entry(fs, &vfsync_instances, list) {
		if (!strcmp(fs->tag, tag)) {
			kobject_get(&fs->kobj);
			found = fs;
			break;
		}
	}
	mutex_unlock(&vfsync_mutex);
	return found;
}

/* Under vfsync_mutex: a listed device keeps its virtqueues until unlisted */
int vfsync_connect(struct vfsync_dev *fs)
{
	int ret = 0;

	mutex_lock(&vfsync_mutex);
	if (list_empty(&fs->list))
		ret = -ENODEV;
	else if (READ_ONCE(fs->failed))
		ret = -EIO;
	else
		vfsync_start_all_queues(fs);
	mutex_unlock(&vfsync_mutex);
	return ret;
}

void vfsync_disconnect(struct vfsync_dev *fs)
{
	vfsync_stop_all_queues(fs);
	vfsync_drain_all_queues(fs);
}

/* DAX window: the device's shared memory region that file pages map into */

static long vfsync_dax_direct_access(struct dax_device *dax_dev, pgoff_t pgoff,
				     long nr_pages, enum dax_access_mode mode,
				     void **kaddr, compat_dax_pfn_t *pfn)
{
	struct vfsync_dev *fs = dax_get_private(dax_dev);
	phys_addr_t offset = PFN_PHYS(pgoff);
	long max_nr_pages = fs->window_len / PAGE_SIZE - pgoff;

	if (kaddr)
		*kaddr = fs->window_kaddr + offset;
	if (pfn)
		*pfn = compat_dax_pfn(fs->window_phys_addr + offset);
	return min(nr_pages, max_nr_pages);
}

static int vfsync_dax_zero_page_range(struct dax_device *dax_dev,
				      pgoff_t pgoff, size_t nr_pages)
{
	void *kaddr;
	long rc;

	rc = dax_direct_access(dax_dev, pgoff, nr_pages, DAX_ACCESS, &kaddr,
			       NULL);
	if (rc < 0)
		return compat_dax_mem2blk_err(rc);

	memset(kaddr, 0, nr_pages << PAGE_SHIFT);
	dax_flush(dax_dev, kaddr, nr_pages << PAGE_SHIFT);
	return 0;
}

static const struct dax_operations vfsync_dax_ops = {
	.direct_access = vfsync_dax_direct_access,
	.zero_page_range = vfsync_dax_zero_page_range,
};

static void vfsync_cleanup_dax(void *data)
{
	struct dax_device *dax_dev = data;

	kill_dax(dax_dev);
	put_dax(dax_dev);
}

/* No window is not an error: dax=always mounts fail, as in-tree virtiofs */
static int vfsync_setup_dax(struct virtio_device *vdev, struct vfsync_dev *fs)
{
	struct virtio_shm_region cache_reg;
	struct dax_device *dax_dev;
	struct dev_pagemap *pgmap;
	void *kaddr;

	if (!IS_ENABLED(CONFIG_FUSE_DAX))
		return 0;

	if (!virtio_get_shm_region(vdev, &cache_reg,
				   (u8)VIRTIO_FS_SHMCAP_ID_CACHE)) {
		dev_notice(&vdev->dev, "no DAX cache window\n");
		return 0;
	}

	if (!devm_request_mem_region(&vdev->dev, cache_reg.addr, cache_reg.len,
				     dev_name(&vdev->dev))) {
		dev_warn(&vdev->dev, "could not reserve window 0x%llx len 0x%llx\n",
			 cache_reg.addr, cache_reg.len);
		return -EBUSY;
	}

	pgmap = devm_kzalloc(&vdev->dev, sizeof(*pgmap), GFP_KERNEL);
	if (!pgmap)
		return -ENOMEM;
	pgmap->type = MEMORY_DEVICE_FS_DAX;
	/* devm_memremap_pages() wants its own copy of the range */
	pgmap->range = (struct range) {
		.start = (phys_addr_t)cache_reg.addr,
		.end = (phys_addr_t)cache_reg.addr + cache_reg.len - 1,
	};
	pgmap->nr_range = 1;

	kaddr = devm_memremap_pages(&vdev->dev, pgmap);
	if (IS_ERR(kaddr))
		return PTR_ERR(kaddr);

	dax_dev = alloc_dax(fs, &vfsync_dax_ops);
	if (IS_ERR_OR_NULL(dax_dev)) {
		/* Architectures without DAX support */
		if (!dax_dev || PTR_ERR(dax_dev) == -EOPNOTSUPP)
			return 0;
		return PTR_ERR(dax_dev);
	}

	fs->window_kaddr = kaddr;
	fs->window_phys_addr = (phys_addr_t)cache_reg.addr;
	fs->window_len = (phys_addr_t)cache_reg.len;
	fs->dax_dev = dax_dev;
	dev_info(&vdev->dev, "DAX window: 0x%llx bytes at 0x%llx\n",
		 cache_reg.len, cache_reg.addr);

	return devm_add_action_or_reset(&vdev->dev, vfsync_cleanup_dax,
					fs->dax_dev);
}

static int vfsync_read_tag(struct virtio_device *vdev, struct vfsync_dev *fs)
{
	char tag[sizeof_field(struct vfsync_config, tag)];
	char *end;

	virtio_cread_bytes(vdev, offsetof(struct vfsync_config, tag), tag,
			   sizeof(tag));
	end = memchr(tag, '\0', sizeof(tag));
	if (end == tag)
		return -EINVAL;
	if (!end)
		end = tag + sizeof(tag);

	fs->tag = kmemdup_nul(tag, end - tag, GFP_KERNEL);
	if (!fs->tag)
		return -ENOMEM;

	/* Newlines would break mount(8) command lines and the sysfs files */
	if (strchr(fs->tag, '\n')) {
		dev_dbg(&vdev->dev, "refusing a tag with a newline\n");
		return -EINVAL;
	}
	return 0;
}

static bool vfsync_sync_negotiated(struct virtio_device *vdev)
{
	/* Only a bit in the feature table may be tested */
	return vfsync_param_sync && virtio_has_feature(vdev, vfsync_feature_bit);
}

/* VIRTIO_FS_F_SYNC_BUDGET is the bit after VIRTIO_FS_F_SYNC, if a device bit */
static bool vfsync_budget_negotiated(struct virtio_device *vdev)
{
	return vfsync_sync_negotiated(vdev) && vfsync_feature_bit < 23 &&
	       virtio_has_feature(vdev, vfsync_feature_bit + 1);
}

/*
 * What virtio-pci can read of a device-config capability of @cap_len at
 * @offset in a BAR of @bar_len: it maps what the BAR has, at most a page,
 * but checks reads against the capability's claim, which may be larger.
 */
VISIBLE_IF_KUNIT size_t vfsync_cfg_room(u32 offset, u32 cap_len, u64 bar_len)
{
	if (offset >= bar_len)
		return 0;
	return min3((u64)cap_len, bar_len - offset, (u64)PAGE_SIZE);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_cfg_room);

/*
 * Config bytes the transport can read, 0 if it does not say. Modern
 * virtio-pci reads the first usable device-config capability and BUG()s
 * on a read past its mapping (vp_get()); other transports return
 * something (QEMU: all ones) or leave the buffer alone (UML when
 * GET_CONFIG fails).
 */
static size_t vfsync_config_len(struct virtio_device *vdev)
{
#ifdef CONFIG_PCI
	struct device *parent = vdev->dev.parent;
	struct pci_dev *pdev;
	u8 pos, type, bar;
	u32 len, offset;

	if (!parent || !dev_is_pci(parent))
		return 0;
	pdev = to_pci_dev(parent);
	for (pos = pci_find_capability(pdev, PCI_CAP_ID_VNDR); pos;
	     pos = pci_find_next_capability(pdev, pos, PCI_CAP_ID_VNDR)) {
		pci_read_config_byte(pdev, pos + offsetof(struct virtio_pci_cap,
							  cfg_type), &type);
		pci_read_config_byte(pdev, pos + offsetof(struct virtio_pci_cap,
							  bar), &bar);
		if (type != VIRTIO_PCI_CAP_DEVICE_CFG || bar >= PCI_STD_NUM_BARS ||
		    !(pci_resource_flags(pdev, bar) &
		      (IORESOURCE_IO | IORESOURCE_MEM)))
			continue;
		pci_read_config_dword(pdev, pos + offsetof(struct virtio_pci_cap,
							   offset), &offset);
		pci_read_config_dword(pdev, pos + offsetof(struct virtio_pci_cap,
							   length), &len);
		/* Not even num_request_queues: no sync queues, whatever it says */
		return max_t(size_t, vfsync_cfg_room(offset, len,
						     pci_resource_len(pdev, bar)), 1);
	}
#endif
	return 0;
}

/* A config field, 0 if the transport did not fill it in */
static u32 vfsync_cread_le32(struct virtio_device *vdev, unsigned int offset)
{
	__le32 v = 0;

	virtio_cread_bytes(vdev, offset, &v, sizeof(v));
	return le32_to_cpu(v);
}

/* *@tried_sync: sync queues were asked for; a retry without them may work */
static int vfsync_setup_vqs(struct virtio_device *vdev, struct vfsync_dev *fs,
			    bool sync, bool *tried_sync)
{
	struct irq_affinity desc = { .pre_vectors = VFSYNC_VQ_REQUEST };
	size_t cfg_len = vfsync_config_len(vdev);
	unsigned int at = vfsync_sync_queues_at;
	enum vfsync_vq_kind *kinds;
	struct vfsync_qconf conf;
	vq_callback_t **callbacks;
	unsigned int *sizes;
	struct virtqueue **vqs;
	const char **names;
	u32 nreq, nsync = 0;
	unsigned int i;
	int ret;

	*tried_sync = false;
	nreq = vfsync_cread_le32(vdev, offsetof(struct vfsync_config,
						num_request_queues));
	if (sync && cfg_len && cfg_len < at + sizeof(__le32)) {
		dev_warn(&vdev->dev, "VIRTIO_FS_F_SYNC without num_sync_queues at %u (config of %zu bytes): not using sync queues\n",
			 at, cfg_len);
		sync = false;
	}
	if (sync)
		nsync = vfsync_cread_le32(vdev, at);
	/* More than a device can have: read past the end of its config */
	if (nsync > U16_MAX) {
		dev_warn(&vdev->dev, "num_sync_queues at %u reads %#x, past the config space (sync_queues_at=40 reads the count where libkrun's layout has it): not using sync queues\n",
			 at, nsync);
		sync = false;
		nsync = 0;
	}

	ret = vfsync_parse_config(nreq, nsync, sync, nr_cpu_ids, &conf);
	if (ret) {
		dev_err(&vdev->dev, "bad configuration: %u request queues\n",
			nreq);
		return ret;
	}
	if (sync && nsync && !conf.num_sync_queues)
		dev_warn(&vdev->dev, "%u sync queues after %u request queues: not using them\n",
			 nsync, nreq);

	fs->num_request_queues = conf.num_request_queues;
	fs->num_sync_queues = conf.num_sync_queues;
	fs->sync_budget = fs->num_sync_queues && vfsync_budget_negotiated(vdev);
	fs->nvqs = conf.nvqs;
	*tried_sync = fs->num_sync_queues;
	/* Keep the sync queues out of the request queues' IRQ spreading */
	desc.post_vectors = fs->num_sync_queues;

	fs->vqs = kcalloc(fs->nvqs, sizeof(*fs->vqs), GFP_KERNEL);
	fs->req_map = kcalloc(nr_cpu_ids, sizeof(*fs->req_map), GFP_KERNEL);
	if (fs->num_sync_queues)
		fs->sync_map = kcalloc(nr_cpu_ids, sizeof(*fs->sync_map),
				       GFP_KERNEL);
	vqs = kcalloc(fs->nvqs, sizeof(*vqs), GFP_KERNEL);
	callbacks = kcalloc(fs->nvqs, sizeof(*callbacks), GFP_KERNEL);
	names = kcalloc(fs->nvqs, sizeof(*names), GFP_KERNEL);
	sizes = kcalloc(fs->nvqs, sizeof(*sizes), GFP_KERNEL);
	kinds = kcalloc(fs->nvqs, sizeof(*kinds), GFP_KERNEL);
	if (!fs->vqs || !fs->req_map || !vqs || !callbacks || !names ||
	    !sizes || !kinds || (fs->num_sync_queues && !fs->sync_map)) {
		ret = -ENOMEM;
		goto out;
	}

	for (i = 0; i < fs->nvqs; i++) {
		enum vfsync_vq_kind kind;
		char name[VFSYNC_VQ_NAME_LEN];

		if (i == VFSYNC_VQ_HIPRIO) {
			kind = VFSYNC_KIND_HIPRIO;
			strscpy(name, "hiprio", sizeof(name));
		} else if (i < VFSYNC_VQ_REQUEST + fs->num_request_queues) {
			kind = VFSYNC_KIND_REQUEST;
			snprintf(name, sizeof(name), "request.%u",
				 i - VFSYNC_VQ_REQUEST);
		} else {
			kind = VFSYNC_KIND_SYNC;
			snprintf(name, sizeof(name), "sync.%u",
				 i - VFSYNC_VQ_REQUEST - fs->num_request_queues);
		}
		vfsync_init_vq(fs, &fs->vqs[i], kind, name);
		callbacks[i] = vfsync_vq_done;
		names[i] = fs->vqs[i].name;
	}

	ret = compat_find_vqs(vdev, fs->nvqs, vqs, callbacks, names, &desc);
	if (ret < 0)
		goto out;

	for (i = 0; i < fs->nvqs; i++) {
		fs->vqs[i].vq = vqs[i];
		sizes[i] = virtqueue_get_vring_size(vqs[i]);
		kinds[i] = fs->vqs[i].kind;
		/* Sync queues are reaped by the submitter: no interrupts */
		if (fs->vqs[i].kind == VFSYNC_KIND_SYNC)
			virtqueue_disable_cb(vqs[i]);
	}
	fs->request_queue_size = vfsync_min_queue_size(sizes, kinds, fs->nvqs,
						       VFSYNC_KIND_REQUEST);
	fs->sync_queue_size = vfsync_min_queue_size(sizes, kinds, fs->nvqs,
						    VFSYNC_KIND_SYNC);
	vfsync_start_all_queues(fs);

out:
	kfree(kinds);
	kfree(sizes);
	kfree(names);
	kfree(callbacks);
	kfree(vqs);
	if (ret) {
		kfree(fs->vqs);
		fs->vqs = NULL;
		kfree(fs->req_map);
		fs->req_map = NULL;
		kfree(fs->sync_map);
		fs->sync_map = NULL;
		fs->nvqs = 0;
		fs->num_sync_queues = 0;
	}
	return ret;
}

/*
 * Request queues follow the transport's interrupt affinity (PCI MSI-X), as
 * in in-tree virtiofs; without it the possible CPUs are spread evenly.
 */
static void vfsync_map_queues(struct virtio_device *vdev,
			      struct vfsync_dev *fs, const unsigned int *cpus,
			      unsigned int ncpus)
{
	unsigned int nmapped = min(fs->num_request_queues, nr_cpu_ids);
	const struct cpumask *mask;
	unsigned int q, cpu;

	if (fs->num_sync_queues)
		vfsync_map_sync(fs->sync_map, nr_cpu_ids, cpus, ncpus,
				fs->num_sync_queues,
				VFSYNC_VQ_REQUEST + fs->num_request_queues);

	if (!vdev->config->get_vq_affinity)
		goto spread;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		fs->req_map[cpu] = VFSYNC_VQ_REQUEST;
	for (q = 0; q < nmapped; q++) {
		mask = vdev->config->get_vq_affinity(vdev, VFSYNC_VQ_REQUEST + q);
		if (!mask)
			goto spread;
		for_each_cpu(cpu, mask)
			fs->req_map[cpu] = VFSYNC_VQ_REQUEST + q;
	}
	return;

spread:
#ifdef COMPAT_HAVE_GROUP_CPUS
	{
		unsigned int nr;
		struct cpumask *masks = compat_group_cpus_evenly(nmapped, &nr);

		if (masks) {
			for (cpu = 0; cpu < nr_cpu_ids; cpu++)
				fs->req_map[cpu] = VFSYNC_VQ_REQUEST;
			for (q = 0; q < min(nr, nmapped); q++)
				for_each_cpu(cpu, &masks[q])
					fs->req_map[cpu] = VFSYNC_VQ_REQUEST + q;
			kfree(masks);
			return;
		}
	}
#endif
	vfsync_map_spread(fs->req_map, nr_cpu_ids, cpus, ncpus, nmapped,
			  VFSYNC_VQ_REQUEST);
}

static int vfsync_setup_maps(struct virtio_device *vdev, struct vfsync_dev *fs)
{
	unsigned int *cpus, ncpus = 0, cpu;

	cpus = kcalloc(num_possible_cpus(), sizeof(*cpus), GFP_KERNEL);
	if (!cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		cpus[ncpus++] = cpu;

	vfsync_map_queues(vdev, fs, cpus, ncpus);
	kfree(cpus);
	return 0;
}

static int vfsync_add_instance(struct virtio_device *vdev,
			       struct vfsync_dev *fs)
{
	struct vfsync_dev *other;
	int ret;

	mutex_lock(&vfsync_mutex);
	list_for_each_entry(other, &vfsync_instances, list) {
		if (!strcmp(fs->tag, other->tag)) {
			ret = -EEXIST;
			goto out_unlock;
		}
	}

	fs->kobj.kset = vfsync_kset;
	ret = kobject_add(&fs->kobj, NULL, "%s", fs->tag);
	if (ret < 0)
		goto out_unlock;

	ret = sysfs_create_link(&fs->kobj, &vdev->dev.kobj, "device");
	if (ret < 0)
		goto out_del;

	vfsync_debugfs_add(fs);

	list_add_tail(&fs->list, &vfsync_instances);
	mutex_unlock(&vfsync_mutex);

	kobject_uevent(&fs->kobj, KOBJ_ADD);
	return 0;

out_del:
	kobject_del(&fs->kobj);
out_unlock:
	mutex_unlock(&vfsync_mutex);
	return ret;
}

static int vfsync_probe(struct virtio_device *vdev)
{
	bool sync = vfsync_sync_negotiated(vdev), tried_sync;
	struct vfsync_dev *fs;
	size_t cfg_len;
	int ret;

	fs = kzalloc(sizeof(*fs), GFP_KERNEL);
	if (!fs)
		return -ENOMEM;
	kobject_init(&fs->kobj, &vfsync_ktype);
	vfsync_init_dev(fs);
	fs->vdev = vdev;
	vdev->priv = fs;

	/* Not even the fields in-tree virtiofs reads: nothing to probe */
	cfg_len = vfsync_config_len(vdev);
	if (cfg_len && cfg_len < offsetofend(struct vfsync_config,
					     num_request_queues)) {
		dev_err(&vdev->dev, "device configuration of %zu bytes is too short\n",
			cfg_len);
		ret = -EINVAL;
		goto out;
	}

	ret = vfsync_read_tag(vdev, fs);
	if (ret < 0)
		goto out;

	ret = vfsync_setup_vqs(vdev, fs, sync, &tried_sync);
	/* The device may not have the sync queues its config promised */
	if (ret < 0 && ret != -ENOMEM && tried_sync) {
		dev_warn(&vdev->dev, "setting up the sync queues failed (%d): using the request queues only\n",
			 ret);
		ret = vfsync_setup_vqs(vdev, fs, false, &tried_sync);
	}
	if (ret < 0)
		goto out;

	ret = vfsync_setup_maps(vdev, fs);
	if (ret < 0)
		goto out_vqs;

	ret = vfsync_setup_dax(vdev, fs);
	if (ret < 0)
		goto out_vqs;

	/* A mount may send requests before probe returns */
	virtio_device_ready(vdev);

	ret = vfsync_add_instance(vdev, fs);
	if (ret < 0)
		goto out_vqs;

	dev_info(&vdev->dev, "tag <%s>: %u request queue(s), %u sync queue(s)%s\n",
		 fs->tag, fs->num_request_queues, fs->num_sync_queues,
		 fs->num_sync_queues ? "" : !vfsync_param_sync ? " (sync=0)" :
		 !sync ? " (the device offers none)" : " (the device has none)");
	return 0;

out_vqs:
	virtio_reset_device(vdev);
	/* Ready, the device may have signalled a queue meanwhile */
	vfsync_kill_queues(fs);
	vdev->config->del_vqs(vdev);
out:
	vdev->priv = NULL;
	kobject_put(&fs->kobj);
	return ret;
}

static void vfsync_remove(struct virtio_device *vdev)
{
	struct vfsync_dev *fs = vdev->priv;

	mutex_lock(&vfsync_mutex);
	/* No new mount finds it from here on */
	list_del_init(&fs->list);
	sysfs_remove_link(&fs->kobj, "device");
	kobject_del(&fs->kobj);
	vfsync_debugfs_remove(fs);
	vfsync_remove_queues(fs);
	vdev->config->del_vqs(vdev);

	vdev->priv = NULL;
	/* The mount, if any, holds its own reference */
	kobject_put(&fs->kobj);
	mutex_unlock(&vfsync_mutex);
}

/*
 * Maybe in interrupt context. What matters is a device asking for a reset
 * (the project's QEMU, when a sync-capable back-end is gone).
 */
static void vfsync_config_changed(struct virtio_device *vdev)
{
	vfsync_config_changed_any(vdev->priv);
}

#ifdef CONFIG_PM_SLEEP
static int vfsync_freeze(struct virtio_device *vdev)
{
	/* Requests in flight and the FUSE session cannot be saved yet */
	pr_warn("suspend/resume not supported\n");
	return -EOPNOTSUPP;
}

static int vfsync_restore(struct virtio_device *vdev)
{
	return 0;
}
#endif

static const struct virtio_device_id vfsync_id_table[] = {
	{ VIRTIO_ID_FS, VIRTIO_DEV_ANY_ID },
	{},
};

/* Filled at init: the bit numbers follow a module parameter */
static unsigned int vfsync_features[2];

static struct virtio_driver vfsync_driver = {
	.driver.name		= KBUILD_MODNAME,
	COMPAT_VIRTIO_DRIVER_OWNER
	.id_table		= vfsync_id_table,
	.feature_table		= vfsync_features,
	.feature_table_size	= 0,
	.probe			= vfsync_probe,
	.remove			= vfsync_remove,
	.config_changed		= vfsync_config_changed,
#ifdef CONFIG_PM_SLEEP
	.freeze			= vfsync_freeze,
	.restore		= vfsync_restore,
#endif
};

unsigned int vfsync_sync_feature_bit(bool *enabled)
{
	*enabled = vfsync_param_sync;
	return vfsync_feature_bit;
}

/*
 * A virtio-fs device this driver did not bind is held by in-tree virtiofs,
 * loaded or built in first (load order alone decides), or failed probe.
 */
static int vfsync_report_device(struct device *dev, void *data)
{
	unsigned int *count = data;

	if (dev_to_virtio(dev)->id.device != VIRTIO_ID_FS)
		return 0;
	count[0]++;
	device_lock(dev);
	if (dev->driver == &vfsync_driver.driver)
		count[1]++;
	else if (dev->driver)
		pr_info("%s: held by %s, not by this driver\n", dev_name(dev),
			dev->driver->name);
	else
		pr_info("%s: held by no driver (see its probe's error above)\n",
			dev_name(dev));
	device_unlock(dev);
	return 0;
}

static void vfsync_report_devices(void)
{
	unsigned int count[2] = { 0, 0 };	/* virtio-fs devices, bound */

	bus_for_each_dev(vfsync_driver.driver.bus, NULL, count,
			 vfsync_report_device);
	pr_info("bound %u of the %u virtio-fs device(s) present at load\n", count[1], count[0]);
}

/* Called by the module's init, before the file system type is registered */
int vfsync_virtio_init(void)
{
	int ret;

	if (vfsync_feature_bit < 1 || vfsync_feature_bit > 23) {
		pr_err("sync_feature_bit=%u is not a device feature bit (1..23)\n",
		       vfsync_feature_bit);
		return -EINVAL;
	}
	if (vfsync_sync_queues_at != 40 &&
	    vfsync_sync_queues_at != VFSYNC_SYNC_QUEUES_AT) {
		pr_err("sync_queues_at=%u: num_sync_queues is at 44 or 40\n",
		       vfsync_sync_queues_at);
		return -EINVAL;
	}
	if (vfsync_param_sync) {
		vfsync_features[0] = vfsync_feature_bit;
		vfsync_driver.feature_table_size = 1;
		if (vfsync_feature_bit < 23)
			vfsync_features[vfsync_driver.feature_table_size++] =
				vfsync_feature_bit + 1;
	}

	if (vfsync_wq_init())
		return -ENOMEM;
	vfsync_kset = kset_create_and_add(KBUILD_MODNAME, NULL, fs_kobj);
	if (!vfsync_kset) {
		vfsync_wq_exit();
		return -ENOMEM;
	}
	vfsync_debugfs_init();

	ret = register_virtio_driver(&vfsync_driver);
	if (ret < 0) {
		vfsync_debugfs_exit();
		kset_unregister(vfsync_kset);
		vfsync_wq_exit();
		return ret;
	}
	vfsync_report_devices();
	return 0;
}

/* After the file system type is gone: no request is left to end */
void vfsync_virtio_exit(void)
{
	unregister_virtio_driver(&vfsync_driver);
	vfsync_debugfs_exit();
	kset_unregister(vfsync_kset);
	vfsync_wq_exit();
}

MODULE_DEVICE_TABLE(virtio, vfsync_id_table);
