#!/usr/bin/env bash
# CPU an idle workspace costs: `leet DIR` and `wandb leet DIR` each in a detached
# tmux (160x45), left alone for WARM_S (10) seconds, then their process trees' CPU
# time over MEASURE_S (30) seconds, as a percentage of one core, and their RSS.
# usage: scripts/workspace-idle.sh DIR   (a wandb directory, e.g. from
#        `cargo run --release --example many_runs -- gen DIR 1000`)
#   env: LEET=target/release/leet, WANDB_BIN=/tmp/wvenv/bin/wandb, ONLY=leet|wandb
set -euo pipefail
DIR=${1:?usage: workspace-idle.sh WANDB_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LEET=${LEET:-$ROOT/target/release/leet}
WANDB=${WANDB_BIN:-/tmp/wvenv/bin/wandb}
WARM_S=${WARM_S:-10}
MEASURE_S=${MEASURE_S:-30}
WORK=$(mktemp -d)
SOCK="idle-$$"
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$WORK"; rm -f "$DIR/.wandb-leet.json"; }
trap cleanup EXIT
tree() { local p=$1; echo "$p"; for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do tree "$c"; done; }
ticks() { local s=0 v; for p in $(tree "$1"); do v=$(awk '{print $14+$15}' /proc/"$p"/stat 2>/dev/null || echo 0); s=$((s + v)); done; echo "$s"; }
rss() { local s=0 v; for p in $(tree "$1"); do v=$(awk '/^VmRSS:/{print $2}' /proc/"$p"/status 2>/dev/null || echo 0); s=$((s + ${v:-0})); done; echo $((s / 1024)); }
hz=$(getconf CLK_TCK)
printf '%-11s %8s %8s\n' program cpu_% rss_MiB
for prog in leet wandb; do
    [[ -n "${ONLY:-}" && "$ONLY" != "$prog" ]] && continue
    rm -f "$DIR/.wandb-leet.json"
    if [[ $prog == leet ]]; then cmd=("$LEET" "$DIR"); else cmd=("$WANDB" leet "$DIR"); fi
    env_="XDG_CACHE_HOME=$WORK/$prog/cache XDG_STATE_HOME=$WORK/$prog/state XDG_CONFIG_HOME=$WORK/$prog/config"
    pid=$(tmux -L "$SOCK" -f /dev/null new-session -d -x 160 -y 45 -P -F '#{pane_pid}' \
        "exec env $env_ $(printf '%q ' "${cmd[@]}")")
    sleep "$WARM_S"
    t1=$(ticks "$pid"); sleep "$MEASURE_S"; t2=$(ticks "$pid")
    pct=$(awk -v d=$((t2 - t1)) -v hz="$hz" -v s="$MEASURE_S" 'BEGIN{printf "%.2f", d * 100 / hz / s}')
    printf '%-11s %8s %8s\n' "$prog" "$pct" "$(rss "$pid")"
    tmux -L "$SOCK" kill-server 2>/dev/null || true
done
