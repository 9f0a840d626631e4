#!/bin/bash
# mechanisms_doc.sh - doc/mechanisms.md stays true (part of make unit):
#   every mechanism ID (S0-xx ... S4-xx, A-xx) that kmod/, tools/, doc/,
#   selftests/ or README.md cites has a row, and every test a row names
#   (`file.c:test`, then `test` for more in the same file) exists there.
# Kselftest TAP on stdout, a "# Totals:" line for selftests/run-suite.sh;
# exit status 1 on any failure.
top=$(cd "$(dirname "$0")/../.." && pwd)
doc=$top/doc/mechanisms.md
tap_prefix=mechanisms
. "$top/selftests/host/tap.sh"
cd "$top" || exit 1

ids='\b(S[0-4]-[0-9]{2}|A-[0-9]{2})\b'
missing=$(comm -23 \
	<(grep -rhoE "$ids" kmod tools doc selftests README.md \
		--exclude=mechanisms.md | sort -u) \
	<(grep -oE "^\| (S[0-4]-[0-9]{2}|A-[0-9]{2}) " "$doc" | tr -d '| ' | sort -u))
ok "$([ -z "$missing" ]; echo $?)" every_cited_id_has_a_row \
	"# no row in doc/mechanisms.md for: $(echo $missing)"

# The test column is the fifth: `file.c:name` sets the file for the bare
# `name`s after it.  A name must be a TEST(...) or TEST_F*(fixture, ...)
# of that file.
bad=$(awk -F'|' '/^\| (S[0-4]|A)-[0-9][0-9] / { print $2 "|" $6 }' "$doc" |
while IFS='|' read -r id col; do
	file=
	for tok in $(grep -oE '`[^`]+`' <<<"$col" | tr -d '`'); do
		case $tok in
		*.c:*) file=${tok%%:*}; name=${tok#*:} ;;
		*.c|*.sim|*/*) continue ;;
		*) name=$tok ;;
		esac
		[ -n "$file" ] || continue
		# unit and guest tests may share a file name (meter_test.c)
		if ! cat selftests/*/"$file" 2>/dev/null |
			grep -qE "^(TEST|TEST_F|TEST_F_TIMEOUT)\(([a-z_0-9]+, *)?$name[,)]"; then
			echo "$(echo $id):$file:$name"
		fi
	done
done)
ok "$([ -z "$bad" ]; echo $?)" every_named_test_exists \
	"# tests named in doc/mechanisms.md that do not exist: $(echo $bad)"
tap_totals
[ "$fail" = 0 ]
