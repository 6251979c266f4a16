//! W&B system-metric keys ↔ Prometheus series: the one mapping table, both ways.
//!
//! A key's `/l:<label>` suffix (W&B shared mode, `x_label`) becomes the label
//! `node`; the parts of a key that vary (GPU index, core, disk path, device,
//! endpoint) become the labels named in the pattern. Values are converted to base
//! units (percent → ratio, MiB → bytes, MHz → hertz, µs → seconds), so a series'
//! value times [`Mapped::scale`]'s inverse is the W&B value again. A key no rule
//! knows is exported as `leet_other_<sanitised key>{key="<key>"}` and is never
//! dropped; [`to_key`] gives every key back from its series.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// Prometheus metric type of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    /// Monotonic since the sampler (or the driver) started; the name ends in `_total`.
    Counter,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The W&B key: `{name}` is one key segment (no `.`), `{name*}` any non-empty
    /// text; each becomes the label `name`.
    pub key: &'static str,
    /// The series name (counters end in `_total`).
    pub metric: &'static str,
    /// Series value = W&B value × scale.
    pub scale: f64,
    pub kind: Kind,
    pub help: &'static str,
}

const PCT: f64 = 0.01;
const MIB: f64 = 1_048_576.0;
const GIB: f64 = 1_073_741_824.0;
const MHZ: f64 = 1e6;
const US: f64 = 1e-6;

const fn g(key: &'static str, metric: &'static str, scale: f64, help: &'static str) -> Rule {
    Rule {
        key,
        metric,
        scale,
        kind: Kind::Gauge,
        help,
    }
}

const fn c(key: &'static str, metric: &'static str, scale: f64, help: &'static str) -> Rule {
    Rule {
        key,
        metric,
        scale,
        kind: Kind::Counter,
        help,
    }
}

/// Label for the `/l:<label>` suffix of a key.
pub const NODE_LABEL: &str = "node";
/// Label holding the whole key of a series no rule knows.
pub const KEY_LABEL: &str = "key";
/// Name prefix of the series no rule knows.
pub const OTHER_PREFIX: &str = "leet_other_";

