//! From the series a cluster's Prometheus holds to the W&B keys the sampler uses
//! (spec/system-metrics.md): each rule is the PromQL sent (rates are Prometheus's
//! work) and how an answer's series becomes a key.
//!
//! Three exporters: `leet serve` (its series back through [`names`], the one table),
//! node-exporter (host CPU, memory, load, swap, disks, network) and dcgm-exporter
//! (by the sampler's own dcgm-exporter table, [`leet_sampler::dcgm_field`], plus the
//! derived frame-buffer keys it adds). The host is the `instance` label without its
//! port (so node-exporter's `:9100` and dcgm-exporter's `:9400` on one node are one
//! host; each series keeps its whole `instance` too, by which the model tells apart
//! two targets of one exporter on one host), else `host`, else `Hostname`; a GPU is
//! its `gpu` label, else `device` without `nvidia`.

use std::time::Duration;

use super::api::{Labels, Series};
use super::matchers::Matchers;
use super::names;

pub use crate::msg::cluster::Exporter;

/// How an answer's series becomes a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keying {
    /// A `leet serve` series: its name and labels through [`names::to_key`].
    Leet,
    /// A dcgm-exporter series: `gpu.<gpu>.<field>` by the sampler's table.
    DcgmField,
    /// One fixed key.
    Fixed(&'static str),
    /// `{}` in the key is the series' label (`gpu` falls back to `device`).
    Labelled(&'static str, &'static str),
}

/// One rule: the exporter, the PromQL (`$M` the `--match` matchers inside a
/// selector's braces, `$R` the rate range) and the keying.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub exporter: Exporter,
    pub promql: &'static str,
    pub keying: Keying,
    /// A counter shown as the sampler shows it: the amount since the first point
    /// read (the sampler counts from its start; here, from the window's).
    pub since_first: bool,
}

const fn r(exporter: Exporter, keying: Keying, promql: &'static str) -> Rule {
    Rule {
        exporter,
        promql,
        keying,
        since_first: false,
    }
}

const fn counted(keying: Keying, promql: &'static str) -> Rule {
    Rule {
        exporter: Exporter::Node,
        promql,
        keying,
        since_first: true,
    }
}

use Exporter::{Dcgm, Leet, Node};
use Keying::{DcgmField, Fixed, Labelled};

