//! The mapping table both ways, over a key of every shape the sampler emits.

use super::*;

/// One key of every shape the sampler emits (spec/system-metrics.md and
/// `src/source/sampler`), so every rule is tried.
const KEYS: &[&str] = &[
    "cpu",
    "cpu.0.cpu_percent",
    "cpu.15.cpu_percent",
    "cpu.ecpu_freq",
    "cpu.pcpu_percent",
    "cpu.avg_temp",
    "cpu.powerWatts",
    "proc.cpu.threads",
    "proc.cpu.throttledPercent",
    "proc.memory.rssMB",
    "proc.memory.percent",
    "proc.memory.availableMB",
    "proc.memory.oomKills",
    "memory_percent",
    "memory.used",
    "memory.used_percent",
    "swap.total",
    "swap.used",
    "swap.used_percent",
    "load.1m",
    "load.5m",
    "load.15m",
    "uptime",
    "system.powerWatts",
    "ane.power",
    "disk.in",
    "disk.out",
    "disk.nvme0n1.in",
    "disk.vda.out",
    "disk./.usagePercent",
    "disk./mnt/data.v2.usageGB",
    "network.sent",
    "network.recv",
    "network.tcpRetransmits",
    "gpu.process.0.gpu",
    "gpu.process.1.memory",
    "gpu.process.0.memoryAllocated",
    "gpu.process.0.memoryAllocatedBytes",
    "gpu.process.0.temp",
    "gpu.process.0.powerWatts",
    "gpu.process.0.enforcedPowerLimitWatts",
    "gpu.process.0.powerPercent",
    "gpu.0.gpu",
    "gpu.1.memory",
    "gpu.0.memoryAllocated",
    "gpu.0.memoryAllocatedBytes",
    "gpu.3.memoryUsed",
    "gpu.3.memoryFree",
    "gpu.3.memoryTotal",
    "gpu.0.temp",
    "gpu.0.memoryTemp",
    "gpu.0.maxOpTemp",
    "gpu.0.memoryMaxOpTemp",
    "gpu.0.powerWatts",
    "gpu.0.enforcedPowerLimitWatts",
    "gpu.0.powerPercent",
    "gpu.0.energyJoules",
    "gpu.0.totalEnergyConsumption",
    "gpu.0.smClock",
    "gpu.0.memoryClock",
    "gpu.0.graphicsClock",
    "gpu.0.freq",
    "gpu.0.correctedMemoryErrors",
    "gpu.0.uncorrectedMemoryErrors",
    "gpu.0.fanSpeed",
    "gpu.0.encoderUtilization",
    "gpu.2.memoryReadWriteActivity",
    "gpu.2.memoryOverDrive",
    "gpu.1.smActive",
    "gpu.1.smOccupancy",
    "gpu.1.pipeTensorActive",
    "gpu.1.pipeTensorHmmaActive",
    "gpu.1.dramActive",
    "gpu.1.pipeFp64Active",
    "gpu.1.pipeFp32Active",
    "gpu.1.pipeFp16Active",
    "gpu.1.pcieTxBytes",
    "gpu.1.pcieRxBytes",
    "gpu.1.nvlinkTxBytes",
    "gpu.1.nvlinkRxBytes",
    "tpu.0.tensorcoreUtilization",
    "tpu.2.tensorcoreIdleDuration",
    "tpu.0.dutyCycle",
    "tpu.0.hbmCapacityTotal",
    "tpu.0.hbmCapacityUsage",
    "tpu.1.runtimeHbmUtilization",
    "tpu.1.memoryUsageBytes",
    "tpu.1.memoryUsage",
    "tpu.bufferTransferLatency.meanUs",
    "tpu.bufferTransferLatency.8mb_plus.p50Us",
    "tpu.inboundBufferTransferLatency.p90Us",
    "tpu.inboundBufferTransferLatency.1kb.p95Us",
    "tpu.hostToDeviceTransferLatency.p999Us",
    "tpu.hostToDeviceTransferLatency.x.meanUs",
    "tpu.deviceToHostTransferLatency.meanUs",
    "tpu.deviceToHostTransferLatency.x.p50Us",
    "tpu.collectiveE2ELatency.p50Us",
    "tpu.collectiveE2ELatency.all_reduce.p50Us",
    "tpu.hostComputeLatency.meanUs",
    "tpu.hostComputeLatency.x.meanUs",
    "tpu.grpcTcpMinRtt.p50Us",
    "tpu.grpcTcpMinRtt.peer.p50Us",
    "tpu.hloExecTiming.meanUs",
    "tpu.hloExecTiming.tensor_core_0.p99Us",
    "tpu.grpcTcpDeliveryRate.meanMbps",
    "tpu.grpcTcpDeliveryRate.peer.p50Mbps",
    "tpu.hloQueueSize",
    "tpu.hloQueueSize.tensor_core_1",
    "trn.0.neuroncore_utilization",
    "trn.host_total_memory_usage",
    "trn.neuron_device_total_memory_usage",
    "trn.host_memory_usage.dma_buffers",
    "trn.3.neuroncore_memory_usage.tensors",
    "ipu.0.average board temp (C)",
    "ipu.0.average die temp (C)",
    "ipu.1.clock (MHz)",
    "ipu.0.ipu power (W)",
    "ipu.0.total board power (W)",
    "ipu.0.ipu utilisation (%)",
    "ipu.0.ipu utilisation (session) (%)",
    "openmetrics.node.node_load1.0",
    "openmetrics.my.endpoint.go_gc_duration_seconds.12",
];

