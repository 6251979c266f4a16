//! NVIDIA GPUs through a dcgm-exporter endpoint (`--dcgm-exporter URL`).
//!
//! The URL is either dcgm-exporter's own `/metrics` (Prometheus text, parsed by
//! [`parse_exposition`]) or a Prometheus query API URL (`/api/v1/query?query=...`, whose JSON
//! vector result is read), the form the reference's `dcgm_exporter.go` takes. Either way a
//! series `DCGM_FI_*{gpu="N"}` becomes `gpu.N.<name>` as the reference maps it (spec §5):
//! [`FIELDS`] is that table. The GPU index is the `gpu` label, else `device` without its
//! `nvidia` prefix; a series without one is skipped. When a lower-case `node` or
//! `hostname` label is present, `/l:<it>` is appended, as the reference does to tell the
//! nodes behind one Prometheus apart. dcgm-exporter's own `Hostname` label does not
//! count while every series of a response has the same one (a single node keeps W&B's
//! `gpu.0.temp`, as in the reference); when a response holds more than one, it is the
//! suffix, else, when it holds more than one Prometheus `instance`, that is: two nodes'
//! `gpu 0` are never folded into one key, dropping one node's values.
//!
//! Units: as DCGM reports them (°C, W, MHz, MiB for `memoryUsed/Free/Total`, mJ for
//! `totalEnergyConsumption`, bytes/s for the PCIe/NVLink rates), except the `PROF_*`
//! ratios (0..1), which are written in % like the same keys from `--dcgm` and NVML GPM,
//! so one chart never mixes the two scales (the reference passes the ratio through).
//! Added to the reference's table, so these GPUs chart beside NVML ones:
//! `memoryClock` (MEM_CLOCK, MHz), `memoryAllocated` (FB_USED / FB_TOTAL, or
//! / (USED + FREE + RESERVED), in %), `memoryAllocatedBytes` (FB_USED in bytes) and
//! `energyJoules` (TOTAL_ENERGY_CONSUMPTION / 1000).

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use super::openmetrics::{parse_exposition, MetricKind, MAX_RESPONSE_BYTES};
use super::scrape::Scraper;
use super::{Collector, GpuInfo, SamplerError, SamplerOptions};

/// How a DCGM field is written: key suffix and the factor applied to its value.
struct Field {
    dcgm: &'static str,
    key: &'static str,
    scale: f64,
}

const fn f(dcgm: &'static str, key: &'static str, scale: f64) -> Field {
    Field { dcgm, key, scale }
}

/// Ratio (0..1) → %.
const PCT: f64 = 100.0;