/// Every rule. The `up` series is read apart ([`up_query`]).
#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    r(Leet, Keying::Leet, r#"{$M,__name__=~"leet_.+"}"#),
    // node-exporter.
    // Each key as the sampler (and psutil, W&B) defines it, whichever exporter
    // gives it: busy is all but idle and iowait; a disk's use is of the space a
    // user may have (used / (used + available), as `df`: the blocks reserved for
    // root are not counted used); the network's bytes are every interface's,
    // loopback included.
    r(Node, Labelled("cpu.{}.cpu_percent", "cpu"), r#"100 * (1 - sum without (mode) (rate(node_cpu_seconds_total{$M,mode=~"idle|iowait"}[$R])))"#),
    r(Node, Fixed("memory_percent"), r"100 * (1 - node_memory_MemAvailable_bytes{$M} / node_memory_MemTotal_bytes{$M})"),
    r(Node, Fixed("proc.memory.availableMB"), r"node_memory_MemAvailable_bytes{$M} / 1048576"),
    r(Node, Fixed("load.1m"), r"node_load1{$M}"),
    r(Node, Fixed("load.5m"), r"node_load5{$M}"),
    r(Node, Fixed("load.15m"), r"node_load15{$M}"),
    r(Node, Fixed("swap.total"), r"node_memory_SwapTotal_bytes{$M}"),
    r(Node, Fixed("swap.used"), r"node_memory_SwapTotal_bytes{$M} - node_memory_SwapFree_bytes{$M}"),
    r(Node, Fixed("uptime"), r"time() - node_boot_time_seconds{$M}"),
    r(Node, Labelled("disk.{}.usagePercent", "mountpoint"), r#"100 * (node_filesystem_size_bytes{$M,mountpoint="/"} - node_filesystem_free_bytes{$M,mountpoint="/"}) / (node_filesystem_size_bytes{$M,mountpoint="/"} - node_filesystem_free_bytes{$M,mountpoint="/"} + node_filesystem_avail_bytes{$M,mountpoint="/"})"#),
    r(Node, Labelled("disk.{}.usageGB", "mountpoint"), r#"(node_filesystem_size_bytes{$M,mountpoint="/"} - node_filesystem_free_bytes{$M,mountpoint="/"}) / 1073741824"#),
    counted(Fixed("disk.in"), r#"sum by (instance) (node_disk_read_bytes_total{$M,device!~"loop.*|ram.*|zram.*"}) / 1048576"#),
    counted(Fixed("disk.out"), r#"sum by (instance) (node_disk_written_bytes_total{$M,device!~"loop.*|ram.*|zram.*"}) / 1048576"#),
    counted(Fixed("network.sent"), r"sum by (instance) (node_network_transmit_bytes_total{$M})"),
    counted(Fixed("network.recv"), r"sum by (instance) (node_network_receive_bytes_total{$M})"),
    // dcgm-exporter.
    // dcgm-exporter; the keys the sampler derives from its frame-buffer and energy
    // fields are derived from this answer too (`fetch::derive_dcgm`), not asked for
    // again: each would cost the server another pass over every GPU's series.
    r(Dcgm, DcgmField, r#"{$M,__name__=~"DCGM_FI_.+"}"#),
];

/// Which rules a refresh asks. The first refresh asks the cluster screen's own keys
/// first (its header, heatmap and charts: CPU, memory, each GPU's utilisation,
/// power and memory) and sends them on, then the rest: the screen is whole after a
/// fraction of the data (on a 512-GPU cluster the other dcgm-exporter fields and the
/// per-core CPU rates are most of it). Later refreshes ask everything at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Screen,
    Rest,
    All,
}

/// The W&B keys the cluster screen draws (one GPU stands for every GPU, one core
/// for every core: a host's CPU is the mean of its cores' busy shares, as the
/// live monitor's; W&B's `cpu` is one process's, `leet serve`'s own).
pub const SCREEN_KEYS: [&str; 5] = [
    "cpu.0.cpu_percent",
    "memory_percent",
    "gpu.0.gpu",
    "gpu.0.powerWatts",
    "gpu.0.memoryAllocated",
];

/// The dcgm-exporter fields behind [`SCREEN_KEYS`] (memory from the frame buffer's
/// used, free and total: `fetch::derive_dcgm`).
const SCREEN_DCGM: &str = "DCGM_FI_DEV_(GPU_UTIL|POWER_USAGE|FB_USED|FB_FREE|FB_TOTAL)";

/// `leet serve`'s names for [`SCREEN_KEYS`], as one regex alternation.
fn screen_leet_names() -> String {
    let mut names: Vec<String> = SCREEN_KEYS
        .iter()
        .map(|k| names::to_series(k).metric.into_owned())
        .collect();
    names.dedup();
    format!("({})", names.join("|"))
}

/// The rules `part` asks, each with its PromQL (`$M` and `$R` still to fill): a
/// rule over many names (every `leet_…` series, every `DCGM_FI_…` field) is split by
/// name between the screen's part and the rest.
#[must_use]
pub fn part(part: Part) -> Vec<(Rule, String)> {
    let leet = screen_leet_names();
    let mut out = Vec::with_capacity(RULES.len());
    for rule in RULES {
        let promql = match (rule.keying, part) {
            (_, Part::All) => rule.promql.to_string(),
            (Keying::Leet, Part::Screen) => format!(r#"{{$M,__name__=~"{leet}"}}"#),
            (Keying::Leet, Part::Rest) => {
                format!(r#"{{$M,__name__=~"leet_.+",__name__!~"{leet}"}}"#)
            }
            (Keying::DcgmField, Part::Screen) => format!(r#"{{$M,__name__=~"{SCREEN_DCGM}"}}"#),
            (Keying::DcgmField, Part::Rest) => {
                format!(r#"{{$M,__name__=~"DCGM_FI_.+",__name__!~"{SCREEN_DCGM}"}}"#)
            }
            (Keying::Fixed(key), p) if (p == Part::Screen) == SCREEN_KEYS.contains(&key) => {
                rule.promql.to_string()
            }
            (Keying::Labelled(pattern, _), p)
                if (p == Part::Screen)
                    == SCREEN_KEYS.contains(&pattern.replace("{}", "0").as_str()) =>
            {
                rule.promql.to_string()
            }
            _ => continue,
        };
        out.push((*rule, promql));
    }
    out
}

/// The query whose answer tells a host up or down.
pub fn up_query(m: &Matchers) -> String {
    fill("up{$M}", m, Duration::from_secs(60))
}

/// The rule's PromQL with the matchers and the rate range filled in.
pub fn fill(promql: &str, m: &Matchers, rate: Duration) -> String {
    let user: Vec<String> = m.as_slice().iter().map(ToString::to_string).collect();
    let user = user.join(",");
    let text = if user.is_empty() {
        promql.replace("{$M,", "{").replace("$M", "")
    } else {
        promql.replace("$M", &user)
    };
    text.replace("$R", &format!("{}s", rate.as_secs().max(1)))
}

/// The range `rate` looks back over: four scrapes (so a missed scrape leaves two
/// points), at least two steps.
pub fn rate_range(scrape: Duration, step: Duration) -> Duration {
    (scrape * 4).max(step * 2)
}

/// The host a series belongs to, from its labels.
pub fn host_of(labels: &Labels) -> Option<String> {
    let get = |k: &str| labels.get(k).map(String::as_str).filter(|v| !v.is_empty());
    if let Some(i) = get("instance") {
        let host = match i.rsplit_once(':') {
            Some((h, port)) if !h.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => i,
        };
        return Some(leet_text::sanitize(host).chars().take(MAX_LABEL).collect());
    }
    get("host")
        .or_else(|| get("Hostname"))
        .map(|h| leet_text::sanitize(h).chars().take(MAX_LABEL).collect())
}

/// The target a series was scraped from: its `instance` label whole, else its host.
pub fn instance_of(labels: &Labels) -> Option<String> {
    match labels.get("instance").filter(|v| !v.is_empty()) {
        Some(i) => Some(leet_text::sanitize(i).chars().take(MAX_LABEL).collect()),
        None => host_of(labels),
    }
}

/// The longest label value put in a key or host name (it comes from the server).
const MAX_LABEL: usize = 128;

/// A label value fit for one key segment: no `.`, no control text.
fn segment(v: &str) -> Option<String> {
    let clean: String = leet_text::sanitize(v).chars().take(MAX_LABEL).collect();
    (!clean.is_empty() && !clean.contains('.')).then_some(clean)
}

fn gpu_of(labels: &Labels) -> Option<String> {
    let get = |k: &str| labels.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let g = get("gpu").or_else(|| get("device").map(|d| d.strip_prefix("nvidia").unwrap_or(d)))?;
    (g.len() <= 4 && g.bytes().all(|b| b.is_ascii_digit())).then(|| g.to_string())
}

/// How an answer's values become the key's: multiplied, then divided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    pub mul: f64,
    pub div: f64,
}

impl Unit {
    pub const SAME: Self = Self { mul: 1.0, div: 1.0 };

    pub fn apply(self, v: f64) -> f64 {
        v * self.mul / self.div
    }
}

/// The W&B key of an answer's series under `keying`, and how its values convert.
pub fn key_of(keying: Keying, s: &Series) -> Option<(String, Unit)> {
    match keying {
        Keying::Leet => {
            let name = s.label("__name__")?;
            let (key, div) = names::key_of_stored(name, &s.labels)?;
            (div != 0.0).then_some((key, Unit { mul: 1.0, div }))
        }
        DcgmField => {
            let (field, mul) = leet_sampler::dcgm_field(s.label("__name__")?)?;
            let key = format!("gpu.{}.{field}", gpu_of(&s.labels)?);
            Some((key, Unit { mul, div: 1.0 }))
        }
        Fixed(key) => Some((key.to_string(), Unit::SAME)),
        Labelled(pattern, label) => {
            let v = if label == "gpu" {
                gpu_of(&s.labels)?
            } else if label == "mountpoint" {
                // W&B's disk keys hold the path as written (`disk./.usagePercent`).
                leet_text::sanitize(s.label(label)?)
                    .chars()
                    .take(MAX_LABEL)
                    .collect()
            } else {
                segment(s.label(label)?)?
            };
            Some((pattern.replace("{}", &v), Unit::SAME))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(labels: &[(&str, &str)]) -> Series {
        Series {
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
            points: vec![],
        }
    }

    #[test]
    fn the_screen_s_part_and_the_rest_ask_every_rule_between_them() {
        let all = part(Part::All);
        assert_eq!(all.len(), RULES.len());
        let (screen, rest) = (part(Part::Screen), part(Part::Rest));
        // The rules over many names are in both parts, split by name; each other
        // rule in one part.
        let wide = RULES
            .iter()
            .filter(|r| matches!(r.keying, Keying::Leet | Keying::DcgmField))
            .count();
        assert_eq!(screen.len() + rest.len(), RULES.len() + wide);
        let keys = |p: &[(Rule, String)]| -> Vec<&str> {
            p.iter()
                .filter_map(|(r, _)| match r.keying {
                    Keying::Fixed(k) => Some(k),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(keys(&screen), ["memory_percent"]);
        assert!(keys(&rest).contains(&"load.1m"));
        // The host's CPU is its cores' (node-exporter's per-core rates, `leet
        // serve`'s per-core busy shares), never a process's: no rule gives `cpu`.
        assert!(RULES.iter().all(|r| r.keying != Keying::Fixed("cpu")));
        assert!(screen
            .iter()
            .any(|(r, _)| r.keying == Labelled("cpu.{}.cpu_percent", "cpu")));
        let leet = &screen
            .iter()
            .find(|(r, _)| r.keying == Keying::Leet)
            .expect("leet")
            .1;
        for name in ["leet_cpu_core_busy_ratio", "leet_memory_used_ratio"] {
            assert!(leet.contains(name), "{leet}");
        }
        assert!(!leet.contains("leet_process_cpu_ratio"), "{leet}");
        for key in SCREEN_KEYS {
            let name = names::to_series(key).metric;
            assert!(leet.contains(name.as_ref()), "{key}: {name} not in {leet}");
        }
        let dcgm_rest = &rest
            .iter()
            .find(|(r, _)| r.keying == Keying::DcgmField)
            .expect("dcgm")
            .1;
        assert!(
            dcgm_rest.contains(r#"__name__!~"DCGM_FI_DEV_(GPU_UTIL"#),
            "{dcgm_rest}"
        );
        // Each still takes the matchers.
        let m = Matchers::parse(&[r#"job="train""#.to_string()]).expect("matchers");
        for (_, q) in screen.iter().chain(&rest) {
            assert!(
                fill(q, &m, Duration::from_secs(60)).contains(r#"job="train""#),
                "{q}"
            );
        }
    }

    #[test]
    fn matchers_and_range_fill_every_selector() {
        let m = Matchers::parse(&[r#"job="train""#]).expect("matchers");
        let none = Matchers::default();
        assert_eq!(
            fill(RULES[1].promql, &m, Duration::from_secs(60)),
            r#"100 * (1 - sum without (mode) (rate(node_cpu_seconds_total{job="train",mode=~"idle|iowait"}[60s])))"#
        );
        assert_eq!(
            fill(RULES[0].promql, &none, Duration::ZERO),
            r#"{__name__=~"leet_.+"}"#
        );
        assert_eq!(up_query(&m), r#"up{job="train"}"#);
        assert_eq!(up_query(&none), "up{}");
        for rule in RULES {
            let q = fill(rule.promql, &m, Duration::from_secs(4));
            assert!(!q.contains('$'), "{q}");
            let selectors = q.matches('{').count();
            assert_eq!(q.matches(r#"job="train""#).count(), selectors, "{q}");
        }
    }

    /// node-exporter's rules define each key as the sampler does (a host read
    /// through node-exporter and through `leet serve` read the same): busy CPU
    /// leaves out iowait, a disk's use leaves out the blocks reserved for root
    /// (`df`'s Use%: 73 % read where `df` said 26 %), the network counts loopback.
    #[test]
    fn node_exporter_keys_are_defined_as_the_sampler_defines_them() {
        let rule = |key: &str| {
            (RULES.iter())
                .find(|r| match r.keying {
                    Fixed(k) | Labelled(k, _) => k == key,
                    _ => false,
                })
                .map(|r| r.promql)
                .expect("rule")
        };
        let cpu = rule("cpu.{}.cpu_percent");
        assert!(cpu.contains(r#"mode=~"idle|iowait""#) && cpu.contains("sum without (mode)"));
        let disk = rule("disk.{}.usagePercent");
        for m in ["size", "free", "avail"] {
            assert!(
                disk.contains(&format!("node_filesystem_{m}_bytes")),
                "{disk}"
            );
        }
        assert!(!disk.starts_with("100 * (1 - "), "{disk}");
        for key in ["network.sent", "network.recv"] {
            assert!(!rule(key).contains("device!="), "{key}");
        }
    }

    #[test]
    fn hosts_and_keys_from_labels() {
        let s = series(&[("instance", "node-3:9100"), ("cpu", "7")]);
        assert_eq!(host_of(&s.labels).as_deref(), Some("node-3"));
        assert_eq!(
            host_of(&series(&[("instance", "[::1]:9")]).labels).as_deref(),
            Some("[::1]")
        );
        assert_eq!(
            host_of(&series(&[("Hostname", "h\x1b[2J")]).labels).as_deref(),
            Some("h")
        );
        assert_eq!(host_of(&series(&[]).labels), None);
        assert_eq!(
            key_of(RULES[1].keying, &s),
            Some(("cpu.7.cpu_percent".into(), Unit::SAME))
        );
        let d = series(&[
            ("__name__", "DCGM_FI_PROF_SM_ACTIVE"),
            ("device", "nvidia3"),
        ]);
        assert_eq!(
            key_of(DcgmField, &d),
            Some((
                "gpu.3.smActive".into(),
                Unit {
                    mul: 100.0,
                    div: 1.0
                }
            ))
        );
        let unknown = series(&[("__name__", "DCGM_FI_DEV_XID_ERRORS"), ("gpu", "0")]);
        assert_eq!(key_of(DcgmField, &unknown), None);
        let l = series(&[
            ("__name__", "leet_gpu_power_watts"),
            ("gpu", "1"),
            ("instance", "a:1"),
            ("job", "leet"),
        ]);
        assert_eq!(
            key_of(Keying::Leet, &l),
            Some(("gpu.1.powerWatts".into(), Unit::SAME))
        );
        let pct = series(&[("__name__", "leet_memory_used_ratio"), ("instance", "a:1")]);
        assert_eq!(
            key_of(Keying::Leet, &pct),
            Some((
                "memory_percent".into(),
                Unit {
                    mul: 1.0,
                    div: 0.01
                }
            ))
        );
        let fs = series(&[("mountpoint", "/")]);
        assert_eq!(
            key_of(RULES[10].keying, &fs),
            Some(("disk./.usagePercent".into(), Unit::SAME))
        );
    }
}
