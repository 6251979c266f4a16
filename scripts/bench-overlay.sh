#!/usr/bin/env bash
# Seven drawn runs of 1M steps x 10 metrics overlaid in a workspace: how long
# until all seven are drawn with their whole files read. leet runs in a detached
# tmux (200x50) on its own tmux server; the times are leet's own
# (`LEET_DEBUG_TIMES`: `drawn_s N SECS`, the first frame drawn once N of the
# workspace's drawn runs had read their whole file, and `start_unix`), so a poller
# neither takes CPU from it nor sees a frame late.
#
# Per round (REPEAT rounds, default 3):
#   keys_s   state empty (the newest run alone drawn, as leet starts): once it is
#            read, the keys `down space` x6 are sent in one tmux command; from
#            then until the frame that shows all 7 read (`drawn_s 7`): six runs
#            read from the keys, the seventh already read. leet saves the
#            selection as it quits, for the next start.
#   warm_s   the same directory started again with the 7 runs selected in the
#            saved state: from the program's start until `drawn_s 7`.
#   warm_cpu_s  the CPU seconds (all threads) leet had used by then: what the
#            load costs whatever else the machine runs.
#   load     the 1-minute load average when the round began (2 cores: noisy).
# Then min and median of each, and `cat` of the seven files (the floor: reading
# the bytes from the page cache), timed the same number of times.
#
# The index cache is filled by a first start that is not counted; the run files
# are in the page cache (read first): the figures are leet's work, not the disk's.
#
# usage: scripts/bench-overlay.sh [DIR]
#   DIR: the wandb directory (default /tmp/overlay7); 7 runs are generated there
#        with examples/synth (about 1.8 GB) unless it already holds 7 run
#        directories.
#   env: LEET=target/release/leet, SKIP_BUILD=1 (no release build of leet and
#        synth), REPEAT=3, STEPS=1000000, METRICS=10, TIMEOUT_S=60 (per wait),
#        COLS=200, ROWS=50
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
command -v tmux > /dev/null || { echo "bench-overlay: tmux is not installed" >&2; exit 2; }
[[ -x "$LEET" ]] || { echo "bench-overlay: no leet at $LEET (set LEET or CARGO_TARGET_DIR)" >&2; exit 2; }

DIR=${1:-/tmp/overlay7}
STEPS=${STEPS:-1000000}
METRICS=${METRICS:-10}
count_runs() { find "$1" -mindepth 1 -maxdepth 1 -type d -name 'offline-run-*' 2>/dev/null | wc -l; }
if [[ "$(count_runs "$DIR")" -ne 7 ]]; then
    if [[ -e "$DIR" && -n "$(ls -A "$DIR" 2>/dev/null)" ]]; then
        echo "bench-overlay: $DIR holds $(count_runs "$DIR") run directories, not 7; give an empty or new DIR" >&2
        exit 2
    fi
    if [[ -z "${SKIP_BUILD:-}" || ! -x "$TARGET/release/examples/synth" ]]; then
        (cd "$ROOT" && cargo build --release --quiet --locked --example synth)
    fi
    for i in 1 2 3 4 5 6 7; do
        # Named as the SDK names an offline run: distinct ids, one second apart.
        id=ovl00$i
        d=$DIR/offline-run-20261130_00000$i-$id
        mkdir -p "$d/files"
        "$TARGET/release/examples/synth" "$d/run-$id.wandb" "$STEPS" "$METRICS" --no-summary --run-id "$id"
    done
fi
FILES=$(find "$DIR" -name '*.wandb' | sort)
# shellcheck disable=SC2086
cat $FILES > /dev/null  # warm the page cache

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export DIR LEET WORK FILES
python3 - <<'PY'
import glob, os, shlex, statistics, subprocess, sys, time

DIR, LEET, WORK = os.environ["DIR"], os.environ["LEET"], os.environ["WORK"]
FILES = os.environ["FILES"].split()
REPEAT = int(os.environ.get("REPEAT", 3))
TIMEOUT_S = float(os.environ.get("TIMEOUT_S", 60))
COLS, ROWS = int(os.environ.get("COLS", 200)), int(os.environ.get("ROWS", 50))
ENV = {"XDG_CACHE_HOME": os.path.join(WORK, "cache"), "XDG_STATE_HOME": os.path.join(WORK, "state"), "XDG_CONFIG_HOME": os.path.join(WORK, "config")}
STATE = os.path.join(WORK, "state", "leet")
KEYS = ["Down", "Space"] * 6  # the newest run starts drawn


