#!/bin/bash
# checkpatch.sh - the kernel's checkpatch (from Debian's linux-source-6.1)
# over every file of kmod/ and uapi/: one kselftest result per file.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cp=$top/build/ksrc/scripts/checkpatch.pl
cd "$top"
files=$(git ls-files 'kmod/*.[ch]' 'uapi/*.h' 2>/dev/null; ls kmod/*.[ch] kmod/core/*.[ch] uapi/linux/*.h 2>/dev/null)
files=$(echo "$files" | sort -u | grep .)
pass=0 fail=0 n=0
echo "TAP version 13"
echo "1..$(echo "$files" | wc -l)"
for f in $files; do
	n=$((n + 1))
	# Typedefs are the shim's and compat's job; SPDX style is checked.
	if out=$(perl "$cp" --no-tree --terse --show-types --ignore NEW_TYPEDEFS,FILE_PATH_CHANGES \
		-f "$f" 2>&1) && ! echo "$out" | grep -q 'WARNING\|ERROR'; then
		echo "ok $n checkpatch.$f"
		pass=$((pass + 1))
	else
		echo "not ok $n checkpatch.$f"
		echo "$out" | head -20 | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
