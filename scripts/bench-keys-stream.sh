#!/usr/bin/env bash
# Key-press latency read from tmux's own output stream instead of screen captures:
# `leet FILE` runs in a detached tmux session (200x50) and a tmux control-mode
# client (`tmux -C`) sends the keys and receives every byte the program writes, as
# tmux reads it from the terminal, stamped on arrival. `[` (toggle the left
# sidebar) is pressed again and again; a press that shows the sidebar is timed from
# the moment its `send-keys` is written to the control client to the arrival of the
# output that draws the sidebar's title ("Overview"). A press that hides it is
# waited for (the next capture shows no sidebar) and not timed. "frame done" is the
# arrival of the last output of that press's burst (the next output more than 5 ms
# later ends it). Each state is
# checked on a capture after the press, so a press counted is one the screen shows.
#
# Unlike scripts/bench-keys.sh, nothing polls the screen while a press is timed (a
# `tmux capture-pane` there is a process start, ~3-5 ms of one of the two cores, and
# the answer is only seen at the next capture's end): the figure is tmux's delivery of
# the key, the program's answer and tmux's reading of it, to a fraction of a ms.
#
# usage: scripts/bench-keys-stream.sh FILE [PRESSES]
#   env: SKIP_BUILD=1, LEET=/path/to/leet, COLS=200, ROWS=50, TIMEOUT_S=120,
#        LOADED=1 (time the presses after the load; default: while it loads, the
#        program restarted until PRESSES presses were timed during loads),
#        GAP_S=0.05 (pause between presses)
set -euo pipefail

FILE=${1:?usage: bench-keys-stream.sh FILE [PRESSES]}
PRESSES=${2:-50}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cat "$FILE" > /dev/null  # warm the page cache

export FILE PRESSES LEET
exec python3 - <<'PY'
import os, re, shutil, statistics, subprocess, sys, tempfile, threading, time

FILE = os.environ["FILE"]
PRESSES = int(os.environ["PRESSES"])
LEET = os.environ["LEET"]
COLS = int(os.environ.get("COLS", 200))
ROWS = int(os.environ.get("ROWS", 50))
TIMEOUT_S = float(os.environ.get("TIMEOUT_S", 120))
LOADED = os.environ.get("LOADED") == "1"
GAP_S = float(os.environ.get("GAP_S", 0.05))
SOCK = f"bench-keys-stream-{os.getpid()}"
TMUX = ["tmux", "-L", SOCK, "-f", "/dev/null"]
TITLE = re.compile(rb"Overview")


def tmux(*args, check=True):
    return subprocess.run(TMUX + list(args), capture_output=True, text=True, check=check).stdout


def capture():
    r = subprocess.run(TMUX + ["capture-pane", "-p"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def sidebar_shown(screen):
    first = screen.splitlines()[:1]
    return bool(first) and "Run Overview" in first[0]


class Stream:
    """A control-mode client: commands in, %output lines out, stamped on arrival."""

    def __init__(self):
        self.p = subprocess.Popen(TMUX + ["-C", "attach", "-t", "bench"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.lock = threading.Lock()
        self.outputs = []  # (time, bytes)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        f = self.p.stdout
        while True:
            line = f.readline()
            if not line:
                return
            if line.startswith(b"%output "):
                t = time.monotonic()
                with self.lock:
                    self.outputs.append((t, line))

    def send(self, command):
        self.p.stdin.write(command.encode() + b"\n")
        self.p.stdin.flush()
        return time.monotonic()

    def first_title_after(self, t, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                for (at, line) in self.outputs:
                    if at >= t and TITLE.search(line):
                        return at
            time.sleep(0.0005)
        return None

    def burst_end(self, t, quiet=0.005):
        """The arrival of the last output of the burst that starts at `t` (the next
        output more than `quiet` s later, or none within 0.2 s, ends it)."""
        time.sleep(0.2)
        with self.lock:
            last = t
            for (at, _) in self.outputs:
                if at < t:
                    continue
                if at - last > quiet:
                    break
                last = at
        return last

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        self.p.kill()


def wait_for(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        s = capture()
        if pred(s):
            return s
        time.sleep(0.01)
    return None


def one_run(want):
    home = tempfile.mkdtemp(prefix="bench-keys-stream-")
    env = " ".join(f"XDG_{k}_HOME={home}/{k.lower()}" for k in ("CONFIG", "STATE", "CACHE"))
    cmd = f"exec env {env} {subprocess.list2cmdline([LEET, FILE])}"
    tmux("new-session", "-d", "-s", "bench", "-x", str(COLS), "-y", str(ROWS), cmd)
    tmux("set-option", "-g", "window-size", "manual")
    t0 = time.monotonic()
    out, late = [], 0
    try:
        if wait_for(sidebar_shown, TIMEOUT_S) is None:
            sys.exit(f"no first frame within {TIMEOUT_S} s")
        if LOADED:
            if wait_for(lambda s: "loading" not in s, TIMEOUT_S) is None:
                sys.exit(f"the load did not end within {TIMEOUT_S} s")
            time.sleep(0.2)
        st = Stream()
        time.sleep(0.2)
        shown = True
        while len(out) < want and time.monotonic() - t0 < TIMEOUT_S:
            if not LOADED and "loading" not in capture():
                break
            time.sleep(GAP_S)
            if shown:
                # Hide (not timed): wait until a capture shows it gone.
                st.send("send-keys -t bench [")
                if wait_for(lambda s: not sidebar_shown(s), 5) is None:
                    sys.exit("the sidebar was not hidden within 5 s")
                shown = False
                continue
            t_send = st.send("send-keys -t bench [")
            at = st.first_title_after(t_send, 5)
            if at is None:
                sys.exit("a press was not answered within 5 s")
            done = st.burst_end(at)
            s = wait_for(sidebar_shown, 5)
            if s is None:
                sys.exit("the title came but no capture shows the sidebar")
            shown = True
            if LOADED or "loading" in s:
                out.append(((at - t_send) * 1000, (done - t_send) * 1000))
            else:
                late += 1
        st.close()
    finally:
        tmux("kill-server", check=False)
        shutil.rmtree(home, ignore_errors=True)
    return out, time.monotonic() - t0, late


print(f"file: {FILE} ({os.path.getsize(FILE)} bytes), terminal {COLS}x{ROWS}, "
      f"{'after' if LOADED else 'while'} loading")
print("load before: " + " ".join(open("/proc/loadavg").read().split()[:3]))
lat, runs = [], 0
while len(lat) < PRESSES and runs < 200:
    got, secs, late = one_run(PRESSES - len(lat))
    runs += 1
    lat += got
    print(f"run {runs}: {len(got)} presses timed ({late} answered after the load), {secs:.2f} s",
          flush=True)
if not lat:
    sys.exit("no press could be timed")
for name, i in (("title drawn", 0), ("frame done", 1)):
    xs = sorted(x[i] for x in lat)
    p99 = xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]
    print(f"leet, {name}: {len(xs)} presses over {runs} runs: p50 {statistics.median(xs):.2f} ms, "
          f"p90 {xs[int(0.9 * (len(xs) - 1))]:.2f} ms, p99 {p99:.2f} ms, max {xs[-1]:.2f} ms")
print("load after:  " + " ".join(open("/proc/loadavg").read().split()[:3]))
PY
