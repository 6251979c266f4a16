#!/usr/bin/env bash
# Peak memory of the record inspector on a big file: `leet inspect FILE` in tmux,
# waited on until the index is read, then `end` (last record, following), then a
# text filter over every record (waited on until every row is checked), then `q`.
# Prints the index's progress as seen, the process's VmHWM (from /proc, just before
# quitting) and GNU time's maximum RSS.
#
# With no FILE it makes a 1 GB synthetic run under $SYNTH_DIR (examples/synth,
# wandb-core's record shapes: 3.85M steps x 10 metrics, no summary records).
#
# usage: scripts/inspector-memory.sh [FILE]
#   env: SKIP_BUILD=1, SYNTH_DIR=/tmp/leet-inspector, PATTERN (the text filter typed;
#        default the last step of the 1 GB run's history)
set -euo pipefail
SYNTH_DIR=${SYNTH_DIR:-/tmp/leet-inspector}
PATTERN=${PATTERN:-'"_step":3849999,'}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"

file=${1:-}
if [[ -z "$file" ]]; then
    mkdir -p "$SYNTH_DIR"
    file=$SYNTH_DIR/synth-1g.wandb
    if [[ ! -s "$file" ]]; then
        (cd "$ROOT" && cargo build --release --quiet --example synth)
        "$TARGET/release/examples/synth" "$file" 3850000 10 --no-summary
    fi
fi
ls -l "$file"
sock=leet-inspector-mem-$$
out=$(mktemp -d)
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$out"' EXIT
tmux -L "$sock" -f /dev/null new-session -d -s s -x 120 -y 40 \
    "XDG_CONFIG_HOME=$out/config XDG_STATE_HOME=$out/state XDG_CACHE_HOME=$out/cache /usr/bin/time -v -o $out/time $LEET inspect '$file'; echo done > $out/exit; sleep 60"
screen() { tmux -L "$sock" capture-pane -p -t s; }
wait_for() { # PATTERN TIMEOUT_S: wait until the screen matches (grep -E)
    local t0=$SECONDS
    until screen | grep -qE "$1"; do
        if (( SECONDS - t0 > $2 )); then echo "timed out waiting for $1"; screen; exit 1; fi
        sleep 0.2
    done
}
t0=$(date +%s.%N)
wait_for 'Records 1/' 60
wait_for '^ Records · [^·]*· [0-9]+ records · [^·]*$|following' 600
t1=$(date +%s.%N)
screen | head -1
echo "indexed in $(echo "$t1 - $t0" | bc) s"
tmux -L "$sock" send-keys -t s End
wait_for 'following' 30
screen | head -3
tmux -L "$sock" send-keys -t s / "$PATTERN" Enter
t2=$(date +%s.%N)
wait_for 'checked' 10
until ! screen | head -1 | grep -q 'checked'; do sleep 0.5; done
t3=$(date +%s.%N)
screen | head -4
echo "text filter over every record in $(echo "$t3 - $t2" | bc) s"
pid=$(pgrep -f "^$LEET inspect" | head -1)
grep -E 'VmHWM|VmRSS' "/proc/$pid/status"
tmux -L "$sock" send-keys -t s q
for _ in $(seq 50); do [[ -s $out/exit ]] && break; sleep 0.1; done
grep -E 'Maximum resident|Elapsed' "$out/time"
