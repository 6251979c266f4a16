#!/usr/bin/env bash
# Peak memory and time of `leet export` on a big run: each format (csv, jsonl,
# parquet; wide), output to /dev/null (Parquet to a file, then removed), timed by
# GNU time (%M: maximum resident set). The issue's bound: a 1 GB run exports with
# peak RSS under 200 MB. Fails when a run goes over MAX_RSS_MIB. SMOOTHINGS adds
# smoothed columns (`--smoothing KIND:PARAM`; smoothing streams, so the bound holds).
#
# With no FILE it makes a ~1 GB synthetic run under $SYNTH_DIR with examples/synth
# (wandb-core's record shapes: 4M steps x 10 metrics, no summary records).
#
# Each export runs RUNS times (the file read once first, so it is in the page
# cache); it prints the median wall and CPU time, the peak RSS, the MB/s of input
# (file size / wall time) and x_cat (wall time / the median wall time of `cat FILE >
# /dev/null`), with the load average beside each.
#
# usage: scripts/bench-export.sh [FILE]
#   env: SKIP_BUILD=1, SYNTH_DIR=/tmp/leet-bench, MAX_RSS_MIB=200, FORMATS="csv jsonl parquet",
#        SMOOTHINGS="none" (e.g. "none twema:0.6 avg:100 gauss:50"), RUNS=1,
#        LEET=/path/to/leet (another build, to compare)
set -euo pipefail

SYNTH_DIR=${SYNTH_DIR:-/tmp/leet-bench}
MAX_RSS_MIB=${MAX_RSS_MIB:-200}
FORMATS=${FORMATS:-csv jsonl parquet}
SMOOTHINGS=${SMOOTHINGS:-none}
RUNS=${RUNS:-1}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"

file=${1:-}
if [[ -z "$file" ]]; then
    mkdir -p "$SYNTH_DIR"
    file=$SYNTH_DIR/synth-export-1g.wandb
    if [[ ! -s "$file" ]]; then
        if [[ -z "${SKIP_BUILD:-}" ]]; then
            (cd "$ROOT" && cargo build --release --quiet --example synth)
        fi
        "$TARGET/release/examples/synth" "$file" 4000000 10 --no-summary
    fi
fi
size=$(stat -L -c %s "$file")
echo "file: $file ($((size / 1048576)) MiB), leet: $LEET, median of $RUNS"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
# median of the numbers on stdin
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
load() { cut -d' ' -f1 /proc/loadavg; }
cat "$file" >/dev/null
: >"$tmp/cat"
for ((i = 0; i < RUNS; i++)); do
    t0=$EPOCHREALTIME
    cat "$file" >/dev/null
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }' >>"$tmp/cat"
done
cat_wall=$(median <"$tmp/cat")
echo "cat: wall_s=$cat_wall load=$(load)"
for smoothing in $SMOOTHINGS; do
for fmt in $FORMATS; do
    out=/dev/null
    [[ $fmt == parquet ]] && out=$tmp/out.parquet
    args=(export "$file" --format "$fmt" -o "$out")
    [[ $smoothing != none ]] && args+=(--smoothing "$smoothing")
    : >"$tmp/runs"
    loads=""
    for ((i = 0; i < RUNS; i++)); do
        loads+="$(load) "
        t0=$EPOCHREALTIME
        /usr/bin/time -f "%U %S %M" -o "$tmp/time" \
            "$LEET" "${args[@]}" 2>"$tmp/err" || {
            echo "$fmt: leet export failed:"; tail -5 "$tmp/err"; exit 1; }
        t1=$EPOCHREALTIME
        read -r user sys rss <"$tmp/time"
        echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $rss" >>"$tmp/runs"
    done
    wall=$(awk '{ print $1 }' "$tmp/runs" | median)
    cpu=$(awk '{ print $2 }' "$tmp/runs" | median)
    rss=$(awk '{ print $3 }' "$tmp/runs" | sort -g | tail -1)
    rss_mib=$((rss / 1024))
    extra=""
    [[ $fmt == parquet ]] && extra=" parquet_MiB=$(($(stat -c %s "$out") / 1048576))"
    rate=$(awk -v b="$size" -v w="$wall" 'BEGIN { printf "%.0f", b / 1e6 / w }')
    xcat=$(awk -v w="$wall" -v c="$cat_wall" 'BEGIN { if (c > 0) printf "%.1f", w / c; else print "-" }')
    echo "$fmt smoothing=$smoothing: wall_s=$wall (min $(awk '{ print $1 }' "$tmp/runs" | sort -g | head -1)) cpu_s=$cpu peak_rss_MiB=$rss_mib MB/s=$rate x_cat=$xcat load=[${loads% }]$extra"
    if ((rss_mib >= MAX_RSS_MIB)); then
        echo "$fmt smoothing=$smoothing: peak RSS ${rss_mib} MiB is over ${MAX_RSS_MIB} MiB"
        status=1
    fi
    rm -f "$tmp/out.parquet"
done
done
exit $status
