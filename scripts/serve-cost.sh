#!/usr/bin/env bash
# What `leet serve` costs while scraped: one process at --interval INTERVAL, scraped
# (GET /metrics with curl) every SCRAPE_S seconds for DURATION_S seconds. Prints the CPU
# it used meanwhile (utime + stime from /proc/PID/stat, as a share of one core) and its
# VmRSS, VmHWM, RssAnon and RssFile at the end. Targets (issue 28): at most 0.3 % of one
# core and 15 MB RSS with a scrape every second.
#
# usage: scripts/serve-cost.sh [DURATION_S] [SCRAPE_S] [INTERVAL]
#   (defaults: 60, 1, 1s; SKIP_BUILD=1 and LEET=... as in common.sh; extra leet serve
#   options in SERVE_ARGS)
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
DURATION_S=${1:-60}
SCRAPE_S=${2:-1}
INTERVAL=${3:-1s}

TMP=$(mktemp -d)
# shellcheck disable=SC2086
"$LEET" serve --listen 127.0.0.1:0 --interval "$INTERVAL" ${SERVE_ARGS:-} 2> "$TMP/stderr" &
PID=$!
trap 'kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
ADDR=
for _ in $(seq 100); do
    ADDR=$(sed -n 's#^leet serve: listening on http://\(.*\)/metrics$#\1#p' "$TMP/stderr")
    [[ -n "$ADDR" ]] && break
    sleep 0.1
done
[[ -n "$ADDR" ]] || { cat "$TMP/stderr" >&2; exit 1; }
# Past detection and the first samples before measuring.
until curl -sf -o /dev/null "http://$ADDR/metrics"; do sleep 0.2; done
sleep 3

ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
t0=$(date +%s.%N); c0=$(ticks)
end=$(echo "$t0 + $DURATION_S" | bc)
n=0
while (( $(echo "$(date +%s.%N) < $end" | bc) )); do
    curl -sf -o /dev/null "http://$ADDR/metrics" && n=$((n + 1))
    sleep "$SCRAPE_S"
done
t1=$(date +%s.%N); c1=$(ticks)
hz=$(getconf CLK_TCK)
echo "leet: $LEET"
echo "scrapes: $n answered in $(echo "$t1 - $t0" | bc) s (every ${SCRAPE_S} s, --interval $INTERVAL)"
echo "cpu: $((c1 - c0)) ticks at $hz/s = $(echo "scale=3; 100 * ($c1 - $c0) / $hz / ($t1 - $t0)" | bc) % of one core"
grep -E '^(VmRSS|VmHWM|RssAnon|RssFile):' "/proc/$PID/status"
echo "page: $(curl -sf "http://$ADDR/metrics" | wc -c) bytes"
