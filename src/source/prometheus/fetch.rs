//! One refresh of the cluster: every rule as a range query over `[start, end]`, the
//! answers turned into per-host W&B-keyed series ([`Batch`]), which the cluster
//! model (`store::cluster`) folds in.

use std::time::Duration;

use super::api::{Client, PromError};
use super::matchers::Matchers;
#[cfg(test)]
use super::rules::RULES;
use super::rules::{self, Exporter, Part};

pub use crate::msg::cluster::{Batch, HostSeries, HostUp};

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

/// Range queries in flight at once. The rules are independent, so the server
/// evaluates several while this side parses the answers already in: bounded, so a
/// refresh costs the server (and this process) a few connections, never one per rule.
pub const PARALLEL: usize = 4;

/// One rule's answer as series of W&B keys, or the error it got.
type RuleAnswer = Result<Vec<HostSeries>, PromError>;

/// Rule `rule`'s answer over `[start, end]`, turned into per-host series (the
/// parsing and the unit conversion happen on the thread that asked).
fn ask(
    client: &Client,
    rule: &rules::Rule,
    q: &str,
    range: (f64, f64),
    step: Duration,
) -> RuleAnswer {
    let answer = client.query_range(q, range.0, range.1, step)?;
    Ok(answer
        .into_iter()
        .filter_map(|s| {
            let host = rules::host_of(&s.labels)?;
            let instance = rules::instance_of(&s.labels)?;
            let (key, unit) = rules::key_of(rule.keying, &s)?;
            let mut points = s.points;
            if unit != rules::Unit::SAME {
                for p in &mut points {
                    p.1 = unit.apply(p.1);
                }
            }
            Some(HostSeries {
                host,
                instance,
                exporter: rule.exporter,
                key,
                points,
                since_first: rule.since_first,
            })
        })
        .collect())
}

/// Every rule of `part` asked, at most [`PARALLEL`] at once, the answers in rule
/// order. Once one gets a transport error no further rule is asked (the refresh
/// fails anyway).
fn ask_all(
    client: &Client,
    plan: &Plan,
    part: Part,
    range: (f64, f64),
    step: Duration,
) -> Vec<Option<RuleAnswer>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let rate = rules::rate_range(plan.scrape, step);
    let asked: Vec<(rules::Rule, String)> = rules::part(part)
        .into_iter()
        .map(|(rule, promql)| (rule, rules::fill(&promql, &plan.matchers, rate)))
        .collect();
    let (next, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
    let worker = || {
        let mut got = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((rule, q)) = asked.get(i) else {
                break;
            };
            if failed.load(Ordering::Relaxed) {
                break;
            }
            let answer = ask(client, rule, q, range, step);
            if answer.as_ref().is_err_and(is_transport) {
                failed.store(true, Ordering::Relaxed);
            }
            got.push((i, answer));
        }
        got
    };
    let mut answers: Vec<Option<RuleAnswer>> = asked.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..PARALLEL.min(asked.len()))
            .filter_map(|n| {
                std::thread::Builder::new()
                    .name(format!("leet-prometheus-{n}"))
                    .spawn_scoped(scope, worker)
                    .ok()
            })
            .collect();
        // This thread asks too: with no helper started, the rules are asked in turn.
        let mine = worker();
        let theirs = helpers.into_iter().filter_map(|h| h.join().ok());
        for (i, answer) in std::iter::once(mine).chain(theirs).flatten() {
            if let Some(slot) = answers.get_mut(i) {
                *slot = Some(answer);
            }
        }
    });
    answers
}

