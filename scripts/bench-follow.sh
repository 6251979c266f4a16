#!/usr/bin/env bash
# Append-to-screen latency while following a growing .wandb file, in a real terminal
# (detached tmux, 200x50): `leet FILE` vs `wandb leet run FILE`.
#
# The source fixture (default: tests/fixtures/runs/tiny, written by the W&B SDK) is split
# at record boundaries (LevelDB-style chunk headers, 32 KiB blocks, 7-byte W&B header);
# record types come from `leet inspect --json` on the source. The copy starts with every
# record up to and including history step 0; then, for k = 1..APPENDS, the records after
# history step k-1 up to and including history step k (summary k comes just before history
# k in SDK-written files) are appended in one write(). Latency = time from just before the
# write to the end of the first `tmux capture-pane -p` (polled every ~5 ms plus the capture's
# own few ms; the lower bound, the start of the previous capture, is printed too) showing:
#   leet:  "step k" in the status bar (last screen line)
#   wandb: "_step   k" in the sidebar's Summary section
# With START=K the copy starts with every record up to history step K (K steps
# already on screen, e.g. 199000 of the 125 MB `big` run) and the appends are steps
# K+1..K+APPENDS.
# Between appends a random pause of 0.3-1.0 s (after the step showed), so appends do not
# phase-lock with a polling interval. Never appends the exit record.
#
# usage: scripts/bench-follow.sh [RUN_DIR_OR_WANDB_FILE] [APPENDS] [SESSIONS]
#   (defaults: tests/fixtures/runs/tiny, 25, 3; SKIP_BUILD=1, WANDB=..., TIMEOUT_S=10,
#   START=0, ONLY=leet|wandb)
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
SRC=${1:-$ROOT/tests/fixtures/runs/tiny}
APPENDS=${2:-25}
SESSIONS=${3:-3}

# Resolve to the .wandb file: a file, a run dir, or a dir with wandb/latest-run.
if [[ -f "$SRC" ]]; then
    SRCFILE=$SRC
