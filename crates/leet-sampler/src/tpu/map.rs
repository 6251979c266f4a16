//! libtpu runtime metrics (`tpu.monitoring.runtime` responses) → W&B keys (spec §8).
//!
//! Pure functions, no I/O: [`Merged::add`] folds the responses of one port into the
//! sample, [`Merged::finish`] writes the keys. Ports are merged in the order given:
//! the first port that reports a device (or a distribution label) wins.

use std::collections::BTreeMap;

use super::proto;
use super::proto::distribution::bucket_options::Options;

/// Keys a sample may hold per distribution base, and labels per base: a runtime that
/// reports thousands of buffer sizes cannot blow up the sample.
pub(super) const MAX_LABELS_PER_BASE: usize = 64;
/// Longest sanitised label kept (longer ones are cut).
pub(super) const MAX_LABEL_LEN: usize = 64;
/// Highest device index accepted from the runtime (a host has at most 8 chips, 16
/// devices).
pub(super) const MAX_DEVICE: i64 = 255;
/// Buckets read from one distribution (more are ignored).
pub(super) const MAX_BUCKETS: usize = 4096;

/// How one runtime metric is turned into keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Per-device gauge → `tpu.N.<suffix>`.
    Device(&'static str),
    /// Per-chip duty cycle → `tpu.N.dutyCycle`, fanned out to each device of a chip on
    /// generations that report it per chip (v2/v3).
    DutyCycle,
    /// Distribution → `<base>[.<label>].{mean,p50,p90,p95,p999}<unit>`.
    Dist {
        base: &'static str,
        unit: &'static str,
    },
    /// Gauge per label → `<base>[.<label>]` (HLO queue size).
    Labeled(&'static str),
}

/// One runtime metric leet asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Spec {
    /// The name libtpu serves it under (tpu-info's `MetricName`).
    pub name: &'static str,
    pub shape: Shape,
}

/// TensorCore utilisation has no fixed runtime name; it is found in
/// `ListSupportedMetrics` (see [`find_tensorcore_utilization`]).
pub(super) const TENSORCORE_UTILIZATION: Shape = Shape::Device("tensorcoreUtilization");

/// Every runtime metric with a fixed name, as tpu-info names them.
pub(super) const SPECS: &[Spec] = &[
    Spec {
        name: "tpu.runtime.tensorcore.dutycycle.percent",
        shape: Shape::DutyCycle,
    },
    Spec {
        name: "tpu.runtime.hbm.memory.total.bytes",
        shape: Shape::Device("hbmCapacityTotal"),
    },
    Spec {
        name: "tpu.runtime.hbm.memory.usage.bytes",
        shape: Shape::Device("hbmCapacityUsage"),
    },
    Spec {
        name: "tpu.runtime.hbm.utilization.percent",
        shape: Shape::Device("runtimeHbmUtilization"),
    },
    Spec {
        name: "tpu.runtime.tensorcore.idle_duration.seconds",
        shape: Shape::Device("tensorcoreIdleDuration"),
    },
    Spec {
        name: "megascale.dcn_transfer_latencies.microsecond.cumulative.distribution",
        shape: Shape::Dist {
            base: "tpu.bufferTransferLatency",
            unit: "Us",
        },
    },
    Spec {
        name: "megascale.dcn_inbound_transfer_latencies.microsecond.cumulative.distribution",
        shape: Shape::Dist {
            base: "tpu.inboundBufferTransferLatency",
            unit: "Us",
        },
    },
    Spec {
        name: "megascale.host_to_device_transfer_latencies.microsecond.cumulative.distribution",
        shape: Shape::Dist {
            base: "tpu.hostToDeviceTransferLatency",
            unit: "Us",
        },
    },
    Spec {
        name: "megascale.device_to_host_transfer_latencies.microsecond.cumulative.distribution",
        shape: Shape::Dist {
            base: "tpu.deviceToHostTransferLatency",
            unit: "Us",
        },
    },
    Spec {
        name: "megascale.collective_end_to_end_latencies.microsecond.cumulative.distribution",
        shape: Shape::Dist {
            base: "tpu.collectiveE2ELatency",
            unit: "Us",
        },
    },
    Spec {
        name: "megascale.mxla_compute_latencies.microsecond.cumulative.distribution",
        shape: Shape::Dist {
            base: "tpu.hostComputeLatency",
            unit: "Us",
        },
    },
    Spec {
        name: "megascale.grpc_tcp_min_rtt.microsecond.cumulative.distribution",
        shape: Shape::Dist {
            base: "tpu.grpcTcpMinRtt",
            unit: "Us",
        },
    },
    Spec {
        name: "megascale.grpc_tcp_delivery_rate.Mbps.cumulative.distribution",
        shape: Shape::Dist {
            base: "tpu.grpcTcpDeliveryRate",
            unit: "Mbps",
        },
    },
    Spec {
        name: "hlo.execution.timing.distribution.microseconds",
        shape: Shape::Dist {
            base: "tpu.hloExecTiming",
            unit: "Us",
        },
    },
    Spec {
        name: "hlo.queue.size.gauge",
        shape: Shape::Labeled("tpu.hloQueueSize"),
    },
];

