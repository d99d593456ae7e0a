# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of virtio_fs_sync.ko.
#
#   make                    build for the running kernel
#   make KDIR=dir           build against any configured tree or headers
#   make KVER=6.12|6.1|7.3  build against Debian's cloud kernel of that
#                           series (6.12-rt, 6.1-rt: its PREEMPT_RT flavour),
#                           fetched by scripts/fetch-kernel.sh into
#                           $(VFS_CACHE) (default ~/.cache/virtio-fs-sync);
#                           the objects go to build/$(KVER)/. 7.3 builds in
#                           a trixie root (scripts/build-root.sh): its
#                           headers need gcc-14 and glibc >= 2.38
#   make BUILD_ROOT=suite   run the kernel build in that Debian root
#   make FUSE_SRC=dir       take fuse_i.h from dir (default: KDIR/fs/fuse
#                           for a full tree, the cache's fuse/ for KVER)
#
# Other targets: print-ko, print-build-root, print-sources,
# print-driver-files, style, sparse, module-debug, install, dkms-install,
# clean, and libkrunfw: libkrun's guest kernel with the driver built in
# and libkrunfw.so (scripts/build-libkrunfw.sh; LIBKRUNFW_SRC=DIR, a
# libkrunfw checkout).

VFS_CACHE ?= $(HOME)/.cache/virtio-fs-sync
REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
PREFIX ?= /usr
DESTDIR ?=
DEPMOD ?= depmod

# The driver's own files: the one list the out-of-tree build, checkpatch,
# scripts/intree.sh and the UML test kernels (tests/setup/build-uml.sh)
# take, through print-driver-files.
DRIVER_FILES := Kbuild Kconfig compat.h virtio_fs_sync.h virtio_fs_sync.c \
	vfsync_queue.c vfsync_stats.c fuse_glue.h fuse_glue.c \
	tests/kunit/virtio_fs_sync_test.c
# What the module is built from; dkms-install copies exactly these (no
# KUnit test: only a kernel configured for it builds that).
SOURCES := $(filter-out tests/%,$(DRIVER_FILES)) Makefile dkms.conf scripts/fuse-header.sh

VERSION := $(shell cat $(REPO)/VERSION 2>/dev/null || $(REPO)/scripts/version.sh)

# Series whose Debian headers need a newer userland than the host's
BUILD_ROOT_7.3 := trixie

ifneq ($(KVER),)
BUILD_ROOT ?= $(BUILD_ROOT_$(KVER))
KCACHE := $(VFS_CACHE)/kernels/$(KVER)
KDIR := $(KCACHE)/kdir
# The cache's source.Makefile vouches only for the cache's own fuse/.
ifeq ($(origin FUSE_SRC),undefined)
FUSE_SRC_MAKEFILE ?= $(KCACHE)/source.Makefile
endif
FUSE_SRC ?= $(KCACHE)/fuse
BUILD_DIR := $(REPO)/build/$(or $(BUILD_NAME),$(KVER))
else
KDIR ?= /lib/modules/$(shell uname -r)/build
BUILD_DIR := $(REPO)
endif

ifneq ($(wildcard $(KDIR)/fs/fuse/fuse_i.h),)
FUSE_SRC ?= $(KDIR)/fs/fuse
endif

# Otherwise from the linux-source-X.Y package (what DKMS on Debian does).
LINUX_SOURCE_DIR ?= /usr/src
ifeq ($(FUSE_SRC),)
FUSE_EXTRACT := $(BUILD_DIR)/.fuse-src
FUSE_SRC := $(FUSE_EXTRACT)/fs/fuse
endif