/// The reference's mapping (`dcgm_exporter.go` `wandbName`, spec §5), plus `memoryClock`.
const FIELDS: &[Field] = &[
    f("DCGM_FI_DEV_GPU_TEMP", "temp", 1.0),
    f("DCGM_FI_DEV_POWER_USAGE", "powerWatts", 1.0),
    f("DCGM_FI_DEV_GPU_UTIL", "gpu", 1.0),
    f("DCGM_FI_DEV_MEM_COPY_UTIL", "memory", 1.0),
    f("DCGM_FI_DEV_SM_CLOCK", "smClock", 1.0),
    f("DCGM_FI_DEV_MEM_CLOCK", "memoryClock", 1.0),
    f("DCGM_FI_DEV_FB_USED", "memoryUsed", 1.0),
    f("DCGM_FI_DEV_FB_TOTAL", "memoryTotal", 1.0),
    f("DCGM_FI_DEV_FB_FREE", "memoryFree", 1.0),
    f("DCGM_FI_DEV_MEMORY_TEMP", "memoryTemp", 1.0),
    f("DCGM_FI_DEV_GPU_MAX_OP_TEMP", "maxOpTemp", 1.0),
    f("DCGM_FI_DEV_MEM_MAX_OP_TEMP", "memoryMaxOpTemp", 1.0),
    f(
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "totalEnergyConsumption",
        1.0,
    ),
    f("DCGM_FI_PROF_SM_ACTIVE", "smActive", PCT),
    f("DCGM_FI_PROF_SM_OCCUPANCY", "smOccupancy", PCT),
    f("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "pipeTensorActive", PCT),
    f(
        "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE",
        "pipeTensorHmmaActive",
        PCT,
    ),
    f("DCGM_FI_PROF_DRAM_ACTIVE", "dramActive", PCT),
    f("DCGM_FI_PROF_PIPE_FP64_ACTIVE", "pipeFp64Active", PCT),
    f("DCGM_FI_PROF_PIPE_FP32_ACTIVE", "pipeFp32Active", PCT),
    f("DCGM_FI_PROF_PIPE_FP16_ACTIVE", "pipeFp16Active", PCT),
    f("DCGM_FI_PROF_PCIE_TX_BYTES", "pcieTxBytes", 1.0),
    f("DCGM_FI_PROF_PCIE_RX_BYTES", "pcieRxBytes", 1.0),
    f("DCGM_FI_PROF_NVLINK_TX_BYTES", "nvlinkTxBytes", 1.0),
    f("DCGM_FI_PROF_NVLINK_RX_BYTES", "nvlinkRxBytes", 1.0),
];

/// The W&B key suffix and value factor of a dcgm-exporter series name
/// (`DCGM_FI_DEV_GPU_UTIL` → `("gpu", 1.0)`), by the table above; other readers of
/// dcgm-exporter's series (the Prometheus cluster view) map them by it too.
pub fn dcgm_field(name: &str) -> Option<(&'static str, f64)> {
    FIELDS
        .iter()
        .find(|f| f.dcgm == name)
        .map(|f| (f.key, f.scale))
}

/// One DCGM series as read from either response form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series<'a> {
    pub name: &'a str,
    pub labels: &'a [(String, String)],
    pub value: f64,
}

/// Longest `/l:` label kept (it comes from the endpoint: untrusted).
const MAX_LABEL: usize = 64;

fn label<'a>(labels: &'a [(String, String)], name: &str) -> Option<&'a str> {
    labels
        .iter()
        .find(|(k, v)| k == name && !v.is_empty())
        .map(|(_, v)| v.as_str())
}

/// The label that tells the nodes of a response apart where no series has a `node` or
/// `hostname` label: `Hostname` (dcgm-exporter's) where the series hold more than one
/// value of it, else `instance` (Prometheus's) where they hold more than one; None for
/// a single node.
fn node_label<'a>(
    series: impl IntoIterator<Item = &'a [(String, String)]>,
) -> Option<&'static str> {
    let mut hosts: HashSet<&str> = HashSet::new();
    let mut instances: HashSet<&str> = HashSet::new();
    for labels in series {
        if label(labels, "node")
            .or_else(|| label(labels, "hostname"))
            .is_some()
        {
            continue;
        }
        hosts.extend(label(labels, "Hostname"));
        instances.extend(label(labels, "instance"));
    }
    if hosts.len() > 1 {
        Some("Hostname")
    } else if instances.len() > 1 {
        Some("instance")
    } else {
        None
    }
}

/// `gpu.<index>.` and the `/l:<node>` suffix of a series (its `node` or `hostname`
/// label, else the label `nodes` names), or None without a usable index.
fn prefix_and_suffix(labels: &[(String, String)], nodes: Option<&str>) -> Option<(String, String)> {
    let index = label(labels, "gpu")
        .or_else(|| label(labels, "device").map(|d| d.strip_prefix("nvidia").unwrap_or(d)))?;
    // Only a plain GPU number goes into a key.
    if index.is_empty() || index.len() > 4 || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let suffix = label(labels, "node")
        .or_else(|| label(labels, "hostname"))
        .or_else(|| label(labels, nodes?))
        .map(|n| {
            let clean: String = n
                .chars()
                .take(MAX_LABEL)
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            format!("/l:{clean}")
        })
        .unwrap_or_default();
    Some((format!("gpu.{index}."), suffix))
}

/// Frame-buffer figures of one GPU (MiB), for the derived keys: used, free, reserved, total.
type Fb = [Option<f64>; 4];

