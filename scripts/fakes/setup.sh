#!/usr/bin/env bash
# Every accelerator family of `leet sample` at once, without the hardware: the same fakes
# the tests use, set up in DIR for a measurement or a look with `leet --live`.
#
#   scripts/fakes/setup.sh up DIR     build and start everything; writes DIR/env (export
#                                     lines to source) and DIR/args (the leet flags), and
#                                     per family DIR/fam/NAME.{env,args} (base.env: always)
#   scripts/fakes/setup.sh down DIR   stop what `up` started (pids in DIR/pids), check
#                                     that none is left, remove DIR
#
# What is faked, and how (each as its test does it):
#   NVIDIA NVML     tests/nvml_stub.c built as DIR/lib/libnvidia-ml.so.1 (LD_LIBRARY_PATH)
#   NVIDIA DCGM     tests/dcgm_stub.c built as DIR/lib/libdcgm.so.4 (LEET_DCGM_LIB, --dcgm)
#   AMD ROCm SMI    tests/rocm_smi_stub.c built as DIR/lib/librocm_smi64.so (LEET_ROCM_SMI_LIB)
#                   and DIR/sys/module/amdgpu/initstate = live
#   Google TPU      examples/fake_tpu_runtime (the gRPC fake of tests/sampler_tpu.rs, shared
#                   through tests/support/tpu_fake.rs) serving tests/fixtures/tpu/$TPU_FIXTURE
#                   on 127.0.0.1 and writing its PCI devices under DIR/sys/bus/pci/devices
#   AWS Trainium    scripts/fakes/bin/neuron-monitor replaying tests/fixtures/neuron, and
#                   DIR/sys/class/neuron_device/neuron0
#   Apple Silicon   scripts/fakes/bin/macmon replaying tests/fixtures/macmon (LEET_MACMON=1)
#   Graphcore IPU   scripts/fakes/bin/gc-info replaying tests/fixtures/ipu (4 IPUs)
#   dcgm-exporter   python3 -m http.server on 127.0.0.1 serving the recorded L4 exporter page
#   OpenMetrics     the same server serving the recorded node-exporter page (--openmetrics node=)
# All of them on one sysfs root (LEET_SYSFS_ROOT=DIR/sys). SKIP_BUILD=1 reuses the built
# fake TPU runtime (dev profile: target/debug/examples/fake_tpu_runtime).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FAKES=$ROOT/scripts/fakes
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
TPU_FIXTURE=${TPU_FIXTURE:-v4-8-two-ports.json}
DEV_FIXTURES=${DEV_FIXTURES:-$ROOT/../../shared/fixtures/devices}
[[ -d $DEV_FIXTURES ]] || DEV_FIXTURES=/work/shared/fixtures/devices

# The families, in the order the overhead script reports them.
FAMILIES="tpu neuron apple ipu nvml dcgm amd dcgm-exporter openmetrics"

die() { echo "fakes: $*" >&2; exit 1; }

# wait_for <file> <regex> <what>: up to 20 s for a line matching regex; prints it
wait_for() {
    local i
    for i in $(seq 200); do
        if grep -Eq "$2" "$1" 2>/dev/null; then
            grep -Em1 "$2" "$1"
            return 0
        fi
        sleep 0.1
    done
    die "$3 did not start: $(head -c 2000 "$1" 2>/dev/null)"
}

