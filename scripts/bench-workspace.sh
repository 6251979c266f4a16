#!/usr/bin/env bash
# The multi-run workspace on a generated wandb directory of N runs (default 1000),
# side by side: `leet DIR` vs W&B's `wandb leet DIR`. Each program runs in a
# detached tmux session (200x50) on its own tmux server; the screen is polled with
# `tmux capture-pane -p` every 20 ms.
#
# Per program and start it records:
#   list_s    from starting the program until the runs list is on screen: the runs
#             pane header counts all N runs, regex `Runs \[[^]]*N` (leet:
#             `Runs [N]` or `Runs [1-47 of N]`; W&B 0.31.0: `Runs [1-47 of N]`)
#   hwm_MiB   VmHWM (peak RSS) of the process in the pane, SETTLE_S (3) s after the
#             list appeared; tree_MiB the sum over it and its descendants (W&B's
#             `wandb` starts `wandb-core`)
#   settle_s  after the selection keys were sent, until the screen stayed the same
#             for 2 s (W&B's leet applies them seconds late: it loads each run
#             selected)
#   sel_MiB   after selecting 50 runs, the screen settled and 5 s more: VmRSS of the pane's process
#             (and sel_tree_MiB over the tree). The keys: leet `space` then `down`,
#             50 times (space toggles the run under the cursor). W&B's `space` also
#             toggles, but its newest run starts selected: `down` then `space`, 49
#             times, gives it 50 too. selected: how many runs W&B's leet says are
#             selected (its DIR/.wandb-leet.json; leet's state file).
#   cold: the first start (leet with an empty XDG_CACHE_HOME, so every run file is
#         read); warm: the second start (leet's index cache filled by the first).
#         Both programs get their own empty XDG_CACHE_HOME and XDG_STATE_HOME (leet
#         restores no saved selection; W&B's own, DIR/.wandb-leet.json, is removed
#         before each start and at the end). The run files are in the page cache (read
#         once first): the figures are the programs' work, not the disk's.
#
# usage: scripts/bench-workspace.sh [DIR]
#   DIR: the wandb directory to use; generated there (many_runs gen DIR N) unless it
#        already holds N run directories. Default: a temporary one, removed after.
#   env: N=1000, WANDB_BIN=/tmp/wvenv/bin/wandb, LEET=target/release/leet,
#        SKIP_BUILD=1 (no release build of leet and many_runs), ONLY=leet|wandb,
#        TIMEOUT_S=120 (per start), SETTLE_S=3, SELECT=50, KEY_MS=50 (between two
#        keys), COLS=200, ROWS=50,
#        SCREENS=DIR (keep each start's last screen there)
set -euo pipefail

