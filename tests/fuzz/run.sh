#!/usr/bin/env bash
# Builds the fuzz targets (the asan build tree) and runs every libFuzzer target for SECONDS each (default 60) on its seed corpus: the
# seeds under tests/fuzz/seeds, the shared fixtures (../shared/fixtures, read from there when present) and a run
# imported from them (database and codec targets). The regression inputs under tests/fuzz/regressions/<target>/
# are replayed first. Crashes (and timeouts, out-of-memory) go to build/asan/fuzz-out/crashes/<target>/.
# Prints one row per target (executions, corpus size, peak memory, crashes) and exits 1 on any crash.
#   tests/fuzz/run.sh [SECONDS]        RUNLENS_FUZZ_TARGETS="fuzz_input fuzz_import_folded" limits the targets;
#                                      RUNLENS_FUZZ_JOBS=2 runs two targets at a time (default 1)
set -euo pipefail
seconds="${1:-60}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
shared="${RUNLENS_SHARED_DIR:-$root/../shared}"
fixtures="$shared/fixtures"
build="$root/build/asan"
jobs="${RUNLENS_FUZZ_JOBS:-1}"
out="$build/fuzz-out"
cd "$root"

all_targets="fuzz_import_nvsmi fuzz_import_dcgm fuzz_import_prometheus fuzz_import_sysstat fuzz_import_generic
fuzz_import_folded fuzz_import_perf fuzz_import_speedscope fuzz_import_trace fuzz_import_trainer fuzz_input
fuzz_chunk_codec fuzz_stack_codec fuzz_run_database"
targets="${RUNLENS_FUZZ_TARGETS:-$all_targets}"

if ! command -v clang++ >/dev/null ||
    [ ! -f "$(clang++ -print-resource-dir)/lib/linux/libclang_rt.fuzzer-$(uname -m).a" ]; then
    echo "the fuzz targets need clang and libFuzzer: apt-get install clang libclang-rt-14-dev" >&2
    exit 2
fi
mkdir -p "$build"
cmake --workflow --preset fuzz >"$build.fuzz.log" 2>&1 || { cat "$build.fuzz.log"; echo "fuzz build failed" >&2; exit 2; }

# The shared fixtures each importer family starts from (globs under ../shared/fixtures).
fixtures_of() {
    case "$1" in
    fuzz_import_nvsmi) echo "public/nvidia_gpu_exporter/internal/captures/* public/DCConv/* */nvidia-smi-query.csv */nvidia-smi-dmon*.txt" ;;
    fuzz_import_prometheus) echo "public/node_exporter/collector/fixtures/* public/prometheus/cmd/promtool/testdata/*
        public/nvidia_gpu_exporter/internal/integration/testdata/* */prometheus/node_memory_*.json" ;;
    fuzz_import_sysstat) echo "public/sysstat/tests/*" ;;
    fuzz_import_generic) echo "public/DCConv/*" ;;
    fuzz_import_folded) echo "public/speedscope/sample/profiles/stackcollapse/* */stacks-rank0.folded" ;;
    fuzz_import_perf) echo "public/FlameGraph/test/* public/speedscope/sample/profiles/linux-perf/*" ;;
    fuzz_import_speedscope) echo "public/speedscope/sample/profiles/speedscope/*/* public/speedscope/sample/profiles/pprof/*" ;;
    fuzz_import_trace) echo "public/speedscope/sample/profiles/trace-event/* public/HolisticTraceAnalysis/tests/data/*/*" ;;
    fuzz_import_trainer) echo "*/trainer_log-rank0.jsonl */megatron-rank0.log" ;;
    fuzz_input) echo "public/HolisticTraceAnalysis/tests/data/amd_trace/* public/sysstat/tests/expected.sadf-d" ;;
    esac
}
max_len_of() {
    case "$1" in
    fuzz_run_database) echo 1048576 ;;
    fuzz_import_speedscope | fuzz_import_trace) echo 262144 ;;
    *) echo 65536 ;;
    esac
}