KBUILD_ARGS = -C $(KDIR) M=$(BUILD_DIR) FUSE_INC=$(abspath $(FUSE_SRC)) VFSYNC_VERSION=$(VERSION)
# The kernel's make in the build root (same paths inside, see
# build-root.sh). The root starts with a clean environment: kbuild's
# command-line switches are passed on by hand.
ifneq ($(BUILD_ROOT),)
IN_ROOT = env VFS_CACHE=$(VFS_CACHE) bash $(REPO)/scripts/build-root.sh $(BUILD_ROOT) --run
KMAKE = $(IN_ROOT) make
KBUILD_ARGS += $(foreach v,C CF W V,$(if $($(v)),$(v)='$($(v))'))
else
KMAKE = $(MAKE)
endif
# Test runners build concurrently into the same directory: serialise.
LOCKED = $(if $(wildcard $(BUILD_DIR)/.),flock $(BUILD_DIR)/.build.lock)

all: module

# fuse_i.h is internal to the kernel: it must come from the very source the
# kernel was built from, or MODVERSIONS refuses the module at load time.
prepare:
ifneq ($(KVER),)
	@VFS_CACHE=$(VFS_CACHE) $(REPO)/scripts/fetch-kernel.sh $(KVER) >/dev/null
endif
ifneq ($(BUILD_ROOT),)
	@VFS_CACHE=$(VFS_CACHE) bash $(REPO)/scripts/build-root.sh $(BUILD_ROOT) >/dev/null
endif
	@test -d $(KDIR) || { echo "virtio_fs_sync: no kernel tree at $(KDIR) (set KDIR= or KVER=)" >&2; exit 1; }
ifneq ($(FUSE_EXTRACT),)
	@test -f $(FUSE_SRC)/fuse_i.h || sh $(REPO)/scripts/fuse-header.sh $(KDIR) $(FUSE_EXTRACT) $(LINUX_SOURCE_DIR)
endif
	@test -n "$(FUSE_SRC)" && test -f $(FUSE_SRC)/fuse_i.h || { \
		echo "virtio_fs_sync: fuse_i.h not found: install linux-source-$$($(MAKE) -s --no-print-directory -C $(KDIR) kernelversion | cut -d. -f1,2)" \
			"and pass FUSE_SRC=<linux-source>/fs/fuse" >&2; exit 1; }
	@kver=$$($(MAKE) -s --no-print-directory -C $(KDIR) kernelversion 2>/dev/null | \
		grep -E '^[0-9]+\.[0-9]+' | head -n 1); \
	fmk=$(FUSE_SRC_MAKEFILE); \
	[ -n "$$fmk" ] || for f in $(FUSE_SRC)/../../Makefile $(FUSE_SRC)/../source.Makefile; do \
		[ -f $$f ] && { fmk=$$f; break; }; done; \
	sver=; [ -n "$$fmk" ] && sver=$$(awk '/^VERSION *=/ { v = $$3 } /^PATCHLEVEL *=/ { p = $$3 } \
		/^SUBLEVEL *=/ { s = $$3 } END { if (v != "") print v "." p "." s }' $$fmk); \
	if [ -z "$$sver" ]; then \
		echo "virtio_fs_sync: warning: cannot tell which kernel $(FUSE_SRC)/fuse_i.h is from" >&2; \
	elif [ "$$kver" != "$$sver" ]; then \
		echo "virtio_fs_sync: $(KDIR) is $$kver but $(FUSE_SRC) is from $$sver:" \
			"install linux-source-$$(echo $$kver | cut -d. -f1,2) at version $$kver" \
			"and pass FUSE_SRC=<its tree>/fs/fuse" >&2; \
		exit 1; \
	fi
ifneq ($(BUILD_DIR),$(REPO))
	@mkdir -p $(BUILD_DIR)/tests/kunit
	@for f in $(DRIVER_FILES); do ln -sfn $(REPO)/$$f $(BUILD_DIR)/$$f; done
endif

module: prepare
	$(LOCKED) $(KMAKE) $(KBUILD_ARGS) modules

# VFSYNC_DEBUG reaches Kbuild as a variable: ccflags-y on the command line
# would replace every ccflags-y of the Kbuild.
module-debug: prepare
	$(LOCKED) $(KMAKE) $(KBUILD_ARGS) VFSYNC_DEBUG=y modules

