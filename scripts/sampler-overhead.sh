#!/usr/bin/env bash
# Measure the host sampler's own cost: CPU % of one core (utime+stime from
# /proc/<pid>/stat over wall time) and peak RSS (VmHWM), for
#   leet sample --json --interval 1s --count 60 > /dev/null      (release build)
# and, when /opt/wandbvenv/bin/wandb exists, for `wandb leet symon --interval 1s`
# run for the same time under `script` (it is a TUI), measuring its wandb-core and
# wandb-symon processes separately.
#
# With --fakes (or FAKES=1): the same leet run with every accelerator family present,
# through the test fakes of scripts/fakes/setup.sh (C stubs of NVML, DCGM and ROCm SMI, fake
# neuron-monitor / macmon / gc-info, a fake TPU runtime on 127.0.0.1, dcgm-exporter and
# node-exporter pages on 127.0.0.1). First each family is run alone for two samples and
# the script fails unless every family gives keys and the all-families sample holds all of
# them; then leet is measured as above (its own process only: the fakes are separate
# processes, their cost is listed apart), the fakes are stopped, and no process may be left.
# The wandb comparison is not run in this mode.
#
# PER_FAMILY=N adds a run of N samples for each family alone (where the cost goes);
# FAMILIES="tpu neuron ..." limits the runs to those families (default: all nine).
#
# usage: scripts/sampler-overhead.sh [--fakes] [seconds]
#        (default 60 s; SKIP_BUILD=1 to reuse the built binaries)
set -euo pipefail

FAKES=${FAKES:-}
if [[ "${1:-}" == --fakes ]]; then
    FAKES=1
    shift
fi
SECS=${1:-60}
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
HZ=$(getconf CLK_TCK)

# ticks <pid>: utime+stime in clock ticks (empty if gone)
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || true; }
# sched <pid>: on-CPU time in ns summed over the live threads' schedstat (finer than
# ticks; threads that already exited are not counted; empty if absent)
sched() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { if (NR) print s }' || true; }
# hwm <pid>: VmHWM in kB (empty if gone)
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true; }
# descendants <pid>: all descendant pids
descendants() {
    local kids
    kids=$(ps -o pid= --ppid "$1" 2>/dev/null || true)
    for k in $kids; do
        echo "$k"
        descendants "$k"
    done
}
comm() { cat "/proc/$1/comm" 2>/dev/null || echo "?"; }

# measure <label> <root pid> <seconds> <comm regex>
# Polls every 0.5 s; keeps the last seen ticks and the highest VmHWM of every process
# in the tree whose name matches, so processes are counted up to their last poll.
measure() {
    local label=$1 root=$2 secs=$3 match=$4
    declare -A T H N S
    local start end now p t h s
    start=$(date +%s.%N)
    end=$(echo "$start + $secs" | bc)
    while kill -0 "$root" 2>/dev/null; do
        for p in "$root" $(descendants "$root"); do
            [[ $(comm "$p") =~ $match ]] || continue
            t=$(ticks "$p"); h=$(hwm "$p"); s=$(sched "$p")
            [[ -n "$t" ]] && T[$p]=$t
            [[ -n "$s" ]] && S[$p]=$s
            [[ -n "$h" ]] && { [[ -z "${H[$p]:-}" || $h -gt ${H[$p]} ]] && H[$p]=$h; }
            N[$p]=$(comm "$p")
        done
        now=$(date +%s.%N)
        (( $(echo "$now >= $end" | bc) )) && break
        sleep 0.5
    done
    now=$(date +%s.%N)
    local wall
    wall=$(echo "$now - $start" | bc)
    for p in "${!T[@]}"; do
        awk -v l="$label" -v n="${N[$p]}" -v p="$p" -v t="${T[$p]}" -v hz="$HZ" -v w="$wall" -v h="${H[$p]:-0}" -v s="${S[$p]:-0}" \
            'BEGIN { printf "%-18s %-12s pid %-7s cpu %6.3f%% of one core (schedstat %6.3f%%) over %5.1fs   peak RSS %6.1f MB\n", l, n, p, 100 * t / hz / w, 100 * s / 1e9 / w, w, h / 1024 }'
    done
}