fn fb_slot(name: &str) -> Option<usize> {
    match name {
        "DCGM_FI_DEV_FB_USED" => Some(0),
        "DCGM_FI_DEV_FB_FREE" => Some(1),
        "DCGM_FI_DEV_FB_RESERVED" => Some(2),
        "DCGM_FI_DEV_FB_TOTAL" => Some(3),
        _ => None,
    }
}

/// Map DCGM series to W&B keys (see the module docs). Non-finite values and unknown
/// fields are dropped; the first series of a key wins.
pub(crate) fn dcgm_exporter_values(series: &[Series<'_>], out: &mut Vec<(String, f64)>) {
    let nodes = node_label(series.iter().map(|s| s.labels));
    let mut seen: HashSet<String> = HashSet::new();
    let mut fb: BTreeMap<(String, String), Fb> = BTreeMap::new();
    for s in series {
        if !s.value.is_finite() {
            continue;
        }
        let Some((prefix, suffix)) = prefix_and_suffix(s.labels, nodes) else {
            continue;
        };
        if let Some(slot) = fb_slot(s.name) {
            let m = fb.entry((prefix.clone(), suffix.clone())).or_default();
            m[slot].get_or_insert(s.value);
        }
        let Some(field) = FIELDS.iter().find(|f| f.dcgm == s.name) else {
            continue;
        };
        let key = format!("{prefix}{}{suffix}", field.key);
        if !seen.insert(key.clone()) {
            continue;
        }
        out.push((key, s.value * field.scale));
        if s.name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" {
            out.push((format!("{prefix}energyJoules{suffix}"), s.value / 1000.0));
        }
    }
    for ((prefix, suffix), [used, free, reserved, total]) in fb {
        let Some(used) = used else { continue };
        out.push((
            format!("{prefix}memoryAllocatedBytes{suffix}"),
            used * 1024.0 * 1024.0,
        ));
        let summed = free.map(|f| used + f + reserved.unwrap_or(0.0));
        if total.is_none() {
            // dcgm-exporter's default fields have no FB_TOTAL: the size from the
            // same sum the share is of, so an idle GPU's reads `0B/22.5G`, not `0B/–`.
            if let Some(t) = summed.filter(|t| *t > 0.0) {
                out.push((format!("{prefix}memoryTotal{suffix}"), t));
            }
        }
        let total = total.or(summed);
        if let Some(total) = total.filter(|t| *t > 0.0) {
            out.push((
                format!("{prefix}memoryAllocated{suffix}"),
                used / total * 100.0,
            ));
        }
    }
}

/// (name, labels, value) of one series as parsed.
type OwnedSeries = (String, Vec<(String, String)>, f64);

/// The series of a response body: Prometheus text, or a query API JSON vector.
pub(crate) fn parse_body(body: &str) -> Result<Vec<OwnedSeries>, String> {
    if body.trim_start().starts_with('{') {
        return parse_query_api(body);
    }
    let exp = parse_exposition(body);
    Ok(exp
        .samples
        .into_iter()
        .filter(|s| !matches!(s.kind, MetricKind::Histogram | MetricKind::Summary))
        .map(|s| (s.name, s.labels, s.value))
        .collect())
}

/// `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":..,
/// <labels>},"value":[<ts>,"<value>"]}]}}` (Prometheus HTTP API, instant query).
fn parse_query_api(body: &str) -> Result<Vec<OwnedSeries>, String> {
    let v: serde_json::Value =
        serde_json::from_str(body).map_err(|e| format!("query api json: {e}"))?;
    if v.get("status").and_then(|s| s.as_str()) != Some("success") {
        let why = v
            .get("error")
            .and_then(|e| e.as_str())
            .unwrap_or("no status");
        let why: String = leet_text::sanitize(why).chars().take(200).collect();
        return Err(format!("query api: {why}"));
    }
    let data = v.get("data").ok_or("query api: no data")?;
    if data.get("resultType").and_then(|t| t.as_str()) != Some("vector") {
        return Err("query api: result is not an instant vector".to_string());
    }
    let result = data
        .get("result")
        .and_then(|r| r.as_array())
        .ok_or("query api: no result array")?;
    let mut series = Vec::with_capacity(result.len());
    for r in result {
        let Some(metric) = r.get("metric").and_then(|m| m.as_object()) else {
            continue;
        };
        let Some(name) = metric.get("__name__").and_then(|n| n.as_str()) else {
            continue;
        };
        let Some(value) = r
            .get("value")
            .and_then(|v| v.get(1))
            .and_then(|v| v.as_str())
            .and_then(|v| v.parse::<f64>().ok())
        else {
            continue;
        };
        let labels = metric
            .iter()
            .filter(|(k, _)| *k != "__name__")
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect();
        series.push((name.to_string(), labels, value));
    }
    Ok(series)
}