# Seed folders, rebuilt each run; the working corpora (corpus/<target>) are kept between runs.
rm -rf "$out/seeds" "$out/crashes" "$out/logs"
mkdir -p "$out/seeds" "$out/crashes" "$out/logs" "$out/corpus"
for t in $targets; do
    mkdir -p "$out/seeds/$t" "$out/corpus/$t" "$out/crashes/$t"
    [ -d "tests/fuzz/seeds/$t" ] && cp tests/fuzz/seeds/"$t"/* "$out/seeds/$t/"
    [ -d "$fixtures" ] || continue
    for pattern in $(fixtures_of "$t"); do
        for f in "$fixtures"/$pattern; do
            [ -f "$f" ] || continue
            name="$(echo "${f#"$fixtures"/}" | tr / _)"
            if [ "$t" = fuzz_input ]; then # the first byte is the target's mode: 0 reads the rest as it is
                { printf '\0'; head -c 65535 "$f"; } >"$out/seeds/$t/$name"
            else
                head -c 262144 "$f" >"$out/seeds/$t/$name"
            fi
        done
    done
done
if [ -d "$fixtures/public" ]; then
    "$build/tests/fuzz/fuzz_make_seeds" "$out/seeds" "$fixtures/public/DCConv/gpu_usage.csv" \
        "$fixtures/public/prometheus/cmd/promtool/testdata/metrics-test.prom" \
        "$fixtures/public/speedscope/sample/profiles/stackcollapse/simple.txt" \
        "$fixtures/public/FlameGraph/test/perf-dd-stacks-01.txt" >"$out/logs/make_seeds.log" 2>&1 ||
        { cat "$out/logs/make_seeds.log"; exit 2; }
fi

# One target: its regression inputs, then SECONDS of fuzzing; writes its row to logs/<target>.row.
run_target() {
    local t="$1" bin="$build/tests/fuzz/$1" crashes=0 start elapsed execs corpus rss
    # Regression inputs: each must run through without a crash or a sanitizer report.
    if [ -d "tests/fuzz/regressions/$t" ]; then
        for r in tests/fuzz/regressions/"$t"/*; do
            case "$r" in *.md) continue ;; esac
            if ! "$bin" -runs=1 "$r" >>"$out/logs/$t.regressions.log" 2>&1; then
                crashes=$((crashes + 1))
                cp "$r" "$out/crashes/$t/regression-$(basename "$r")"
            fi
        done
    fi
    start=$SECONDS
    # -fork=0: a crash stops the target (libFuzzer's default).
    "$bin" "$out/corpus/$t" "$out/seeds/$t" -max_total_time="$seconds" -max_len="$(max_len_of "$t")" \
        -timeout=25 -rss_limit_mb=2560 -print_final_stats=1 -artifact_prefix="$out/crashes/$t/" \
        >"$out/logs/$t.log" 2>&1 || true
    elapsed=$((SECONDS - start))
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/logs/$t.log" | tail -1)"
    rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$out/logs/$t.log" | tail -1)"
    crashes=$((crashes + $(find "$out/crashes/$t" -type f -name '*-*' ! -name 'regression-*' | wc -l)))
    corpus="$(find "$out/corpus/$t" -type f | wc -l)"
    printf '%-24s %10s %8s %8s %8s %8s\n' "$t" "${execs:-?}" "$corpus" "${rss:-?}" "$elapsed" "$crashes" \
        >"$out/logs/$t.row"
}

running=0
for t in $targets; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
    run_target "$t" &
    running=$((running + 1))
done
wait

status=0
printf '%-24s %10s %8s %8s %8s %8s\n' target executions corpus peak_mb seconds crashes
for t in $targets; do
    cat "$out/logs/$t.row"
    [ "$(awk '{print $6}' "$out/logs/$t.row")" = 0 ] || status=1
done
[ "$status" -eq 0 ] || echo "crashes: $out/crashes (logs: $out/logs)" >&2
exit "$status"
