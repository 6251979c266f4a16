//! Synthetic runs shaped like wandb-core's output (header, run, then per step two
//! summary records and one history record, then the exit record), written with our
//! [`Writer`]. For benchmarks, memory checks, tests and the demo.

use prost::Message as _;

use super::leveldb::Writer;
use super::pb;

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthSpec {
    pub run_id: String,
    pub steps: u64,
    pub metrics: usize,
    /// Write the two summary records wandb-core writes per step.
    pub summaries: bool,
    /// Write a stats record every this many steps (0: none).
    pub stats_every: u64,
    /// Write an exit record at the end.
    pub finished: bool,
}

impl Default for SynthSpec {
    fn default() -> Self {
        Self {
            run_id: "synth001".into(),
            steps: 1000,
            metrics: 10,
            summaries: true,
            stats_every: 0,
            finished: true,
        }
    }
}

fn item(key: &str, value_json: String) -> pb::HistoryItem {
    pb::HistoryItem {
        nested_key: vec![key.to_owned()],
        value_json,
        ..Default::default()
    }
}

fn summary_item(key: &str, value_json: String) -> pb::SummaryItem {
    pb::SummaryItem {
        nested_key: vec![key.to_owned()],
        value_json,
        ..Default::default()
    }
}

fn record(num: i64, r: pb::record::RecordType) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(r),
        ..Default::default()
    }
    .encode_to_vec()
}

/// Metric names: `train/loss`, `train/acc`, `lr`, then `m0`, `m1`, ...
#[must_use]
pub fn metric_name(i: usize) -> String {
    match i {
        0 => "train/loss".into(),
        1 => "train/acc".into(),
        2 => "lr".into(),
        n => format!("m{}", n - 3),
    }
}

/// The value of metric `i` at `step` (deterministic, rounded to 6 digits).
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub fn metric_value(i: usize, step: u64) -> f64 {
    let s = step as f64;
    let v = match i {
        0 => 2.0 * (-s / 5000.0).exp() + 0.01 * (s * 0.37).sin(),
        1 => 1.0 - (-s / 3000.0).exp(),
        2 => 1e-3 * (-s / 50_000.0).exp(),
        n => (s / (100.0 + n as f64 * 37.0)).sin() + n as f64 * 0.1,
    };
    (v * 1e6).round() / 1e6
}

/// Call `out` with each record payload in file order.
pub fn records(spec: &SynthSpec, mut out: impl FnMut(&[u8])) {
    let mut num = 0i64;
    let mut next = || {
        num += 1;
        num
    };
    use pb::record::RecordType as T;
    out(&record(
        next(),
        T::Header(pb::HeaderRecord {
            version_info: Some(pb::VersionInfo {
                producer: "leet-synth".into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
    ));
    out(&record(
        next(),
        T::Run(pb::RunRecord {
            run_id: spec.run_id.clone(),
            project: "leet-synth".into(),
            display_name: format!("{}-run", spec.run_id),
            start_time: Some(prost_types::Timestamp {
                seconds: 1_796_000_000,
                nanos: 0,
            }),
            ..Default::default()
        }),
    ));
    let names: Vec<String> = (0..spec.metrics).map(metric_name).collect();
    #[allow(clippy::cast_precision_loss)]
    for step in 0..spec.steps {
        let t = 1_796_000_000.0 + step as f64 * 0.01;
        let runtime = step as f64 * 0.01;
        let mut items = vec![
            item("_step", step.to_string()),
            item("_runtime", format!("{runtime}")),
            item("_timestamp", format!("{t}")),
        ];
        for (i, n) in names.iter().enumerate() {
            items.push(item(n, format!("{}", metric_value(i, step))));
        }
        if spec.summaries {
            out(&record(
                next(),
                T::Summary(pb::SummaryRecord {
                    update: vec![summary_item("_runtime", format!("{runtime}"))],
                    ..Default::default()
                }),
            ));
            out(&record(
                next(),
                T::Summary(pb::SummaryRecord {
                    update: items
                        .iter()
                        .map(|h| summary_item(&h.nested_key[0], h.value_json.clone()))
                        .collect(),
                    ..Default::default()
                }),
            ));
        }
        out(&record(
            next(),
            T::History(pb::HistoryRecord {
                item: items,
                ..Default::default()
            }),
        ));
        if spec.stats_every > 0 && step % spec.stats_every == 0 {
            let secs = 1_796_000_000 + i64::try_from(step / 100).unwrap_or(0);
            out(&record(
                next(),
                T::Stats(pb::StatsRecord {
                    timestamp: Some(prost_types::Timestamp {
                        seconds: secs,
                        nanos: 0,
                    }),
                    item: vec![
                        pb::StatsItem {
                            key: "cpu".into(),
                            value_json: format!("{}", 20.0 + (step % 50) as f64),
                        },
                        pb::StatsItem {
                            key: "memory_percent".into(),
                            value_json: "41.5".into(),
                        },
                        pb::StatsItem {
                            key: "gpu.0.gpu".into(),
                            value_json: format!("{}", (step % 100) as f64),
                        },
                    ],
                    ..Default::default()
                }),
            ));
        }
    }
    if spec.finished {
        out(&record(
            next(),
            T::Exit(pb::RunExitRecord {
                exit_code: 0,
                runtime: 10,
                ..Default::default()
            }),
        ));
    }
}

/// A whole synthetic `.wandb` file in memory.
#[must_use]
pub fn file_bytes(spec: &SynthSpec) -> Vec<u8> {
    let mut w = Writer::new();
    records(spec, |p| w.append(p));
    w.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decoder::Decoder;
    use crate::decode::event::{Event, Scalar, TreeOp};
    use crate::decode::leveldb::{scan, Frame};

    #[test]
    fn synthetic_file_reads_back() {
        let spec = SynthSpec {
            steps: 300,
            stats_every: 10,
            ..SynthSpec::default()
        };
        let bytes = file_bytes(&spec);
        let mut d = Decoder::new();
        scan(&bytes, 0, |f| {
            if let Frame::Record { offset, payload } = f {
                d.record(offset, &payload);
            }
        })
        .expect("header");
        let ev = d.take();
        let rows: Vec<_> = ev
            .list
            .iter()
            .filter_map(|e| match e {
                Event::Row(r) => Some(r),
                _ => None,
            })
            .collect();
        assert_eq!(rows.len(), 300);
        assert_eq!(rows[299].step, Some(299.0));
        assert!(rows.iter().all(|r| r.complete && r.values.len() == 10));
        let stats = ev
            .list
            .iter()
            .filter(|e| matches!(e, Event::Stats { .. }))
            .count();
        assert_eq!(stats, 30);
        for i in 0..10 {
            assert!(ev.keys.contains(&metric_name(i)), "{}", metric_name(i));
        }
        let m0 = ev
            .summary
            .iter()
            .find_map(|op| match op {
                TreeOp::Set(id, Scalar::Json(v)) if ev.paths[*id as usize].joined == "m0" => {
                    Some(v.clone())
                }
                _ => None,
            })
            .expect("summary m0");
        assert_eq!(m0, format!("{}", metric_value(3, 299)));
        assert!(ev
            .list
            .iter()
            .any(|e| matches!(e, Event::Exit { code: 0, .. })));
        assert_eq!(ev.tally.total, 2 + 300 * 3 + 30 + 1);
    }
}
