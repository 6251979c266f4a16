//! One refresh of the cluster: every rule as a range query over `[start, end]`, the
//! answers turned into per-host W&B-keyed series ([`Batch`]), which the cluster
//! model (`store::cluster`) folds in.

use std::time::Duration;

use super::api::{Client, PromError};
use super::matchers::Matchers;
use super::rules::{self, Exporter, RULES};

/// One host's series of one key, values in the key's unit, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSeries {
    pub host: String,
    pub exporter: Exporter,
    pub key: String,
    pub points: Vec<(f64, f64)>,
    /// Shown relative to the first point the model keeps (see [`rules::Rule`]).
    pub since_first: bool,
}

/// A host's `up` over the range: (time, scraped).
#[derive(Debug, Clone, PartialEq)]
pub struct HostUp {
    pub host: String,
    pub points: Vec<(f64, bool)>,
}

/// What one refresh read.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub start: f64,
    pub end: f64,
    pub step: Duration,
    pub series: Vec<HostSeries>,
    pub up: Vec<HostUp>,
    /// Rules the server refused (an unknown function, a limit), each named; the
    /// other rules' answers are in the batch.
    pub refused: Vec<String>,
}

/// What a refresh asks: the matchers, the scrape interval (for `rate`'s range).
#[derive(Debug, Clone)]
pub struct Plan {
    pub matchers: Matchers,
    pub scrape: Duration,
}

/// Whether an error is the server's (down, slow, refusing): the refresh stops at
/// once rather than wait out every rule's timeout.
fn is_transport(e: &PromError) -> bool {
    matches!(e, PromError::Http(_) | PromError::Status { .. })
}

/// Read `[start, end]` every `step`.
pub fn fetch(
    client: &Client,
    plan: &Plan,
    start: f64,
    end: f64,
    step: Duration,
) -> Result<Batch, PromError> {
    let rate = rules::rate_range(plan.scrape, step);
    let mut batch = Batch {
        start,
        end,
        step,
        series: Vec::new(),
        up: Vec::new(),
        refused: Vec::new(),
    };
    let up = client.query_range(&rules::up_query(&plan.matchers), start, end, step)?;
    for s in up {
        let Some(host) = rules::host_of(&s.labels) else {
            continue;
        };
        let points = s.points.iter().map(|&(t, v)| (t, v >= 1.0)).collect();
        batch.up.push(HostUp { host, points });
    }
    for rule in RULES {
        let q = rules::fill(rule.promql, &plan.matchers, rate);
        let answer = match client.query_range(&q, start, end, step) {
            Ok(a) => a,
            Err(e) if is_transport(&e) => return Err(e),
            Err(e) => {
                batch.refused.push(e.to_string());
                continue;
            }
        };
        for s in answer {
            let (Some(host), Some((key, unit))) =
                (rules::host_of(&s.labels), rules::key_of(rule.keying, &s))
            else {
                continue;
            };
            let points = s.points.iter().map(|&(t, v)| (t, unit.apply(v))).collect();
            batch.series.push(HostSeries {
                host,
                exporter: rule.exporter,
                key,
                points,
                since_first: rule.since_first,
            });
        }
    }
    Ok(batch)
}
