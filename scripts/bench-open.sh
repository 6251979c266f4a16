#!/usr/bin/env bash
# Open a (big) .wandb file in the TUI, side by side: `leet FILE` vs `wandb leet run FILE`.
# Each program runs in a detached tmux session (200x50 by default); the screen is polled
# with `tmux capture-pane -p` every ~10 ms until the first frame, then every ~50 ms, and
# the process tree's VmRSS read each poll. (Each poll starts a tmux client: polled every
# 10 ms to the end, the poller took a third of a core from the program it measures on a
# 2-core machine, and a 1.3 GB load measured 3.1 s instead of 1.75 s. The fully loaded
# time is therefore up to ~50 ms late.)
#
# Per run it records:
#   first_s   first frame: the "Metrics [" header and at least one braille cell
#             (U+2801..U+28FF) on screen
#   loaded_s  fully loaded:
#               leet:  no "loading NN%" on screen, status bar shows "step <LAST_STEP>"
#                      and the train/loss chart box holds braille
#               wandb: the overview shows "State: Finished" (the exit record, which is
#                      the last record of the file, was applied) and the train/loss
#                      chart box holds braille
#   rss_MiB   peak over the polls of the sum of VmRSS of the program and its descendants
#             (wandb leet runs python -> wandb-core)
#   hwm_MiB   sum over the tree of VmHWM, read after the idle period
#   idle_cpu  utime+stime (all threads, whole tree) used in IDLE_S seconds after load
#   own_first, own_loaded
#             leet's own figures (LEET_DEBUG_TIMES): seconds from its start to the first
#             frame drawn with records, and to the first frame drawn once the file's
#             bytes were all read (no poller in between)
#   exit      the program's exit status after `q` (tmux remain-on-exit; "Z<code>" when
#             tmux had not reaped it yet and the code came from /proc/<pid>/stat)
# Then the median over RUNS runs per program.
#
# usage: scripts/bench-open.sh FILE [RUNS]
#   env: SKIP_BUILD=1, WANDB=/path/to/wandb, COLS=200, ROWS=50, IDLE_S=10,
#        LAST_STEP=199999, METRIC=train/loss, TIMEOUT_S=180, POLL_S=0.01 (until the
#        first frame), LOADED_POLL_S=0.05 (after it)
set -euo pipefail

FILE=${1:?usage: bench-open.sh FILE [RUNS]}
RUNS=${2:-3}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cat "$FILE" > /dev/null  # warm the page cache

export FILE RUNS LEET WANDB
SCRIPTS_DIR=$(cd "$(dirname "$0")" && pwd) exec python3 - <<'PY'
import atexit, os, re, shutil, statistics, subprocess, sys, time

FILE = os.environ["FILE"]
RUNS = int(os.environ["RUNS"])
LEET = os.environ["LEET"]
WANDB = os.environ["WANDB"]
COLS = int(os.environ.get("COLS", 200))
ROWS = int(os.environ.get("ROWS", 50))
IDLE_S = float(os.environ.get("IDLE_S", 10))
LAST_STEP = os.environ.get("LAST_STEP", "199999")
METRIC = os.environ.get("METRIC", "train/loss")
TIMEOUT_S = float(os.environ.get("TIMEOUT_S", 180))
POLL_S = float(os.environ.get("POLL_S", 0.01))
LOADED_POLL_S = float(os.environ.get("LOADED_POLL_S", 0.05))
HZ = os.sysconf("SC_CLK_TCK")
BRAILLE = re.compile("[\u2801-\u28ff]")
SOCK = f"bench-open-{os.getpid()}"
TMUX = ["tmux", "-L", SOCK, "-f", "/dev/null"]


def tmux(*args, check=True):
    return subprocess.run(TMUX + list(args), capture_output=True, text=True, check=check).stdout


