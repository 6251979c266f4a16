#!/usr/bin/env bash
# Measure the host sampler's own cost: CPU % of one core (utime+stime from
# /proc/<pid>/stat over wall time) and peak RSS (VmHWM), for
#   leet sample --json --interval 1s --count 60 > /dev/null      (release build)
# and, when /opt/wandbvenv/bin/wandb exists, for `wandb leet symon --interval 1s`
# run for the same time under `script` (it is a TUI), measuring its wandb-core and
# wandb-symon processes separately.
#
# usage: scripts/sampler-overhead.sh [seconds]    (default 60; SKIP_BUILD=1 to reuse the binary)
set -euo pipefail

SECS=${1:-60}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
HZ=$(getconf CLK_TCK)

# ticks <pid>: utime+stime in clock ticks (empty if gone)
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || true; }
# sched <pid>: on-CPU time in ns summed over the live threads' schedstat (finer than
# ticks; threads that already exited are not counted; empty if absent)
sched() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { if (NR) print s }' || true; }
# hwm <pid>: VmHWM in kB (empty if gone)
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true; }
# descendants <pid>: all descendant pids
descendants() {
    local kids
    kids=$(ps -o pid= --ppid "$1" 2>/dev/null || true)
    for k in $kids; do
        echo "$k"
        descendants "$k"
    done
}
comm() { cat "/proc/$1/comm" 2>/dev/null || echo "?"; }

# measure <label> <root pid> <seconds> <comm regex>
# Polls every 0.5 s; keeps the last seen ticks and the highest VmHWM of every process
# in the tree whose name matches, so processes are counted up to their last poll.
measure() {
    local label=$1 root=$2 secs=$3 match=$4
    declare -A T H N S
    local start end now p t h s
    start=$(date +%s.%N)
    end=$(echo "$start + $secs" | bc)
    while kill -0 "$root" 2>/dev/null; do
        for p in "$root" $(descendants "$root"); do
            [[ $(comm "$p") =~ $match ]] || continue
            t=$(ticks "$p"); h=$(hwm "$p"); s=$(sched "$p")
            [[ -n "$t" ]] && T[$p]=$t
            [[ -n "$s" ]] && S[$p]=$s
            [[ -n "$h" ]] && { [[ -z "${H[$p]:-}" || $h -gt ${H[$p]} ]] && H[$p]=$h; }
            N[$p]=$(comm "$p")
        done
        now=$(date +%s.%N)
        (( $(echo "$now >= $end" | bc) )) && break
        sleep 0.5
    done
    now=$(date +%s.%N)
    local wall
    wall=$(echo "$now - $start" | bc)
    for p in "${!T[@]}"; do
        awk -v l="$label" -v n="${N[$p]}" -v p="$p" -v t="${T[$p]}" -v hz="$HZ" -v w="$wall" -v h="${H[$p]:-0}" -v s="${S[$p]:-0}" \
            'BEGIN { printf "%-18s %-12s pid %-7s cpu %6.3f%% of one core (schedstat %6.3f%%) over %5.1fs   peak RSS %6.1f MB\n", l, n, p, 100 * t / hz / w, 100 * s / 1e9 / w, w, h / 1024 }'
    done
}

echo "== leet sample (release), interval 1s, ${SECS} samples"
"$LEET" sample --json --interval 1s --count "$SECS" > /dev/null 2> /tmp/leet-overhead.err &
LEET_PID=$!
measure "leet sample" "$LEET_PID" $((SECS + 5)) '^leet$'
wait "$LEET_PID" || true

if [[ -x "$WANDB" ]]; then
    echo "== wandb leet symon --interval 1s (under script, ${SECS}s)"
    TERM=xterm-256color script -qc "$WANDB leet symon --interval 1s" /dev/null > /dev/null 2>&1 < /dev/null &
    W_PID=$!
    measure "wandb leet symon" "$W_PID" "$SECS" '^(wandb-core|wandb-symon)$'
    KIDS=$(descendants "$W_PID")
    kill "$W_PID" 2>/dev/null || true
    for p in $KIDS; do kill "$p" 2>/dev/null || true; done
    wait "$W_PID" 2>/dev/null || true
else
    echo "($WANDB not found; skipping the wandb comparison)"
fi