/// The mapping, first match wins. Every key the sampler emits (spec/system-metrics.md
/// and `src/source/sampler`) has a row; `tests` checks each both ways.
#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // Host: CPU, memory, load (cpu.rs, memory.rs).
    g("cpu", "leet_process_cpu_ratio", PCT, "CPU use of the monitored process tree, share of the host's (or cgroup's) cores"),
    g("cpu.{core}.cpu_percent", "leet_cpu_core_busy_ratio", PCT, "Busy share of one logical CPU"),
    g("cpu.{cluster}_freq", "leet_cpu_cluster_clock_hertz", MHZ, "Apple CPU cluster frequency"),
    g("cpu.{cluster}_percent", "leet_cpu_cluster_busy_ratio", PCT, "Apple CPU cluster utilisation"),
    g("cpu.avg_temp", "leet_cpu_temperature_celsius", 1.0, "Apple CPU average temperature"),
    g("cpu.powerWatts", "leet_cpu_power_watts", 1.0, "Apple CPU power"),
    g("proc.cpu.threads", "leet_process_threads", 1.0, "Threads of the monitored process tree"),
    g("proc.cpu.throttledPercent", "leet_process_cpu_throttled_ratio", PCT, "Share of cgroup CPU periods throttled"),
    g("proc.memory.rssMB", "leet_process_memory_rss_bytes", MIB, "Resident memory of the monitored process tree"),
    g("proc.memory.percent", "leet_process_memory_ratio", PCT, "Resident memory of the process tree, share of the host's (or cgroup's) memory"),
    g("proc.memory.availableMB", "leet_memory_available_bytes", MIB, "Memory available to the host (or cgroup)"),
    c("proc.memory.oomKills", "leet_memory_oom_kills_total", 1.0, "OOM kills in the leaf cgroup"),
    g("memory_percent", "leet_memory_used_ratio", PCT, "Memory used, share of the host's (or cgroup's) memory"),
    g("memory.used", "leet_memory_ram_used_bytes", 1.0, "Apple RAM used"),
    g("memory.used_percent", "leet_memory_ram_used_ratio", PCT, "Apple RAM used, share of RAM"),
    g("swap.total", "leet_swap_size_bytes", 1.0, "Swap space"),
    g("swap.used", "leet_swap_used_bytes", 1.0, "Swap used"),
    g("swap.used_percent", "leet_swap_used_ratio", PCT, "Swap used, share of swap space"),
    g("load.1m", "leet_load1", 1.0, "Load average over 1 minute"),
    g("load.5m", "leet_load5", 1.0, "Load average over 5 minutes"),
    g("load.15m", "leet_load15", 1.0, "Load average over 15 minutes"),
    g("uptime", "leet_uptime_seconds", 1.0, "Time since boot"),
    g("system.powerWatts", "leet_system_power_watts", 1.0, "Apple system power"),
    g("ane.power", "leet_ane_power_watts", 1.0, "Apple Neural Engine power"),
    // Disks and network (disk.rs, network.rs): totals since the sampler started.
    c("disk.in", "leet_disk_read_bytes_total", MIB, "Bytes read from the disks behind the disk paths"),
    c("disk.out", "leet_disk_written_bytes_total", MIB, "Bytes written to the disks behind the disk paths"),
    c("disk.{device}.in", "leet_disk_device_read_bytes_total", MIB, "Bytes read from one block device"),
    c("disk.{device}.out", "leet_disk_device_written_bytes_total", MIB, "Bytes written to one block device"),
    g("disk.{path*}.usagePercent", "leet_disk_used_ratio", PCT, "Used share of the filesystem at path"),
    g("disk.{path*}.usageGB", "leet_disk_used_bytes", GIB, "Bytes used on the filesystem at path"),
    c("network.sent", "leet_network_transmit_bytes_total", 1.0, "Bytes sent over all interfaces"),
    c("network.recv", "leet_network_receive_bytes_total", 1.0, "Bytes received over all interfaces"),
    c("network.tcpRetransmits", "leet_network_tcp_retransmits_total", 1.0, "TCP segments retransmitted"),
    // GPUs as seen by the monitored process (nvidia.rs): the device's values.
    g("gpu.process.{gpu}.gpu", "leet_process_gpu_utilization_ratio", PCT, "GPU utilisation of a GPU the process tree uses"),
    g("gpu.process.{gpu}.memory", "leet_process_gpu_memory_busy_ratio", PCT, "Memory-controller busy share of a GPU the process tree uses"),
    g("gpu.process.{gpu}.memoryAllocated", "leet_process_gpu_memory_allocated_ratio", PCT, "Memory allocated on a GPU the process tree uses, share"),
    g("gpu.process.{gpu}.memoryAllocatedBytes", "leet_process_gpu_memory_allocated_bytes", 1.0, "Memory allocated on a GPU the process tree uses"),
    g("gpu.process.{gpu}.temp", "leet_process_gpu_temperature_celsius", 1.0, "Temperature of a GPU the process tree uses"),
    g("gpu.process.{gpu}.powerWatts", "leet_process_gpu_power_watts", 1.0, "Power of a GPU the process tree uses"),
    g("gpu.process.{gpu}.enforcedPowerLimitWatts", "leet_process_gpu_enforced_power_limit_watts", 1.0, "Power limit of a GPU the process tree uses"),
    g("gpu.process.{gpu}.powerPercent", "leet_process_gpu_power_ratio", PCT, "Power of a GPU the process tree uses, share of its limit"),
    // GPUs (nvidia.rs, amd.rs, rocm_lib.rs, apple.rs, dcgm.rs, dcgm_exporter.rs).
    g("gpu.{gpu}.gpu", "leet_gpu_utilization_ratio", PCT, "GPU utilisation"),
    g("gpu.{gpu}.memory", "leet_gpu_memory_busy_ratio", PCT, "Share of time the memory controller was busy"),
    g("gpu.{gpu}.memoryAllocated", "leet_gpu_memory_allocated_ratio", PCT, "GPU memory allocated, share of the total"),
    g("gpu.{gpu}.memoryAllocatedBytes", "leet_gpu_memory_allocated_bytes", 1.0, "GPU memory allocated"),
    g("gpu.{gpu}.memoryUsed", "leet_gpu_framebuffer_used_bytes", MIB, "Frame buffer used (dcgm-exporter)"),
    g("gpu.{gpu}.memoryFree", "leet_gpu_framebuffer_free_bytes", MIB, "Frame buffer free (dcgm-exporter)"),
    g("gpu.{gpu}.memoryTotal", "leet_gpu_framebuffer_size_bytes", MIB, "Frame buffer size (dcgm-exporter)"),
    g("gpu.{gpu}.temp", "leet_gpu_temperature_celsius", 1.0, "GPU temperature"),
    g("gpu.{gpu}.memoryTemp", "leet_gpu_memory_temperature_celsius", 1.0, "GPU memory temperature"),
    g("gpu.{gpu}.maxOpTemp", "leet_gpu_max_operating_temperature_celsius", 1.0, "Highest operating temperature of the GPU"),
    g("gpu.{gpu}.memoryMaxOpTemp", "leet_gpu_memory_max_operating_temperature_celsius", 1.0, "Highest operating temperature of the GPU memory"),
    g("gpu.{gpu}.powerWatts", "leet_gpu_power_watts", 1.0, "GPU power"),
    g("gpu.{gpu}.enforcedPowerLimitWatts", "leet_gpu_enforced_power_limit_watts", 1.0, "GPU power limit in force"),
    g("gpu.{gpu}.powerPercent", "leet_gpu_power_ratio", PCT, "GPU power, share of its limit"),
    c("gpu.{gpu}.energyJoules", "leet_gpu_energy_joules_total", 1.0, "Energy used by the GPU since the driver loaded"),
    c("gpu.{gpu}.totalEnergyConsumption", "leet_gpu_energy_consumption_joules_total", 1e-3, "Energy used by the GPU (dcgm-exporter, from mJ)"),
    g("gpu.{gpu}.smClock", "leet_gpu_sm_clock_hertz", MHZ, "SM clock"),
    g("gpu.{gpu}.memoryClock", "leet_gpu_memory_clock_hertz", MHZ, "Memory clock"),
    g("gpu.{gpu}.graphicsClock", "leet_gpu_graphics_clock_hertz", MHZ, "Graphics clock"),
    g("gpu.{gpu}.freq", "leet_gpu_clock_hertz", MHZ, "Apple GPU frequency"),
    c("gpu.{gpu}.correctedMemoryErrors", "leet_gpu_corrected_memory_errors_total", 1.0, "Corrected ECC errors since the driver loaded"),
    c("gpu.{gpu}.uncorrectedMemoryErrors", "leet_gpu_uncorrected_memory_errors_total", 1.0, "Uncorrected ECC errors since the driver loaded"),
    g("gpu.{gpu}.fanSpeed", "leet_gpu_fan_speed_ratio", PCT, "Fan speed, share of its maximum"),
    g("gpu.{gpu}.encoderUtilization", "leet_gpu_encoder_utilization_ratio", PCT, "Video encoder utilisation"),
    g("gpu.{gpu}.memoryReadWriteActivity", "leet_gpu_memory_activity_ratio", PCT, "AMD memory read/write activity"),
    g("gpu.{gpu}.memoryOverDrive", "leet_gpu_memory_overdrive_ratio", PCT, "AMD memory overdrive"),
    g("gpu.{gpu}.smActive", "leet_gpu_sm_active_ratio", PCT, "Share of time at least one warp was active on an SM (profiling)"),
    g("gpu.{gpu}.smOccupancy", "leet_gpu_sm_occupancy_ratio", PCT, "Resident warps, share of the SMs' maximum (profiling)"),
    g("gpu.{gpu}.pipeTensorActive", "leet_gpu_pipe_tensor_active_ratio", PCT, "Tensor pipe active share (profiling)"),
    g("gpu.{gpu}.pipeTensorHmmaActive", "leet_gpu_pipe_tensor_hmma_active_ratio", PCT, "Tensor HMMA pipe active share (profiling)"),
    g("gpu.{gpu}.dramActive", "leet_gpu_dram_active_ratio", PCT, "Device memory interface active share (profiling)"),
    g("gpu.{gpu}.pipeFp64Active", "leet_gpu_pipe_fp64_active_ratio", PCT, "FP64 pipe active share (profiling)"),
    g("gpu.{gpu}.pipeFp32Active", "leet_gpu_pipe_fp32_active_ratio", PCT, "FP32 pipe active share (profiling)"),
    g("gpu.{gpu}.pipeFp16Active", "leet_gpu_pipe_fp16_active_ratio", PCT, "FP16 pipe active share (profiling)"),
    g("gpu.{gpu}.pcieTxBytes", "leet_gpu_pcie_transmit_bytes_per_second", 1.0, "PCIe bytes sent per second (profiling)"),
    g("gpu.{gpu}.pcieRxBytes", "leet_gpu_pcie_receive_bytes_per_second", 1.0, "PCIe bytes received per second (profiling)"),
    g("gpu.{gpu}.nvlinkTxBytes", "leet_gpu_nvlink_transmit_bytes_per_second", 1.0, "NVLink bytes sent per second (profiling)"),
    g("gpu.{gpu}.nvlinkRxBytes", "leet_gpu_nvlink_receive_bytes_per_second", 1.0, "NVLink bytes received per second (profiling)"),
    // Google TPU (tpu/map.rs).
    g("tpu.{tpu}.tensorcoreUtilization", "leet_tpu_tensorcore_utilization_ratio", PCT, "TensorCore utilisation"),
    g("tpu.{tpu}.tensorcoreIdleDuration", "leet_tpu_tensorcore_idle_seconds", 1.0, "Time the TensorCore has been idle"),
    g("tpu.{tpu}.dutyCycle", "leet_tpu_duty_cycle_ratio", PCT, "TensorCore duty cycle"),
    g("tpu.{tpu}.hbmCapacityTotal", "leet_tpu_hbm_size_bytes", 1.0, "HBM size"),
    g("tpu.{tpu}.hbmCapacityUsage", "leet_tpu_hbm_used_bytes", 1.0, "HBM used"),
    g("tpu.{tpu}.runtimeHbmUtilization", "leet_tpu_hbm_utilization_ratio", PCT, "HBM bandwidth utilisation"),
    g("tpu.{tpu}.memoryUsageBytes", "leet_tpu_memory_used_bytes", 1.0, "TPU memory used"),
    g("tpu.{tpu}.memoryUsage", "leet_tpu_memory_used_ratio", PCT, "TPU memory used, share of HBM"),
    g("tpu.bufferTransferLatency.{stat}Us", "leet_tpu_buffer_transfer_latency_seconds", US, "DCN buffer transfer latency (stat: mean, p50, p90, p95, p999)"),
    g("tpu.bufferTransferLatency.{size}.{stat}Us", "leet_tpu_buffer_transfer_latency_seconds", US, "DCN buffer transfer latency by buffer size"),
    g("tpu.inboundBufferTransferLatency.{stat}Us", "leet_tpu_inbound_buffer_transfer_latency_seconds", US, "Inbound buffer transfer latency"),
    g("tpu.inboundBufferTransferLatency.{size}.{stat}Us", "leet_tpu_inbound_buffer_transfer_latency_seconds", US, "Inbound buffer transfer latency by buffer size"),
    g("tpu.hostToDeviceTransferLatency.{stat}Us", "leet_tpu_host_to_device_latency_seconds", US, "Host to device transfer latency"),
    g("tpu.hostToDeviceTransferLatency.{size}.{stat}Us", "leet_tpu_host_to_device_latency_seconds", US, "Host to device transfer latency by buffer size"),
    g("tpu.deviceToHostTransferLatency.{stat}Us", "leet_tpu_device_to_host_latency_seconds", US, "Device to host transfer latency"),
    g("tpu.deviceToHostTransferLatency.{size}.{stat}Us", "leet_tpu_device_to_host_latency_seconds", US, "Device to host transfer latency by buffer size"),
    g("tpu.collectiveE2ELatency.{stat}Us", "leet_tpu_collective_latency_seconds", US, "End-to-end collective latency"),
    g("tpu.collectiveE2ELatency.{size}.{stat}Us", "leet_tpu_collective_latency_seconds", US, "End-to-end collective latency by label"),
    g("tpu.hostComputeLatency.{stat}Us", "leet_tpu_host_compute_latency_seconds", US, "Host compute latency"),
    g("tpu.hostComputeLatency.{size}.{stat}Us", "leet_tpu_host_compute_latency_seconds", US, "Host compute latency by label"),
    g("tpu.grpcTcpMinRtt.{stat}Us", "leet_tpu_grpc_tcp_min_rtt_seconds", US, "gRPC TCP minimum round trip"),
    g("tpu.grpcTcpMinRtt.{size}.{stat}Us", "leet_tpu_grpc_tcp_min_rtt_seconds", US, "gRPC TCP minimum round trip by label"),
    g("tpu.hloExecTiming.{stat}Us", "leet_tpu_hlo_exec_seconds", US, "HLO execution time"),
    g("tpu.hloExecTiming.{size}.{stat}Us", "leet_tpu_hlo_exec_seconds", US, "HLO execution time by label"),
    g("tpu.grpcTcpDeliveryRate.{stat}Mbps", "leet_tpu_grpc_tcp_delivery_rate_bytes_per_second", 125_000.0, "gRPC TCP delivery rate"),
    g("tpu.grpcTcpDeliveryRate.{size}.{stat}Mbps", "leet_tpu_grpc_tcp_delivery_rate_bytes_per_second", 125_000.0, "gRPC TCP delivery rate by label"),
    g("tpu.hloQueueSize", "leet_tpu_hlo_queue_size", 1.0, "HLO queue size"),
    g("tpu.hloQueueSize.{queue}", "leet_tpu_hlo_queue_size", 1.0, "HLO queue size by TensorCore"),
    // AWS Trainium (neuron/report.rs).
    g("trn.{core}.neuroncore_utilization", "leet_neuroncore_utilization_ratio", PCT, "NeuronCore utilisation"),
    g("trn.host_total_memory_usage", "leet_neuron_host_memory_used_bytes", 1.0, "Host memory used by the Neuron runtime"),
    g("trn.neuron_device_total_memory_usage", "leet_neuron_device_memory_used_bytes", 1.0, "Neuron device memory used"),
    g("trn.host_memory_usage.{category}", "leet_neuron_host_memory_category_bytes", 1.0, "Host memory used by the Neuron runtime, by category"),
    g("trn.{core}.neuroncore_memory_usage.{category}", "leet_neuroncore_memory_used_bytes", 1.0, "NeuronCore memory used, by category"),
    // Graphcore IPU (ipu.rs).
    g("ipu.{ipu}.average board temp (C)", "leet_ipu_board_temperature_celsius", 1.0, "IPU board temperature"),
    g("ipu.{ipu}.average die temp (C)", "leet_ipu_die_temperature_celsius", 1.0, "IPU die temperature"),
    g("ipu.{ipu}.clock (MHz)", "leet_ipu_clock_hertz", MHZ, "IPU clock"),
    g("ipu.{ipu}.ipu power (W)", "leet_ipu_power_watts", 1.0, "IPU power"),
    g("ipu.{ipu}.total board power (W)", "leet_ipu_board_power_watts", 1.0, "IPU board power"),
    g("ipu.{ipu}.ipu utilisation (%)", "leet_ipu_utilization_ratio", PCT, "IPU utilisation"),
    g("ipu.{ipu}.ipu utilisation (session) (%)", "leet_ipu_session_utilization_ratio", PCT, "IPU utilisation by this session"),
    // OpenMetrics endpoints (openmetrics.rs): raw values, one series per label set.
    g("openmetrics.{endpoint*}.{metric}.{series}", "leet_openmetrics_value", 1.0, "A scraped OpenMetrics series (endpoint, metric name, label-set index)"),
];

