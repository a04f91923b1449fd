#!/usr/bin/env bash
# Runs the libFuzzer targets for a bounded time each, at most JOBS at once, and prints one
# line per target (runs, corpus size, result). Exits non-zero when any target found something;
# its log tail and the input that triggered it are printed.
#
# Usage: tests/fuzz/run.sh BUILD_DIR SHARED_DIR SECONDS JOBS [TARGET...]   (`make fuzz`)
# FUZZ_TIMEOUT (seconds, default 20): an input running longer is a finding (a hang).
#
# Corpora: BUILD_DIR/corpus/T (kept between runs, so fuzzing accumulates), read together with
# the seeds written from SHARED_DIR and the past findings in tests/data/fuzz/T.
set -euo pipefail
cd "$(dirname "$0")/../.."

build=$1 shared=$2 seconds=$3 jobs=$4
shift 4
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(gguf safetensors llama2c llama2c_tokenizer tokenizer_spm tokenizer_bpe chat_template
             hf_tokenizer)
fi

seeds=$build/seeds
rm -rf "$seeds"
"$build/fuzz/fuzz-seeds" "$shared" "$seeds"

run_target() {
    local t=$1 build=$2 shared=$3 seconds=$4 timeout=$5
    local corpus=$build/corpus/$t findings=$build/findings/$t log=$build/logs/$t.log
    mkdir -p "$corpus" "$findings" "$(dirname "$log")"
    local dict=() name=$t
    case $t in tokenizer_* | llama2c_tokenizer) name=tokenizer ;; esac
    [ -f "tests/fuzz/dict/$name.dict" ] && dict=(-dict="tests/fuzz/dict/$name.dict")
    local status=0 start=$SECONDS
    # -timeout: an input slower than this is a finding (a hang); -rss_limit_mb: so is one
    # that makes the reader allocate without bound.
    LILA_SHARED=$shared ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "$build/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" \
        "$corpus" "$build/seeds/$t" $(ls -d "tests/data/fuzz/$t" 2>/dev/null) >"$log" 2>&1 ||
        status=$?
    local ran=$((SECONDS - start))
    # A timeout whose input runs well inside the limit when replayed alone was the process
    # starved of CPU (a loaded machine), not a hang: say so, and keep the input out of the
    # findings. A real hang times out again here and stays a finding.
    local stall=
    if [ "$status" -ne 0 ] && grep -q 'ERROR: libFuzzer: timeout' "$log"; then
        local input
        input=$(ls -t "$findings"/timeout-* 2>/dev/null | head -n 1)
        if [ -n "$input" ] && LILA_SHARED=$shared "$build/fuzz/fuzz-$t" -timeout="$timeout" \
            "$input" >"$log.replay" 2>&1; then
            stall=" (a timeout after $ran s that did not reproduce: $(sed -n 's/^Executed .* in //p' \
                "$log.replay") alone; CPU starvation)"
            mv "$input" "$findings/../stalled-$t-$(basename "$input")"
            status=0
        fi
    fi
    local runs
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    local files
    files=$(find "$corpus" -type f | wc -l)
    if [ "$status" -eq 0 ]; then
        printf '%-18s %4s s  %10s runs  corpus %5s files  ok%s\n' "$t" "$ran" "${runs:-?}" \
            "$files" "$stall"
    else
        printf '%-18s FAILED (exit %s): log %s, inputs in %s\n' "$t" "$status" "$log" "$findings"
        tail -n 40 "$log"
        return 1
    fi
}
export -f run_target

printf '%s\n' "${targets[@]}" |
    xargs -P "$jobs" -I{} bash -c 'run_target "$@"' _ {} "$build" "$shared" "$seconds" \
        "${FUZZ_TIMEOUT:-20}"
