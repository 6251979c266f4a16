#!/usr/bin/env bash
# Hunt for an idle workspace that spins: start `leet DIR` in a detached tmux
# (160x45) STARTS times, warm (one XDG_CACHE_HOME and XDG_STATE_HOME kept for all
# the starts, so from the second on the index comes from the cache, as a user's
# second start does), leave each alone for WARM_S seconds, then read the CPU of
# each of its threads over MEASURE_S seconds from /proc/PID/task/*/stat. A start
# whose process spends more than SPIN_PCT % of a core is reported with its
# busiest threads (name and share), and with PERF=1 a `perf record -g` of it is
# kept in OUT_DIR.
#
# usage: scripts/workspace-spin.sh DIR   (a wandb directory, e.g. from
#        `target/release/examples/many_runs gen DIR 300`)
#   env: LEET=$CARGO_TARGET_DIR/release/leet, STARTS=14, WARM_S=5, MEASURE_S=10,
#        SPIN_PCT=20, PERF=0, OUT_DIR=/tmp/leet-spin, SKIP_BUILD=1
set -euo pipefail
DIR=${1:?usage: workspace-spin.sh WANDB_DIR}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
STARTS=${STARTS:-14}
WARM_S=${WARM_S:-5}
MEASURE_S=${MEASURE_S:-10}
SPIN_PCT=${SPIN_PCT:-20}
OUT_DIR=${OUT_DIR:-/tmp/leet-spin}
command -v tmux > /dev/null || { echo "workspace-spin: tmux is not installed" >&2; exit 2; }
mkdir -p "$OUT_DIR"
WORK=$(mktemp -d)
SOCK="spin-$$"
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
hz=$(getconf CLK_TCK)
# Per thread: "tid name ticks" (utime + stime; the name may hold spaces).
threads() {
    local t
    for t in /proc/"$1"/task/*; do
        awk -v tid="${t##*/}" '{ n = $0; sub(/^[^(]*\(/, "", n); sub(/\).*$/, "", n);
            s = $0; sub(/^.*\) /, "", s); split(s, f, " ");
            gsub(/ /, "_", n); print tid, n, f[12] + f[13] }' "$t/stat" 2>/dev/null || true
    done
}
spun=0
printf '%5s %8s %s\n' start cpu_% busiest_threads
for ((i = 1; i <= STARTS; i++)); do
    pid=$(tmux -L "$SOCK" -f /dev/null new-session -d -x 160 -y 45 -P -F '#{pane_pid}' \
        "exec env XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state XDG_CONFIG_HOME=$WORK/config $(printf '%q ' "$LEET" "$DIR")")
    sleep "$WARM_S"
    threads "$pid" > "$WORK/t1"
    sleep "$MEASURE_S"
    threads "$pid" > "$WORK/t2"
    report=$(awk -v hz="$hz" -v s="$MEASURE_S" '
        NR == FNR { a[$1] = $3; next }
        { d = $3 - a[$1]; tot += d; if (d > 0) printf "%s:%.1f ", $2, d * 100 / hz / s }
        END { printf "|%.2f", tot * 100 / hz / s }' "$WORK/t1" "$WORK/t2")
    pct=${report##*|}
    printf '%5d %8s %s   (%s)\n' "$i" "$pct" "${report%|*}" "$(uptime | sed 's/.*load/load/')"
    if awk -v p="$pct" -v lim="$SPIN_PCT" 'BEGIN { exit !(p > lim) }'; then
        spun=$((spun + 1))
        tmux -L "$SOCK" capture-pane -p > "$OUT_DIR/screen-$i.txt" || true
        cat /proc/"$pid"/task/*/stat > "$OUT_DIR/stat-$i.txt" 2>/dev/null || true
        if [[ "${PERF:-0}" == 1 ]]; then
            perf record -g -p "$pid" -o "$OUT_DIR/perf-$i.data" -- sleep 5 > /dev/null 2>&1 || true
        fi
    fi
    tmux -L "$SOCK" kill-server 2>/dev/null || true
    sleep 0.5
done
echo "spinning starts: $spun of $STARTS (over $SPIN_PCT % of a core; details in $OUT_DIR)"