if [[ -n "$FAKES" ]]; then
    # ---- --fakes: every accelerator family through the test fakes ----

    # keys <file>: the keys of the last JSON sample in file, one a line, sorted
    keys() { tail -n1 "$1" | python3 -c 'import json, sys; print("\n".join(sorted(json.load(sys.stdin))))'; }

    # cost <pid>: utime+stime+cutime+cstime in clock ticks (the process and its reaped children)
    cost() { awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$1/stat" 2>/dev/null || true; }

    # pname <pid>: the recorded name of a fake server, the script name of a fake tool run by
    # its interpreter (bash, sh), else the process name
    pname() {
        local n
        n=$(awk -v p="$1" '$1 == p { print $2 }' "$FDIR/pids")
        [[ -n $n ]] || n=$(comm "$1")
        if [[ $n == bash || $n == sh ]]; then
            n=$(tr '\0' '\n' < "/proc/$1/cmdline" 2>/dev/null | sed -n 2p)
            n=${n##*/}
        fi
        echo "$n"
    }

    # fake_costs <leet pid> <seconds>: CPU % of one core and peak RSS of each fake process
    # (the servers, and leet's children: neuron-monitor, macmon, and through leet's cutime the
    # gc-info runs it reaped), from two snapshots 3 s and <seconds>-3 s into the run.
    fake_costs() {
        local leet=$1 secs=$2 p t0 t1 w pids
        declare -A A B
        sleep 3
        pids="$(awk '{ print $1 }' "$FDIR/pids") $(descendants "$leet")"
        for p in $pids; do A[$p]=$(cost "$p"); done
        A[children]=$(awk '{ sub(/^.*\) /, ""); print $14 + $15 }' "/proc/$leet/stat" 2>/dev/null || echo 0)
        t0=$(date +%s.%N)
        sleep $((secs - 6))
        for p in $pids; do B[$p]=$(cost "$p"); done
        B[children]=$(awk '{ sub(/^.*\) /, ""); print $14 + $15 }' "/proc/$leet/stat" 2>/dev/null || echo 0)
        t1=$(date +%s.%N)
        w=$(echo "$t1 - $t0" | bc)
        for p in $pids; do
            [[ -n "${A[$p]:-}" && -n "${B[$p]:-}" ]] || continue
            awk -v n="$(pname "$p")" -v p="$p" -v d="$((${B[$p]} - ${A[$p]}))" -v hz="$HZ" -v w="$w" -v h="$(hwm "$p")" \
                'BEGIN { printf "  fake %-16s pid %-7s cpu %6.3f%% of one core over %5.1fs   peak RSS %6.1f MB\n", n, p, 100 * d / hz / w, w, h / 1024 }'
        done
        awk -v d="$((${B[children]:-0} - ${A[children]:-0}))" -v hz="$HZ" -v w="$w" \
            'BEGIN { printf "  fake %-16s             cpu %6.3f%% of one core over %5.1fs   (gc-info runs reaped by leet)\n", "short-lived", 100 * d / hz / w, w }'
    }

    TMP=$(mktemp -d)
    FDIR=$TMP/fakes
    teardown() {
        "$ROOT/scripts/fakes/setup.sh" down "$FDIR" || { echo "FAIL: teardown" >&2; exit 1; }
        rm -rf "$TMP"
    }
    trap teardown EXIT
    "$ROOT/scripts/fakes/setup.sh" up "$FDIR"

    # leet_with <out> <err> <count> <family...>: leet sample --json --interval 1s with the
    # base environment plus these families' (all: every family), in the foreground
    leet_with() {
        local out=$1 err=$2 count=$3 f
        shift 3
        (
            # shellcheck disable=SC1091
            source "$FDIR/fam/base.env"
            local args=()
            for f in "$@"; do
                # shellcheck disable=SC1090
                source "$FDIR/fam/$f.env"
                read -ra a < "$FDIR/fam/$f.args" || true
                args+=("${a[@]}")
            done
            timeout 60 "$LEET" sample --json --interval 1s --count "$count" "${args[@]}" > "$out" 2> "$err"
        )
    }

    echo "== key check: each family alone (2 samples), then all together"
    FAMILIES=${FAMILIES:-tpu neuron apple ipu nvml dcgm amd dcgm-exporter openmetrics}
    leet_with "$TMP/none.json" "$TMP/none.err" 2
    keys "$TMP/none.json" > "$TMP/none.keys"
    # shellcheck disable=SC2086
    leet_with "$TMP/all.json" "$TMP/all.err" 2 $FAMILIES
    keys "$TMP/all.json" > "$TMP/all.keys"
    FAIL=
    for f in $FAMILIES; do
        leet_with "$TMP/$f.json" "$TMP/$f.err" 2 "$f"
        keys "$TMP/$f.json" | LC_ALL=C command comm -23 - "$TMP/none.keys" > "$TMP/$f.keys"
        n=$(wc -l < "$TMP/$f.keys")
        missing=$(LC_ALL=C command comm -23 "$TMP/$f.keys" "$TMP/all.keys" | wc -l)
        printf '  %-14s %5d keys alone, %d of them missing from the all-families sample; e.g. %s\n' \
            "$f" "$n" "$missing" "$(head -n3 "$TMP/$f.keys" | tr '\n' ' ')"
        if (( n == 0 || missing > 0 )); then
            echo "FAIL: family $f: $n keys alone, $missing missing with all families on" >&2
            sed 's/^/    /' "$TMP/$f.err" >&2
            FAIL=1
        fi
    done
    printf '  %-14s %5d keys (host: %d)\n' "all" "$(wc -l < "$TMP/all.keys")" "$(wc -l < "$TMP/none.keys")"
    # Keys two families both emit (gpu.N.* from NVML, DCGM, AMD, dcgm-exporter, Apple)
    # are one key in the sample; say how many, since the check above cannot tell whose.
    for f in $FAMILIES; do
        others=$(for g in $FAMILIES; do [[ $g == "$f" ]] || cat "$TMP/$g.keys"; done | LC_ALL=C sort -u)
        shared=$(LC_ALL=C command comm -12 "$TMP/$f.keys" <(echo "$others") | wc -l)
        (( shared == 0 )) || printf '  %-14s %5d of its keys also come from another family\n' "$f" "$shared"
    done
    # Every line about a problem counts, except those of a family left out ("not available",
    # or the errors of one whose device the fake sysfs still shows: a TPU with no runtime).
    off=
    for f in tpu neuron apple ipu nvml dcgm amd dcgm-exporter openmetrics; do
        [[ " $FAMILIES " == *" $f "* ]] && continue
        [[ $f == nvml ]] && f=nvidia
        off="$off|$f"
    done
    if grep -E 'not available|error' "$TMP/all.err" | grep -Ev "^(${off#|}): (not available|error): " >&2; then
        echo "FAIL: with the fakes in place, leet reported the lines above" >&2
        FAIL=1
    fi
    [[ -z $FAIL ]] || exit 1

    echo "== leet sample (release), interval 1s, ${SECS} samples, families on (fakes): $FAMILIES"
    (
        # shellcheck disable=SC1091
        source "$FDIR/fam/base.env"
        args=()
        for f in $FAMILIES; do
            # shellcheck disable=SC1090
            source "$FDIR/fam/$f.env"
            read -ra a < "$FDIR/fam/$f.args" || true
            args+=("${a[@]}")
        done
        exec "$LEET" sample --json --interval 1s --count "$SECS" "${args[@]}" > "$TMP/run.json" 2> "$TMP/run.err"
    ) &
    LEET_PID=$!
    fake_costs "$LEET_PID" "$SECS" > "$TMP/fakes.cost" &
    COST_PID=$!
    measure "leet sample+fakes" "$LEET_PID" $((SECS + 5)) '^leet$'
    wait "$LEET_PID" || { echo "FAIL: leet exited with $?" >&2; cat "$TMP/run.err" >&2; exit 1; }
    wait "$COST_PID" || true
    echo "  (the fakes, not counted above)"
    cat "$TMP/fakes.cost"
    echo "  samples written: $(wc -l < "$TMP/run.json"), keys in the last: $(keys "$TMP/run.json" | wc -l)"
    if [[ -s "$TMP/run.err" ]]; then
        echo "  leet stderr:"
        sed 's/^/    /' "$TMP/run.err" | head -20
    fi
    if [[ -n "${PER_FAMILY:-}" ]]; then
        echo "== each family alone, ${PER_FAMILY} samples each (none: the fake sysfs root only)"
        for f in none $FAMILIES; do
            (
                # shellcheck disable=SC1091
                source "$FDIR/fam/base.env"
                args=()
                if [[ $f != none ]]; then
                    # shellcheck disable=SC1090
                    source "$FDIR/fam/$f.env"
                    read -ra args < "$FDIR/fam/$f.args" || true
                fi
                exec "$LEET" sample --json --interval 1s --count "$PER_FAMILY" "${args[@]}" > /dev/null 2>&1
            ) &
            pid=$!
            measure "$f alone" "$pid" $((PER_FAMILY + 5)) '^leet$'
            wait "$pid" || true
        done
    fi
    exit 0
fi

echo "== leet sample (release), interval 1s, ${SECS} samples"
"$LEET" sample --json --interval 1s --count "$SECS" > /dev/null 2> /tmp/leet-overhead.err &
LEET_PID=$!
measure "leet sample" "$LEET_PID" $((SECS + 5)) '^leet$'
wait "$LEET_PID" || true

if [[ -x "$WANDB" ]]; then
    echo "== wandb leet symon --interval 1s (under script, ${SECS}s)"
    TERM=xterm-256color script -qc "$WANDB leet symon --interval 1s" /dev/null > /dev/null 2>&1 < /dev/null &
    W_PID=$!
    measure "wandb leet symon" "$W_PID" "$SECS" '^(wandb-core|wandb-symon)$'
    KIDS=$(descendants "$W_PID")
    kill "$W_PID" 2>/dev/null || true
    for p in $KIDS; do kill "$p" 2>/dev/null || true; done
    wait "$W_PID" 2>/dev/null || true
else
    echo "($WANDB not found; skipping the wandb comparison)"
fi