/// Per scrape; a sample must not wait long for a slow endpoint.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a failing endpoint is left alone before it is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(30);

pub(crate) struct DcgmExporterCollector {
    url: String,
    scraper: Scraper,
    retry_at: Option<Instant>,
    /// The failure of the scrape at detection, reported by the first sample.
    pending: Option<SamplerError>,
    /// From the first answer.
    info: Vec<GpuInfo>,
}

/// `--dcgm-exporter URL`: absent → not enabled; a bad URL or an endpoint that answers
/// without any `DCGM_FI_*` series of a GPU → not available; an endpoint that does not
/// answer yet is kept and retried every 30 s (its error is the first sample's).
pub(crate) fn detect(opts: &SamplerOptions) -> Result<Box<dyn Collector>, String> {
    let url = opts
        .dcgm_exporter
        .as_deref()
        .ok_or("not enabled (--dcgm-exporter URL)")?;
    let mut c = DcgmExporterCollector {
        url: url.to_string(),
        scraper: Scraper::new(url, SCRAPE_TIMEOUT)?,
        retry_at: None,
        pending: None,
        info: Vec::new(),
    };
    let mut out = Vec::new();
    match c.scrape(&mut out) {
        Ok(()) if out.is_empty() => Err(format!("{url} has no DCGM_FI_* series with a gpu label")),
        Ok(()) => Ok(Box::new(c)),
        Err(e @ SamplerError::Http { .. }) => {
            c.retry_at = Some(Instant::now() + RETRY_AFTER);
            c.pending = Some(e);
            Ok(Box::new(c))
        }
        Err(e) => Err(e.to_string()),
    }
}

impl DcgmExporterCollector {
    fn scrape(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        let http_err = |detail: String| SamplerError::Http {
            url: self.url.clone(),
            detail,
        };
        let body = self.scraper.get(MAX_RESPONSE_BYTES).map_err(http_err)?;
        let series =
            parse_body(&String::from_utf8_lossy(&body)).map_err(|detail| SamplerError::Parse {
                what: format!("dcgm-exporter response from {}", self.url),
                detail,
            })?;
        let series_ref: Vec<Series<'_>> = (series.iter())
            .map(|(name, labels, value)| Series {
                name,
                labels,
                value: *value,
            })
            .collect();
        dcgm_exporter_values(&series_ref, out);
        if self.info.is_empty() {
            self.info = exporter_gpus(&series);
        }
        Ok(())
    }
}

/// Static GPU descriptions from the series' labels (`modelName`, `DCGM_FI_DRIVER_VERSION`)
/// and frame-buffer sizes, one per `gpu.N.` prefix, as the reference's `Probe` reads them.
fn exporter_gpus(series: &[OwnedSeries]) -> Vec<GpuInfo> {
    let mut gpus: BTreeMap<u32, (GpuInfo, Fb)> = BTreeMap::new();
    for (name, labels, value) in series {
        // GPU descriptions are this host's: a `node`/`hostname` label marks another
        // node's series (with several `Hostname`s, each index's first series describes it).
        let Some((prefix, suffix)) = prefix_and_suffix(labels, None) else {
            continue;
        };
        let Some(index) = prefix
            .strip_prefix("gpu.")
            .and_then(|p| p.strip_suffix('.'))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        // Series of other nodes behind one Prometheus are not this host's GPUs.
        if !suffix.is_empty() {
            continue;
        }
        let (info, fb) = gpus.entry(index).or_default();
        let clean = |s: &str| leet_text::sanitize(s).chars().take(MAX_LABEL).collect();
        if info.name.is_empty() {
            if let Some(m) = label(labels, "modelName") {
                info.name = clean(m);
            }
        }
        if info.driver.is_empty() {
            if let Some(d) = label(labels, "DCGM_FI_DRIVER_VERSION") {
                info.driver = clean(d);
            }
        }
        if let Some(slot) = fb_slot(name).filter(|_| value.is_finite() && *value >= 0.0) {
            fb[slot].get_or_insert(*value);
        }
    }
    gpus.into_values()
        .map(|(mut info, [used, free, reserved, total])| {
            let mib = total.or_else(|| Some(used? + free? + reserved.unwrap_or(0.0)));
            info.memory_total = mib.map_or(0, |m| (m * 1024.0 * 1024.0) as u64);
            info
        })
        .collect()
}