print-ko:
	@echo $(BUILD_DIR)/virtio_fs_sync.ko

libkrunfw:
	@VFS_CACHE=$(VFS_CACHE) $(if $(LIBKRUNFW_SRC),LIBKRUNFW_SRC=$(LIBKRUNFW_SRC)) \
		$(REPO)/scripts/build-libkrunfw.sh

print-build-root:
	@echo $(BUILD_ROOT)

print-sources:
	@echo $(SOURCES)

print-driver-files:
	@echo $(DRIVER_FILES)

install: module
	$(MAKE) $(KBUILD_ARGS) INSTALL_MOD_DIR=updates modules_install
	$(DEPMOD) -a $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) \
		$$($(MAKE) -s --no-print-directory -C $(KDIR) kernelrelease)

DKMS_DIR := $(DESTDIR)$(PREFIX)/src/virtio_fs_sync-$(VERSION)
dkms-install:
	@for f in $(SOURCES); do install -D -m 0644 $(REPO)/$$f $(DKMS_DIR)/$$f || exit 1; done
	@echo $(VERSION) >$(DKMS_DIR)/VERSION
	@sed -i 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(VERSION)"/' $(DKMS_DIR)/dkms.conf
	@echo "virtio_fs_sync: sources in $(DKMS_DIR); now: dkms install virtio_fs_sync/$(VERSION)"

# checkpatch and its data files, from the cached 6.12 source tarball.
CHECKPATCH_DIR := $(VFS_CACHE)/kernels/6.12/checkpatch
CHECKPATCH ?= $(CHECKPATCH_DIR)/scripts/checkpatch.pl
style:
	@test -x $(CHECKPATCH) || { VFS_CACHE=$(VFS_CACHE) $(REPO)/scripts/fetch-kernel.sh 6.12 >/dev/null && \
		mkdir -p $(CHECKPATCH_DIR) && tar -xJf $(VFS_CACHE)/kernels/6.12/source.tar.xz \
		-C $(CHECKPATCH_DIR) --strip-components=1 --wildcards '*/scripts/checkpatch.pl' \
		'*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'; }
	$(CHECKPATCH) --strict --no-tree --max-line-length=100 --ignore FILE_PATH_CHANGES -f \
		$(addprefix $(REPO)/,$(filter %.c %.h,$(DRIVER_FILES)))

# In directories of their own: rebuilding in build/$(KVER) would pull
# objects from under a concurrent test run.
# Not 7.3: its headers use __typeof_unqual__, which trixie's sparse 0.6.4
# does not know (scripts/checker-valid.sh refuses it).
sparse:
	$(MAKE) -C $(REPO) KVER=6.12 BUILD_NAME=sparse-6.12 clean-objs module C=2 CF=-D__CHECK_ENDIAN__
	$(MAKE) -C $(REPO) KVER=6.1 BUILD_NAME=sparse-6.1 clean-objs module C=2 CF=-D__CHECK_ENDIAN__
	$(MAKE) -C $(REPO) KVER=6.12-rt BUILD_NAME=sparse-6.12-rt clean-objs module C=2 CF=-D__CHECK_ENDIAN__
	$(MAKE) -C $(REPO) KVER=6.1-rt BUILD_NAME=sparse-6.1-rt clean-objs module C=2 CF=-D__CHECK_ENDIAN__

clean-objs:
	@rm -f $(BUILD_DIR)/*.o $(BUILD_DIR)/tests/kunit/*.o

clean:
	-$(MAKE) $(KBUILD_ARGS) clean 2>/dev/null
	rm -rf $(REPO)/build $(REPO)/.fuse-src

.PHONY: all prepare module module-debug print-ko libkrunfw print-build-root print-sources print-driver-files install \
	dkms-install style sparse clean clean-objs

# test targets: tests/Makefile.inc
-include tests/Makefile.inc
