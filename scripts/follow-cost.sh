#!/usr/bin/env bash
# What following a fast live run costs: a run of METRICS (50) metrics with a
# stats record every 100 steps (`examples/synth`, STEPS+ steps) is appended to a
# file at RATE (50) steps a second, in one write per step (the bytes of one
# step: the file's length over its steps, so a write may end inside a record, as
# a writer's flush can), while `leet FILE` follows it in a detached tmux
# (160x45). After WARM_S (5) seconds, leet's CPU time (utime+stime of its
# threads, /proc) over MEASURE_S (30) seconds, as % of one core; and at the end
# how far behind the writer the screen's step was (the status bar's `step N`
# against the writer's last whole step).
#
# usage: scripts/follow-cost.sh   (env: LEET, SYNTH=$TARGET/release/examples/synth,
#        RATE=50, METRICS=50, WARM_S=5, MEASURE_S=30, SKIP_BUILD=1, REPEAT=1)
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
SYNTH=${SYNTH:-$TARGET/release/examples/synth}
RATE=${RATE:-50}
METRICS=${METRICS:-50}
WARM_S=${WARM_S:-5}
MEASURE_S=${MEASURE_S:-30}
REPEAT=${REPEAT:-1}
command -v tmux > /dev/null || { echo "follow-cost: tmux is not installed" >&2; exit 2; }
[[ -x $SYNTH ]] || (cd "$ROOT" && cargo build --release --quiet --example synth)
WORK=$(mktemp -d)
SOCK="follow-$$"
WRITER=
cleanup() {
    tmux -L "$SOCK" kill-server 2>/dev/null || true
    [[ -n $WRITER ]] && kill "$WRITER" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
# Enough steps for the whole measurement and then some.
STEPS=$(((WARM_S + MEASURE_S + 20) * RATE))
"$SYNTH" "$WORK/full.wandb" "$STEPS" "$METRICS" --stats-every 100
hz=$(getconf CLK_TCK)
ticks() { cat /proc/"$1"/task/*/stat 2>/dev/null | awk '{ sub(/^.*\) /, ""); split($0, f, " "); s += f[12] + f[13] } END { print s + 0 }'; }
for ((r = 1; r <= REPEAT; r++)); do
    rm -f "$WORK/live.wandb" "$WORK/w/written"; mkdir -p "$WORK/w"
    # The writer: the file's first step at once (header and run record), then one
    # step's bytes every 1/RATE s, paced on the clock (no drift).
    python3 - "$WORK/full.wandb" "$WORK/live.wandb" "$STEPS" "$RATE" "$WORK/w/written" <<'EOF' &
import os, sys, time
src, dst, steps, rate, written = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
data = open(src, "rb").read()
per = len(data) / steps
fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
t0 = time.monotonic()
k, at = 0, 0
while k < steps:
    k += 1
    end = min(len(data), int(per * k))
    os.write(fd, data[at:end])
    at = end
    with open(written, "w") as w:
        w.write(str(k))
    nxt = t0 + k / rate
    d = nxt - time.monotonic()
    if d > 0:
        time.sleep(d)
EOF
    WRITER=$!
    while [[ ! -s $WORK/live.wandb ]]; do sleep 0.05; done
    pid=$(tmux -L "$SOCK" -f /dev/null new-session -d -x 160 -y 45 -P -F '#{pane_pid}' \
        "exec env XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state XDG_CONFIG_HOME=$WORK/config $(printf '%q ' "$LEET" "$WORK/live.wandb")")
    sleep "$WARM_S"
    t1=$(ticks "$pid")
    sleep "$MEASURE_S"
    t2=$(ticks "$pid")
    shown=$(tmux -L "$SOCK" capture-pane -p | grep -o 'step [0-9]*' | tail -1 | awk '{print $2}')
    wrote=$(cat "$WORK/w/written")
    pct=$(awk -v d=$((t2 - t1)) -v hz="$hz" -v s="$MEASURE_S" 'BEGIN { printf "%.2f", d * 100 / hz / s }')
    printf 'follow %d: leet %s %% of a core over %s s at %s steps/s x %s metrics; screen at step %s, writer at %s   (%s)\n' \
        "$r" "$pct" "$MEASURE_S" "$RATE" "$METRICS" "${shown:-?}" "$wrote" "$(uptime | sed 's/.*load/load/')"
    kill "$WRITER" 2>/dev/null || true
    wait "$WRITER" 2>/dev/null || true
    WRITER=
    tmux -L "$SOCK" kill-server 2>/dev/null || true
done
