//! One sample as an exposition page, in the Prometheus text format 0.0.4 and in
//! OpenMetrics 1.0 text, rendered once per sample so that a scrape only copies bytes.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use bytes::Bytes;

use super::names::{self, Kind, Mapped};
use leet_sampler::Sample;

/// Content type of the Prometheus text format.
pub const TEXT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// Content type of OpenMetrics text.
pub const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Keys remembered with their mapping; a host emits a fixed set, so this is the
/// whole set after the first samples. Past this many (a flood of new OpenMetrics
/// label sets), the memory is cleared and refilled.
const MAX_CACHED: usize = 10_000;
/// Longest `reason` label of the family info series (a tool's error text).
const MAX_REASON: usize = 300;

/// The latest sample as both formats.
#[derive(Debug, Clone)]
pub struct Page {
    pub text: Bytes,
    pub openmetrics: Bytes,
    /// The sample's time (Unix seconds).
    pub timestamp: f64,
}

/// What a page says besides the sample: the families and how many samples so far.
pub struct Context<'a> {
    /// Families that are sampled.
    pub families: &'a [&'a str],
    /// (family, why) for those that are not.
    pub unavailable: &'a [(String, String)],
    /// Samples taken so far, this one included.
    pub samples: u64,
    /// Sampled families this sample has no value of.
    pub without_values: &'a [&'a str],
}

struct Family<'a> {
    kind: FamilyKind,
    help: &'a str,
    series: Vec<(Vec<(&'a str, &'a str)>, f64)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FamilyKind {
    Gauge,
    Counter,
    Info,
}

/// Renders samples; remembers each key's mapping so a sample costs no regex.
#[derive(Default)]
pub struct Renderer {
    cache: HashMap<String, Mapped>,
    /// Families failing now, with why: from a sample that gave their error until
    /// one that has their values (a collector waiting to retry a failed endpoint
    /// reports its error once, then gives nothing).
    failing: BTreeMap<String, String>,
}

impl Renderer {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The page for `sample`.
    pub fn render(&mut self, sample: &Sample, ctx: &Context<'_>) -> Page {
        if self.cache.len() > MAX_CACHED {
            self.cache.clear();
        }
        // A key given twice (two families emitting it) is one series, the last value.
        let mut last: HashMap<&str, f64> = HashMap::with_capacity(sample.values.len());
        for (k, v) in &sample.values {
            last.insert(k.as_str(), *v);
            if !self.cache.contains_key(k) {
                self.cache.insert(k.clone(), names::to_series(k));
            }
        }
        // Where the key first came, with the value that came last.
        let values: Vec<(&Mapped, f64)> = (sample.values.iter())
            .filter_map(|(k, _)| Some((self.cache.get(k)?, last.remove(k.as_str())?)))
            .collect();
        let reasons: Vec<String> = (ctx.unavailable.iter())
            .map(|(_, why)| why.chars().take(MAX_REASON).collect())
            .collect();
        // A family that failed (a hung driver: "late" or "busy"; an endpoint that
        // is down) is not available now, whatever it was at start, until a sample
        // has its values again.
        self.failing
            .retain(|f, _| ctx.without_values.contains(&f.as_str()));
        let mut now: BTreeMap<&str, String> = BTreeMap::new();
        for (family, why) in &sample.errors {
            let why: String = why.chars().take(MAX_REASON).collect();
            now.entry(family.as_str())
                .and_modify(|w| {
                    if w.len() < MAX_REASON {
                        w.push_str("; ");
                        w.push_str(&why);
                    }
                })
                .or_insert(why);
        }
        // A family that gave its values with an error gave its reading: the host's
        // CPU and memory when the monitored process is gone (`--pid` of a job that
        // ended) are there, and an alert on `available="0"` must not fire.
        for (family, why) in now {
            if ctx.without_values.contains(&family) {
                self.failing.insert(family.to_owned(), why);
            }
        }
        let failing: BTreeMap<&str, String> = (self.failing.iter())
            .map(|(f, w)| (f.as_str(), w.clone()))
            .collect();
        let families = group(&values, ctx, (&reasons, &failing), sample.timestamp);
        Page {
            text: Bytes::from(write_page(&families, false)),
            openmetrics: Bytes::from(write_page(&families, true)),
            timestamp: sample.timestamp,
        }
    }
}