/// A key as a series: its name, labels (the pattern's, then `node`), how its value
/// converts, its type and help text.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    pub metric: Cow<'static, str>,
    pub labels: Vec<(&'static str, String)>,
    pub scale: f64,
    pub kind: Kind,
    pub help: &'static str,
}

/// A rule's key pattern as an anchored regex, and its label names in order.
struct Compiled {
    regex: Regex,
    labels: Vec<&'static str>,
}

/// The pattern's literal text and placeholders: `Ok(literal)` / `Err((name, any))`.
fn parts(pattern: &'static str) -> Vec<Result<&'static str, (&'static str, bool)>> {
    let mut out = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break;
        };
        if open > 0 {
            out.push(Ok(&rest[..open]));
        }
        let inner = &rest[open + 1..close];
        out.push(Err(match inner.strip_suffix('*') {
            Some(name) => (name, true),
            None => (inner, false),
        }));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Ok(rest));
    }
    out
}

fn compile(rule: &Rule) -> Option<Compiled> {
    let mut re = String::from("^");
    let mut labels = Vec::new();
    for part in parts(rule.key) {
        match part {
            Ok(lit) => re.push_str(&regex::escape(lit)),
            Err((name, any)) => {
                // `(?s)`: any text is any text, line breaks too (a disk path may hold
                // one; `[^.]` matches them already).
                re.push_str(if any { "((?s:.+))" } else { "([^.]+)" });
                labels.push(name);
            }
        }
    }
    re.push('$');
    Regex::new(&re).ok().map(|regex| Compiled { regex, labels })
}

