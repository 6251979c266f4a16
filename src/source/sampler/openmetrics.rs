//! OpenMetrics / Prometheus text exposition: a parser and a scraping collector.
//!
//! Keys follow the reference (spec §9): `openmetrics.<endpoint>.<metric>.<k>`, where `k`
//! numbers the distinct label sets of one metric in the order they are first seen and
//! stays fixed for the collector's lifetime. Only COUNTER and GAUGE samples are kept (raw
//! values, no rates); untyped, histogram, summary and other samples are parsed but
//! dropped, as the reference does. The filter regex is searched in `<endpoint>.<metric>`,
//! the string the reference matches. Non-finite values are dropped.
//!
//! One deliberate difference: the reference hashes a Go map in iteration order, which can
//! give one label set several indices; here the label set is sorted first.

use std::collections::HashMap;
use std::time::Duration;

use regex::Regex;

use super::{http, Collector, SamplerError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    Counter,
    Gauge,
    Untyped,
    Histogram,
    Summary,
    /// OpenMetrics 1.0 types (`info`, `stateset`, `gaugehistogram`) and anything else.
    Other,
}

impl MetricKind {
    fn from_type(t: &str) -> Self {
        match t {
            "counter" => Self::Counter,
            "gauge" => Self::Gauge,
            "untyped" | "unknown" => Self::Untyped,
            "histogram" => Self::Histogram,
            "summary" => Self::Summary,
            _ => Self::Other,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct MetricSample {
    /// The sample's own name (e.g. `http_requests_total`, `rpc_seconds_bucket`).
    pub name: String,
    /// The family it belongs to, from `# TYPE` (same as `name` when undeclared).
    pub family: String,
    pub kind: MetricKind,
    /// Labels in the order written, values unescaped.
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Exposition {
    pub samples: Vec<MetricSample>,
    /// (1-based line number, reason) for lines that could not be parsed.
    pub errors: Vec<(usize, String)>,
    /// `# HELP` text per family.
    pub help: HashMap<String, String>,
}

/// Parse the text format (Prometheus 0.0.4 and the OpenMetrics 1.0 subset that matters
/// here: `# EOF`, `_total` counters). Bad lines are reported and skipped.
pub fn parse_exposition(text: &str) -> Exposition {
    let mut exp = Exposition::default();
    let mut types: HashMap<String, MetricKind> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim_start();
            if comment == "EOF" {
                break;
            }
            let mut parts = comment.splitn(3, [' ', '\t']);
            match (parts.next(), parts.next(), parts.next()) {
                (Some("TYPE"), Some(name), Some(t)) => {
                    types.insert(name.to_string(), MetricKind::from_type(t.trim()));
                }
                (Some("HELP"), Some(name), help) => {
                    exp.help
                        .insert(name.to_string(), unescape_help(help.unwrap_or_default()));
                }
                _ => {}
            }
            continue;
        }
        match parse_sample_line(line) {
            Ok((name, labels, value)) => {
                let (family, kind) = family_of(&name, &types);
                exp.samples.push(MetricSample {
                    name,
                    family,
                    kind,
                    labels,
                    value,
                });
            }
            Err(e) => exp.errors.push((i + 1, e)),
        }
    }
    exp
}

/// Resolve a sample name to its declared family: exact match, or a histogram/summary
/// (`_bucket`, `_sum`, `_count`, `_created`) or OpenMetrics counter (`_total`) suffix.
fn family_of(name: &str, types: &HashMap<String, MetricKind>) -> (String, MetricKind) {
    if let Some(kind) = types.get(name) {
        return (name.to_string(), *kind);
    }
    for suffix in [
        "_bucket", "_sum", "_count", "_created", "_total", "_gsum", "_gcount", "_info",
    ] {
        if let Some(base) = name.strip_suffix(suffix) {
            if let Some(kind) = types.get(base) {
                let kind = match (kind, suffix) {
                    // `_created` of a counter is a timestamp, not the counter's value
                    (MetricKind::Counter, "_total") => MetricKind::Counter,
                    (MetricKind::Counter, _) => MetricKind::Other,
                    (k, _) => *k,
                };
                return (base.to_string(), kind);
            }
        }
    }
    (name.to_string(), MetricKind::Untyped)
}

fn unescape_help(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('\\') => out.push('\\'),
                Some(o) => {
                    out.push('\\');
                    out.push(o);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn is_name_char(c: char, first: bool) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':' || (!first && c.is_ascii_digit())
}

type SampleLine = (String, Vec<(String, String)>, f64);

/// `name{l="v",...} value [timestamp]`
fn parse_sample_line(line: &str) -> Result<SampleLine, String> {
    let line = line.trim_start();
    let name_end = line
        .char_indices()
        .find(|&(i, c)| !is_name_char(c, i == 0))
        .map_or(line.len(), |(i, _)| i);
    if name_end == 0 {
        return Err("missing metric name".to_string());
    }
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(r) = rest.strip_prefix('{') {
        rest = parse_labels(r, &mut labels)?;
    }
    let mut fields = rest.split_ascii_whitespace();
    let value = fields
        .next()
        .ok_or_else(|| format!("'{name}' has no value"))?;
    let value = parse_value(value).ok_or_else(|| format!("'{name}' has bad value '{value}'"))?;
    // An optional timestamp may follow; the sampler stamps samples itself.
    Ok((name.to_string(), labels, value))
}

/// Parse `l="v",...}` (after the `{`), returning the text after `}`.
fn parse_labels<'a>(mut s: &'a str, labels: &mut Vec<(String, String)>) -> Result<&'a str, String> {
    loop {
        s = s.trim_start();
        if let Some(r) = s.strip_prefix('}') {
            return Ok(r);
        }
        let end = s
            .char_indices()
            .find(|&(i, c)| !is_name_char(c, i == 0))
            .map_or(s.len(), |(i, _)| i);
        if end == 0 {
            return Err(format!(
                "bad label name at '{}'",
                s.chars().take(20).collect::<String>()
            ));
        }
        let lname = &s[..end];
        s = s[end..].trim_start();
        s = s
            .strip_prefix('=')
            .ok_or_else(|| format!("label '{lname}' has no '='"))?;
        s = s.trim_start();
        s = s
            .strip_prefix('"')
            .ok_or_else(|| format!("label '{lname}' value is not quoted"))?;
        let mut value = String::new();
        let mut chars = s.char_indices();
        let close = loop {
            match chars.next() {
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, c)) => {
                        value.push('\\');
                        value.push(c);
                    }
                    None => return Err(format!("label '{lname}' value ends in '\\'")),
                },
                Some((_, c)) => value.push(c),
                None => return Err(format!("label '{lname}' value is not closed")),
            }
        };
        labels.push((lname.to_string(), value));
        s = s[close + 1..].trim_start();
        if let Some(r) = s.strip_prefix(',') {
            s = r;
        } else if !s.starts_with('}') {
            return Err(format!("expected ',' or '}}' after label '{lname}'"));
        }
    }
}

