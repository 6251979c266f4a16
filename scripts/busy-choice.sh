#!/usr/bin/env bash
# The decode workers' priority on a busy machine: BUSY busy loops (nice 0, as
# another user's job) run while a big run is loaded ROUNDS times with the workers
# at nice 10 (LEET_LOAD_NICE=1) and at the caller's priority (nice 0), alternated
# (`examples/load`: wall and CPU), and, with NICE10= and NICE0= set to two builds
# of leet (the viewer's workers at nice 10 and at nice 0), key presses timed
# while the run loads in each (`scripts/bench-keys.sh`, PRESSES presses).
#
# usage: scripts/busy-choice.sh FILE
#   env: BUSY=40, ROUNDS=3, PRESSES=30, LOAD=$TARGET/release/examples/load,
#        NICE10=/path/to/leet, NICE0=/path/to/leet (both or neither)
set -euo pipefail
FILE=${1:?usage: busy-choice.sh FILE}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
BUSY=${BUSY:-40}
ROUNDS=${ROUNDS:-3}
PRESSES=${PRESSES:-30}
LOAD=${LOAD:-$TARGET/release/examples/load}
[[ -x $LOAD ]] || (cd "$ROOT" && cargo build --release --quiet --example load)
cat "$FILE" > /dev/null
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done; }
trap cleanup EXIT
for ((i = 0; i < BUSY; i++)); do
    (while :; do :; done) &
    pids+=($!)
done
sleep 5
echo "busy loops: $BUSY; $(uptime | sed 's/.*load/load/')"
for ((r = 1; r <= ROUNDS; r++)); do
    for nice in 1 0; do
        printf 'round %d, workers at nice %-2s: ' "$r" "$([[ $nice == 1 ]] && echo 10 || echo 0)"
        LEET_LOAD_NICE=$nice "$LOAD" "$FILE" | tr '\n' ' '
        echo " ($(uptime | sed 's/.*load/load/'))"
    done
done
if [[ -n ${NICE10:-} && -n ${NICE0:-} ]]; then
    for bin in "$NICE10" "$NICE0"; do
        echo "keys while loading, $bin:"
        SKIP_BUILD=1 LEET=$bin TIMEOUT_S=300 "$ROOT/scripts/bench-keys.sh" "$FILE" "$PRESSES" | grep -E "presses over|load (before|after)"
    done
fi
