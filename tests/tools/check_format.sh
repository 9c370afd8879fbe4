#!/bin/sh
# Checks that every C++ source of the project follows .clang-format (clang-format 14, as Debian 12 packages it).
# Prints each file that differs with the start of its difference and exits 1; exits 77 (skipped) without
# clang-format. To fix: clang-format -i FILE... (or the whole list below).
#
#   tests/tools/check_format.sh [CLANG_FORMAT]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tool=${1:-$(command -v clang-format-14 || command -v clang-format || true)}
if [ -z "$tool" ]; then
    echo "clang-format is not installed (apt-get install clang-format): format not checked"
    exit 77
fi
cd "$root"
bad=0
checked=0
for f in $(find app widgets importers analysis tests -path tests/fuzz/corpus -prune -o \( -name '*.cpp' -o -name '*.h' \) -print | sort); do
    checked=$((checked + 1))
    if ! "$tool" --style=file "$f" | cmp -s - "$f"; then
        bad=$((bad + 1))
        echo "$f: not formatted (clang-format -i $f):"
        "$tool" --style=file "$f" | diff -u "$f" - | sed -n '3,12p'
    fi
done
if [ "$bad" -gt 0 ]; then
    echo "$bad of $checked files differ from .clang-format"
    exit 1
fi
echo "$checked files follow .clang-format"
