// SPDX-License-Identifier: GPL-2.0
/*
 * virtio_fs_sync: the sysfs and debugfs files, described in
 * Documentation/ABI/testing/. They read atomic counters or take
 * ->floor_lock; nothing here touches a queue.
 */

#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "virtio_fs_sync.h"

/* One line of the stats files; never more than VFSYNC_STATS_LINE bytes. */
int vfsync_stats_line(char *buf, size_t size, const char *name,
		      const struct vfsync_stats *st)
{
	return scnprintf(buf, size,
			 "%s submitted=%llu inline=%llu deferred=%llu fallback=%llu full=%llu bad_reply=%llu busy=%llu demoted=%llu\n",
			 name, (u64)atomic64_read(&st->submitted),
			 (u64)atomic64_read(&st->inline_done),
			 (u64)atomic64_read(&st->deferred),
			 (u64)atomic64_read(&st->fallback),
			 (u64)atomic64_read(&st->full),
			 (u64)atomic64_read(&st->bad_reply),
			 (u64)atomic64_read(&st->busy),
			 (u64)atomic64_read(&st->demoted));
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_stats_line);

static ssize_t tag_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	struct vfsync_dev *fs = container_of(kobj, struct vfsync_dev, kobj);

	return sysfs_emit(buf, "%s\n", fs->tag);
}

static ssize_t sync_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct vfsync_dev *fs = container_of(kobj, struct vfsync_dev, kobj);

	return sysfs_emit(buf, "%d\n", fs->num_sync_queues ? 1 : 0);
}

/* 1: the device keeps a budget per sync exit, every waited-for request goes */
static ssize_t budget_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct vfsync_dev *fs = container_of(kobj, struct vfsync_dev, kobj);

	return sysfs_emit(buf, "%d\n", fs->sync_budget ? 1 : 0);
}

static ssize_t queues_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct vfsync_dev *fs = container_of(kobj, struct vfsync_dev, kobj);

	return sysfs_emit(buf, "hiprio=1 request=%u sync=%u\n",
			  fs->num_request_queues, fs->num_sync_queues);
}

/* Room kept at the end of the sysfs stats page for the "truncated" line */
#define VFSYNC_STATS_TAIL	160

/* Whole lines while they fit, then one that says where all of them are */
static ssize_t stats_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct vfsync_dev *fs = container_of(kobj, struct vfsync_dev, kobj);
	char line[VFSYNC_STATS_LINE];
	unsigned int i;
	int len = 0, n;

	for (i = 0; i < fs->nvqs; i++) {
		n = vfsync_stats_line(line, sizeof(line), fs->vqs[i].name,
				      &fs->vqs[i].stats);
		if (len + n > PAGE_SIZE - VFSYNC_STATS_TAIL) {
			len += sysfs_emit_at(buf, len,
					     "truncated: %u more queues, all in /sys/kernel/debug/%s/%s/stats\n",
					     fs->nvqs - i, KBUILD_MODNAME,
					     fs->tag);
			break;
		}
		memcpy(buf + len, line, n);
		len += n;
	}
	return len;
}

static struct kobj_attribute vfsync_tag_attr = __ATTR_RO(tag);
static struct kobj_attribute vfsync_sync_attr = __ATTR_RO(sync);
static struct kobj_attribute vfsync_budget_attr = __ATTR_RO(budget);
static struct kobj_attribute vfsync_queues_attr = __ATTR_RO(queues);
static struct kobj_attribute vfsync_stats_attr = __ATTR_RO(stats);

static struct attribute *vfsync_attrs[] = {
	&vfsync_tag_attr.attr,
	&vfsync_sync_attr.attr,
	&vfsync_budget_attr.attr,
	&vfsync_queues_attr.attr,
	&vfsync_stats_attr.attr,
	NULL
};

static const struct attribute_group vfsync_group = {
	.attrs = vfsync_attrs,
};

/* The ktype's default groups (virtio_fs_sync.c) */
const struct attribute_group *vfsync_sysfs_groups[] = {
	&vfsync_group,
	NULL
};

static int vfsync_floor_show(struct seq_file *m, void *v)
{
	struct vfsync_dev *fs = m->private;
	struct vfsync_floor f;

	mutex_lock(&fs->floor_lock);
	f = fs->floor;
	mutex_unlock(&fs->floor_lock);
	seq_printf(m, "kicks=%llu busy=%llu min_ns=%llu median_ns=%llu mean_ns=%llu max_ns=%llu\n",
		   f.kicks, f.busy, f.min_ns, f.median_ns, f.mean_ns, f.max_ns);
	return 0;
}

static int vfsync_floor_open(struct inode *inode, struct file *file)
{
	return single_open(file, vfsync_floor_show, inode->i_private);
}

/* Root only: the file is 0600, and the writer must hold CAP_SYS_ADMIN */
static ssize_t vfsync_floor_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	struct vfsync_dev *fs = ((struct seq_file *)file->private_data)->private;
	unsigned int n;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtouint_from_user(ubuf, len, 0, &n);
	if (ret)
		return ret;
	ret = vfsync_floor_run(fs, n);
	return ret ? ret : len;
}

static const struct file_operations vfsync_floor_fops = {
	.owner		= THIS_MODULE,
	.open		= vfsync_floor_open,
	.read		= seq_read,
	.write		= vfsync_floor_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static struct dentry *vfsync_debugfs_root;	/* set at init, before any probe */

static int vfsync_stats_seq_show(struct seq_file *m, void *v)
{
	struct vfsync_dev *fs = m->private;
	char line[VFSYNC_STATS_LINE];
	unsigned int i;

	for (i = 0; i < fs->nvqs; i++) {
		vfsync_stats_line(line, sizeof(line), fs->vqs[i].name,
				  &fs->vqs[i].stats);
		seq_puts(m, line);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vfsync_stats_seq);

static int vfsync_forgets_seq_show(struct seq_file *m, void *v)
{
	struct vfsync_dev *fs = m->private;

	seq_printf(m, "queued=%lld sent=%lld dropped=%lld\n",
		   atomic64_read(&fs->forgets_queued),
		   atomic64_read(&fs->forgets_sent),
		   atomic64_read(&fs->forgets_dropped));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vfsync_forgets_seq);

/* debugfs is best effort: its functions take error pointers */
void vfsync_debugfs_init(void)
{
	vfsync_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
}

void vfsync_debugfs_exit(void)
{
	debugfs_remove_recursive(vfsync_debugfs_root);
}

void vfsync_debugfs_add(struct vfsync_dev *fs)
{
	fs->debugfs = debugfs_create_dir(fs->tag, vfsync_debugfs_root);
	debugfs_create_file("stats", 0444, fs->debugfs, fs,
			    &vfsync_stats_seq_fops);
	debugfs_create_file("forgets", 0444, fs->debugfs, fs,
			    &vfsync_forgets_seq_fops);
	/* Test-only; a device without sync queues refuses the write */
	debugfs_create_file("floor", 0600, fs->debugfs, fs, &vfsync_floor_fops);
}

void vfsync_debugfs_remove(struct vfsync_dev *fs)
{
	debugfs_remove_recursive(fs->debugfs);
}
