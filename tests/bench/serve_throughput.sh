#!/usr/bin/env bash
# The aggregate generation speed of `lila serve` with C clients at once (docs/PERF.md):
#
#   tests/bench/serve_throughput.sh MODEL.gguf [CLIENTS...]     (default: 1 4 8; needs curl)
#
# Starts lila serve on a free port with as many slots as the most clients, then for each
# client count sends that many completion requests at once (a short prompt, N tokens each
# with ignore_eos, so every request generates the same amount) and prints the tokens
# generated per second of wall time, request to last byte, for each of REPS rounds after a
# warm-up. Environment: LILA (the binary), N (tokens per request, 32), REPS (3), THREADS.
set -euo pipefail
model=$1
shift
clients=("$@")
[ ${#clients[@]} -gt 0 ] || clients=(1 4 8)
lila=${LILA:-build/lila}
n=${N:-32}
reps=${REPS:-3}
max=$(printf '%s\n' "${clients[@]}" | sort -n | tail -1)

log=$(mktemp)
threads=()
[ -n "${THREADS:-}" ] && threads=(-t "$THREADS")
"$lila" serve -m "$model" --port 0 -np "$max" -c 256 "${threads[@]}" 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
until port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$'); do
    kill -0 $server 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.2
done

body="{\"prompt\": \"Once upon a time\", \"max_tokens\": $n, \"ignore_eos\": true}"
round() {
    local c=$1 start end
    start=$(date +%s.%N)
    for _ in $(seq "$c"); do
        curl -sf "http://127.0.0.1:$port/v1/completions" -d "$body" -o /dev/null &
    done
    wait $(jobs -p | grep -v "^$server$")
    end=$(date +%s.%N)
    echo "$c $n $start $end" | awk '{ printf "%.2f", $1 * $2 / ($4 - $3) }'
}

echo "| clients | tokens/s (each round) |"
echo "|---:|---|"
for c in "${clients[@]}"; do
    round "$c" >/dev/null
    rates=()
    for _ in $(seq "$reps"); do rates+=("$(round "$c")"); done
    echo "| $c | ${rates[*]} |"
done