/// Every series by family name (sorted, so pages are stable from sample to sample).
fn group<'a>(
    values: &[(&'a Mapped, f64)],
    ctx: &'a Context<'a>,
    (reasons, failing): (&'a [String], &'a BTreeMap<&'a str, String>),
    timestamp: f64,
) -> BTreeMap<&'a str, Family<'a>> {
    let mut out: BTreeMap<&str, Family<'_>> = BTreeMap::new();
    for (m, v) in values {
        let kind = match m.kind {
            Kind::Gauge => FamilyKind::Gauge,
            Kind::Counter => FamilyKind::Counter,
        };
        let labels = m.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        out.entry(m.metric.as_ref())
            .or_insert_with(|| Family {
                kind,
                help: m.help,
                series: Vec::new(),
            })
            .series
            .push((labels, v * m.scale));
    }
    let mut meta = |name: &'static str, kind, help, series| {
        out.insert(name, Family { kind, help, series });
    };
    meta(
        "leet_sample_timestamp_seconds",
        FamilyKind::Gauge,
        "Time of the sample these series come from (Unix seconds)",
        vec![(Vec::new(), timestamp)],
    );
    let samples = ctx.samples as f64;
    meta(
        "leet_samples_total",
        FamilyKind::Counter,
        "Samples taken since leet serve started",
        vec![(Vec::new(), samples)],
    );
    let mut info: Vec<(Vec<(&str, &str)>, f64)> = (ctx.families.iter())
        .map(|f| match failing.get(f) {
            Some(why) => (
                vec![("family", *f), ("available", "0"), ("reason", why.as_str())],
                1.0,
            ),
            None => (vec![("family", *f), ("available", "1")], 1.0),
        })
        .collect();
    for ((family, _), why) in ctx.unavailable.iter().zip(reasons) {
        info.push((
            vec![
                ("family", family.as_str()),
                ("available", "0"),
                ("reason", why.as_str()),
            ],
            1.0,
        ));
    }
    meta(
        "leet_family_info",
        FamilyKind::Info,
        "A metric family of the sampler: available=1 when this sample has its reading, else 0 with the reason (not found at start, or failing now)",
        info,
    );
    out
}

fn write_page(families: &BTreeMap<&str, Family<'_>>, openmetrics: bool) -> Vec<u8> {
    let mut s = String::with_capacity(8192);
    for (name, f) in families {
        // OpenMetrics names the family without the sample's suffix.
        let family = if openmetrics {
            match f.kind {
                FamilyKind::Counter => name.strip_suffix("_total").unwrap_or(name),
                FamilyKind::Info => name.strip_suffix("_info").unwrap_or(name),
                FamilyKind::Gauge => name,
            }
        } else {
            name
        };
        let kind = match (f.kind, openmetrics) {
            (FamilyKind::Gauge, _) | (FamilyKind::Info, false) => "gauge",
            (FamilyKind::Counter, _) => "counter",
            (FamilyKind::Info, true) => "info",
        };
        let _ = writeln!(s, "# HELP {family} {}", escape_help(f.help));
        let _ = writeln!(s, "# TYPE {family} {kind}");
        for (labels, v) in &f.series {
            s.push_str(name);
            if !labels.is_empty() {
                s.push('{');
                for (i, (k, val)) in labels.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    let _ = write!(s, "{k}=\"{}\"", escape_label(val));
                }
                s.push('}');
            }
            s.push(' ');
            s.push_str(&format_value(*v));
            s.push('\n');
        }
    }
    if openmetrics {
        s.push_str("# EOF\n");
    }
    s.into_bytes()
}