fn parse_value(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

/// Assigns the stable per-metric label-set indices and builds keys.
#[derive(Debug, Default)]
pub struct KeyIndex {
    endpoint: String,
    /// metric → (sorted label set → key)
    keys: HashMap<String, HashMap<Vec<(String, String)>, String>>,
}

impl KeyIndex {
    pub fn new(endpoint: &str) -> Self {
        Self {
            endpoint: endpoint.to_string(),
            keys: HashMap::new(),
        }
    }

    /// `openmetrics.<endpoint>.<metric>.<k>` for this label set.
    pub fn key(&mut self, metric: &str, labels: &[(String, String)]) -> String {
        let mut sorted = labels.to_vec();
        sorted.sort();
        let per_metric = self.keys.entry(metric.to_string()).or_default();
        let next = per_metric.len();
        per_metric
            .entry(sorted)
            .or_insert_with(|| format!("openmetrics.{}.{metric}.{next}", self.endpoint))
            .clone()
    }
}

/// Map parsed samples of one endpoint to W&B keys: counters and gauges only, filtered,
/// finite values only.
pub fn openmetrics_values(
    exp: &Exposition,
    index: &mut KeyIndex,
    filter: Option<&Regex>,
    out: &mut Vec<(String, f64)>,
) {
    let mut full = String::new();
    for s in &exp.samples {
        if !matches!(s.kind, MetricKind::Counter | MetricKind::Gauge) || !s.value.is_finite() {
            continue;
        }
        if let Some(re) = filter {
            full.clear();
            full.push_str(&index.endpoint);
            full.push('.');
            full.push_str(&s.name);
            if !re.is_match(&full) {
                continue;
            }
        }
        let key = index.key(&s.name, &s.labels);
        out.push((key, s.value));
    }
}

pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);
pub const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// How long an endpoint that failed is left alone before it is tried again.
pub const RETRY_AFTER: Duration = Duration::from_secs(30);

