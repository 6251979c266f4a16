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

use super::scrape::Scraper;
use super::{Collector, SamplerError};

mod keys;
pub use keys::KeyIndex;
pub(crate) use keys::MAX_SERIES;

/// A metric family's type, from its `# TYPE` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// `counter`.
    Counter,
    /// `gauge`.
    Gauge,
    /// `untyped` or `unknown`, or no `# TYPE` line.
    Untyped,
    /// `histogram`.
    Histogram,
    /// `summary`.
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

/// One sample line of an exposition.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSample {
    /// The sample's own name (e.g. `http_requests_total`, `rpc_seconds_bucket`).
    pub name: String,
    /// The family it belongs to, from `# TYPE` (same as `name` when undeclared).
    pub family: String,
    /// The family's type.
    pub kind: MetricKind,
    /// Labels in the order written, values unescaped.
    pub labels: Vec<(String, String)>,
    /// The sample's value.
    pub value: f64,
}

/// A parsed Prometheus text / OpenMetrics page.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Exposition {
    /// The samples, in the order written.
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
    let (family, kind) = family_kind(name, |n| types.get(n).copied());
    (family.to_string(), kind)
}

/// [`family_of`] with any lookup of the declared types, without allocating.
fn family_kind(name: &str, types: impl Fn(&str) -> Option<MetricKind>) -> (&str, MetricKind) {
    if let Some(kind) = types(name) {
        return (name, kind);
    }
    for suffix in [
        "_bucket", "_sum", "_count", "_created", "_total", "_gsum", "_gcount", "_info",
    ] {
        if let Some(base) = name.strip_suffix(suffix) {
            if let Some(kind) = types(base) {
                let kind = match (kind, suffix) {
                    // `_created` of a counter is a timestamp, not the counter's value
                    (MetricKind::Counter, "_total") => MetricKind::Counter,
                    (MetricKind::Counter, _) => MetricKind::Other,
                    (k, _) => k,
                };
                return (base, kind);
            }
        }
    }
    (name, MetricKind::Untyped)
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

/// Map parsed samples of one endpoint to W&B keys: counters and gauges only, filtered,
/// finite values only, at most the index's cap of distinct series. Counts as one scrape
/// of the index (label sets that stop appearing are forgotten). Returns the number of
/// samples the cap dropped.
pub fn openmetrics_values(
    exp: &Exposition,
    index: &mut KeyIndex,
    filter: Option<&Regex>,
    out: &mut Vec<(String, f64)>,
) -> usize {
    index.begin_scrape();
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
        if let Some(key) = index.key(&s.name, &s.labels) {
            out.push((key, s.value));
        }
    }
    index.end_scrape()
}

/// [`parse_exposition`] then [`openmetrics_values`], in one pass over the text and
/// without building the exposition: the same values under the same keys (the same
/// scrape of the index), but only counter and gauge lines are looked at past their
/// name, and a series seen before is found by its text without parsing its labels.
pub(crate) fn openmetrics_values_of_text(
    text: &str,
    index: &mut KeyIndex,
    filter: Option<&Regex>,
    out: &mut Vec<(String, f64)>,
) -> usize {
    index.begin_scrape();
    let mut types: HashMap<&str, MetricKind> = HashMap::new();
    let mut full = String::new();
    for line in text.lines() {
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
            if let (Some("TYPE"), Some(name), Some(t)) = (parts.next(), parts.next(), parts.next())
            {
                types.insert(name, MetricKind::from_type(t.trim()));
            }
            continue;
        }
        let line = line.trim_start();
        let Some((name, series_end)) = split_series(line) else {
            continue;
        };
        let (_, kind) = family_kind(name, |n| types.get(n).copied());
        if !matches!(kind, MetricKind::Counter | MetricKind::Gauge) {
            continue;
        }
        let Some(value) = line[series_end..]
            .split_ascii_whitespace()
            .next()
            .and_then(parse_value)
        else {
            continue;
        };
        if !value.is_finite() {
            continue;
        }
        if let Some(re) = filter {
            full.clear();
            full.push_str(&index.endpoint);
            full.push('.');
            full.push_str(name);
            if !re.is_match(&full) {
                continue;
            }
        }
        let series = &line[..series_end];
        if let Some(key) = index.key_of_series(series) {
            out.push((key.to_string(), value));
            continue;
        }
        // New to the index (or its labels are bad): the full parse decides.
        let Ok((name, labels, value)) = parse_sample_line(line) else {
            continue;
        };
        if let Some(key) = index.key(&name, &labels) {
            index.remember_series(series, &name, &labels);
            out.push((key, value));
        }
    }
    index.end_scrape()
}