/// Read `[start, end]` every `step`: `up` first (a server that is down costs one
/// request; not for [`Part::Rest`], whose screen part read it), then the rules of
/// `part`, [`PARALLEL`] at a time.
pub fn fetch(
    client: &Client,
    plan: &Plan,
    part: Part,
    (start, end): (f64, f64),
    step: Duration,
) -> Result<Batch, PromError> {
    let mut batch = Batch {
        start,
        end,
        step,
        series: Vec::new(),
        up: Vec::new(),
        refused: Vec::new(),
    };
    if part != Part::Rest {
        let up = client.query_range(&rules::up_query(&plan.matchers), start, end, step)?;
        for s in up {
            let (Some(host), Some(instance)) =
                (rules::host_of(&s.labels), rules::instance_of(&s.labels))
            else {
                continue;
            };
            let points = s.points.iter().map(|&(t, v)| (t, v >= 1.0)).collect();
            let job = (s.labels.get("job").map(|j| leet_text::sanitize(j))).unwrap_or_default();
            batch.up.push(HostUp {
                host,
                instance,
                job,
                points,
            });
        }
    }
    for answer in ask_all(client, plan, part, (start, end), step)
        .into_iter()
        .flatten()
    {
        match answer {
            Ok(series) => batch.series.extend(series),
            Err(e) if is_transport(&e) => return Err(e),
            Err(e) => batch.refused.push(e.to_string()),
        }
    }
    derive_dcgm(&mut batch.series);
    Ok(batch)
}

/// The points of `a` and `b` at the same times, combined by `f`.
fn zip_points(a: &[(f64, f64)], b: &[(f64, f64)], f: impl Fn(f64, f64) -> f64) -> Vec<(f64, f64)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len().min(b.len())));
    while let (Some(&(ta, va)), Some(&(tb, vb))) = (a.get(i), b.get(j)) {
        if ta < tb {
            i += 1;
        } else if tb < ta {
            j += 1;
        } else {
            out.push((ta, f(va, vb)));
            i += 1;
            j += 1;
        }
    }
    out
}