pub(crate) struct OpenMetricsCollector {
    url: String,
    index: KeyIndex,
    filter: Option<Regex>,
    /// While failing: when to try again (a down endpoint must not stall every tick
    /// for the scrape timeout).
    retry_at: Option<std::time::Instant>,
}

impl OpenMetricsCollector {
    /// Scrape once. An endpoint that does not answer comes back with its error (so the
    /// caller lists it as unavailable) but is kept: it is tried again every
    /// [`RETRY_AFTER`], so an exporter started after leet is picked up.
    pub fn detect(name: &str, url: &str, filter: Option<Regex>) -> (Self, Option<String>) {
        let mut c = Self {
            url: url.to_string(),
            index: KeyIndex::new(name),
            filter,
            retry_at: None,
        };
        let mut out = Vec::new();
        match c.scrape(&mut out) {
            Ok(()) => (c, None),
            Err(e) => {
                c.retry_at = Some(std::time::Instant::now() + RETRY_AFTER);
                (c, Some(e.to_string()))
            }
        }
    }

    fn scrape(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        let body = http::get(&self.url, SCRAPE_TIMEOUT, MAX_RESPONSE_BYTES).map_err(|detail| {
            SamplerError::Http {
                url: self.url.clone(),
                detail,
            }
        })?;
        let text = String::from_utf8_lossy(&body);
        let exp = parse_exposition(&text);
        openmetrics_values(&exp, &mut self.index, self.filter.as_ref(), out);
        Ok(())
    }
}