up() {
    local dir=$1
    [[ -e $dir ]] && die "$dir exists"
    mkdir -p "$dir"/{lib,sys,macmon,ipu,www}
    dir=$(cd "$dir" && pwd)
    : > "$dir/pids"

    command -v cc > /dev/null || die "a C compiler (cc) is needed for the library stubs"
    command -v python3 > /dev/null || die "python3 is needed for the HTTP endpoints"
    cc -O2 -shared -fPIC -std=c11 -o "$dir/lib/libnvidia-ml.so.1" "$ROOT/tests/nvml_stub.c"
    cc -O2 -shared -fPIC -std=c11 -o "$dir/lib/libdcgm.so.4" "$ROOT/tests/dcgm_stub.c"
    cc -O2 -shared -fPIC -std=c11 -o "$dir/lib/librocm_smi64.so" "$ROOT/tests/rocm_smi_stub.c"

    mkdir -p "$dir/sys/module/amdgpu" "$dir/sys/class/neuron_device/neuron0"
    echo live > "$dir/sys/module/amdgpu/initstate"
    echo 4 > "$dir/sys/class/neuron_device/neuron0/core_count"

    # macmon: the first line of each recorded file, as tests/sampler_apple.rs replays them
    local f
    for f in exo-v07.jsonl issue26-v06.jsonl readme-v08-soc.jsonl; do
        head -n1 "$ROOT/tests/fixtures/macmon/$f"
    done > "$dir/macmon/stream.jsonl"
    head -n1 "$ROOT/tests/fixtures/macmon/readme-v08-soc.jsonl" > "$dir/macmon/probe.jsonl"

    # gc-info: the IPU-POD listing (IPUs 0-3); C600 attributes for even ids, C2 for odd
    local ipu=$ROOT/tests/fixtures/ipu n src
    cp "$ipu/gc-info-list-devices-pod.txt" "$dir/ipu/list.txt"
    for n in 0 1 2 3; do
        if (( n % 2 == 0 )); then src=gc-info-i-d0-c600.txt; else src=gc-info-i-d0-c2.txt; fi
        sed -E "s/^([[:space:]]*)id: .*/\1id: $n/" "$ipu/$src" > "$dir/ipu/device-$n.txt"
    done

    # HTTP endpoints (dcgm-exporter, node-exporter) on 127.0.0.1, an ephemeral port
    cp "$DEV_FIXTURES/openmetrics-dcgm-exporter-l4.txt" "$dir/www/dcgm-exporter.txt"
    cp "$DEV_FIXTURES/openmetrics-node-exporter-e2e-linux.txt" "$dir/www/node-exporter.txt"
    setsid python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$dir/www" \
        > "$dir/http.log" 2>&1 < /dev/null &
    echo "$! http.server" >> "$dir/pids"
    local http_port
    http_port=$(wait_for "$dir/http.log" 'port [0-9]+' "http.server" | sed -E 's/.*port ([0-9]+).*/\1/')

    # TPU: the fake runtime writes the PCI devices and prints its ports
    local tpu_bin=$TARGET/debug/examples/fake_tpu_runtime
    if [[ -z "${SKIP_BUILD:-}" ]]; then
        (cd "$ROOT" && cargo build --quiet --locked --example fake_tpu_runtime)
    fi
    [[ -x $tpu_bin ]] || die "$tpu_bin not built (cargo build --example fake_tpu_runtime)"
    setsid "$tpu_bin" "$ROOT/tests/fixtures/tpu/$TPU_FIXTURE" "$dir/sys" \
        > "$dir/tpu.log" 2>&1 < /dev/null &
    echo "$! fake_tpu_runtime" >> "$dir/pids"
    local tpu_ports
    tpu_ports=$(wait_for "$dir/tpu.log" '^ports [0-9,]+$' "fake_tpu_runtime" | awk '{ print $2 }')

    # One environment and flag file per family (fam/NAME.env, fam/NAME.args), so each can
    # also be run alone; DIR/env and DIR/args are all of them.
    mkdir -p "$dir/fam" "$dir/lib-nvml" "$dir/bin-neuron" "$dir/bin-apple" "$dir/bin-ipu"
    mv "$dir/lib/libnvidia-ml.so.1" "$dir/lib-nvml/"
    ln -s "$FAKES/bin/neuron-monitor" "$dir/bin-neuron/neuron-monitor"
    ln -s "$FAKES/bin/macmon" "$dir/bin-apple/macmon"
    ln -s "$FAKES/bin/gc-info" "$dir/bin-ipu/gc-info"
    echo "export LEET_SYSFS_ROOT='$dir/sys'" > "$dir/fam/base.env"
    echo "export LD_LIBRARY_PATH='$dir/lib-nvml'" > "$dir/fam/nvml.env"
    echo "export LEET_DCGM_LIB='$dir/lib/libdcgm.so.4'" > "$dir/fam/dcgm.env"
    echo "--dcgm" > "$dir/fam/dcgm.args"
    echo "export LEET_ROCM_SMI_LIB='$dir/lib/librocm_smi64.so'" > "$dir/fam/amd.env"
    echo "export TPU_RUNTIME_METRICS_PORTS='$tpu_ports'" > "$dir/fam/tpu.env"
    printf '%s\n' "export PATH='$dir/bin-neuron':\"\$PATH\"" \
        "export FAKE_NEURON_LINES='$ROOT/tests/fixtures/neuron/neuron-monitor-1.jsonl'" > "$dir/fam/neuron.env"
    printf '%s\n' "export PATH='$dir/bin-apple':\"\$PATH\"" "export LEET_MACMON=1" \
        "export FAKE_MACMON_DIR='$dir/macmon'" > "$dir/fam/apple.env"
    printf '%s\n' "export PATH='$dir/bin-ipu':\"\$PATH\"" "export FAKE_IPU_DIR='$dir/ipu'" > "$dir/fam/ipu.env"
    echo "--dcgm-exporter http://127.0.0.1:$http_port/dcgm-exporter.txt" > "$dir/fam/dcgm-exporter.args"
    echo "--openmetrics node=http://127.0.0.1:$http_port/node-exporter.txt" > "$dir/fam/openmetrics.args"
    local fam
    for fam in $FAMILIES; do touch "$dir/fam/$fam.env" "$dir/fam/$fam.args"; done
    cat "$dir/fam/base.env" "$dir"/fam/[!b]*.env > "$dir/env"
    cat "$dir"/fam/*.args | tr '\n' ' ' > "$dir/args"
    echo "fakes up in $dir: http 127.0.0.1:$http_port, TPU runtime ports $tpu_ports"
}

down() {
    local dir=$1 pid name left=
    [[ -f $dir/pids ]] || die "$dir/pids: nothing to stop"
    while read -r pid name; do
        kill "$pid" 2> /dev/null || true
    done < "$dir/pids"
    for _ in $(seq 50); do
        left=
        while read -r pid name; do
            kill -0 "$pid" 2> /dev/null && left="$left $pid($name)"
        done < "$dir/pids"
        [[ -z $left ]] && break
        sleep 0.1
    done
    if [[ -n $left ]]; then
        while read -r pid name; do kill -9 "$pid" 2> /dev/null || true; done < "$dir/pids"
        die "still running after SIGTERM:$left (sent SIGKILL)"
    fi
    # Nothing else may run from the fakes: a neuron-monitor, macmon or gc-info that leet
    # left behind shows up here with the fakes' path on its command line.
    local strays
    strays=$(ps -eo pid=,args= | grep -F -e "$FAKES/bin/" -e "$dir" | grep -v -e grep -e "setup.sh down" || true)
    [[ -z $strays ]] || die "processes left behind:
$strays"
    rm -rf "$dir"
    echo "fakes down: no process left"
}

case "${1:-}" in
up) [[ $# -eq 2 ]] || die "usage: $0 up DIR"; up "$2" ;;
down) [[ $# -eq 2 ]] || die "usage: $0 down DIR"; down "$2" ;;
*) die "usage: $0 up DIR | down DIR" ;;
esac
