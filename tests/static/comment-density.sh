#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# comment-density.sh [REPO]: comment lines per code line in the driver's
# .c files, per file and together; fails when together they pass
# MAX_DENSITY (default 0.18, about in-tree virtio drivers' density). A
# comment line holds a comment and no code (the SPDX line counts); a code
# line holds code, with or without a comment after it; blank lines count
# as neither.
set -eu

repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
max=${MAX_DENSITY:-0.18}
cd "$repo"
src=$(make -s --no-print-directory print-sources | tr ' ' '\n' | grep -E '\.c$' | grep -v '^tests/')
[ -n "$src" ] || { echo "comment-density: no driver sources from make print-sources"; exit 1; }

# shellcheck disable=SC2086 # one word per file
awk -v max="$max" '
	function count(line,    code, i) {
		code = 0
		while (line != "") {
			if (in_comment) {
				i = index(line, "*/")
				if (!i)
					return code
				in_comment = 0
				line = substr(line, i + 2)
				continue
			}
			sub(/^[ \t]+/, "", line)
			if (line == "")
				break
			if (substr(line, 1, 2) == "//")
				return code
			if (substr(line, 1, 2) == "/*") {
				in_comment = 1
				line = substr(line, 3)
				continue
			}
			code = 1
			i = index(line, "/*")
			if (!i)
				return code
			line = substr(line, i)
		}
		return code
	}
	FNR == 1 { in_comment = 0; files[++n] = FILENAME }
	{
		was = in_comment
		blank = $0 ~ /^[ \t]*$/
		if (count($0))
			code[FILENAME]++
		else if (!blank || was)
			comment[FILENAME]++
	}
	END {
		for (i = 1; i <= n; i++) {
			f = files[i]
			printf "%-20s %5d comment / %5d code = %.2f\n", f, comment[f], code[f],
				code[f] ? comment[f] / code[f] : 0
			tc += comment[f]
			tk += code[f]
		}
		d = tk ? tc / tk : 0
		printf "%-20s %5d comment / %5d code = %.2f (at most %s)\n", "together", tc, tk, d, max
		exit d > max + 0
	}' $src
