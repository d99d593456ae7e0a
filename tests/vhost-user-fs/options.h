/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VHOST_USER_FS_OPTIONS_H
#define VHOST_USER_FS_OPTIONS_H

#include <stdbool.h>

enum cache_mode { CACHE_NEVER, CACHE_AUTO, CACHE_ALWAYS };

struct options {
	const char *socket_path;
	const char *shared_dir;
	const char *tag;
	const char *stats_file;
	const char *trace_file;
	bool readonly;
	bool writeback;
	bool xattr;
	bool stats;
	bool persistent;
	bool debug;
	bool faults;
	bool no_kick_channel;
	enum cache_mode cache;
	unsigned int request_queues;
	unsigned int sync_queues;
	unsigned int sync_bit;
	unsigned int workers;
	unsigned int queue_size;
	unsigned int fd_cache;
	unsigned int sync_late;
};

#endif