/// The metric name of a sample line (already trimmed at the start) and where its series
/// (`name` or `name{...}`) ends: after the first `}` outside a quoted label value.
/// `None` when there is no name or the braces do not close.
fn split_series(line: &str) -> Option<(&str, usize)> {
    let name_end = line
        .char_indices()
        .find(|&(i, c)| !is_name_char(c, i == 0))
        .map_or(line.len(), |(i, _)| i);
    if name_end == 0 {
        return None;
    }
    let name = &line[..name_end];
    let rest = &line.as_bytes()[name_end..];
    if rest.first() != Some(&b'{') {
        return Some((name, name_end));
    }
    let (mut quoted, mut escaped) = (false, false);
    for (i, &b) in rest.iter().enumerate().skip(1) {
        if escaped {
            escaped = false;
        } else if quoted {
            match b {
                b'\\' => escaped = true,
                b'"' => quoted = false,
                _ => {}
            }
        } else if b == b'"' {
            quoted = true;
        } else if b == b'}' {
            return Some((name, name_end + i + 1));
        }
    }
    None
}

/// How long one scrape of an endpoint may take.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest response body read; a longer one is an error.
pub const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// How long an endpoint that failed is left alone before it is tried again.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(30);

pub(crate) struct OpenMetricsCollector {
    url: String,
    scraper: Scraper,
    index: KeyIndex,
    filter: Option<Regex>,
    /// While failing: when to try again (a down endpoint is not scraped, and reported,
    /// on every tick).
    retry_at: Option<std::time::Instant>,
    /// The cap's cut has been reported (again once a scrape fits under it).
    cut_reported: bool,
}

impl OpenMetricsCollector {
    /// A collector for `url`; nothing is fetched yet (the first scrape is part of the
    /// first sample, so an endpoint that never answers cannot delay startup). Fails only
    /// on a URL it cannot scrape.
    pub(crate) fn new(name: &str, url: &str, filter: Option<Regex>) -> Result<Self, String> {
        Ok(Self {
            url: url.to_string(),
            scraper: Scraper::new(url, SCRAPE_TIMEOUT)?,
            index: KeyIndex::new(name),
            filter,
            retry_at: None,
            cut_reported: false,
        })
    }

    /// Fetch and map one exposition; the number of samples the cap dropped.
    fn scrape(&mut self, out: &mut Vec<(String, f64)>) -> Result<usize, SamplerError> {
        let body = self
            .scraper
            .get(MAX_RESPONSE_BYTES)
            .map_err(|detail| SamplerError::Http {
                url: self.url.clone(),
                detail: format!("{detail} (retrying every {} s)", RETRY_AFTER.as_secs()),
            })?;
        let text = String::from_utf8_lossy(&body);
        Ok(openmetrics_values_of_text(
            &text,
            &mut self.index,
            self.filter.as_ref(),
            out,
        ))
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
        let cut = match self.scrape(out) {
            Ok(cut) => cut,
            Err(e) => {
                self.retry_at = Some(std::time::Instant::now() + RETRY_AFTER);
                return Err(e);
            }
        };
        self.retry_at = None;
        if cut == 0 {
            self.cut_reported = false;
        } else if !self.cut_reported {
            // The values kept still go out with this error.
            self.cut_reported = true;
            return Err(SamplerError::Http {
                url: self.url.clone(),
                detail: format!(
                    "more than {MAX_SERIES} distinct series: {cut} samples of further label \
                     sets dropped (reported once)"
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
