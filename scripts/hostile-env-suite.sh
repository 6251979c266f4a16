#!/usr/bin/env bash
# The test suite as a user's machine would run it: at the lowest priority
# (`nice -n 19`, where the decode workers cannot go below the loop) and with a
# hostile ~/.config/leet in a temporary HOME: a settings file leet refuses (a bad
# value) that also saves a filter no chart matches, a key map that binds an unknown
# action, and a saved workspace state. Every test that starts leet must give it its
# own empty directories (tests/common/isolated.rs), so the suite passes as it does
# anywhere else. Arguments go to `cargo test` (e.g. `--test integration cli::`).
#
#   scripts/hostile-env-suite.sh [CARGO TEST ARGS...]
#
# Prints a summary at the end (test binaries, tests passed and failed, the failing
# tests) and exits non-zero when a test failed.
set -uo pipefail
cd "$(dirname "$0")/.."

real_home=$HOME
home=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/.config/leet" "$home/.local/state/leet" "$home/.cache/leet"
cat >"$home/.config/leet/config.toml" <<'TOML'
# A filter typed once in an interactive `leet --live`, and a value out of range.
[viewer]
rows = 12

[live.filters]
metrics = { pattern = "no chart matches this", mode = "regex" }
system = { pattern = "no chart matches this", mode = "regex" }
TOML
cat >"$home/.config/leet/keymap.toml" <<'TOML'
[normal]
"q" = "no_such_action"
"/" = "quit"
TOML
printf 'not a state file\n' >"$home/.local/state/leet/state.toml"

# The hostile files are what a leet that is not isolated would read: check that
# they do make it fail, or this run proves nothing.
bin=${CARGO_TARGET_DIR:-target}/debug/leet
if [ -x "$bin" ]; then
  if env -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_CACHE_HOME HOME="$home" \
    "$bin" --print-config >/dev/null 2>&1; then
    echo "hostile-env-suite: leet accepted the hostile settings; fix the script" >&2
    exit 1
  fi
fi

# cargo and rustup live under the real HOME.
export CARGO_HOME=${CARGO_HOME:-$real_home/.cargo}
export RUSTUP_HOME=${RUSTUP_HOME:-$real_home/.rustup}
export HOME=$home
unset XDG_CONFIG_HOME XDG_STATE_HOME XDG_CACHE_HOME

echo "hostile-env-suite: HOME=$home, nice $(nice -n 19 nice)"
nice -n 19 cargo test --workspace --locked --no-fail-fast "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

count() { grep -E '^test result:' "$log" | sed -E "s/.* ([0-9]+) $1.*/\\1/" | awk '{s+=$1} END {print s+0}'; }
passed=$(count passed)
failed=$(count failed)
binaries=$(grep -cE '^test result:' "$log")
echo
echo "hostile-env-suite summary: $binaries test binaries, ${passed:-0} passed, ${failed:-0} failed (cargo test exit $status)"
grep -E '^test .* \.\.\. FAILED$' "$log" | sed 's/^/  /'
rm -f "$log"
exit "$status"
