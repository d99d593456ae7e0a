// SPDX-License-Identifier: GPL-2.0
/*
 * verify-manifest - check files against a MANIFEST written by stress.
 *
 *   verify-manifest DIR [-m MANIFEST] [-v]
 *
 * Meant to run on the host, on the directory that backs the guest's share,
 * after the guest has finished: the MANIFEST holds the SHA-256 of what
 * the guest's writers meant each file to contain, this recomputes it
 * from what the host actually has.  Also reports regular files in DIR
 * that the manifest does not list (a rename or unlink that left its old
 * name behind).  Prints one line per problem ("ok PATH" per file with -v)
 * and "verify-manifest: N ok, N mismatched, N missing, N extra"; exit
 * status 1 on any problem or an empty/unreadable manifest.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"

struct item {
	char *path;
	unsigned long long size;
	char hex[65];
};

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct item *)a)->path,
		      ((const struct item *)b)->path);
}

/* Hash @fd's whole content; returns its length, or -1 with errno. */
static long long hash_fd(int fd, char hex[65])
{
	static unsigned char buf[1 << 20];
	struct sha256 s;
	long long total = 0;
	ssize_t n;

	sha256_init(&s);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		sha256_update(&s, buf, n);
		total += n;
	}
	sha256_final_hex(&s, hex);
	return total;
}

/* Only plain relative names: the manifest must not point outside DIR. */
static int safe_path(const char *p)
{
	return *p && *p != '/' && strcmp(p, "..") && strncmp(p, "../", 3) &&
	       !strstr(p, "/../") && !(strlen(p) >= 3 &&
				       !strcmp(p + strlen(p) - 3, "/.."));
}

static void usage(void)
{
	fprintf(stderr, "usage: verify-manifest DIR [-m MANIFEST] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int verbose = 0, nok = 0, nbad = 0, nmiss = 0, nextra = 0, dfd, opt;
	const char *dir, *mpath = NULL;
	struct item *items = NULL;
	size_t nitems = 0, cap = 0, i;
	char line[PATH_MAX + 128];
	struct dirent *de;
	DIR *d;
	FILE *m;

	while ((opt = getopt(argc, argv, "m:vh")) != -1) {
		if (opt == 'm')
			mpath = optarg;
		else if (opt == 'v')
			verbose = 1;
		else
			usage();
	}
	if (optind != argc - 1)
		usage();
	dir = argv[optind];
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0) {
		fprintf(stderr, "verify-manifest: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	if (mpath) {
		m = fopen(mpath, "r");
	} else {
		int mfd = openat(dfd, "MANIFEST", O_RDONLY);

		m = mfd < 0 ? NULL : fdopen(mfd, "r");
		mpath = "MANIFEST";
	}
	if (!m) {
		fprintf(stderr, "verify-manifest: %s: %s\n", mpath, strerror(errno));
		return 2;
	}

	while (fgets(line, sizeof(line), m)) {
		struct item it;
		int pos = 0;

		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		if (sscanf(line, "%64s %llu %n", it.hex, &it.size, &pos) != 2 ||
		    !pos || strlen(it.hex) != 64 || !safe_path(line + pos)) {
			printf("BADLINE %s\n", line);
			nbad++;
			continue;
		}
		if (nitems == cap) {
			cap = cap ? 2 * cap : 64;
			items = realloc(items, cap * sizeof(*items));
			if (!items) {
				perror("verify-manifest");
				return 2;
			}
		}
		it.path = strdup(line + pos);
		items[nitems++] = it;
	}
	fclose(m);
	if (!nitems) {
		printf("verify-manifest: %s lists no files\n", mpath);
		return 1;
	}
	qsort(items, nitems, sizeof(*items), by_path);

	for (i = 0; i < nitems; i++) {
		struct item *it = &items[i];
		char hex[65];
		long long got;
		int fd = openat(dfd, it->path, O_RDONLY | O_NOFOLLOW);

		if (fd < 0) {
			printf("MISSING %s: %s\n", it->path, strerror(errno));
			nmiss++;
			continue;
		}
		got = hash_fd(fd, hex);
		close(fd);
		if (got < 0) {
			printf("MISMATCH %s: read: %s\n", it->path, strerror(errno));
			nbad++;
		} else if ((unsigned long long)got != it->size ||
			   strcmp(hex, it->hex)) {
			printf("MISMATCH %s: expected size %llu sha256 %s, got size %lld sha256 %s\n",
			       it->path, it->size, it->hex, got, hex);
			nbad++;
		} else {
			if (verbose)
				printf("ok %s\n", it->path);
			nok++;
		}
	}

	/* Top-level files only: stress keeps its files flat in DIR. */
	d = fdopendir(dup(dfd));
	while (d && (de = readdir(d))) {
		struct item key = { .path = de->d_name };
		struct stat st;

		if (!strcmp(de->d_name, "MANIFEST") ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    S_ISDIR(st.st_mode))
			continue;
		if (!bsearch(&key, items, nitems, sizeof(*items), by_path)) {
			printf("EXTRA %s: not in the manifest\n", de->d_name);
			nextra++;
		}
	}
	if (d)
		closedir(d);
	printf("verify-manifest: %d ok, %d mismatched, %d missing, %d extra\n",
	       nok, nbad, nmiss, nextra);
	return nbad || nmiss || nextra ? 1 : 0;
}
