#!/usr/bin/env bash
# The cluster view's data at scale: a HOSTS x GPUS cluster's history (node-exporter
# and dcgm-exporter series, one idle GPU, one straggler) over WINDOW_S seconds at a
# STEP_S scrape interval, written as OpenMetrics text, backfilled with
# `promtool tsdb create-blocks-from openmetrics` into a temporary data directory and
# served by Prometheus on 127.0.0.1 (a free port). examples/cluster_probe.rs then
# reads it with the refresh thread and the cluster model, refreshing every
# INTERVAL_S seconds for SPAN_S seconds, and prints the time to the first full
# screen (the screen's own keys, asked first), to the full model (every key), its
# CPU per refresh and RSS beside the targets (issue 28: first screen 1 s,
# 2 % of one core refreshing every 5 s, 100 MB).
#
# usage: scripts/cluster-scale.sh [HOSTS] [GPUS] [WINDOW_S] [STEP_S] [SPAN_S] [INTERVAL_S]
#   (defaults: 64 8 3600 15 60 5). PROFILE=release builds the probe optimised (the
#   figures to quote); PROBE=path uses a probe already built. Needs prometheus and
#   promtool (Debian: apt-get install prometheus). PROBE may list several probes,
#   colon-separated (a build before a change and one after), and ROUNDS=N runs them
#   in turn N times against the same server, `uptime` printed beside each run, so
#   that a shared machine's load falls on both alike.
set -euo pipefail

HOSTS=${1:-64}
GPUS=${2:-8}
WINDOW_S=${3:-3600}
STEP_S=${4:-15}
SPAN_S=${5:-60}
INTERVAL_S=${6:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

for tool in prometheus promtool python3; do
    command -v "$tool" > /dev/null || { echo "cluster-scale: $tool is not installed" >&2; exit 1; }
done

if [[ -z "${PROBE:-}" ]]; then
    if [[ "${PROFILE:-dev}" == release ]]; then
        cargo build --quiet --release --example cluster_probe --manifest-path "$ROOT/Cargo.toml"
        PROBE="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/cluster_probe"
    else
        cargo build --quiet --example cluster_probe --manifest-path "$ROOT/Cargo.toml"
        PROBE="${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/cluster_probe"
    fi
fi

TMP=$(mktemp -d)
PROM_PID=
cleanup() {
    [[ -n "$PROM_PID" ]] && kill "$PROM_PID" 2> /dev/null && wait "$PROM_PID" 2> /dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

END=$(date +%s)
START=$((END - WINDOW_S))
python3 - "$HOSTS" "$GPUS" "$START" "$END" "$STEP_S" > "$TMP/history.om" <<'PY'
import math, random, sys

hosts, gpus, start, end, step = map(int, sys.argv[1:])
random.seed(28)
times = list(range(start, end + 1, step))
IDLE = (min(7, hosts - 1), min(3, gpus - 1))       # one GPU that does nothing
STRAGGLER = (min(42, hosts - 1), min(5, gpus - 1))  # one GPU well behind the rest
out = sys.stdout
def host(h): return f"node-{h:02d}"
def series(name, labels, values):
    lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
    out.write("".join(f"{name}{{{lab}}} {v:.6g} {t}\n" for t, v in zip(times, values)))
def util(h, g, i):
    if (h, g) == IDLE: return 0.0
    base = 40.0 if (h, g) == STRAGGLER else 95.0
    return max(0.0, min(100.0, base + 3.0 * math.sin(i / 7.0 + h + g) + random.uniform(-2, 2)))

out.write("# TYPE up gauge\n")
for h in range(hosts):
    for job, port in (("node", 9100), ("dcgm", 9400)):
        series("up", {"job": job, "instance": f"{host(h)}:{port}"}, [1] * len(times))
out.write("# TYPE node_cpu_seconds counter\n")
for h in range(hosts):
    for c in range(8):
        idle, vals = 1e6, []
        for i in range(len(times)):
            idle += step * random.uniform(0.3, 0.5)
            vals.append(idle)
        series("node_cpu_seconds_total", {"job": "node", "instance": f"{host(h)}:9100", "cpu": c, "mode": "idle"}, vals)
for name, f in (("node_memory_MemTotal_bytes", lambda h, i: 2 ** 41),
                ("node_memory_MemAvailable_bytes", lambda h, i: 2 ** 40 + 2 ** 30 * ((h + i) % 50)),
                ("node_load1", lambda h, i: 30 + (h + i) % 10)):
    out.write(f"# TYPE {name} gauge\n")
    for h in range(hosts):
        series(name, {"job": "node", "instance": f"{host(h)}:9100"}, [f(h, i) for i in range(len(times))])
dcgm = (("DCGM_FI_DEV_GPU_UTIL", lambda h, g, i: util(h, g, i)),
        ("DCGM_FI_DEV_FB_USED", lambda h, g, i: 70000 if (h, g) != IDLE else 500),
        ("DCGM_FI_DEV_FB_FREE", lambda h, g, i: 11000 if (h, g) != IDLE else 80500),
        ("DCGM_FI_DEV_POWER_USAGE", lambda h, g, i: 100 + 6 * util(h, g, i)),
        ("DCGM_FI_DEV_GPU_TEMP", lambda h, g, i: 35 + util(h, g, i) / 3))
for name, f in dcgm:
    out.write(f"# TYPE {name} gauge\n")
    for h in range(hosts):
        for g in range(gpus):
            labels = {"job": "dcgm", "instance": f"{host(h)}:9400", "gpu": g, "Hostname": host(h)}
            series(name, labels, [f(h, g, i) for i in range(len(times))])
out.write("# EOF\n")
PY
echo "history: $HOSTS hosts x $GPUS GPUs, ${WINDOW_S} s at ${STEP_S} s: $(wc -l < "$TMP/history.om") lines, $(du -m "$TMP/history.om" | cut -f1) MB of OpenMetrics"
promtool tsdb create-blocks-from openmetrics "$TMP/history.om" "$TMP/data" > "$TMP/promtool.log" 2>&1 \
    || { cat "$TMP/promtool.log" >&2; exit 1; }
rm "$TMP/history.om"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: %ss\n' "$STEP_S" > "$TMP/prometheus.yml"
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/data" \
    --storage.tsdb.retention.time=30d --web.listen-address="127.0.0.1:$PORT" \
    > "$TMP/prometheus.log" 2>&1 &
PROM_PID=$!
for _ in $(seq 300); do
    curl -fs "http://127.0.0.1:$PORT/-/ready" > /dev/null 2>&1 && break
    sleep 0.2
done
curl -fs "http://127.0.0.1:$PORT/-/ready" > /dev/null || { cat "$TMP/prometheus.log" >&2; exit 1; }

IFS=: read -r -a PROBES <<< "$PROBE"
for round in $(seq "${ROUNDS:-1}"); do
    for probe in "${PROBES[@]}"; do
        echo "probe (round $round): $probe against Prometheus $(prometheus --version 2>&1 | head -1 | cut -d' ' -f3) on 127.0.0.1:$PORT; $(uptime)"
        "$probe" "http://127.0.0.1:$PORT" "$WINDOW_S" "$INTERVAL_S" "$SPAN_S"
    done
done
