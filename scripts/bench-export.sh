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
# usage: scripts/bench-export.sh [FILE]
#   env: SKIP_BUILD=1, SYNTH_DIR=/tmp/leet-bench, MAX_RSS_MIB=200, FORMATS="csv jsonl parquet",
#        SMOOTHINGS="none" (e.g. "none twema:0.6 avg:100 gauss:50")
set -euo pipefail

SYNTH_DIR=${SYNTH_DIR:-/tmp/leet-bench}
MAX_RSS_MIB=${MAX_RSS_MIB:-200}
FORMATS=${FORMATS:-csv jsonl parquet}
SMOOTHINGS=${SMOOTHINGS:-none}
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
size=$(stat -c %s "$file")
echo "file: $file ($((size / 1048576)) MiB)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for smoothing in $SMOOTHINGS; do
for fmt in $FORMATS; do
    out=/dev/null
    [[ $fmt == parquet ]] && out=$tmp/out.parquet
    args=(export "$file" --format "$fmt" -o "$out")
    [[ $smoothing != none ]] && args+=(--smoothing "$smoothing")
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" \
        "$LEET" "${args[@]}" 2>"$tmp/err" || {
        echo "$fmt: leet export failed:"; tail -5 "$tmp/err"; exit 1; }
    read -r wall user sys rss <"$tmp/time"
    rss_mib=$((rss / 1024))
    extra=""
    [[ $fmt == parquet ]] && extra=" parquet_MiB=$(($(stat -c %s "$out") / 1048576))"
    echo "$fmt smoothing=$smoothing: wall_s=$wall cpu_s=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') peak_rss_MiB=$rss_mib$extra"
    if ((rss_mib >= MAX_RSS_MIB)); then
        echo "$fmt smoothing=$smoothing: peak RSS ${rss_mib} MiB is over ${MAX_RSS_MIB} MiB"
        status=1
    fi
    rm -f "$tmp/out.parquet"
done
done
exit $status
