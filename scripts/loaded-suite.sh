#!/usr/bin/env bash
# The test suite on a loaded machine: RUNS runs in a row (default 5) of `cargo test`
# while two busy processes (`yes > /dev/null`) take two cores; prints each run's
# pass/fail and wall time, and exits non-zero if any run failed. The tests hold no
# bound on the real clock, so a loaded machine must not fail them.
#
# The suite is built first (not timed), so the runs time the tests, not the build.
#
# usage: scripts/loaded-suite.sh [CARGO TEST ARGS...]
#   e.g. scripts/loaded-suite.sh                     (the whole suite: --workspace)
#        scripts/loaded-suite.sh --test integration render_status::
#   env: RUNS=5, BUSY=2 (busy processes), LOG_DIR (default: a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
BUSY=${BUSY:-2}
LOG_DIR=${LOG_DIR:-$(mktemp -d)}
mkdir -p "$LOG_DIR"
# With no arguments, the whole suite: every crate of the workspace.
if [ $# -eq 0 ]; then
    set -- --workspace
fi

cargo test --locked --no-run "$@" >"$LOG_DIR/build.log" 2>&1 || {
    echo "build failed: $LOG_DIR/build.log" >&2
    exit 2
}

busy=()
stop_busy() {
    for p in ${busy[@]+"${busy[@]}"}; do
        kill "$p" 2>/dev/null || true
    done
    for p in ${busy[@]+"${busy[@]}"}; do
        wait "$p" 2>/dev/null || true
    done
}
trap stop_busy EXIT
for _ in $(seq "$BUSY"); do
    yes >/dev/null &
    busy+=("$!")
done

echo "$RUNS runs of: cargo test --locked $*  (with $BUSY busy processes; logs in $LOG_DIR)"
failed=0
for i in $(seq "$RUNS"); do
    log="$LOG_DIR/run-$i.log"
    start=$(date +%s.%N)
    if cargo test --locked --no-fail-fast "$@" >"$log" 2>&1; then
        result=pass
    else
        result=FAIL
        failed=$((failed + 1))
    fi
    end=$(date +%s.%N)
    passed=$(grep -o '[0-9]* passed' "$log" | awk '{s += $1} END {print s + 0}')
    printf 'run %d: %s  %6.1f s  %s tests passed\n' "$i" "$result" \
        "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$passed"
    if [[ $result == FAIL ]]; then
        grep -E '^test .* FAILED$|panicked at' "$log" | head -20 | sed 's/^/    /'
    fi
done
echo "$((RUNS - failed)) of $RUNS runs passed"
[[ $failed -eq 0 ]]