/// The TensorCore utilisation metric among the names `ListSupportedMetrics` gave: one
/// whose name has `tensorcore` and `util` but is not the duty cycle (W&B's rule).
pub(super) fn find_tensorcore_utilization(names: &[String]) -> Option<&str> {
    names
        .iter()
        .map(String::as_str)
        .filter(|n| {
            let n = n.to_ascii_lowercase();
            n.contains("tensorcore") && n.contains("util") && !n.contains("duty")
        })
        .min()
}

/// Spec §8 label sanitising: lowercase, `+` → `_plus_`, `%` → `pct`, each run of other
/// characters → `_`, `_` trimmed from both ends, `unknown` when nothing is left. Cut to
/// [`MAX_LABEL_LEN`] bytes (the result is ASCII).
pub(super) fn sanitize_label(label: &str) -> String {
    let lower = label
        .trim()
        .to_lowercase()
        .replace('+', "_plus_")
        .replace('%', "pct");
    let mut out = String::with_capacity(lower.len().min(MAX_LABEL_LEN));
    let mut last_under = false;
    for c in lower.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            last_under = false;
        } else if !last_under {
            out.push('_');
            last_under = true;
        }
    }
    let mut out = out.trim_matches('_').to_string();
    out.truncate(MAX_LABEL_LEN);
    let out = out.trim_end_matches('_');
    if out.is_empty() {
        "unknown".to_string()
    } else {
        out.to_string()
    }
}

fn attr_text(v: &proto::AttrValue) -> Option<String> {
    match v.attr.as_ref()? {
        proto::attr_value::Attr::StringAttr(s) if !s.trim().is_empty() => Some(s.clone()),
        proto::attr_value::Attr::IntAttr(i) => Some(i.to_string()),
        proto::attr_value::Attr::BoolAttr(b) => Some(b.to_string()),
        _ => None,
    }
}

fn kvlist(m: &proto::Metric) -> &[proto::Attribute] {
    match m
        .attribute
        .as_ref()
        .and_then(|a| a.value.as_ref())
        .and_then(|v| v.attr.as_ref())
    {
        Some(proto::attr_value::Attr::KvlistAttr(l)) => &l.attributes,
        _ => &[],
    }
}

fn kv<'a>(list: &'a [proto::Attribute], key: &str) -> Option<&'a proto::AttrValue> {
    list.iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref())
}

/// Device index of a per-device metric: the attribute's `int_attr` (`device-id`, as
/// libtpu and tpu-info use it), or a `device_ordinal` / `device-id` entry of a
/// key-value list (an int, or a string of digits).
pub(super) fn device_of(m: &proto::Metric) -> Option<i64> {
    let value = m.attribute.as_ref()?.value.as_ref()?;
    let id = match value.attr.as_ref()? {
        proto::attr_value::Attr::IntAttr(i) => Some(*i),
        proto::attr_value::Attr::StringAttr(s) => s.trim().parse().ok(),
        proto::attr_value::Attr::KvlistAttr(l) => ["device_ordinal", "device-id", "device_id"]
            .iter()
            .find_map(|k| kv(&l.attributes, k))
            .and_then(|v| match v.attr.as_ref()? {
                proto::attr_value::Attr::IntAttr(i) => Some(*i),
                proto::attr_value::Attr::StringAttr(s) => s.trim().parse().ok(),
                _ => None,
            }),
        _ => None,
    }?;
    (0..=MAX_DEVICE).contains(&id).then_some(id)
}

