//! The Prometheus HTTP API (`/api/v1/…`), as Prometheus, Thanos, Mimir and
//! VictoriaMetrics answer it: instant and range queries, series, label values, and
//! the scrape interval from the server's targets or its configuration.
//!
//! Every answer is the envelope `{"status":"success","data":…}` or
//! `{"status":"error","errorType":…,"error":…}` (with a 4xx/5xx status); both, and
//! a body that is neither, are told apart in [`PromError`], which names the server.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::matchers::Matchers;
use crate::source::http::{Answer, Endpoint, HttpOptions};

pub use crate::msg::cluster::PromError;

/// A series' labels (`__name__` among them where the query kept it).
pub type Labels = BTreeMap<String, String>;

/// One series of a query's answer: its labels and its (unix seconds, value) points,
/// oldest first. An instant query gives one point.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub labels: Labels,
    pub points: Vec<(f64, f64)>,
}

impl Series {
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

#[derive(Deserialize)]
struct Envelope<T> {
    status: String,
    data: Option<T>,
    #[serde(rename = "errorType")]
    error_type: Option<String>,
    error: Option<String>,
}

/// A query's `data`, borrowing the sample values from the body: an hour of 512
/// GPUs is millions of points, and a `String` (or a `serde_json::Value`) each
/// would multiply the memory the answer takes while it is read.
#[derive(Deserialize)]
struct QueryData<'a> {
    #[serde(rename = "resultType")]
    result_type: &'a str,
    #[serde(borrow)]
    result: Vec<RawSeries<'a>>,
}

#[derive(Deserialize)]
struct RawSeries<'a> {
    metric: Labels,
    #[serde(borrow)]
    value: Option<RawPoint<'a>>,
    #[serde(borrow)]
    values: Option<Vec<RawPoint<'a>>>,
}

/// `[<unix seconds>, "<value>"]`.
#[derive(Deserialize)]
struct RawPoint<'a>(f64, &'a str);

#[derive(Deserialize)]
struct ConfigData {
    yaml: String,
}

#[derive(Deserialize)]
struct TargetsData {
    #[serde(rename = "activeTargets", default)]
    active: Vec<Target>,
}

#[derive(Deserialize)]
struct Target {
    #[serde(rename = "scrapeInterval")]
    scrape_interval: Option<String>,
    #[serde(default)]
    labels: Labels,
}

/// The longest server text kept in an error.
const EXCERPT: usize = 200;

fn excerpt(s: &str) -> String {
    leet_text::sanitize(s.trim())
        .chars()
        .take(EXCERPT)
        .collect()
}

/// A sample value as the API writes it: a string, `NaN` and `±Inf` included.
fn value(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok(),
    }
}

/// A Prometheus (or compatible) server.
#[derive(Debug, Clone)]
pub struct Client {
    http: Endpoint,
}

impl Client {
    /// A client for the API under `url` (`http://host:9090`, or a path prefix).
    pub fn new(url: &str, opts: HttpOptions) -> Result<Self, PromError> {
        Ok(Self {
            http: Endpoint::new(url, opts)?,
        })
    }

    pub fn server(&self) -> &str {
        self.http.server()
    }

    /// `GET /api/v1/<path>`: the `data` of a success, else the error it is.
    fn call<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T, PromError> {
        let answer = self.http.get(&format!("/api/v1/{path}"), query)?;
        self.data(&answer)
    }

    /// The `data` of an answer's envelope (borrowing from its body where `T` does).
    fn data<'a, T: serde::Deserialize<'a>>(&self, answer: &'a Answer) -> Result<T, PromError> {
        let Answer { status, body } = answer;
        let status = *status;
        let server = || self.server().to_string();
        let env: Envelope<T> = match serde_json::from_str(body) {
            Ok(env) => env,
            Err(e) if (200..300).contains(&status) => {
                return Err(PromError::Garbage {
                    server: server(),
                    why: excerpt(&e.to_string()),
                })
            }
            Err(_) => {
                return Err(PromError::Status {
                    server: server(),
                    status,
                    excerpt: excerpt(body),
                })
            }
        };
        match (env.status.as_str(), env.data) {
            ("success", Some(data)) => Ok(data),
            ("error", _) => Err(PromError::Api {
                server: server(),
                kind: excerpt(env.error_type.as_deref().unwrap_or("error")),
                error: excerpt(env.error.as_deref().unwrap_or("")),
            }),
            (other, _) => Err(PromError::Garbage {
                server: server(),
                why: format!("status '{}' without data", excerpt(other)),
            }),
        }
    }

    /// The series of a query's answer, of `want` ("vector" or "matrix"). A scalar
    /// or string result does not read as series: an error either way.
    fn series_of(&self, answer: &Answer, want: &str) -> Result<Vec<Series>, PromError> {
        let data: QueryData = self.data(answer)?;
        if data.result_type != want {
            return Err(PromError::Garbage {
                server: self.server().to_string(),
                why: format!(
                    "a {} where a {want} was asked for",
                    excerpt(data.result_type)
                ),
            });
        }
        Ok(data
            .result
            .into_iter()
            .map(|r| {
                let points = r
                    .value
                    .into_iter()
                    .chain(r.values.into_iter().flatten())
                    .filter_map(|RawPoint(t, v)| Some((t, value(v)?)))
                    .collect();
                Series {
                    labels: r.metric,
                    points,
                }
            })
            .collect())
    }