impl Collector for OpenMetricsCollector {
    fn name(&self) -> &'static str {
        "openmetrics"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        if self.retry_at.is_some_and(|t| std::time::Instant::now() < t) {
            return Ok(());
        }
        match self.scrape(out) {
            Ok(()) => {
                self.retry_at = None;
                Ok(())
            }
            Err(e) => {
                self.retry_at = Some(std::time::Instant::now() + RETRY_AFTER);
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_down_at_start_is_retried_and_picked_up() {
        use std::io::{Read as _, Write as _};
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = probe.local_addr().expect("addr");
        drop(probe); // nothing listens there now
        let url = format!("http://{addr}/metrics");
        let (mut c, why) = OpenMetricsCollector::detect("late", &url, None);
        assert!(why.is_some_and(|w| !w.is_empty()), "a closed port answered");
        let mut out = Vec::new();
        // Within the back-off nothing is tried (no stall, no error).
        assert!(c.sample(&mut out).is_ok() && out.is_empty());
        let server = std::net::TcpListener::bind(addr).expect("rebind");
        let t = std::thread::spawn(move || {
            if let Ok((mut s, _)) = server.accept() {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
                let body = "# TYPE up gauge\nup 1\n";
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        c.retry_at = Some(std::time::Instant::now());
        c.sample(&mut out).expect("scraped after retry");
        assert_eq!(out, vec![("openmetrics.late.up.0".to_owned(), 1.0)]);
        let _ = t.join();
    }

    #[test]
    fn labels_with_escapes_and_commas() {
        let text = "# HELP m A \\\\ help\\nline\n# TYPE m gauge\nm{path=\"C:\\\\dir\",msg=\"say \\\"hi\\\", ok\",nl=\"a\\nb\",} 1.5e3 1700000000000\n";
        let exp = parse_exposition(text);
        assert!(exp.errors.is_empty(), "{:?}", exp.errors);
        assert_eq!(exp.help["m"], "A \\ help\nline");
        let s = &exp.samples[0];
        assert_eq!(s.kind, MetricKind::Gauge);
        assert_eq!(s.value, 1500.0);
        assert_eq!(
            s.labels,
            vec![
                ("path".to_string(), "C:\\dir".to_string()),
                ("msg".to_string(), "say \"hi\", ok".to_string()),
                ("nl".to_string(), "a\nb".to_string()),
            ]
        );
    }

    #[test]
    fn special_values_and_bad_lines() {
        let text =
            "# TYPE a gauge\na +Inf\na{x=\"1\"} -Inf\na{x=\"2\"} NaN\nbad{x=1} 2\n{x=\"1\"} 3\nb\n";
        let exp = parse_exposition(text);
        assert_eq!(exp.samples.len(), 3);
        assert_eq!(exp.samples[0].value, f64::INFINITY);
        assert_eq!(exp.samples[1].value, f64::NEG_INFINITY);
        assert!(exp.samples[2].value.is_nan());
        assert_eq!(
            exp.errors.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
            vec![5, 6, 7]
        );
        // non-finite values never become keys
        let mut out = Vec::new();
        openmetrics_values(&exp, &mut KeyIndex::new("e"), None, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn histogram_summary_and_openmetrics_counter() {
        let text = "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_sum 3\nh_count 2\n# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 1\n# TYPE c counter\nc_total 7\nc_created 1.7e9\n# EOF\nafter_eof 1\n";
        let exp = parse_exposition(text);
        let kinds: Vec<(&str, MetricKind)> = exp
            .samples
            .iter()
            .map(|s| (s.name.as_str(), s.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("h_bucket", MetricKind::Histogram),
                ("h_sum", MetricKind::Histogram),
                ("h_count", MetricKind::Histogram),
                ("s", MetricKind::Summary),
                ("s_sum", MetricKind::Summary),
                ("c_total", MetricKind::Counter),
                ("c_created", MetricKind::Other),
            ]
        );
        let mut out = Vec::new();
        openmetrics_values(&exp, &mut KeyIndex::new("e"), None, &mut out);
        assert_eq!(out, vec![("openmetrics.e.c_total.0".to_string(), 7.0)]);
    }

    #[test]
    fn label_set_indices_are_stable_and_order_free() {
        let mut idx = KeyIndex::new("node");
        let l = |a: &str, b: &str| {
            vec![
                ("a".to_string(), a.to_string()),
                ("b".to_string(), b.to_string()),
            ]
        };
        assert_eq!(idx.key("m", &l("1", "x")), "openmetrics.node.m.0");
        assert_eq!(idx.key("m", &l("2", "x")), "openmetrics.node.m.1");
        assert_eq!(idx.key("other", &l("2", "x")), "openmetrics.node.other.0");
        let reversed = vec![
            ("b".to_string(), "x".to_string()),
            ("a".to_string(), "1".to_string()),
        ];
        assert_eq!(idx.key("m", &reversed), "openmetrics.node.m.0");
        assert_eq!(idx.key("m", &[]), "openmetrics.node.m.2");
    }
}