def load():
    return float(open("/proc/loadavg").read().split()[0])


class Leet:
    """leet in a tmux server of its own, killed on every way out."""

    def __init__(self, name):
        self.sock = f"bench-ovl-{os.getpid()}-{name}"
        self.times = os.path.join(WORK, f"times-{name}")
        env = dict(ENV, LEET_DEBUG_TIMES=self.times)
        cmd = "exec env " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + \
            " " + shlex.quote(LEET) + " " + shlex.quote(DIR)
        self.pid = int(self.tmux("new-session", "-d", "-x", str(COLS), "-y", str(ROWS),
                                 "-P", "-F", "#{pane_pid}", cmd).strip())

    def cpu_s(self):
        """CPU seconds (user + system, all threads) the program has used so far."""
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                s = f.read()
            fields = s[s.rindex(")") + 2:].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null", *args],
                              capture_output=True, text=True, timeout=10).stdout

    def lines(self):
        try:
            with open(self.times) as f:
                return [l.split() for l in f]
        except OSError:
            return []

    def start_unix(self):
        return next((float(l[1]) for l in self.lines() if l[0] == "start_unix"), None)

    def drawn(self, n):
        """Seconds from the start to the frame with n drawn runs read (None: not in time)."""
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            for l in self.lines():
                if l[0] == "drawn_s" and int(l[1]) >= n:
                    return float(l[2])
            time.sleep(0.02)
        sys.stderr.write(f"--- no drawn_s {n} in {TIMEOUT_S:.0f} s; screen ---\n"
                         + self.tmux("capture-pane", "-p") + "\n")
        return None

    def quit(self):
        self.tmux("send-keys", "q")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.tmux("list-sessions"):
            time.sleep(0.05)
        self.tmux("kill-server")
        try:
            os.unlink(os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"),
                                   f"tmux-{os.getuid()}", self.sock))
        except OSError:
            pass


def selected():
    import json
    for f in glob.glob(os.path.join(STATE, "workspace-*.json")):
        try:
            return len(json.load(open(f))["state"].get("selected", []))
        except (OSError, ValueError, KeyError, AttributeError):
            pass
    return None


def forget_state():
    for f in glob.glob(os.path.join(STATE, "workspace-*.json")):
        os.unlink(f)


def med(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), statistics.median(xs)) if xs else (None, None)


def fmt(v):
    return "-" if v is None else f"{v:.3f}"


print(f"wandb dir: {DIR} (7 runs, {sum(os.path.getsize(f) for f in FILES) / 1e9:.2f} GB), "
      f"terminal {COLS}x{ROWS}, {os.cpu_count()} cores")
# Fills the index cache; not counted.
t = Leet("prime")
t.drawn(1)
t.quit()
print(f"{'round':>5} {'load':>5} {'keys_s':>7} {'load':>5} {'warm_s':>7} {'warm_cpu_s':>10} {'selected':>8}")
keys_s, warm_s, warm_cpu, failed = [], [], [], False
for r in range(REPEAT):
    forget_state()
    l1 = load()
    t = Leet(f"keys{r}")
    k = None
    if t.drawn(1) is not None:
        time.sleep(1)  # the first frames and the index are done
        sent = time.time()
        t.tmux("send-keys", *KEYS)
        d = t.drawn(7)
        k = None if d is None else t.start_unix() + d - sent
    t.quit()
    n = selected()
    time.sleep(1)
    l2 = load()
    t = Leet(f"warm{r}")
    w = t.drawn(7)
    c = t.cpu_s()
    t.quit()
    failed |= k is None or w is None
    keys_s.append(k)
    warm_s.append(w)
    warm_cpu.append(c)
    print(f"{r + 1:>5} {l1:>5.2f} {fmt(k):>7} {l2:>5.2f} {fmt(w):>7} {fmt(c):>10} {n if n is not None else '-':>8}",
          flush=True)
    time.sleep(1)
cats = []
for _ in range(REPEAT):
    t0 = time.monotonic()
    subprocess.run(["cat", *FILES], stdout=subprocess.DEVNULL, check=True)
    cats.append(time.monotonic() - t0)
for name, xs in (("keys_s", keys_s), ("warm_s", warm_s), ("warm_cpu_s", warm_cpu), ("cat_s", cats)):
    lo, mid = med(xs)
    print(f"{name:<10} min {fmt(lo)}  median {fmt(mid)}")
print("load after: " + " ".join(open("/proc/loadavg").read().split()[:3]))
sys.exit(1 if failed else 0)
PY
