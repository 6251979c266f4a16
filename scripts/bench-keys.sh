#!/usr/bin/env bash
# Key-press latency while a big run loads: `leet FILE` in a detached tmux session
# (200x50), then `[` (toggle the left sidebar) pressed again and again while the
# status bar still says "loading"; each press is timed from `tmux send-keys` to the
# first `tmux capture-pane` that shows the sidebar's new state ("Run Overview" there
# or gone). tmux's own delivery and the ~3 ms capture are part of the figure, so it
# is an upper bound on the program's answer. Presses that were answered after the
# load had finished are not counted. The program is restarted until PRESSES presses
# were timed during loads. With LOADED=1 the presses are timed after the load
# instead (the status bar no longer says "loading"): the answer on a finished run.
#
# usage: scripts/bench-keys.sh FILE [PRESSES]
#   env: SKIP_BUILD=1, LEET=/path/to/leet, COLS=200, ROWS=50, TIMEOUT_S=60,
#        WITH_WANDB=1 (also time `wandb leet run FILE`, whose status says "Loading"),
#        LOADED=1 (time the presses after the load)
set -euo pipefail

FILE=${1:?usage: bench-keys.sh FILE [PRESSES]}
PRESSES=${2:-50}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cat "$FILE" > /dev/null  # warm the page cache

export FILE PRESSES LEET WANDB
exec python3 - <<'PY'
import os, shutil, statistics, subprocess, sys, tempfile, time

FILE = os.environ["FILE"]
PRESSES = int(os.environ["PRESSES"])
LEET = os.environ["LEET"]
WANDB = os.environ["WANDB"]
COLS = int(os.environ.get("COLS", 200))
ROWS = int(os.environ.get("ROWS", 50))
TIMEOUT_S = float(os.environ.get("TIMEOUT_S", 60))
LOADED = os.environ.get("LOADED") == "1"
SOCK = f"bench-keys-{os.getpid()}"
TMUX = ["tmux", "-L", SOCK, "-f", "/dev/null"]


def tmux(*args, check=True):
    return subprocess.run(TMUX + list(args), capture_output=True, text=True, check=check).stdout


def capture():
    r = subprocess.run(TMUX + ["capture-pane", "-p"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def sidebar_shown(screen):
    first = screen.splitlines()[:1]
    return bool(first) and "Run Overview" in first[0]


def one_load(argv, loading_word, want):
    """Start the program; press and time until the load ends. Latencies in ms."""
    # Settings and state of their own: the sidebar toggled here is never saved
    # into the user's settings (a later start would open without it).
    home = tempfile.mkdtemp(prefix="bench-keys-")
    env = " ".join(f"XDG_{k}_HOME={home}/{k.lower()}" for k in ("CONFIG", "STATE", "CACHE"))
    cmd = f"exec env {env} " + " ".join(subprocess.list2cmdline([a]) for a in argv)
    tmux("new-session", "-d", "-x", str(COLS), "-y", str(ROWS), cmd)
    t0 = time.monotonic()
    out = []
    # Wait for the first frame with the sidebar.
    while time.monotonic() - t0 < TIMEOUT_S:
        s = capture()
        if sidebar_shown(s):
            break
        time.sleep(0.002)
    else:
        tmux("kill-server", check=False)
        sys.exit(f"no first frame within {TIMEOUT_S} s")
    shown = True
    late = 0
    if LOADED:
        while loading_word in capture():
            if time.monotonic() - t0 > TIMEOUT_S:
                tmux("kill-server", check=False)
                sys.exit(f"the load did not end within {TIMEOUT_S} s")
            time.sleep(0.01)
        # Pressed a little apart, as a user would, not back to back.
        time.sleep(0.2)
    while len(out) < want and time.monotonic() - t0 < TIMEOUT_S + (3 * want if LOADED else 0):
        s = capture()
        if not LOADED and loading_word not in s:
            break
        if LOADED:
            time.sleep(0.02)
        t_send = time.monotonic()
        tmux("send-keys", "[")
        while True:
            s = capture()
            now = time.monotonic()
            if sidebar_shown(s) != shown:
                break
            if now - t_send > 5:
                tmux("kill-server", check=False)
                sys.exit("a key press was not answered within 5 s")
        shown = not shown
        if LOADED or loading_word in s:
            out.append((now - t_send) * 1000)
        else:
            late += 1
    tmux("kill-server", check=False)
    shutil.rmtree(home, ignore_errors=True)
    return out, time.monotonic() - t0, late


def run(name, argv, loading_word):
    lat = []
    loads = 0
    while len(lat) < PRESSES and loads < 200:
        got, secs, late = one_load(argv, loading_word, PRESSES - len(lat))
        loads += 1
        lat += got
        print(f"{name}: load {loads}: {len(got)} presses timed {'after' if LOADED else 'while'} loading "
              f"({late} answered after the load), {secs:.2f} s", flush=True)
    if not lat:
        print(f"{name}: no press could be timed while loading (the load ends first)")
        return
    lat.sort()
    p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
    print(f"{name}: {len(lat)} presses over {loads} loads: p50 {statistics.median(lat):.1f} ms, "
          f"p99 {p99:.1f} ms, max {lat[-1]:.1f} ms")


print(f"file: {FILE} ({os.path.getsize(FILE)} bytes), terminal {COLS}x{ROWS}")
print("load before: " + " ".join(open("/proc/loadavg").read().split()[:3]))
run("leet", [LEET, FILE], "loading")
if os.environ.get("WITH_WANDB"):
    run("wandb leet", [WANDB, "leet", "run", FILE], "Loading")
print("load after:  " + " ".join(open("/proc/loadavg").read().split()[:3]))
PY
