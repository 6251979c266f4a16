#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: print leet's NVML readings next to nvidia-smi's,
# for the by-hand check of the gpu.N.* keys. Usage: scripts/gpu-check.sh [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-3}"
cargo build --release --quiet
echo "== nvidia-smi (before)"
nvidia-smi --query-gpu=index,name,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,enforced.power.limit,clocks.sm,clocks.mem,clocks.gr,fan.speed,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,driver_version \
  --format=csv || true
echo "== leet sample --json --count $count --interval 1s (gpu keys)"
./target/release/leet sample --json --count "$count" --interval 1s \
  | python3 -c 'import json,sys
for line in sys.stdin:
    d=json.loads(line)
    print({k: v for k, v in d.items() if k.startswith("gpu.") or k == "timestamp"})'
echo "== nvidia-smi (after)"
nvidia-smi --query-gpu=index,utilization.gpu,memory.used,temperature.gpu,power.draw,clocks.sm,clocks.mem --format=csv || true