/// The keys the sampler adds to dcgm-exporter's (`dcgm_exporter.rs`), from the
/// fields read: `memoryAllocatedBytes` (frame buffer used, MiB → bytes),
/// `memoryAllocated` (used / total, or used / (used + free), in %) and
/// `energyJoules` (the total energy, mJ → J).
pub fn derive_dcgm(series: &mut Vec<HostSeries>) {
    use std::collections::BTreeMap;
    type Fields<'a> = BTreeMap<&'a str, &'a [(f64, f64)]>;
    let mut gpus: BTreeMap<(&str, &str, &str), Fields> = BTreeMap::new();
    for s in series.iter().filter(|s| s.exporter == Exporter::Dcgm) {
        let Some((prefix, field)) = s.key.rsplit_once('.') else {
            continue;
        };
        if matches!(
            field,
            "memoryUsed" | "memoryFree" | "memoryTotal" | "totalEnergyConsumption"
        ) {
            let fields = (gpus.entry((s.host.as_str(), s.instance.as_str(), prefix))).or_default();
            fields.insert(field, &s.points);
        }
    }
    let mut derived = Vec::new();
    for ((host, instance, prefix), f) in &gpus {
        let mut add = |field: &str, points: Vec<(f64, f64)>| {
            derived.push(HostSeries {
                host: (*host).to_string(),
                instance: (*instance).to_string(),
                exporter: Exporter::Dcgm,
                key: format!("{prefix}.{field}"),
                points,
                since_first: false,
            });
        };
        if let Some(used) = f.get("memoryUsed") {
            add(
                "memoryAllocatedBytes",
                used.iter().map(|&(t, v)| (t, v * 1_048_576.0)).collect(),
            );
            let pct = |u: f64, total: f64| {
                if total > 0.0 {
                    u / total * 100.0
                } else {
                    f64::NAN
                }
            };
            if let Some(total) = f.get("memoryTotal") {
                add("memoryAllocated", zip_points(used, total, pct));
            } else if let Some(free) = f.get("memoryFree") {
                add(
                    "memoryAllocated",
                    zip_points(used, free, |u, fr| pct(u, u + fr)),
                );
                // dcgm-exporter's default fields have no FB_TOTAL: the size is the
                // sum the share is of (an idle GPU's header read `0B/–`).
                add("memoryTotal", zip_points(used, free, |u, fr| u + fr));
            }
        }
        if let Some(energy) = f.get("totalEnergyConsumption") {
            add(
                "energyJoules",
                energy.iter().map(|&(t, v)| (t, v / 1000.0)).collect(),
            );
        }
    }
    series.extend(derived);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::prometheus::api::tests::{client, fake, fake_by, Reply};

    fn s(key: &str, points: &[(f64, f64)]) -> HostSeries {
        HostSeries {
            host: "h".into(),
            instance: "h:9400".into(),
            exporter: Exporter::Dcgm,
            key: key.into(),
            points: points.to_vec(),
            since_first: false,
        }
    }

    #[test]
    fn the_sampler_s_derived_dcgm_keys() {
        let mut v = vec![
            s("gpu.0.memoryUsed", &[(1.0, 1024.0), (2.0, 2048.0)]),
            s("gpu.0.memoryFree", &[(2.0, 2048.0), (3.0, 0.0)]),
            s("gpu.0.totalEnergyConsumption", &[(1.0, 5000.0)]),
            s("gpu.1.memoryUsed", &[(1.0, 10.0)]),
            s("gpu.1.memoryTotal", &[(1.0, 40.0)]),
        ];
        derive_dcgm(&mut v);
        let got: Vec<(&str, &[(f64, f64)])> = v[5..]
            .iter()
            .map(|s| (s.key.as_str(), s.points.as_slice()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "gpu.0.memoryAllocatedBytes",
                    &[(1.0, 1_073_741_824.0), (2.0, 2_147_483_648.0)][..]
                ),
                ("gpu.0.memoryAllocated", &[(2.0, 50.0)][..]),
                ("gpu.0.memoryTotal", &[(2.0, 4096.0)][..]),
                ("gpu.0.energyJoules", &[(1.0, 5.0)][..]),
                ("gpu.1.memoryAllocatedBytes", &[(1.0, 10_485_760.0)][..]),
                ("gpu.1.memoryAllocated", &[(1.0, 25.0)][..]),
            ]
        );
    }

    const UP: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[
        {"metric":{"__name__":"up","instance":"n1:9100","job":"node"},"values":[[10,"1"],[11,"0"]]}]}}"#;
    const LOAD: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[
        {"metric":{"__name__":"node_load1","instance":"n1:9100"},"values":[[10,"2.5"]]},
        {"metric":{"__name__":"node_load1"},"values":[[10,"9"]]}]}}"#;
    const REFUSED: &str = r#"{"status":"error","errorType":"execution","error":"query processing would load too many samples"}"#;
    const EMPTY: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;

    fn plan() -> Plan {
        Plan {
            matchers: Matchers::default(),
            scrape: Duration::from_secs(1),
        }
    }

    #[test]
    fn each_rule_is_asked_and_a_refused_one_is_named() {
        let (url, rx) = fake_by(|head| {
            let line = head.lines().next().unwrap_or_default().to_string();
            if line.contains("query=up%7B%7D") {
                Reply::Answer(200, UP.into())
            } else if line.contains("query=node_load1%7B%7D") {
                Reply::Answer(200, LOAD.into())
            } else if line.contains("node_load5") {
                Reply::Answer(422, REFUSED.into())
            } else {
                Reply::Answer(200, EMPTY.into())
            }
        });
        let batch = fetch(
            &client(&url),
            &plan(),
            Part::All,
            (10.0, 11.0),
            Duration::from_secs(1),
        )
        .expect("batch");
        assert_eq!(
            batch.up,
            [HostUp {
                host: "n1".into(),
                instance: "n1:9100".into(),
                job: "node".into(),
                points: vec![(10.0, true), (11.0, false)]
            }]
        );
        // The series without a host label is left out.
        assert_eq!(
            batch.series,
            [HostSeries {
                host: "n1".into(),
                instance: "n1:9100".into(),
                exporter: Exporter::Node,
                key: "load.1m".into(),
                points: vec![(10.0, 2.5)],
                since_first: false,
            }]
        );
        assert_eq!(batch.refused.len(), 1, "{:?}", batch.refused);
        assert!(
            batch.refused[0].contains("too many samples"),
            "{:?}",
            batch.refused
        );
        // `up`, then every rule once.
        assert_eq!(rx.try_iter().count(), 1 + RULES.len());
    }

    #[test]
    fn a_server_error_ends_the_refresh_at_once() {
        let (url, rx) = fake(Reply::Answer(503, "overloaded".into()));
        let err = fetch(
            &client(&url),
            &plan(),
            Part::All,
            (10.0, 11.0),
            Duration::from_secs(1),
        )
        .expect_err("503");
        assert!(
            matches!(err, PromError::Status { status: 503, .. }),
            "{err:?}"
        );
        assert_eq!(rx.try_iter().count(), 1);
    }
}
