#!/usr/bin/env bash
# The live monitor's own cost on a host with many processes, side by side with other
# monitors: starts PROCS idle processes (default 300 `sleep`s, ended on exit), then runs
# each monitor in a detached tmux session of 200x60 (so its screen, process table
# included, is drawn as a user would see it) at a 1 s interval:
#   leet --live --interval 1s                (release build)
#   wandb leet symon --interval 1s           ($WANDB, default /tmp/wvenv/bin/wandb)
#   btop, update_ms = 1000                   (if installed; one `apt-get install -y btop`
#                                             is tried, else "btop not installed")
# and measures, after a WARMUP (default 5 s), over SECONDS (default 60): CPU % of one
# core of every process of the monitor's tree, from /proc/<pid>/stat utime+stime and
# from the threads' schedstat (finer), as the difference between the start and the end
# of the window, and the peak RSS (VmHWM). Prints a table (one row per process, and a
# total per monitor).
#
# usage: scripts/live-overhead.sh [seconds]   (SKIP_BUILD=1 reuses the release build;
#        PROCS=N, WARMUP=S; MONITORS="leet symon btop" picks the monitors; LEET, WANDB,
#        BTOP override the programs)
set -euo pipefail

SECS=${1:-60}
PROCS=${PROCS:-300}
WARMUP=${WARMUP:-5}
MONITORS=" ${MONITORS:-leet symon btop} "
if [[ -z "${WANDB:-}" && -x /tmp/wvenv/bin/wandb ]]; then
    WANDB=/tmp/wvenv/bin/wandb
fi
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
HZ=$(getconf CLK_TCK)
command -v tmux >/dev/null || { echo "tmux is required" >&2; exit 1; }

SLEEPERS=()
SESSIONS=()
cleanup() {
    local s
    for s in "${SESSIONS[@]}"; do
        tmux kill-session -t "$s" 2>/dev/null || true
    done
    if ((${#SLEEPERS[@]})); then
        kill "${SLEEPERS[@]}" 2>/dev/null || true
        wait "${SLEEPERS[@]}" 2>/dev/null || true
    fi
}
trap cleanup EXIT

ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || true; }
sched() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { if (NR) printf "%.0f\n", s }' || true; }
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true; }
comm() { cat "/proc/$1/comm" 2>/dev/null || echo "?"; }
tree() {
    local k
    echo "$1"
    for k in $(ps -o pid= --ppid "$1" 2>/dev/null || true); do
        tree "$k"
    done
}

ROWS=()
# measure <label> <root pid>: the window's CPU of each process of the tree, peak RSS.
measure() {
    local label=$1 root=$2 p t0 t1 s0 s1 h
    declare -A T0 S0 H
    sleep "$WARMUP"
    local start end
    start=$(date +%s.%N)
    for p in $(tree "$root"); do
        T0[$p]=$(ticks "$p"); S0[$p]=$(sched "$p")
    done
    end=$(echo "$start + $SECS" | bc)
    # Poll the peak RSS (and new processes) every 5 s; little work for the host.
    while (( $(echo "$(date +%s.%N) < $end" | bc) )); do
        for p in $(tree "$root"); do
            [[ -n "${T0[$p]:-}" ]] || { T0[$p]=$(ticks "$p"); S0[$p]=$(sched "$p"); }
            h=$(hwm "$p")
            [[ -n "$h" ]] && { [[ -z "${H[$p]:-}" || $h -gt ${H[$p]} ]] && H[$p]=$h; }
        done
        sleep 5
    done
    local wall
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    local tt=0 ts=0 th=0
    for p in "${!T0[@]}"; do
        t1=$(ticks "$p"); s1=$(sched "$p"); h=$(hwm "$p")
        [[ -n "$t1" ]] || continue
        [[ -n "$h" ]] && { [[ -z "${H[$p]:-}" || $h -gt ${H[$p]} ]] && H[$p]=$h; }
        t0=${T0[$p]:-0}; s0=${S0[$p]:-0}
        ROWS+=("$(awk -v l="$label" -v n="$(comm "$p")" -v p="$p" -v t="$((t1 - ${t0:-0}))" -v s="$(( ${s1:-0} - ${s0:-0} ))" -v hz="$HZ" -v w="$wall" -v h="${H[$p]:-0}" \
            'BEGIN { printf "%-8s %-16s %8s %9.3f %9.3f %9.1f", l, n, p, 100 * t / hz / w, 100 * s / 1e9 / w, h / 1024 }')")
        tt=$((tt + t1 - ${t0:-0})); ts=$((ts + ${s1:-0} - ${s0:-0})); th=$((th + ${H[$p]:-0}))
    done
    ROWS+=("$(awk -v l="$label" -v t="$tt" -v s="$ts" -v hz="$HZ" -v w="$wall" -v h="$th" \
        'BEGIN { printf "%-8s %-16s %8s %9.3f %9.3f %9.1f   (%.0f s)", l, "= total", "", 100 * t / hz / w, 100 * s / 1e9 / w, h / 1024, w }')")
}

# run <label> <command...>: in a detached tmux session; measured, then ended.
run() {
    local label=$1
    shift
    local session="leet-overhead-$label-$$"
    SESSIONS+=("$session")
    tmux new-session -d -s "$session" -x 200 -y 60 "exec $*"
    local pid
    pid=$(tmux list-panes -t "$session" -F '#{pane_pid}')
    echo "$label: pid $pid ($*)" >&2
    measure "$label" "$pid"
    tmux kill-session -t "$session" 2>/dev/null || true
}

for _ in $(seq "$PROCS"); do
    sleep 600 &
    SLEEPERS+=($!)
done
NPROC=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)
echo "host: $(nproc) cores, $NPROC processes (with $PROCS idle sleeps started here), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

if [[ $MONITORS == *" leet "* ]]; then
    run leet "$LEET" --live --interval 1s
fi
if [[ $MONITORS != *" symon "* ]]; then
    :
elif [[ -n "${WANDB:-}" && -x "$WANDB" ]]; then
    run symon "$WANDB" leet symon --interval 1s
else
    echo "wandb not found (set WANDB): symon not measured" >&2
fi
if [[ $MONITORS == *" btop "* ]]; then
    BTOP=${BTOP:-$(command -v btop || true)}
    if [[ -z "$BTOP" ]]; then
        timeout 120 apt-get install -y btop >/dev/null 2>&1 || true
        BTOP=$(command -v btop || true)
    fi
    if [[ -n "$BTOP" ]]; then
        # btop 1.2 has no interval flag: update_ms in a configuration of its own.
        BTOP_CONFIG=$(mktemp -d)
        mkdir -p "$BTOP_CONFIG/btop"
        echo "update_ms = 1000" >"$BTOP_CONFIG/btop/btop.conf"
        run btop env XDG_CONFIG_HOME="$BTOP_CONFIG" "$BTOP" --utf-force
        rm -rf "$BTOP_CONFIG"
    else
        echo "btop not installed (apt-get install -y btop failed): not measured" >&2
    fi
fi
if ((${#ROWS[@]} == 0)); then
    echo "nothing measured" >&2
    exit 1
fi

echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-16s %8s %9s %9s %9s\n' monitor process pid "cpu%" "sched%" "peakMB"
printf '%s\n' "${ROWS[@]}"
