#!/usr/bin/env bash
# Batch-read cost of `leet inspect` vs `wandb leet inspect` on one .wandb file:
# wall time, user CPU, sys CPU, peak RSS (GNU time) and throughput (file MB per wall
# second), median of N runs (default 3), with `cat FILE > /dev/null` as the
# warm-cache floor. The machine may be shared: the load average is printed before
# and after; rerun when it is low.
#
# usage: scripts/bench-inspect.sh FILE [RUNS]    (SKIP_BUILD=1 to reuse the binary;
#        WANDB=/path/to/wandb to pick the reference CLI, SKIP_WANDB=1 to leave it out:
#        `wandb leet inspect --json` takes about a minute on a 125 MB run)
set -euo pipefail

FILE=${1:?usage: bench-inspect.sh FILE [RUNS]}
RUNS=${2:-3}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"

declare -A WALL
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Warm the page cache.
cat "$FILE" > /dev/null

# median of the numbers on stdin
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# bench NAME CMD...: run CMD RUNS times with stdout to /dev/null, one table row of medians
bench() {
    local name=$1
    shift
    local out=$TMP/$name
    : > "$out"
    local i rc
    local t0 t1
    for ((i = 0; i < RUNS; i++)); do
        rc=0
        # GNU time gives CPU and RSS; the wall time is bash's microsecond clock
        # (time's own has 10 ms steps).
        t0=$EPOCHREALTIME
        /usr/bin/time -f '%U %S %M' -o "$TMP/t" "$@" > /dev/null 2> "$TMP/err" || rc=$?
        t1=$EPOCHREALTIME
        if [[ $rc -ne 0 ]]; then
            echo "warning: $name exited $rc: $(tail -n 3 "$TMP/err")" >&2
        fi
        echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') $(tail -n 1 "$TMP/t")" >> "$out"
    done
    local wall
    wall=$(awk '{ print $1 }' "$out" | median)
    WALL[$name]=$wall
    printf '%-34s %9s %9s %9s %10s %8s\n' "$name" "$wall" \
        "$(awk '{ print $2 }' "$out" | median)" \
        "$(awk '{ print $3 }' "$out" | median)" \
        "$(awk '{ print int($4 / 1024) }' "$out" | median)" \
        "$(awk -v b="$BYTES" -v w="$wall" 'BEGIN { if (w > 0) printf "%.0f", b / 1e6 / w; else print "-" }')"
}

BYTES=$(stat -c %s "$FILE")

echo "file: $FILE ($BYTES bytes), median of $RUNS runs, $(nproc) cores"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %9s %9s %9s %10s %8s\n' "command" "wall_s" "user_s" "sys_s" "maxrss_MiB" "MB/s"
bench "cat" cat "$FILE"
bench "leet inspect --json" "$LEET" inspect --json "$FILE"
[[ -n "${SKIP_WANDB:-}" ]] || bench "wandb leet inspect --json" "$WANDB" leet inspect --json "$FILE"
bench "leet inspect --summary --json" "$LEET" inspect --summary --json "$FILE"
[[ -n "${SKIP_WANDB:-}" ]] || bench "wandb leet inspect --summary --json" "$WANDB" leet inspect --summary --json "$FILE"
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
for name in "leet inspect --json" "leet inspect --summary --json"; do
    awk -v n="$name" -v w="${WALL[$name]}" -v c="${WALL[cat]}" \
        'BEGIN { if (c > 0) printf "%s: %.1fx the time of cat\n", n, w / c }'
done
