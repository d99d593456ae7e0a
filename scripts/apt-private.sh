# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by fetch-kernel.sh and build-root.sh: apt-get and apt-cache for a
# newer Debian suite through a private configuration under the cache, so the
# system's sources stay as they are and nothing is installed on the host.
#
#   apt_private_init SUITE...   writes $VFS_CACHE/apt/sources.list for the
#                               suites (main only) and sets the array APT_OPTS;
#                               fetches the package lists once
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
	local base=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}/apt mirror s want
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	mirror=$(debian_mirror) || return 1
	mkdir -p "$base/lists/partial" "$base/cache/archives/partial"
	want=
	for s in "$@"; do
		want="${want}deb [signed-by=$keyring] $mirror $s main"$'\n'
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