impl Collector for DcgmExporterCollector {
    fn name(&self) -> &'static str {
        "dcgm-exporter"
    }

    fn gpus(&self) -> Vec<GpuInfo> {
        self.info.clone()
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        if let Some(e) = self.pending.take() {
            // The error's own text, without the URL it names already.
            let why = match e {
                SamplerError::Http { detail, .. } => detail,
                other => other.to_string(),
            };
            return Err(SamplerError::Http {
                url: self.url.clone(),
                detail: format!("{why} (retrying every 30 s)"),
            });
        }
        if self.retry_at.is_some_and(|t| Instant::now() < t) {
            return Ok(());
        }
        match self.scrape(out) {
            Ok(()) => {
                self.retry_at = None;
                Ok(())
            }
            Err(e) => {
                self.retry_at = Some(Instant::now() + RETRY_AFTER);
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(text: &str) -> Vec<(String, f64)> {
        let series = parse_body(text).expect("parse");
        let series: Vec<Series<'_>> = (series.iter())
            .map(|(n, l, v)| Series {
                name: n,
                labels: l,
                value: *v,
            })
            .collect();
        let mut out = Vec::new();
        dcgm_exporter_values(&series, &mut out);
        out
    }

    #[test]
    fn device_label_node_suffix_and_bad_indices() {
        let text = "DCGM_FI_DEV_GPU_TEMP{device=\"nvidia3\",node=\"n 1/x\"} 40\n\
                    DCGM_FI_DEV_GPU_TEMP{gpu=\"../x\"} 41\n\
                    DCGM_FI_DEV_GPU_TEMP 42\n\
                    DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",hostname=\"h\"} NaN\n\
                    DCGM_FI_PROF_SM_ACTIVE{gpu=\"1\",hostname=\"h\"} 0.25\n\
                    DCGM_FI_PROF_SM_ACTIVE{gpu=\"1\",hostname=\"h\"} 0.75\n\
                    DCGM_FI_DEV_ENC_UTIL{gpu=\"1\"} 5\n";
        assert_eq!(
            map(text),
            vec![
                ("gpu.3.temp/l:n_1_x".to_string(), 40.0),
                ("gpu.1.smActive/l:h".to_string(), 25.0),
            ]
        );
    }

    #[test]
    fn memory_total_from_fb_total_or_the_sum() {
        let text = "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1024\nDCGM_FI_DEV_FB_TOTAL{gpu=\"0\"} 4096\n\
                    DCGM_FI_DEV_FB_USED{gpu=\"1\"} 100\nDCGM_FI_DEV_FB_FREE{gpu=\"1\"} 300\n\
                    DCGM_FI_DEV_FB_RESERVED{gpu=\"1\"} 100\n";
        let out = map(text);
        let get = |k: &str| out.iter().find(|(key, _)| key == k).map(|(_, v)| *v);
        assert_eq!(get("gpu.0.memoryAllocated"), Some(25.0));
        assert_eq!(
            get("gpu.0.memoryAllocatedBytes"),
            Some(1024.0 * 1_048_576.0)
        );
        assert_eq!(get("gpu.0.memoryTotal"), Some(4096.0));
        assert_eq!(get("gpu.1.memoryAllocated"), Some(20.0));
        assert_eq!(get("gpu.1.memoryFree"), Some(300.0));
        // No FB_TOTAL: the size is the sum the share is of.
        assert_eq!(get("gpu.1.memoryTotal"), Some(500.0));
        assert_eq!(
            out.iter().filter(|(k, _)| k == "gpu.0.memoryTotal").count(),
            1
        );
        assert!(get("gpu.1.memoryReserved").is_none());
    }

    #[test]
    fn gpu_info_from_the_recorded_l4_labels() {
        let text = l4_page();
        let gpus = exporter_gpus(&parse_body(&text).expect("parse"));
        assert_eq!(
            gpus,
            vec![GpuInfo {
                name: "NVIDIA L4".to_string(),
                // FB_USED 0 + FB_FREE 22563 + FB_RESERVED 470 MiB
                memory_total: 23_033 * 1024 * 1024,
                driver: "580.105.08".to_string(),
            }]
        );
    }

    fn l4_page() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/devices/openmetrics-dcgm-exporter-l4.txt"
        ))
        .expect("fixture")
    }

    #[test]
    fn one_hostname_keeps_single_node_keys_two_are_told_apart() {
        let page = l4_page();
        let one = map(&page);
        let get =
            |out: &[(String, f64)], k: &str| out.iter().find(|(key, _)| key == k).map(|(_, v)| *v);
        // The recorded page: every series has Hostname="i-030791dc5a37cd257", one node.
        assert_eq!(get(&one, "gpu.0.temp"), Some(31.0));
        assert!(one.iter().all(|(k, _)| !k.contains("/l:")), "{one:?}");
        // The same series again from a second node, each value 77.
        let other: String = (page.lines())
            .filter(|l| l.starts_with("DCGM_FI_"))
            .filter_map(|l| {
                let (series, _) = l.rsplit_once(' ')?;
                let series = series.replace(
                    "Hostname=\"i-030791dc5a37cd257\"",
                    "Hostname=\"other-node\"",
                );
                Some(format!("{series} 77\n"))
            })
            .collect();
        let two = map(&format!("{page}{other}"));
        assert_eq!(get(&two, "gpu.0.temp/l:i-030791dc5a37cd257"), Some(31.0));
        assert_eq!(get(&two, "gpu.0.temp/l:other-node"), Some(77.0));
        assert_eq!(get(&two, "gpu.0.temp"), None);
        // Every key of the single node, once for each node: none dropped.
        assert_eq!(two.len(), 2 * one.len(), "{two:?}");
    }

    #[test]
    fn prometheus_instances_without_a_node_label_are_told_apart() {
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","gpu":"0","instance":"10.0.0.1:9400"},"value":[1,"31"]},
            {"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","gpu":"0","instance":"10.0.0.2:9400"},"value":[1,"77"]}]}}"#;
        assert_eq!(
            map(body),
            vec![
                ("gpu.0.temp/l:10.0.0.1_9400".to_string(), 31.0),
                ("gpu.0.temp/l:10.0.0.2_9400".to_string(), 77.0),
            ]
        );
        // One instance is one node: W&B's single-node key.
        let one = body.replace("10.0.0.2", "10.0.0.1");
        assert_eq!(map(&one), vec![("gpu.0.temp".to_string(), 31.0)]);
    }

    #[test]
    fn prometheus_query_api_vector() {
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"2","node":"l1337"},"value":[1700000000.5,"212.5"]},
            {"metric":{"__name__":"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE","gpu":"2","node":"l1337"},"value":[1700000000.5,"0.5"]},
            {"metric":{"gpu":"2"},"value":[1,"1"]}]}}"#;
        assert_eq!(
            map(body),
            vec![
                ("gpu.2.powerWatts/l:l1337".to_string(), 212.5),
                ("gpu.2.pipeTensorActive/l:l1337".to_string(), 50.0),
            ]
        );
        let err = parse_body(r#"{"status":"error","error":"bad\u001b[31m query"}"#)
            .expect_err("error status");
        assert!(err.contains("bad") && !err.contains('\u{1b}'), "{err}");
    }
}
