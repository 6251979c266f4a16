#!/usr/bin/env bash
# Load speed of big runs, without a terminal: `leet inspect --summary --json FILE`
# (a full first load: every record decoded and folded, on all cores) against `cat
# FILE` from the page cache, and optionally `wandb leet inspect` on the same file.
#
# For each file it prints, as the median of RUNS runs (the file read once first, so
# it is in the page cache):
#   wall_s      elapsed time
#   cpu_s       user + sys CPU time (all threads): what the work costs, whatever the
#               machine's load; wall_s alone is noisy on a shared machine
#   rss_MiB     peak resident memory (GNU time's maximum RSS)
#   MB/s        file size / wall_s
#   x_cat       wall_s / the wall time of `cat FILE > /dev/null`
# and the load average before the runs, so noisy figures can be told apart.
#
# With no FILE it makes the synthetic runs of the issue under $SYNTH_DIR (examples/synth,
# wandb-core's record shapes): 5M steps x 10 metrics without summary records (1.3 GB)
# and 15M steps (3.9 GB), and times those.
#
# The TUI's first frame and fully-loaded time (tmux, screen polled) are measured by
# scripts/bench-open.sh FILE, e.g. LAST_STEP=4999999 scripts/bench-open.sh FILE 3.
#
# usage: scripts/bench-load.sh [FILE...]
#   env: RUNS=3, SKIP_BUILD=1, SYNTH_DIR=/tmp/leet-bench, WANDB_TOO=1 (also time
#        `wandb leet inspect --summary --json`), TIMEOUT_S=600
set -euo pipefail

RUNS=${RUNS:-3}
SYNTH_DIR=${SYNTH_DIR:-/tmp/leet-bench}
TIMEOUT_S=${TIMEOUT_S:-600}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"

files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
    mkdir -p "$SYNTH_DIR"
    if [[ -z "${SKIP_BUILD:-}" ]]; then
        (cd "$ROOT" && cargo build --release --quiet --example synth)
    fi
    for spec in "5000000 synth-5m" "15000000 synth-15m"; do
        set -- $spec
        if [[ ! -s "$SYNTH_DIR/$2.wandb" ]]; then
            "$TARGET/release/examples/synth" "$SYNTH_DIR/$2.wandb" "$1" 10 --no-summary
        fi
        files+=("$SYNTH_DIR/$2.wandb")
    done
fi

export RUNS TIMEOUT_S LEET WANDB WANDB_TOO="${WANDB_TOO:-}"
exec python3 - "${files[@]}" <<'PY'
import os, statistics, subprocess, sys, time

RUNS = int(os.environ["RUNS"])
TIMEOUT_S = float(os.environ["TIMEOUT_S"])
LEET = os.environ["LEET"]
WANDB = os.environ["WANDB"]
WANDB_TOO = bool(os.environ.get("WANDB_TOO"))


def timed(cmd):
    """(wall s, user+sys s, max RSS MiB) of one run, output discarded."""
    r = subprocess.run(
        ["/usr/bin/time", "-f", "%e %U %S %M"] + cmd,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT_S,
    )
    last = r.stderr.strip().splitlines()[-1].split()
    if r.returncode != 0:
        sys.exit(f"{cmd}: exit {r.returncode}: {r.stderr[-500:]}")
    wall, user, sys_, rss = map(float, last)
    return wall, user + sys_, rss / 1024


def median_of(cmd):
    runs = [timed(cmd) for _ in range(RUNS)]
    return tuple(statistics.median(x[i] for x in runs) for i in range(3))


print(f"{'program':<8} {'file':<28} {'MB':>7} {'wall_s':>7} {'cpu_s':>7} {'rss_MiB':>8} "
      f"{'MB/s':>7} {'x_cat':>6}  load")
for path in sys.argv[1:]:
    size_mb = os.path.getsize(path) / 1e6
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # page cache
    cat_wall = median_of(["cat", path])[0]
    progs = [("leet", [LEET, "inspect", "--summary", "--json", path])]
    if WANDB_TOO:
        progs.append(("wandb", [WANDB, "leet", "inspect", "--summary", "--json", path]))
    progs.append(("cat", ["cat", path]))
    for name, cmd in progs:
        load = os.getloadavg()[0]
        wall, cpu, rss = median_of(cmd)
        print(f"{name:<8} {os.path.basename(path)[:28]:<28} {size_mb:7.0f} {wall:7.2f} {cpu:7.2f} "
              f"{rss:8.1f} {size_mb / max(wall, 1e-9):7.0f} {wall / max(cat_wall, 1e-9):6.1f}  "
              f"{load:.2f}", flush=True)
PY
