#!/bin/sh
# Runs clang-tidy with the project's .clang-tidy over every C++ source the build compiles (tests included, generated
# moc files left out) and exits 1 when any check reports, 77 (skipped) when clang-tidy 22 is not installed.
# clang-tidy 22 is required: it skips the AST of system headers (Qt, libstdc++), which makes a whole-tree run
# about twice as fast as clang-tidy 14, and other versions report other things.
#
#   tests/tools/check_tidy.sh BUILD_DIR [JOBS]        (BUILD_DIR holds compile_commands.json)
#
# One file: clang-tidy-22 -p build/dev --quiet --extra-arg=-Wno-unknown-warning-option FILE
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: check_tidy.sh BUILD_DIR [JOBS]}" && pwd)
jobs=${2:-$(nproc)}
tool=${RUNLENS_CLANG_TIDY:-$(command -v clang-tidy-22 || true)}
if [ -z "$tool" ]; then
    echo "clang-tidy-22 is not installed (apt-get install clang-tidy-22): clang-tidy not checked"
    exit 77
fi
if [ ! -f "$build/compile_commands.json" ]; then
    echo "$build/compile_commands.json is missing (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
    exit 2
fi
# A profile clang-tidy cannot read turns every check off and every source would pass: read it first.
if ! (cd "$root" && "$tool" --list-checks 2>&1) | grep -q '^ *bugprone-'; then
    (cd "$root" && "$tool" --list-checks 2>&1) | head -20 >&2
    echo "clang-tidy enables no checks with $root/.clang-tidy: the profile does not parse" >&2
    exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The sources: every "file" of the compile database under the project's own folders.
sed -n 's/^ *"file": "\(.*\)",\{0,1\}$/\1/p' "$build/compile_commands.json" |
    grep -E "^$root/(app|widgets|importers|analysis|tests)/" | sort -u > "$out/files"
count=$(wc -l < "$out/files")
# gcc's -Wshadow=local is unknown to clang, and clang 22 finds deprecated declarations inside libstdc++ 12 (the
# gcc build reports deprecated uses in our code): neither is a finding.
xargs -P "$jobs" -I{} sh -c '"$1" -p "$2" --quiet --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-deprecated-declarations "$3" > "$4/$(echo "$3" | cksum | cut -d" " -f1).log" 2>&1 || true' \
    sh "$tool" "$build" {} "$out" < "$out/files"
# A finding is a line "file:line:col: warning|error: … [check]"; the same header finding counts once.
cat "$out"/*.log | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): .*\[[a-z0-9.,-]+\]$' | sed "s|^$root/||" |
    sort -u > "$out/findings" || true
# clang-tidy's own failures (a profile it cannot read) are not findings, and fail the check. ("Error while
# processing" follows any finding clang reports as an error, a compile error included: those are findings.)
cat "$out"/*.log | grep -E '^Error parsing|[Nn]o checks enabled' | sort -u > "$out/failures" || true
if [ -s "$out/failures" ]; then
    cat "$out/failures" >&2
    echo "clang-tidy could not check some sources (above)" >&2
    exit 2
fi
n=$(wc -l < "$out/findings")
if [ "$n" -gt 0 ]; then
    cat "$out/findings"
    echo "$n clang-tidy findings in $count sources (fix them, or say in a NOLINT comment why the code is right)"
    exit 1
fi
echo "$count sources are clean for .clang-tidy"
