#!/usr/bin/env bash
# Key-press latency with every run of a big workspace drawn: `leet DIR` in a
# detached tmux session (200x50) with fresh XDG directories; every run is selected
# with `down` + `space` (the newest is drawn from the start) until the list's title
# says "N drawn"; then, SETTLE_S (5) s later, leet's threads and its idle CPU over
# IDLE_S (10) s (utime+stime from /proc), and `[` (toggle the runs list) pressed
# PRESSES times, each timed from `tmux send-keys` to the first `tmux capture-pane`
# that shows the list's new state ("Runs [" on the first line or not). tmux's own
# delivery and the ~3 ms capture are part of the figure: an upper bound.
#
# usage: scripts/bench-workspace-keys.sh [DIR] [PRESSES]
#   DIR: a directory with a `wandb` directory of runs; without it, RUNS (251: 250
#   runs, one of them resumed in two directories) generated runs are written to a
#   temporary one (tests/common/runs.rs, through the e2e test binary's
#   `write_generated_workspace`).
#   env: SKIP_BUILD=1, LEET=/path/to/leet, RUNS=251, COLS=200, ROWS=50, SETTLE_S=5,
#        IDLE_S=10
set -euo pipefail

DIR=${1:-}
PRESSES=${2:-100}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [[ -z "$DIR" ]]; then
    DIR=$WORK/ws
    (cd "$ROOT" && LEET_E2E_WRITE_WORKSPACE=$DIR LEET_E2E_RUNS=${RUNS:-251} \
        cargo test --quiet --test e2e -- --ignored --exact write_generated_workspace >/dev/null)
fi
cat "$DIR"/wandb/*/*.wandb > /dev/null  # warm the page cache

export DIR PRESSES LEET WORK
exec python3 - <<'PY'
import os, re, statistics, subprocess, sys, time

DIR, LEET, WORK = os.environ["DIR"], os.environ["LEET"], os.environ["WORK"]
PRESSES = int(os.environ["PRESSES"])
COLS = int(os.environ.get("COLS", 200))
ROWS = int(os.environ.get("ROWS", 50))
SETTLE_S = float(os.environ.get("SETTLE_S", 5))
IDLE_S = float(os.environ.get("IDLE_S", 10))
TMUX = ["tmux", "-L", f"bench-wskeys-{os.getpid()}", "-f", "/dev/null"]


def tmux(*args, check=True):
    return subprocess.run(TMUX + list(args), capture_output=True, text=True, check=check).stdout


def capture():
    r = subprocess.run(TMUX + ["capture-pane", "-p"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def wait(pred, what, timeout):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        s = capture()
        if pred(s):
            return s
        time.sleep(0.05)
    screen = capture()
    tmux("kill-server", check=False)
    sys.exit(f"timed out waiting for {what}; screen:\n{screen}")


def list_shown(screen):
    first = screen.splitlines()[:1]
    return bool(first) and "Runs [" in first[0]


def ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


env = " ".join(f"XDG_{v}_HOME={WORK}/{v.lower()}" for v in ("CONFIG", "STATE", "CACHE"))
cmd = f"exec env {env} " + subprocess.list2cmdline([LEET, DIR])
pane = tmux("new-session", "-d", "-x", str(COLS), "-y", str(ROWS), "-P", "-F", "#{pane_pid}", cmd)
pid = int(pane.strip())


def listed(s):
    m = re.search(r"Runs \[(\d+)\]", s)
    return int(m.group(1)) if m else 0


# The list grows as the runs are indexed: wait until its count holds for a second.
n, since = 0, time.monotonic()
while time.monotonic() - since < 1 or n == 0:
    m = listed(wait(listed, "the runs list", 60))
    if m != n:
        n, since = m, time.monotonic()
    time.sleep(0.1)
for i in range(0, n - 1, 25):
    tmux("send-keys", *(["Down", "Space"] * min(25, n - 1 - i)))
t0 = time.monotonic()
wait(lambda s: f"{n} drawn" in s, f"{n} drawn", 600)
print(f"{DIR}: {n} runs; all drawn {time.monotonic() - t0:.1f} s after the keys were sent")
time.sleep(SETTLE_S)
threads = next(l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("Threads:"))
a = ticks(pid)
time.sleep(IDLE_S)
cpu = (ticks(pid) - a) * 100 / os.sysconf("SC_CLK_TCK") / IDLE_S
print(f"leet with {n} drawn: {threads} threads, idle CPU {cpu:.2f} % of a core over {IDLE_S:.0f} s")
print("load before: " + " ".join(open("/proc/loadavg").read().split()[:3]))
lat = []
shown = list_shown(capture())
for _ in range(PRESSES):
    t_send = time.monotonic()
    tmux("send-keys", "[")
    while list_shown(capture()) == shown:
        if time.monotonic() - t_send > 5:
            tmux("kill-server", check=False)
            sys.exit("a key press was not answered within 5 s")
    lat.append((time.monotonic() - t_send) * 1000)
    shown = not shown
tmux("kill-server", check=False)
lat.sort()
p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
print(f"leet, {n} drawn: {len(lat)} presses: p50 {statistics.median(lat):.1f} ms, "
      f"p99 {p99:.1f} ms, max {lat[-1]:.1f} ms")
print("load after:  " + " ".join(open("/proc/loadavg").read().split()[:3]))
PY