/// The compiled rules, index for index with [`RULES`] (a pattern that did not compile,
/// which the tests rule out, matches nothing).
static COMPILED: LazyLock<Vec<Option<Compiled>>> =
    LazyLock::new(|| RULES.iter().map(compile).collect());

/// Splits off a non-empty `/l:<label>` suffix.
fn split_node(key: &str) -> (&str, Option<&str>) {
    crate::source::nodes::split_label(key)
}

/// The series for a W&B key.
#[must_use]
pub fn to_series(key: &str) -> Mapped {
    let (base, node) = split_node(key);
    for (rule, compiled) in RULES.iter().zip(COMPILED.iter()) {
        let Some(c) = compiled else { continue };
        let Some(caps) = c.regex.captures(base) else {
            continue;
        };
        let mut labels: Vec<(&'static str, String)> = (c.labels.iter())
            .zip(caps.iter().skip(1))
            .map(|(name, m)| (*name, m.map_or("", |m| m.as_str()).to_string()))
            .collect();
        if let Some(n) = node {
            labels.push((NODE_LABEL, n.to_string()));
        }
        return Mapped {
            metric: Cow::Borrowed(rule.metric),
            labels,
            scale: rule.scale,
            kind: rule.kind,
            help: rule.help,
        };
    }
    Mapped {
        metric: Cow::Owned(format!("{OTHER_PREFIX}{}", sanitize_name(key))),
        labels: vec![(KEY_LABEL, key.to_string())],
        scale: 1.0,
        kind: Kind::Gauge,
        help: "A W&B key with no rule of its own (the key is the label)",
    }
}

/// The W&B key of a series: the inverse of [`to_series`]. `None` for a name and label
/// set that no rule (nor the catch-all) gives.
#[must_use]
pub fn to_key(metric: &str, labels: &[(String, String)]) -> Option<String> {
    let get = |name: &str| {
        labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if metric.starts_with(OTHER_PREFIX) {
        if labels.len() != 1 {
            return None;
        }
        return get(KEY_LABEL).map(str::to_string);
    }
    let node = get(NODE_LABEL).filter(|n| !n.is_empty());
    for (rule, compiled) in RULES.iter().zip(COMPILED.iter()) {
        let Some(c) = compiled else { continue };
        let wanted = c.labels.len() + usize::from(node.is_some());
        if rule.metric != metric
            || labels.len() != wanted
            || !c
                .labels
                .iter()
                .all(|l| get(l).is_some_and(|v| !v.is_empty()))
        {
            continue;
        }
        let mut key = String::new();
        for part in parts(rule.key) {
            match part {
                Ok(lit) => key.push_str(lit),
                Err((name, _)) => key.push_str(get(name).unwrap_or_default()),
            }
        }
        if let Some(n) = node {
            key.push_str("/l:");
            key.push_str(n);
        }
        return Some(key);
    }
    None
}

/// Every label name the table gives a series: the patterns' placeholders, `node`
/// and `key`.
static LABEL_NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut out = vec![NODE_LABEL, KEY_LABEL];
    for rule in RULES {
        for part in parts(rule.key) {
            if let Err((name, _)) = part {
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
    }
    out
});

/// The W&B key of a series as a server stored it (with target labels such as `job`
/// and `instance` beside the table's own), and the factor from its value to the
/// series' unit: its [`Mapped::scale`] (a value divided by it is the W&B value).
#[must_use]
pub fn key_of_stored<'a>(
    metric: &str,
    labels: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Option<(String, f64)> {
    let own: Vec<(String, String)> = labels
        .into_iter()
        .filter(|(k, _)| LABEL_NAMES.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let key = to_key(metric, &own)?;
    let scale = to_series(&key).scale;
    Some((key, scale))
}

/// Longest generic series name kept from a key (the key itself is the label).
const MAX_NAME: usize = 120;

/// A metric-name part from any text: camelCase to snake_case, lower case, every run
/// of other characters one `_`, never empty, never ending in a suffix Prometheus
/// reserves for other types.
#[must_use]
pub fn sanitize_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut prev_lower = false;
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() {
            if ch.is_ascii_uppercase() && prev_lower && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
            out.push(ch.to_ascii_lowercase());
        } else {
            prev_lower = false;
            if !out.ends_with('_') {
                out.push('_');
            }
        }
        if out.len() >= MAX_NAME {
            break;
        }
    }
    let trimmed = out.trim_matches('_');
    let mut name = if trimmed.is_empty() {
        "value".to_string()
    } else {
        trimmed.to_string()
    };
    const RESERVED: [&str; 7] = [
        "_total", "_count", "_sum", "_bucket", "_info", "_created", "_gcount",
    ];
    if RESERVED.iter().any(|r| name.ends_with(r)) || name == "total" {
        name.push_str("_value");
    }
    name
}

#[cfg(test)]
mod tests;