/// Label of a labelled metric, sanitised, or `None` when it carries none: a plain
/// string attribute; in a key-value list `buffer-size` (the megascale latencies, as
/// tpu-info reads them), else `<core_type>-<device_ordinal>` (the HLO metrics, the
/// form libtpu's SDK prints, e.g. `tensor_core-0`), else the values joined by `-`.
pub(super) fn label_of(m: &proto::Metric) -> Option<String> {
    let value = m.attribute.as_ref()?.value.as_ref()?;
    let raw = match value.attr.as_ref()? {
        proto::attr_value::Attr::StringAttr(s) if !s.trim().is_empty() => s.clone(),
        proto::attr_value::Attr::KvlistAttr(_) => {
            let list = kvlist(m);
            if let Some(size) = kv(list, "buffer-size").and_then(attr_text) {
                size
            } else if let (Some(core), Some(ord)) = (
                kv(list, "core_type").and_then(attr_text),
                kv(list, "device_ordinal").and_then(attr_text),
            ) {
                format!("{core}-{ord}")
            } else {
                let parts: Vec<String> = list
                    .iter()
                    .filter_map(|a| a.value.as_ref().and_then(attr_text))
                    .take(8)
                    .collect();
                if parts.is_empty() {
                    return None;
                }
                parts.join("-")
            }
        }
        _ => return None,
    };
    Some(sanitize_label(&raw))
}

/// Numeric value of a gauge (double, int, or bool as 0/1); `None` for strings and
/// non-finite numbers.
pub(super) fn gauge_of(m: &proto::Metric) -> Option<f64> {
    let proto::metric::Measure::Gauge(g) = m.measure.as_ref()? else {
        return None;
    };
    let v = match g.value.as_ref()? {
        proto::gauge::Value::AsDouble(v) => *v,
        proto::gauge::Value::AsInt(v) => *v as f64,
        proto::gauge::Value::AsBool(b) => f64::from(u8::from(*b)),
        proto::gauge::Value::AsString(_) => return None,
    };
    v.is_finite().then_some(v)
}