else
    d=$SRC
    if [[ -f "$d/wandb/latest-run" ]]; then d=$d/wandb/$(cat "$d/wandb/latest-run"); fi
    SRCFILE=$(ls "$d"/*.wandb | head -n 1)
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$LEET" inspect --json "$SRCFILE" > "$TMP/records.jsonl"

export SRCFILE APPENDS SESSIONS LEET WANDB TMP
exec python3 - <<'PY'
import json, os, random, re, shutil, statistics, subprocess, sys, time

SRCFILE = os.environ["SRCFILE"]
APPENDS = int(os.environ["APPENDS"])
SESSIONS = int(os.environ["SESSIONS"])
LEET, WANDB, TMP = os.environ["LEET"], os.environ["WANDB"], os.environ["TMP"]
TIMEOUT_S = float(os.environ.get("TIMEOUT_S", 10))
START = int(os.environ.get("START", 0))
SOCK = f"bench-follow-{os.getpid()}"
TMUX = ["tmux", "-L", SOCK, "-f", "/dev/null"]
random.seed(1)


def boundaries(data):
    pos, out = 7, []
    while pos < len(data):
        left = 32768 - pos % 32768
        if left < 7:
            pos += left
            continue
        ln = data[pos + 4] | data[pos + 5] << 8
        typ = data[pos + 6]
        if typ == 0 and ln == 0:
            pos += left
            continue
        pos += 7 + ln
        if typ in (1, 4):  # FULL or LAST chunk ends a record
            out.append(pos)
    return out


data = open(SRCFILE, "rb").read()
ends = boundaries(data)
recs = [json.loads(l) for l in open(f"{TMP}/records.jsonl")]
if len(recs) != len(ends):
    sys.exit(f"record count mismatch: {len(recs)} from inspect, {len(ends)} boundaries")
hist_end = {}  # step -> byte offset just past its history record
for r, e in zip(recs, ends):
    if r["type"] == "history":
        hist_end[r["history"]["step"]["num"]] = e
if any(k not in hist_end for k in range(START, START + APPENDS + 1)):
    sys.exit(f"source has fewer than {START + APPENDS + 1} history steps")


def tmux(*args, check=True):
    return subprocess.run(TMUX + list(args), capture_output=True, text=True, check=check).stdout


def capture():
    r = subprocess.run(TMUX + ["capture-pane", "-p"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def seen_leet(screen, k):
    lines = screen.rstrip("\n").splitlines()
    return bool(lines) and re.search(rf"\bstep {k}\b", lines[-1]) is not None


def seen_wandb(screen, k):
    return re.search(rf"\b_step\s+{k}\b", screen) is not None


PROGRAMS = [("leet", LEET, lambda f: [LEET, f], seen_leet),
            ("wandb leet", WANDB, lambda f: [WANDB, "leet", "run", f], seen_wandb)]
if os.environ.get("ONLY"):
    PROGRAMS = [p for p in PROGRAMS if p[0].split()[0] == os.environ["ONLY"]]


def session(name, argv_for, seen):
    rundir = f"{TMP}/{name.replace(' ', '_')}/wandb/offline-run-20261130_000000-follow01"
    shutil.rmtree(os.path.dirname(os.path.dirname(rundir)), ignore_errors=True)
    os.makedirs(rundir)
    path = f"{rundir}/run-follow01.wandb"
    with open(path, "wb") as f:
        f.write(data[:hist_end[START]])
    # Settings and state of their own (see bench-keys.sh).
    home = f"{TMP}/{name.replace(' ', '_')}/home"
    env = " ".join(f"XDG_{k}_HOME={home}/{k.lower()}" for k in ("CONFIG", "STATE", "CACHE"))
    cmd = f"exec env {env} " + subprocess.list2cmdline(argv_for(path))
    tmux("new-session", "-d", "-x", "200", "-y", "50", cmd)
    t0 = time.monotonic()
    while not seen(capture(), START):
        if time.monotonic() - t0 > 60:
            tmux("kill-server", check=False)
            sys.exit(f"{name}: step {START} never shown")
        time.sleep(0.02)
    time.sleep(1.0)
    lat, low, cap, missed = [], [], [], 0
    with open(path, "ab", buffering=0) as f:
        for k in range(START + 1, START + APPENDS + 1):
            chunk = data[hist_end[k - 1]:hist_end[k]]
            t = time.monotonic()
            f.write(chunk)
            prev = t  # start of the last capture that did not show step k
            while True:
                c0 = time.monotonic()
                screen = capture()
                now = time.monotonic()
                cap.append(now - c0)
                if seen(screen, k):
                    # upper bound: end of the capture that showed it; lower bound: start
                    # of the previous capture, which did not
                    lat.append(now - t)
                    low.append(prev - t)
                    break
                prev = c0
                if now - t > TIMEOUT_S:
                    missed += 1
                    break
                time.sleep(0.005)
            time.sleep(random.uniform(0.3, 1.0))
    tmux("send-keys", "q", check=False)
    time.sleep(0.5)
    tmux("kill-server", check=False)
    return lat, low, cap, missed


def p(vals, q):
    s = sorted(vals)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


print(f"source: {SRCFILE}; {APPENDS} appends x {SESSIONS} sessions per program; terminal 200x50")
print("load before: " + " ".join(open("/proc/loadavg").read().split()[:3]))
print(f"{'program':<11} {'session':>7} {'n':>3} {'miss':>4} {'median_ms':>9} {'p90_ms':>7} {'min_ms':>7} {'max_ms':>7} {'lo_med_ms':>9} {'capture_ms':>10}")
pooled = {n: [] for n, *_ in PROGRAMS}
pooled_lo = {n: [] for n, *_ in PROGRAMS}
for s in range(SESSIONS):
    for name, _, argv_for, seen in PROGRAMS:
        lat, low, cap, missed = session(name, argv_for, seen)
        pooled[name] += lat
        pooled_lo[name] += low
        ms = [x * 1000 for x in lat]
        print(f"{name:<11} {s + 1:>7} {len(ms):>3} {missed:>4} {statistics.median(ms):>9.1f} {p(ms, 0.9):>7.1f} "
              f"{min(ms):>7.1f} {max(ms):>7.1f} {statistics.median(low) * 1000:>9.1f} "
              f"{statistics.median(cap) * 1000:>10.1f}", flush=True)
print("load after:  " + " ".join(open("/proc/loadavg").read().split()[:3]))
print()
print("pooled over all sessions (upper bound = end of the capture that showed the step; lo = start of the previous capture):")
for name, lat in pooled.items():
    ms = [x * 1000 for x in lat]
    lo = [x * 1000 for x in pooled_lo[name]]
    print(f"{name:<11} n={len(ms)} median={statistics.median(ms):.1f} ms p90={p(ms, 0.9):.1f} ms "
          f"min={min(ms):.1f} max={max(ms):.1f}  (lo: median={statistics.median(lo):.1f} p90={p(lo, 0.9):.1f})")
PY
