# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by fetch-kernel.sh and build-root.sh: apt-get and apt-cache for a
# newer Debian suite through a private configuration under the cache, so the
# system's sources stay as they are and nothing is installed on the host.
#
#   apt_private_init [--src] SUITE...
#                               writes $VFS_CACHE/apt/sources.list for the
#                               suites (main only; --src: their source
#                               packages too, for apt-get source) and sets
#                               the array APT_OPTS; fetches the lists once.
#                               APT_PRIVATE_DIR=DIR uses DIR instead of
#                               $VFS_CACHE/apt (a configuration of its own
#                               does not refetch the others' lists)
#   debian_mirror               prints the Debian mirror the system's own
#                               sources use (the entry of its own release)
#
# Layout of $VFS_CACHE/apt/: sources.list, lists/, cache/ (apt's binary
# caches), debootstrap/ (build-root.sh's .debs).

debian_mirror() {
	local codename uri
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	# apt itself reads both source formats; ask it instead of parsing them.
	uri=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null |
		awk -v c="$codename" '$1 == c { print $2; exit }')
	[ -n "$uri" ] || uri=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null |
		grep -v -e -security -e -updates | head -n 1)
	[ -n "$uri" ] || {
		echo "apt-private: cannot find the system's Debian mirror (run apt-get update once)" >&2
		return 1
	}
	echo "${uri%/}"
}

APT_OPTS=()
apt_private_init() {
	local base=${APT_PRIVATE_DIR:-${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}/apt}
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	local mirror s t want types=deb
	if [ "${1:-}" = --src ]; then
		types="deb deb-src"
		shift
	fi
	mirror=$(debian_mirror) || return 1
	mkdir -p "$base/lists/partial" "$base/cache/archives/partial"
	want=
	for s in "$@"; do
		for t in $types; do
			want="${want}$t [signed-by=$keyring] $mirror $s main"$'\n'
		done
	done
	APT_OPTS=(-o "Dir::Etc::SourceList=$base/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$base/lists" -o "Dir::Cache=$base/cache"
		-o APT::Sandbox::User=root)
	# New or other suites: fetch the lists; otherwise use the cached ones.
	if [ "$(cat "$base/sources.list" 2>/dev/null)"$'\n' != "$want" ] ||
		! ls "$base"/lists/*_Packages* >/dev/null 2>&1; then
		printf '%s' "$want" >"$base/sources.list"
		echo "apt-private: fetching the package lists of $* from $mirror" >&2
		apt-get "${APT_OPTS[@]}" update -q >&2 || return 1
	fi
}
