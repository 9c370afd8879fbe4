#!/bin/sh
# Compares what two runlens binaries make of the same inputs: the import's summary, `runlens info`,
# `runlens analyze --json`, `runlens flame -o -` and the report's pages (PDF text and PNG pixels), for every
# fixture run folder. Used around refactorings that must not change behaviour: build the old binary, keep it,
# refactor, then
#
#   tests/tools/compare_behaviour.sh OLD_RUNLENS NEW_RUNLENS [FIXTURES_DIR]
#
# FIXTURES_DIR defaults to ../shared/fixtures beside the checkout. Every run folder under it (a folder holding
# files of a run, e.g. h200-gloo-small or h200-spin-pair/before) and every file under public/ is imported by both
# binaries into runs of their own; the outputs are compared as text (run file names and the import's own
# timestamps replaced). Exits 0 when everything is the same, 1 with the differences otherwise, 77 when the
# fixtures are absent.
set -u

if [ $# -lt 2 ]; then
    echo "usage: $0 OLD_RUNLENS NEW_RUNLENS [FIXTURES_DIR]" >&2
    exit 2
fi
old=$(readlink -f "$1")
new=$(readlink -f "$2")
root=$(cd "$(dirname "$0")/../.." && pwd)
fixtures=${3:-$root/../shared/fixtures}
if [ ! -d "$fixtures" ]; then
    echo "$fixtures is absent: nothing to compare"
    exit 77
fi
for b in "$old" "$new"; do
    if [ ! -x "$b" ]; then
        echo "$b: not an executable" >&2
        exit 2
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QT_QPA_PLATFORM=offscreen TZ=UTC LC_ALL=C.UTF-8

# Inputs: run folders (a folder with a README or a truth/ beside its files counts as one run) and public files.
inputs="$work/inputs"
: >"$inputs"
find "$fixtures" -name truth -prune -o -type d -print | sort | while read -r d; do
    case "$d" in "$fixtures"/public*) continue ;; esac
    if find "$d" -maxdepth 1 -type f ! -name README.md | grep -q .; then
        echo "$d" >>"$inputs"
    fi
done
if [ -d "$fixtures/public" ]; then
    find "$fixtures/public" -type f ! -name '*.md' ! -name SOURCES.tsv ! -name LICENSE* | sort >>"$inputs"
fi

# Reports say when they were written (page 1 and every footer): both sides write them at the same fake time.
clock=
fixed_clock() { faketime -f '@2026-01-01 00:00:00' "$@"; }
if command -v faketime >/dev/null; then
    export FAKETIME_DONT_FAKE_MONOTONIC=1
    clock=fixed_clock
else
    echo "faketime is not installed (apt-get install faketime): reports are not compared"
fi

# Runs one binary over every input into folder $2.
run_all() {
    bin=$1
    out=$2
    mkdir -p "$out"
    n=0
    while read -r in; do
        n=$((n + 1))
        key=$(printf '%03d' "$n")
        db="$out/$key.runlens"
        {
            echo "== $in"
            "$bin" import -o "$db" "$in" 2>&1
            echo "exit $?"
        } >"$out/$key.import" 2>&1
        [ -f "$db" ] || continue
        "$bin" info "$db" >"$out/$key.info" 2>&1
        echo "exit $?" >>"$out/$key.info"
        "$bin" analyze --json "$db" >"$out/$key.analyze" 2>&1
        echo "exit $?" >>"$out/$key.analyze"
        "$bin" flame -o - "$db" >"$out/$key.flame" 2>&1
        echo "exit $?" >>"$out/$key.flame"
        if [ -d "$in" ] && [ -n "$clock" ]; then
            # Run from the folder: the report prints the run's path as given.
            (cd "$out" && $clock "$bin" report -o "$key.pdf" "$key.runlens" >"$key.report" 2>&1)
            echo "exit $?" >>"$out/$key.report"
            if [ -f "$out/$key.pdf" ]; then
                pdftotext -layout "$out/$key.pdf" "$out/$key.report.txt" 2>/dev/null
                pdftoppm -r 40 -png "$out/$key.pdf" "$out/$key.page" 2>/dev/null
                for p in "$out/$key".page*.png; do
                    [ -f "$p" ] && md5sum <"$p" | cut -d' ' -f1 >"${p%.png}.md5"
                done
                rm -f "$out/$key".page*.png "$out/$key.pdf"
            fi
        fi
    done <"$inputs"
}

run_all "$old" "$work/old"
run_all "$new" "$work/new"

# The run's file name and the import's own clock differ between the two sides by construction.
normalise() {
    for f in "$1"/*; do
        sed -i -E -e "s#$1/##g" \
            -e 's/(imported|Imported|created|generated|Generated)([^0-9]*)[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:.]+Z?/\1\2<time>/g' \
            -e 's/[0-9.]+ s elapsed/<elapsed>/g' "$f" 2>/dev/null
    done
    # How long an import took is in its summary line and in `info`'s list of imports.
    sed -i -E 's/, [0-9.]+ (ms|s)$/, <duration>/' "$1"/*.import "$1"/*.info 2>/dev/null
    sed -i -E 's/\([0-9.]+ s: data [0-9.]+ s, drawing [0-9.]+ s\)/(<durations>)/' "$1"/*.report 2>/dev/null
    rm -f "$1"/*.runlens
}
normalise "$work/old"
normalise "$work/new"

if diff -r "$work/old" "$work/new" >"$work/diff"; then
    echo "same: $(wc -l <"$inputs") inputs, $(ls "$work/new" | wc -l) outputs compared"
    exit 0
fi
echo "different:"
cat "$work/diff"
exit 1