    /// `/api/v1/query`: `promql` at `at` (unix seconds; the server's now when None).
    pub fn query(&self, promql: &str, at: Option<f64>) -> Result<Vec<Series>, PromError> {
        let at = at.map(|t| format!("{t:.3}"));
        let mut q = vec![("query", promql)];
        if let Some(t) = &at {
            q.push(("time", t));
        }
        let answer = self.http.get("/api/v1/query", &q)?;
        self.series_of(&answer, "vector")
    }

    /// `/api/v1/query_range`: `promql` evaluated every `step` from `start` to `end`.
    pub fn query_range(
        &self,
        promql: &str,
        start: f64,
        end: f64,
        step: Duration,
    ) -> Result<Vec<Series>, PromError> {
        let (start, end) = (format!("{start:.3}"), format!("{end:.3}"));
        let step = format!("{:.3}", step.as_secs_f64().max(0.001));
        let q = [
            ("query", promql),
            ("start", start.as_str()),
            ("end", end.as_str()),
            ("step", step.as_str()),
        ];
        let answer = self.http.get("/api/v1/query_range", &q)?;
        self.series_of(&answer, "matrix")
    }

    /// `/api/v1/series`: the label sets of the series any of `matchers` selects.
    pub fn series(
        &self,
        matchers: &[&str],
        start: f64,
        end: f64,
    ) -> Result<Vec<Labels>, PromError> {
        let (start, end) = (format!("{start:.3}"), format!("{end:.3}"));
        let mut q: Vec<(&str, &str)> = matchers.iter().map(|m| ("match[]", *m)).collect();
        q.extend([("start", start.as_str()), ("end", end.as_str())]);
        self.call("series", &q)
    }

    /// `/api/v1/labels` (`label` None) or `/api/v1/label/<label>/values`, over the
    /// series `matchers` select (all when empty).
    pub fn labels(&self, label: Option<&str>, matchers: &[&str]) -> Result<Vec<String>, PromError> {
        let q: Vec<(&str, &str)> = matchers.iter().map(|m| ("match[]", *m)).collect();
        match label {
            None => self.call("labels", &q),
            Some(l) => {
                let ok = !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                if !ok {
                    return Err(PromError::Api {
                        server: self.server().to_string(),
                        kind: "bad_data".into(),
                        error: format!("'{}' is not a label name", excerpt(l)),
                    });
                }
                self.call(&format!("label/{l}/values"), &q)
            }
        }
    }

    /// The shortest scrape interval of the active targets `matchers` select
    /// (`/api/v1/targets`: each job may scrape at its own, and the global one is
    /// only their default), else the global `scrape_interval` of the server's
    /// configuration (`/api/v1/status/config`), for servers that list no targets.
    pub fn scrape_interval(&self, matchers: &Matchers) -> Result<Option<Duration>, PromError> {
        let targets = self.targets_interval(matchers);
        if let Ok(Some(d)) = targets {
            return Ok(Some(d));
        }
        match self.call::<ConfigData>("status/config", &[]) {
            Ok(c) => Ok(global_scrape_interval(&c.yaml)),
            Err(e) => targets.map(|_| None).or(Err(e)),
        }
    }

    /// The shortest scrape interval of the active targets `matchers` select; None
    /// while the server lists none (a server just started lists its targets a
    /// few seconds later).
    pub fn targets_interval(&self, matchers: &Matchers) -> Result<Option<Duration>, PromError> {
        let targets: TargetsData = self.call("targets", &[("state", "active")])?;
        Ok((targets.active.iter())
            .filter(|t| matchers.matches(&t.labels))
            .filter_map(|t| parse_duration(t.scrape_interval.as_deref()?))
            .filter(|d| !d.is_zero())
            .min())
    }
}

/// `scrape_interval` under `global:` in a Prometheus YAML configuration.
pub fn global_scrape_interval(yaml: &str) -> Option<Duration> {
    let mut in_global = false;
    for line in yaml.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() {
            in_global = line.trim_end() == "global:";
            continue;
        }
        if let Some(v) = line.trim().strip_prefix("scrape_interval:") {
            if in_global {
                return parse_duration(v.trim().trim_matches(['"', '\'']));
            }
        }
    }
    None
}

/// A Prometheus duration: `1h30m`, `15s`, `500ms`.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let mut total = 0.0f64;
    let mut rest = s;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let n: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let secs = match &rest[..unit] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86_400.0,
            "w" => 604_800.0,
            "y" => 31_536_000.0,
            _ => return None,
        };
        total += n * secs;
        rest = &rest[unit..];
    }
    Duration::try_from_secs_f64(total).ok()
}

#[cfg(test)]
pub(crate) mod tests;