/// A label value as both formats write it: backslash, double quote and line feed
/// escaped.
#[must_use]
pub fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for ch in v.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value: `NaN`, `+Inf`, `-Inf`, else the shortest decimal that reads back
/// as the same number.
#[must_use]
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leet_sampler::parse_exposition;

    fn sample() -> Sample {
        Sample {
            timestamp: 1_700_000_000.5,
            values: vec![
                ("gpu.0.powerWatts".into(), 312.345),
                ("cpu.3.cpu_percent".into(), 50.0),
                ("network.sent".into(), 1e6),
                ("gpu.0.powerWatts".into(), 313.0),
                ("weird \"key\"\\\n".into(), f64::NAN),
                ("proc.memory.rssMB/l:node \"a\"".into(), f64::INFINITY),
                ("disk./.usageGB".into(), -0.5),
            ],
            errors: vec![],
        }
    }

    fn page() -> Page {
        let unavailable = vec![("nvidia".to_string(), "no \"NVML\"\nat all\\".to_string())];
        let ctx = Context {
            families: &["cpu", "memory"],
            unavailable: &unavailable,
            samples: 3,
            without_values: &[],
        };
        Renderer::new().render(&sample(), &ctx)
    }

    #[test]
    fn both_formats_parse_and_give_every_key_back() {
        let page = page();
        for (body, om) in [(&page.text, false), (&page.openmetrics, true)] {
            let text = std::str::from_utf8(body).expect("utf-8");
            assert_eq!(text.ends_with("# EOF\n"), om, "{text}");
            let exp = parse_exposition(text);
            assert!(exp.errors.is_empty(), "{:?}\n{text}", exp.errors);
            let mut keys = Vec::new();
            for s in &exp.samples {
                if s.name.starts_with("leet_sample") || s.name.starts_with("leet_family") {
                    continue;
                }
                let key = names::to_key(&s.name, &s.labels).expect("a key");
                let m = names::to_series(&key);
                keys.push((key, s.value / m.scale));
            }
            let want = [
                ("gpu.0.powerWatts", 313.0),
                ("cpu.3.cpu_percent", 50.0),
                ("network.sent", 1e6),
                ("weird \"key\"\\\n", f64::NAN),
                ("proc.memory.rssMB/l:node \"a\"", f64::INFINITY),
                ("disk./.usageGB", -0.5),
            ];
            assert_eq!(keys.len(), want.len(), "{keys:?}");
            for (k, v) in want {
                let got = keys.iter().find(|(g, _)| g == k).map(|(_, v)| *v);
                let got = got.unwrap_or_else(|| panic!("{k:?} missing in {keys:?}"));
                assert!(
                    (v.is_nan() && got.is_nan()) || v == got || (got - v).abs() < 1e-9 * v.abs(),
                    "{k}: {got} != {v}"
                );
            }
            let info = (exp.samples.iter())
                .find(|s| s.name == "leet_family_info" && s.labels.iter().any(|l| l.1 == "0"))
                .expect("info series");
            assert!(info
                .labels
                .contains(&("reason".into(), "no \"NVML\"\nat all\\".into())));
        }
    }

    #[test]
    fn a_family_failing_now_is_not_available() {
        let mut hung = sample();
        hung.errors = vec![
            ("nvidia".into(), "late".into()),
            ("nvidia".into(), "busy".into()),
        ];
        let quiet = Context {
            families: &["cpu", "nvidia"],
            unavailable: &[],
            samples: 9,
            without_values: &["nvidia"],
        };
        let mut r = Renderer::new();
        let page = r.render(&hung, &quiet);
        let text = std::str::from_utf8(&page.text).expect("utf-8");
        assert!(
            text.contains(
                "leet_family_info{family=\"nvidia\",available=\"0\",reason=\"late; busy\"} 1\n"
            ),
            "{text}"
        );
        assert!(text.contains("leet_family_info{family=\"cpu\",available=\"1\"} 1\n"));
        assert!(!text.contains("family=\"nvidia\",available=\"1\""));
        // A family that reported its failure once and gives nothing since (a
        // dcgm-exporter endpoint waiting to be retried) stays unavailable, until a
        // sample has its values.
        let info = |r: &mut Renderer, ctx: &Context<'_>| {
            let page = r.render(&sample(), ctx);
            let text = String::from_utf8(page.text.to_vec()).expect("utf-8");
            (text.lines())
                .find(|l| l.starts_with("leet_family_info{family=\"nvidia\""))
                .map(str::to_owned)
                .unwrap_or_default()
        };
        let still = info(&mut r, &quiet);
        assert!(
            still.contains("available=\"0\",reason=\"late; busy\""),
            "{still}"
        );
        let back = Context {
            without_values: &[],
            ..quiet
        };
        let back = info(&mut r, &back);
        assert!(back.contains("available=\"1\""), "{back}");
    }

    /// The monitored process gone (`leet serve --pid` of a job that ended): the
    /// cpu family reports it, with the host's values: still available.
    #[test]
    fn a_family_with_its_values_and_an_error_is_available() {
        let mut partial = sample();
        partial.errors = vec![(
            "cpu".into(),
            "monitored process: process 4242 is not running (it exited)".into(),
        )];
        let ctx = Context {
            families: &["cpu"],
            unavailable: &[],
            samples: 9,
            without_values: &[],
        };
        let page = Renderer::new().render(&partial, &ctx);
        let text = std::str::from_utf8(&page.text).expect("utf-8");
        assert!(
            text.contains("leet_family_info{family=\"cpu\",available=\"1\"} 1\n"),
            "{text}"
        );
        assert!(!text.contains("available=\"0\""), "{text}");
    }

    #[test]
    fn types_follow_each_format() {
        let page = page();
        let text = std::str::from_utf8(&page.text).expect("utf-8");
        assert!(text.contains("# TYPE leet_network_transmit_bytes_total counter\n"));
        assert!(text.contains("# TYPE leet_family_info gauge\n"));
        assert!(text.contains("leet_samples_total 3\n"));
        assert!(text.contains("leet_sample_timestamp_seconds 1700000000.5\n"));
        let om = std::str::from_utf8(&page.openmetrics).expect("utf-8");
        assert!(om.contains("# TYPE leet_network_transmit_bytes counter\n"));
        assert!(om.contains("\nleet_network_transmit_bytes_total 1000000\n"));
        assert!(om.contains("# TYPE leet_family info\n"));
        assert!(om.contains("leet_family_info{family=\"cpu\",available=\"1\"} 1\n"));
        assert_eq!(om.matches("# EOF").count(), 1);
    }

    #[test]
    fn values() {
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(0.1), "0.1");
        assert_eq!(format_value(1e300).parse::<f64>().ok(), Some(1e300));
        assert_eq!(escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    }
}
