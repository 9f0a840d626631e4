#!/bin/bash
# ksrc.sh DIR - unpack the few files the build takes from Debian's
# linux-source-6.1: the kselftest harness headers and checkpatch.
set -euo pipefail
dir=$1
tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)
if [ -z "$tarball" ]; then
	echo "ksrc: /usr/src/linux-source-6.1.tar.xz is missing: run 'make deps' (as root)" >&2
	exit 1
fi
mkdir -p "$dir"
tar -xJf "$tarball" -C "$dir" --strip-components=1 --wildcards \
	'linux-source-6.1/tools/testing/selftests/kselftest*.h' \
	'linux-source-6.1/scripts/checkpatch.pl' \
	'linux-source-6.1/scripts/spelling.txt' \
	'linux-source-6.1/scripts/const_structs.checkpatch'
touch "$dir/.stamp"
