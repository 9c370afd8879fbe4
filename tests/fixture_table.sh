#!/bin/sh
# Puts the table of the fixtures' ground truth against what the rules find into README.md, between
# <!-- fixture-truth-table:begin --> and <!-- fixture-truth-table:end -->. Builds nothing: it runs an already built
# tst_fixture_truth with RUNLENS_TRUTH_TABLE set.
#
#   tests/fixture_table.sh [--check] [TST_FIXTURE_TRUTH [README]]
#
# TST_FIXTURE_TRUTH defaults to build/dev/tests/tst_fixture_truth, README to README.md (both in this checkout).
# --check changes nothing and exits 1 when README.md's table differs from a fresh one (printing the difference).
# Exits 77 when ../shared/fixtures is absent (ctest counts that as skipped).
set -eu

check=0
if [ "${1-}" = "--check" ]; then
    check=1
    shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
binary=${1:-$root/build/dev/tests/tst_fixture_truth}
readme=${2:-$root/README.md}
begin='<!-- fixture-truth-table:begin -->'
end='<!-- fixture-truth-table:end -->'

if [ ! -x "$binary" ]; then
    echo "$binary: not built (cmake --build --preset dev --target tst_fixture_truth)" >&2
    exit 1
fi
if [ "$(grep -cxF "$begin" "$readme")" != 1 ] || [ "$(grep -cxF "$end" "$readme")" != 1 ]; then
    echo "$readme: needs one line $begin and one line $end" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
RUNLENS_TRUTH_TABLE="$tmp/table.md" QT_QPA_PLATFORM=offscreen "$binary" >"$tmp/log" 2>&1 || rc=$?
if [ "$rc" = 77 ]; then
    echo "../shared/fixtures is absent: no table to compare"
    exit 77
fi
if [ "$rc" != 0 ] || [ ! -f "$tmp/table.md" ]; then
    cat "$tmp/log" >&2
    echo "$binary did not write the table (exit $rc)" >&2
    exit 1
fi

awk -v begin="$begin" -v end="$end" -v table="$tmp/table.md" '
    $0 == begin { print; while ((getline line < table) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0 }
    !skipping { print }
' "$readme" >"$tmp/README.md"

if [ "$check" = 1 ]; then
    if cmp -s "$readme" "$tmp/README.md"; then
        echo "$readme: the fixture truth table is current"
        exit 0
    fi
    diff -u "$readme" "$tmp/README.md" || true
    echo "$readme: the fixture truth table is out of date; run tests/fixture_table.sh" >&2
    exit 1
fi
if cmp -s "$readme" "$tmp/README.md"; then
    echo "$readme: the fixture truth table was already current"
else
    cat "$tmp/README.md" >"$readme"
    echo "$readme: fixture truth table updated"
fi
