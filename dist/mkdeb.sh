#!/bin/bash
# mkdeb.sh - make deb: blkiso-dkms and blkiso-tools built by debhelper and
# dh-dkms (debian/) from a copy of the source tree in build/deb/blkiso-<v>/;
# the .debs land in build/deb/.  With --lintian, lintian checks them too
# and any error (E:) fails.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
out=$top/build/deb
src=$out/blkiso-$ver
rm -rf "$out"
mkdir -p "$src"
# Every file of the tree but build/ (uncommitted work included).
(cd "$top" && git ls-files -z -co --exclude-standard | grep -zv '^build/' |
	tar --null -T - -cf -) | tar -xf - -C "$src"
(cd "$src" && dpkg-buildpackage -b -us -uc -j2) > "$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	echo "mkdeb: dpkg-buildpackage failed (build/deb/build.log)" >&2
	exit 1
}
ls "$out"/*.deb
if [ "${1:-}" = --lintian ]; then
	lintian --fail-on error "$out"/*.changes | tee "$out/lintian.log"
fi