/// The statistics of one distribution: `(name, value)` with name in mean, p50, p90,
/// p95, p999.
pub(super) type Stats = Vec<(&'static str, f64)>;

const QUANTILES: [(&str, f64); 4] = [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p999", 0.999)];

/// Stats of a runtime summary: mean = sum / count, quantiles as served.
pub(super) fn summary_stats(s: &proto::Summary) -> Stats {
    let mut out = Vec::with_capacity(5);
    if s.sample_count > 0 {
        out.push(("mean", s.sample_sum / s.sample_count as f64));
    }
    for (name, q) in QUANTILES {
        if let Some(v) = s
            .quantile
            .iter()
            .find(|x| (x.quantile - q).abs() < 1e-9)
            .map(|x| x.value)
        {
            out.push((name, v));
        }
    }
    out.retain(|(_, v)| v.is_finite());
    out
}

/// Bucket boundaries of a distribution (Cloud Monitoring layout: bucket 0 is below
/// `bounds[0]`, bucket i is `[bounds[i-1], bounds[i])`, the last is at or above the
/// last bound). `None` without (or with a broken) layout.
pub(super) fn bucket_bounds(d: &proto::Distribution) -> Option<Vec<f64>> {
    let bounds: Vec<f64> = match d.bucket_options.as_ref()?.options.as_ref()? {
        Options::ExponentialBuckets(e) => {
            let n = usize::try_from(e.num_finite_buckets).ok()?.min(MAX_BUCKETS);
            if !(e.scale > 0.0 && e.growth_factor > 1.0) {
                return None;
            }
            (0..=n)
                .map(|i| e.scale * e.growth_factor.powi(i32::try_from(i).unwrap_or(i32::MAX)))
                .collect()
        }
        Options::LinearBuckets(l) => {
            let n = usize::try_from(l.num_finite_buckets).ok()?.min(MAX_BUCKETS);
            if l.width.is_nan() || l.width <= 0.0 {
                return None;
            }
            (0..=n).map(|i| l.offset + l.width * i as f64).collect()
        }
        Options::ExplicitBuckets(e) => e.bounds.iter().take(MAX_BUCKETS).copied().collect(),
    };
    let ok = !bounds.is_empty()
        && bounds.iter().all(|b| b.is_finite())
        && bounds.windows(2).all(|w| w[0] < w[1]);
    ok.then_some(bounds)
}

/// Value at quantile `q` of a bucketed distribution: find the bucket holding rank
/// `q × count` and interpolate linearly inside it. The underflow bucket starts at the
/// distribution's `min` (or 0), the overflow bucket ends at its `max`; the result is
/// kept within `[min, max]` when the runtime filled those in.
pub(super) fn bucket_quantile(d: &proto::Distribution, bounds: &[f64], q: f64) -> Option<f64> {
    let counts: Vec<f64> = d
        .bucket_counts
        .iter()
        .take(MAX_BUCKETS)
        .map(|c| (*c).max(0) as f64)
        .collect();
    let total: f64 = counts.iter().sum();
    if total <= 0.0 || bounds.is_empty() {
        return None;
    }
    let has_range = d.max > d.min && d.min.is_finite() && d.max.is_finite();
    let rank = q * total;
    let mut before = 0.0;
    for (i, &c) in counts.iter().enumerate() {
        if c <= 0.0 || before + c < rank {
            before += c;
            continue;
        }
        let last = bounds[bounds.len() - 1];
        let (lo, hi) = if i == 0 {
            let lo = if has_range {
                d.min.min(bounds[0])
            } else {
                0.0_f64.min(bounds[0])
            };
            (lo, bounds[0])
        } else if i < bounds.len() {
            (bounds[i - 1], bounds[i])
        } else {
            let hi = if has_range { d.max.max(last) } else { last };
            (last, hi)
        };
        let v = lo + (rank - before) / c * (hi - lo);
        let v = if has_range { v.clamp(d.min, d.max) } else { v };
        return v.is_finite().then_some(v);
    }
    None
}

/// Stats of a bucketed distribution: the runtime's mean and the four quantiles.
pub(super) fn distribution_stats(d: &proto::Distribution) -> Stats {
    let mut out = Vec::with_capacity(5);
    if d.count <= 0 {
        return out;
    }
    if d.mean.is_finite() {
        out.push(("mean", d.mean));
    }
    if let Some(bounds) = bucket_bounds(d) {
        for (name, q) in QUANTILES {
            if let Some(v) = bucket_quantile(d, &bounds, q) {
                out.push((name, v));
            }
        }
    }
    out
}

/// Metrics of one distribution response, grouped by label. Bucketed distributions with
/// the same label and the same layout are added up before quantiles are taken (as
/// tpu-info does for the megascale latencies); otherwise the first one of a label wins.
fn dist_by_label(metric: &proto::TpuMetric) -> BTreeMap<Option<String>, Stats> {
    let mut dists: BTreeMap<Option<String>, proto::Distribution> = BTreeMap::new();
    let mut out: BTreeMap<Option<String>, Stats> = BTreeMap::new();
    for m in &metric.metrics {
        let label = label_of(m);
        match m.measure.as_ref() {
            Some(proto::metric::Measure::Summary(s))
                if !dists.contains_key(&label)
                    && !out.contains_key(&label)
                    && out.len() + dists.len() < MAX_LABELS_PER_BASE =>
            {
                out.insert(label, summary_stats(s));
            }
            Some(proto::metric::Measure::Distribution(d)) => {
                if out.contains_key(&label) {
                    continue;
                }
                if let Some(acc) = dists.get_mut(&label) {
                    if acc.bucket_options == d.bucket_options
                        && acc.bucket_counts.len() == d.bucket_counts.len()
                        && d.count > 0
                    {
                        let n = acc.count.saturating_add(d.count);
                        acc.mean = (acc.mean * acc.count as f64 + d.mean * d.count as f64)
                            / n.max(1) as f64;
                        acc.count = n;
                        acc.min = acc.min.min(d.min);
                        acc.max = acc.max.max(d.max);
                        for (a, b) in acc.bucket_counts.iter_mut().zip(&d.bucket_counts) {
                            *a = a.saturating_add(*b);
                        }
                    }
                } else {
                    if out.len() + dists.len() >= MAX_LABELS_PER_BASE {
                        continue;
                    }
                    let mut d = d.clone();
                    d.bucket_counts.truncate(MAX_BUCKETS);
                    dists.insert(label, d);
                }
            }
            _ => {}
        }
    }
    for (label, d) in dists {
        out.insert(label, distribution_stats(&d));
    }
    out
}

/// Chip layout the runtime's per-chip values are spread over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fanout {
    /// Devices each per-chip duty cycle is copied to (2 on v2/v3, else 1).
    pub duty_cycle: i64,
}

/// The sample being built from one or more ports.
#[derive(Debug, Default)]
pub(super) struct Merged {
    /// (device, metric suffix) → value.
    device: BTreeMap<(i64, &'static str), f64>,
    /// Full key → value (distributions, labelled gauges).
    other: BTreeMap<String, f64>,
    /// Labels taken per base, to cap them.
    labels: std::collections::BTreeSet<(&'static str, Option<String>)>,
    per_base: BTreeMap<&'static str, usize>,
}

impl Merged {
    /// Fold the response of `shape`'s metric from one port in. Values already present
    /// (from an earlier port) are kept.
    pub(super) fn add(&mut self, shape: Shape, metric: &proto::TpuMetric, fanout: Fanout) {
        match shape {
            Shape::Device(suffix) => {
                for m in &metric.metrics {
                    if let (Some(dev), Some(v)) = (device_of(m), gauge_of(m)) {
                        self.device.entry((dev, suffix)).or_insert(v);
                    }
                }
            }
            Shape::DutyCycle => {
                let per = fanout.duty_cycle.max(1);
                for m in &metric.metrics {
                    if let (Some(chip), Some(v)) = (device_of(m), gauge_of(m)) {
                        for d in 0..per {
                            let dev = chip * per + d;
                            if dev <= MAX_DEVICE {
                                self.device.entry((dev, "dutyCycle")).or_insert(v);
                            }
                        }
                    }
                }
            }
            Shape::Dist { base, unit } => {
                for (label, stats) in dist_by_label(metric) {
                    if !self.take_label(base, label.as_deref()) {
                        continue;
                    }
                    let prefix = match &label {
                        Some(l) => format!("{base}.{l}"),
                        None => base.to_string(),
                    };
                    for (stat, v) in stats {
                        self.other
                            .entry(format!("{prefix}.{stat}{unit}"))
                            .or_insert(v);
                    }
                }
            }
            Shape::Labeled(base) => {
                for m in &metric.metrics {
                    let Some(v) = gauge_of(m) else { continue };
                    let label = label_of(m);
                    if !self.take_label(base, label.as_deref()) {
                        continue;
                    }
                    let key = match label {
                        Some(l) => format!("{base}.{l}"),
                        None => base.to_string(),
                    };
                    self.other.entry(key).or_insert(v);
                }
            }
        }
    }

    /// Whether `label` of `base` may be written: seen before, or a new one within
    /// [`MAX_LABELS_PER_BASE`].
    fn take_label(&mut self, base: &'static str, label: Option<&str>) -> bool {
        let id = (base, label.map(str::to_owned));
        if self.labels.contains(&id) {
            return true;
        }
        let n = self.per_base.entry(base).or_insert(0);
        if *n >= MAX_LABELS_PER_BASE {
            return false;
        }
        *n += 1;
        self.labels.insert(id);
        true
    }

    /// True when nothing was folded in.
    pub(super) fn is_empty(&self) -> bool {
        self.device.is_empty() && self.other.is_empty()
    }

    /// Write the keys: per device in device order, then the rest in key order. Adds
    /// `tpu.N.memoryUsageBytes` (= `hbmCapacityUsage`) and `tpu.N.memoryUsage`
    /// (usage / total × 100, when the total is positive).
    pub(super) fn finish(self, out: &mut Vec<(String, f64)>) {
        let mut last_dev = None;
        let flush = |dev: i64, out: &mut Vec<(String, f64)>, device: &BTreeMap<_, f64>| {
            let usage = device.get(&(dev, "hbmCapacityUsage")).copied();
            let total = device.get(&(dev, "hbmCapacityTotal")).copied();
            if let Some(u) = usage {
                out.push((format!("tpu.{dev}.memoryUsageBytes"), u));
                if let Some(t) = total.filter(|t| *t > 0.0) {
                    out.push((format!("tpu.{dev}.memoryUsage"), u / t * 100.0));
                }
            }
        };
        for (&(dev, suffix), &v) in &self.device {
            if let Some(prev) = last_dev.filter(|p| *p != dev) {
                flush(prev, out, &self.device);
            }
            last_dev = Some(dev);
            out.push((format!("tpu.{dev}.{suffix}"), v));
        }
        if let Some(prev) = last_dev {
            flush(prev, out, &self.device);
        }
        out.extend(self.other);
    }
}

#[cfg(test)]
mod tests;