N=${N:-1000}
WANDB=${WANDB_BIN:-/tmp/wvenv/bin/wandb}
export WANDB
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
command -v tmux > /dev/null || { echo "bench-workspace: tmux is not installed" >&2; exit 2; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DIR=${1:-$WORK/wandb}
count_runs() { find "$1" -mindepth 1 -maxdepth 1 -type d \( -name 'run-*' -o -name 'offline-run-*' \) 2>/dev/null | wc -l; }
if [[ "$(count_runs "$DIR")" -ne "$N" ]]; then
    if [[ -e "$DIR" && -n "$(ls -A "$DIR" 2>/dev/null)" ]]; then
        echo "bench-workspace: $DIR holds $(count_runs "$DIR") run directories, not $N; give an empty or new DIR" >&2
        exit 2
    fi
    if [[ -n "${SKIP_BUILD:-}" && -x "$TARGET/release/examples/many_runs" ]]; then
        "$TARGET/release/examples/many_runs" gen "$DIR" "$N"
    else
        (cd "$ROOT" && cargo run --release --quiet --locked --example many_runs -- gen "$DIR" "$N")
    fi
fi
find "$DIR" -name '*.wandb' -exec cat {} + > /dev/null  # warm the page cache

export DIR N LEET WORK
SCRIPTS_DIR=$(cd "$(dirname "$0")" && pwd) python3 - <<'PY'
import json, os, re, shlex, subprocess, sys, time

DIR, N, LEET, WANDB, WORK = (os.environ[k] for k in ("DIR", "N", "LEET", "WANDB", "WORK"))
ONLY = os.environ.get("ONLY", "")
COLS = int(os.environ.get("COLS", 200))
ROWS = int(os.environ.get("ROWS", 50))
TIMEOUT_S = float(os.environ.get("TIMEOUT_S", 120))
SETTLE_S = float(os.environ.get("SETTLE_S", 3))
SELECT = int(os.environ.get("SELECT", 50))
KEY_MS = float(os.environ.get("KEY_MS", 50))
if not 1 <= SELECT <= int(N):
    sys.exit(f"bench-workspace: SELECT={SELECT} must be between 1 and N={N}")
SCREENS = os.environ.get("SCREENS", "")
LISTED = re.compile(r"Runs \[[^]]*\b" + re.escape(N) + r"\b")
def keys_leet():
    # Its newest run starts drawn too.
    return ["Down", "Space"] * (SELECT - 1)


def keys_wandb():
    # Its newest run starts selected.
    return ["Down", "Space"] * (SELECT - 1)


def seen_leet():
    # leet saves its selection under $XDG_STATE_HOME/leet as it changes.
    import glob
    for f in glob.glob(os.path.join(LEET_STATE, "leet", "workspace-*.json")):
        try:
            with open(f) as fh:
                return len(json.load(fh)["state"].get("selected", []))
        except (OSError, ValueError, KeyError, AttributeError):
            pass
    return None


def seen_wandb():
    # W&B's leet writes its selection to the wandb directory as it changes.
    try:
        with open(WANDB_STATE) as f:
            return len(json.load(f).get("selected_runs", []))
    except (OSError, ValueError, AttributeError):
        return None


PROGRAMS = [
    ("leet", [LEET, DIR], keys_leet, seen_leet),
    ("wandb leet", [WANDB, "leet", DIR], keys_wandb, seen_wandb),
]
if ONLY:
    PROGRAMS = [p for p in PROGRAMS if p[0].split()[0] == ONLY]
    if not PROGRAMS:
        sys.exit(f"bench-workspace: ONLY={ONLY!r}: leet or wandb")


class Tmux:
    """One tmux server per start (its own socket), killed on every way out."""

    def __init__(self, name):
        name = f"bench-ws-{os.getpid()}-{name}"
        self.base = ["tmux", "-L", name, "-f", "/dev/null"]
        self.socket = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", name)

    def __call__(self, *args, check=True):
        return subprocess.run(self.base + list(args), capture_output=True, text=True,
                              check=check, timeout=10).stdout

    def capture(self):
        try:
            r = subprocess.run(self.base + ["capture-pane", "-p"], capture_output=True,
                               text=True, timeout=5)
        except subprocess.TimeoutExpired:
            return None
        return r.stdout if r.returncode == 0 else None

    def kill(self):
        subprocess.run(self.base + ["kill-server"], capture_output=True, timeout=10)
        try:
            os.unlink(self.socket)
        except OSError:
            pass


import sys
sys.path.insert(0, os.environ["SCRIPTS_DIR"])
from proctree import tree, status_kb  # noqa: E402



def proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        return s[s.rindex(")") + 2:].split()[0]
    except (OSError, ValueError, IndexError):
        return None


def mib(pid, key, whole_tree=False):
    pids = tree(pid) if whole_tree else [pid]
    vals = [status_kb(p, key) for p in pids]
    vals = [v for v in vals if v is not None]
    return sum(vals) / 1024 if vals else None


def save_screen(tag, screen):
    if SCREENS and screen is not None:
        os.makedirs(SCREENS, exist_ok=True)
        with open(os.path.join(SCREENS, tag.replace(" ", "_") + ".txt"), "w") as f:
            f.write(screen)


# W&B's leet keeps its selection in the wandb directory (leet: under
# $XDG_STATE_HOME): removed before each start and at the end, so each start
# begins with none remembered, and the directory is left as it was.
WANDB_STATE = os.path.join(DIR, ".wandb-leet.json")
LEET_STATE = os.path.join(WORK, "leet", "state")


def forget_wandb_state():
    try:
        os.unlink(WANDB_STATE)
    except FileNotFoundError:
        pass


def forget_leet_state():
    import glob
    for f in glob.glob(os.path.join(LEET_STATE, "leet", "workspace-*.json")):
        os.unlink(f)


def start(name, argv, keys, seen, phase, env):
    forget_wandb_state()
    forget_leet_state()
    t = Tmux(f"{name.split()[0]}-{phase}")
    r = dict(list=None, hwm=None, tree=None, settle=None, sel=None, sel_tree=None, sel_seen=None,
             note="")
    try:
        cmd = "exec env " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + " " + \
            " ".join(shlex.quote(a) for a in argv)
        t0 = time.monotonic()
        pid = int(t("new-session", "-d", "-x", str(COLS), "-y", str(ROWS), "-P", "-F",
                    "#{pane_pid}", cmd).strip())
        t("set-option", "-g", "remain-on-exit", "on", check=False)
        screen = ""
        while True:
            s = t.capture()
            now = time.monotonic() - t0
            if s is None or status_kb(pid, "VmRSS") is None:
                r["note"] = "exited early"
                break
            screen = s
            if LISTED.search(s):
                r["list"] = now
                break
            if now > TIMEOUT_S:
                r["note"] = f"no runs list after {TIMEOUT_S:.0f} s"
                break
            time.sleep(0.02)
        if r["list"] is None:
            save_screen(f"{name}-{phase}-failed", screen)
            sys.stderr.write(f"--- {name} {phase}: {r['note']}; last screen ---\n{screen}\n")
            return r
        time.sleep(SETTLE_S)
        r["hwm"], r["tree"] = mib(pid, "VmHWM"), mib(pid, "VmHWM", True)
        # One key at a time, KEY_MS apart: W&B's leet drops keys of a burst (it
        # loads the run under the cursor as it moves).
        for k in keys:
            t("send-keys", k)
            time.sleep(KEY_MS / 1000)
        # W&B's leet applies them seconds later (it loads each run selected): wait
        # for the screen to stay the same for 2 s, then 5 s more.
        r["settle"] = settle(t, quiet_s=2, limit_s=TIMEOUT_S)
        if r["settle"] is None:
            r["note"] = f"screen still changing {TIMEOUT_S:.0f} s after the keys"
        time.sleep(5)
        r["sel"], r["sel_tree"] = mib(pid, "VmRSS"), mib(pid, "VmRSS", True)
        save_screen(f"{name}-{phase}", t.capture())
        r["sel_seen"] = seen()
        t("send-keys", "q", check=False)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and proc_state(pid) not in (None, "Z"):
            time.sleep(0.05)
        if proc_state(pid) not in (None, "Z"):
            r["note"] = "still running 5 s after q (killed)"
        return r
    finally:
        t.kill()


def settle(t, quiet_s, limit_s):
    """Seconds until the screen stayed the same for quiet_s (None: not in limit_s)."""
    t0 = time.monotonic()
    last, since = None, t0
    while time.monotonic() - t0 < limit_s:
        s = t.capture()
        now = time.monotonic()
        if s != last:
            last, since = s, now
        elif now - since >= quiet_s:
            return since - t0
        time.sleep(0.1)
    return None


def fmt(v, f="{:.1f}"):
    return "-" if v is None else f.format(v)


print(f"wandb dir: {DIR} ({N} runs), terminal {COLS}x{ROWS}, {os.cpu_count()} cores")
print("load before: " + " ".join(open("/proc/loadavg").read().split()[:3]))
print(f"{'program':<11} {'start':<5} {'list_s':>7} {'hwm_MiB':>8} {'tree_MiB':>9} "
      f"{'settle_s':>8} {'sel_MiB':>8} {'sel_tree_MiB':>12} {'selected':>8}  note")
failed = False
for name, argv, keys, seen in PROGRAMS:
    home = os.path.join(WORK, name.split()[0])
    env = {"XDG_CACHE_HOME": os.path.join(home, "cache"), "XDG_STATE_HOME": os.path.join(home, "state"), "XDG_CONFIG_HOME": os.path.join(home, "config")}
    for d in env.values():
        os.makedirs(d, exist_ok=True)
    for phase in ("cold", "warm"):
        r = start(name, argv, keys(), seen, phase, env)
        failed |= r["list"] is None
        print(f"{name:<11} {phase:<5} {fmt(r['list'], '{:.3f}'):>7} {fmt(r['hwm']):>8} {fmt(r['tree']):>9} "
              f"{fmt(r['settle']):>8} {fmt(r['sel']):>8} {fmt(r['sel_tree']):>12} {fmt(r['sel_seen'], '{}'):>8}  {r['note']}",
              flush=True)
        time.sleep(1)
forget_wandb_state()
print("load after:  " + " ".join(open("/proc/loadavg").read().split()[:3]))
sys.exit(1 if failed else 0)
PY
