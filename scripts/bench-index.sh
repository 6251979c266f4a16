#!/usr/bin/env bash
# The workspace index on a generated wandb directory: the first scan (cold cache,
# every run file read, in parallel) and the second (warm cache, nothing read).
#
# usage: scripts/bench-index.sh [N] [REPEAT]     (N runs, default 1000; REPEAT
#        warm scans, default 5)
#   env: SKIP_BUILD=1, KEEP=DIR (generate into DIR and keep it)
# Prints the machine's load before and after, since timings on a shared machine
# move with it. The page cache is warm for the files (they were just written):
# the figure is leet's work, not the disk's.
set -euo pipefail

N=${1:-1000}
REPEAT=${2:-5}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release/examples/many_runs
if [[ -z "${SKIP_BUILD:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet --locked --example many_runs)
fi
WORK=${KEEP:-$(mktemp -d)}
[[ -n "${KEEP:-}" ]] || trap 'rm -rf "$WORK"' EXIT
WANDB=$WORK/wandb
CACHE=$WORK/cache
rm -rf "$WANDB" "$CACHE"
"$BIN" gen "$WANDB" "$N"
echo "cores: $(nproc); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "first scan (no cache):"
"$BIN" scan "$WANDB" "$CACHE" 1
echo "cache file: $(du -b "$CACHE"/index-*.json | cut -f1) bytes"
echo "warm scans (cache, nothing changed):"
"$BIN" scan "$WANDB" "$CACHE" "$REPEAT"
echo "cold again (cache removed), $REPEAT times:"
for _ in $(seq "$REPEAT"); do
    rm -rf "$CACHE"
    "$BIN" scan "$WANDB" "$CACHE" 1
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