/// Keys no rule knows, and the `/l:` suffix in odd places.
const ODD: &[&str] = &[
    "dcgm_field_1100",
    "gpu.0.someNewThing",
    "x",
    "",
    "_",
    "a\"b\\c\nd",
    "é",
    "total",
    "foo_total",
    "gpu.0.gpu/l:",
    "gpu.0.gpu/l:node-1/l:x",
    "disk./l:x.usageGB",
    "cpu/l:a/b",
    "gpu.0.gpu/l:n\"1",
    "openmetrics..m.0",
    "gpu..gpu",
];

fn labels(m: &Mapped) -> Vec<(String, String)> {
    (m.labels.iter())
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

#[test]
fn every_rule_compiles_and_is_tried() {
    for (rule, c) in RULES.iter().zip(COMPILED.iter()) {
        let c = c
            .as_ref()
            .unwrap_or_else(|| panic!("{} does not compile", rule.key));
        assert!(
            !c.labels.contains(&NODE_LABEL) && !c.labels.contains(&KEY_LABEL),
            "{}",
            rule.key
        );
        assert_eq!(rule.kind == Kind::Counter, rule.metric.ends_with("_total"));
        assert!(rule.metric.starts_with("leet_") && !rule.metric.starts_with(OTHER_PREFIX));
        assert!(
            KEYS.iter().any(|k| to_series(k).help == rule.help),
            "no example key for {}",
            rule.key
        );
    }
}

#[test]
fn every_key_round_trips() {
    for key in KEYS.iter().chain(ODD) {
        for k in [(*key).to_string(), format!("{key}/l:node-7")] {
            let m = to_series(&k);
            assert_eq!(
                to_key(&m.metric, &labels(&m)).as_deref(),
                Some(k.as_str()),
                "{m:?}"
            );
        }
    }
    for key in KEYS {
        assert!(!to_series(key).metric.starts_with(OTHER_PREFIX), "{key}");
    }
}

#[test]
fn examples() {
    let m = to_series("gpu.0.powerWatts/l:node-1");
    assert_eq!(m.metric, "leet_gpu_power_watts");
    assert_eq!(
        m.labels,
        vec![("gpu", "0".into()), ("node", "node-1".into())]
    );
    let m = to_series("cpu.3.cpu_percent");
    assert_eq!(
        (m.metric.as_ref(), m.scale),
        ("leet_cpu_core_busy_ratio", 0.01)
    );
    assert_eq!(m.labels, vec![("core", "3".into())]);
    let m = to_series("disk./mnt/a.b.usageGB");
    assert_eq!(m.labels, vec![("path", "/mnt/a.b".into())]);
    // A path holding `/l:` is a path, not a node's label (it was exported as
    // `leet_other_…` in GiB).
    let m = to_series("disk./x/l:evil.usageGB");
    assert_eq!(m.metric, "leet_disk_used_bytes");
    assert_eq!(m.labels, vec![("path", "/x/l:evil".into())]);
    let m = to_series("disk./x/l:evil.usagePercent/l:node-1");
    assert_eq!(m.metric, "leet_disk_used_ratio");
    assert_eq!(
        m.labels,
        vec![("path", "/x/l:evil".into()), ("node", "node-1".into())]
    );
    // Any path is the disk series' label, a line break in it too (never the raw
    // GiB of `leet_other_…_usage_gb`).
    for path in ["/tmp/x/new\nline", "/a\r\n", "/\"q\\\u{7f}.数据"] {
        let m = to_series(&format!("disk.{path}.usageGB"));
        assert_eq!(m.metric, "leet_disk_used_bytes", "{path:?}");
        assert_eq!(m.labels, vec![("path", path.to_string())]);
        let m = to_series(&format!("disk.{path}.usagePercent"));
        assert_eq!(m.metric, "leet_disk_used_ratio", "{path:?}");
        assert_eq!(
            to_key(&m.metric, &labels(&m)),
            Some(format!("disk.{path}.usagePercent"))
        );
    }
    let m = to_series("openmetrics.my.ep.up.3");
    assert_eq!(
        m.labels,
        vec![
            ("endpoint", "my.ep".into()),
            ("metric", "up".into()),
            ("series", "3".into())
        ]
    );
    let m = to_series("gpu.0.someNewThing");
    assert_eq!(m.metric, "leet_other_gpu_0_some_new_thing");
    assert_eq!(m.labels, vec![("key", "gpu.0.someNewThing".into())]);
    assert_eq!(to_series("foo_total").metric, "leet_other_foo_total_value");
    assert_eq!(to_series("").metric, "leet_other_value");
    assert_eq!(to_key("leet_gpu_power_watts", &[]), None);
    assert_eq!(to_key("nope", &[]), None);
}