def capture():
    r = subprocess.run(TMUX + ["capture-pane", "-p"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


import sys
sys.path.insert(0, os.environ["SCRIPTS_DIR"])
from proctree import tree, status_kb as _status_kb  # noqa: E402


def status_kb(pid, key):
    return _status_kb(pid, key, 0)



def ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        fields = s[s.rindex(")") + 2:].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, ValueError):
        return 0


def metric_chart_drawn(lines):
    # A chart box whose title is METRIC (the title follows a box-drawing char, unlike the
    # sidebar's "train/loss  0.0166" rows), with braille in the next rows of that box.
    pat = re.compile(r"[╭┏│━─]" + re.escape(METRIC) + r"[─━ │]")
    for i, line in enumerate(lines):
        m = pat.search(line)
        if m:
            col = m.start()
            for nxt in lines[i + 1:i + 14]:
                if BRAILLE.search(nxt[col:col + 40]):
                    return True
    return False


def first_frame(screen):
    return "Metrics [" in screen and BRAILLE.search(screen) is not None


def loaded_leet(screen):
    lines = screen.splitlines()
    status = lines[-1] if lines else ""
    return ("loading " not in screen and f"step {LAST_STEP}" in status
            and metric_chart_drawn(lines))


def loaded_wandb(screen):
    return "State: Finished" in screen and metric_chart_drawn(screen.splitlines())


PROGRAMS = [
    ("leet", [LEET, FILE], loaded_leet),
    ("wandb leet", [WANDB, "leet", "run", FILE], loaded_wandb),
]


def own_times(path):
    """leet's own `first_s` / `loaded_s` lines (LEET_DEBUG_TIMES)."""
    out = {}
    try:
        for line in open(path):
            k, _, v = line.partition(" ")
            out.setdefault(k, float(v))
    except (OSError, ValueError):
        pass
    return out


HOME = f"/tmp/bench-open-home-{os.getpid()}"
atexit.register(shutil.rmtree, HOME, True)


def one(name, argv, loaded):
    times = f"/tmp/bench-open-times-{os.getpid()}"
    if os.path.exists(times):
        os.remove(times)
    env = "LEET_DEBUG_TIMES=" + subprocess.list2cmdline([times]) + " " if name == "leet" else ""
    # Settings and state of their own: nothing the user saved changes what opens,
    # and nothing from here is saved into theirs.
    home = HOME
    env += " ".join(f"XDG_{k}_HOME={home}/{k.lower()}" for k in ("CONFIG", "STATE", "CACHE")) + " "
    cmd = "exec env " + env + " ".join(subprocess.list2cmdline([a]) for a in argv)
    t0 = time.monotonic()
    pid = int(tmux("new-session", "-d", "-x", str(COLS), "-y", str(ROWS), "-P", "-F",
                   "#{pane_pid}", cmd).strip())
    tmux("set-option", "-g", "remain-on-exit", "on", check=False)
    first = done = None
    peak = 0
    notes = []
    last_screen = ""
    while True:
        now = time.monotonic() - t0
        pids = tree(pid)
        peak = max(peak, sum(status_kb(p, "VmRSS") for p in pids))
        screen = capture()
        if screen is None or "Pane is dead" in (screen or ""):
            notes.append("exited early")
            break
        last_screen = screen
        if first is None and first_frame(screen):
            first = now
        if done is None and loaded(screen):
            done = now
            break
        if now > TIMEOUT_S:
            notes.append("timeout")
            break
        time.sleep(POLL_S if first is None else LOADED_POLL_S)
    # Idle period: whole-tree CPU ticks, RSS sampled every 100 ms (no screen polling).
    pids = tree(pid)
    c0 = sum(ticks(p) for p in pids)
    t_idle = time.monotonic()
    while time.monotonic() - t_idle < IDLE_S:
        pids = tree(pid)
        peak = max(peak, sum(status_kb(p, "VmRSS") for p in pids))
        time.sleep(0.1)
    pids = tree(pid)
    c1 = sum(ticks(p) for p in pids)
    idle_cpu = (c1 - c0) / HZ
    hwm = sum(status_kb(p, "VmHWM") for p in pids)
    procs = ",".join(open(f"/proc/{p}/comm").read().strip() for p in pids if os.path.exists(f"/proc/{p}/comm"))
    # Quit with q and read the exit status.
    tmux("send-keys", "q", check=False)
    exit_status = "?"
    t_q = time.monotonic()
    while time.monotonic() - t_q < 10:
        out = tmux("display-message", "-p", "#{pane_dead} #{pane_dead_status} #{pane_dead_signal}",
                   check=False).split()
        if out and out[0] == "1" and len(out) > 1:
            exit_status = out[1] if len(out) == 2 else "sig" + out[2]
            break
        # tmux sometimes marks the pane dead but leaves the program unreaped (a zombie)
        # for seconds; read its wait status from /proc/<pid>/stat field 52 then.
        try:
            st = open(f"/proc/{pid}/stat").read()
            fields = st[st.rindex(")") + 2:].split()
            if fields[0] == "Z" and out and out[0] == "1":
                code = int(fields[49])
                exit_status = f"Z{code >> 8}" if code & 0x7f == 0 else f"Zsig{code & 0x7f}"
                break
        except (OSError, ValueError, IndexError):
            pass
        time.sleep(0.05)
    else:
        exit_status = "still running after q"
    quit_s = time.monotonic() - t_q
    tmux("kill-server", check=False)
    if done is None:
        sys.stderr.write(f"--- {name}: last screen ---\n{last_screen}\n")
    own = own_times(times)
    return dict(first=first, done=done, rss=peak / 1024, hwm=hwm / 1024, idle=idle_cpu,
                exit=exit_status, quit=quit_s, procs=procs, notes=" ".join(notes),
                own_first=own.get("first_s"), own_loaded=own.get("loaded_s"))


def fmt(v, f="{:.3f}"):
    return "-" if v is None else f.format(v)


print(f"file: {FILE} ({os.path.getsize(FILE)} bytes), terminal {COLS}x{ROWS}, {RUNS} runs each")
print("load before: " + " ".join(open("/proc/loadavg").read().split()[:3]))
hdr = f"{'program':<11} {'run':>3} {'first_s':>8} {'loaded_s':>9} {'own_first':>9} {'own_loaded':>10} {'rss_MiB':>8} {'hwm_MiB':>8} {'idle_cpu_s':>10} {'exit':>5} {'quit_s':>6}  procs"
print(hdr)
results = {name: [] for name, _, _ in PROGRAMS}
for i in range(RUNS):
    for name, argv, loaded in PROGRAMS:
        r = one(name, argv, loaded)
        results[name].append(r)
        print(f"{name:<11} {i + 1:>3} {fmt(r['first']):>8} {fmt(r['done']):>9} "
              f"{fmt(r['own_first']):>9} {fmt(r['own_loaded']):>10} {r['rss']:>8.1f} "
              f"{r['hwm']:>8.1f} {r['idle']:>10.2f} {r['exit']:>5} {r['quit']:>6.2f}  {r['procs']} {r['notes']}",
              flush=True)
        time.sleep(1)

print("load after:  " + " ".join(open("/proc/loadavg").read().split()[:3]))
print()
print("median:")
print(f"{'program':<11} {'first_s':>8} {'loaded_s':>9} {'own_first':>9} {'own_loaded':>10} {'rss_MiB':>8} {'hwm_MiB':>8} {'idle_cpu_s':>10}")


def med(rs, k):
    vals = [r[k] for r in rs if r[k] is not None]
    return statistics.median(vals) if vals else None


for name, rs in results.items():
    print(f"{name:<11} {fmt(med(rs, 'first')):>8} {fmt(med(rs, 'done')):>9} "
          f"{fmt(med(rs, 'own_first')):>9} {fmt(med(rs, 'own_loaded')):>10} {fmt(med(rs, 'rss'), '{:.1f}'):>8} "
          f"{fmt(med(rs, 'hwm'), '{:.1f}'):>8} {fmt(med(rs, 'idle'), '{:.2f}'):>10}")
PY
