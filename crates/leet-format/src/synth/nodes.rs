//! A multi-node run as W&B's shared mode writes it: several nodes' system
//! monitors, each started with its own `x_label`, write `stats` records whose keys
//! carry the suffix `/l:<label>` (spec `system-metrics.md` §2,
//! `wandb-file-format.md` §9), next to the primary node's history.

use super::{header, item, record, summary_item, timestamp, Writer};
use crate::pb;

/// What to generate.
#[derive(Debug, Clone)]
pub struct NodesSpec {
    /// The run id every node shares.
    pub run_id: String,
    /// The nodes' `x_label`s.
    pub labels: Vec<String>,
    /// GPUs per node.
    pub gpus: usize,
    /// Samples per node, one a second, and as many history rows.
    pub samples: usize,
    /// Unix seconds of the first sample.
    pub start_time: f64,
}

impl Default for NodesSpec {
    fn default() -> Self {
        Self {
            run_id: "mnode001".into(),
            labels: vec!["node-0".into(), "node-1".into()],
            gpus: 2,
            samples: 30,
            start_time: 1_796_060_000.0,
        }
    }
}

/// One node's system metrics at second `t` (node `n`): the keys the Go system
/// monitor writes (`cpu`, `memory_percent`, `proc.memory.rssMB`, the network
/// counters, `gpu.<i>.*`), each with the node's suffix. The last node's last
/// GPU idles (a straggler to see).
fn node_items(spec: &NodesSpec, n: usize, t: usize) -> Vec<pb::StatsItem> {
    let label = &spec.labels[n];
    let ts = t as f64;
    let wave = (ts / 4.0 + n as f64).sin();
    let mut items: Vec<(String, f64)> = vec![
        ("cpu".into(), 40.0 + 10.0 * wave + 5.0 * n as f64),
        ("memory_percent".into(), 20.0 + ts * 0.2 + 3.0 * n as f64),
        ("network.recv".into(), ts * 1.5e6 * (n + 1) as f64),
        ("network.sent".into(), ts * 1.0e6 * (n + 1) as f64),
        (
            "proc.memory.rssMB".into(),
            900.0 + ts * 4.0 + 100.0 * n as f64,
        ),
    ];
    for g in 0..spec.gpus {
        let idle = n + 1 == spec.labels.len() && g + 1 == spec.gpus;
        let util = if idle {
            0.0
        } else {
            85.0 + 10.0 * (ts / 3.0 + g as f64).sin()
        };
        items.push((format!("gpu.{g}.gpu"), util));
        items.push((
            format!("gpu.{g}.memoryAllocated"),
            if idle { 1.0 } else { 60.0 + ts * 0.5 },
        ));
        items.push((format!("gpu.{g}.powerWatts"), 70.0 + util * 2.5));
        items.push((format!("gpu.{g}.temp"), 35.0 + util * 0.3));
    }
    items.sort_by(|a, b| a.0.cmp(&b.0));
    items
        .into_iter()
        .map(|(k, v)| pb::StatsItem {
            key: format!("{k}/l:{label}"),
            value_json: format!("{}", (v * 1000.0).round() / 1000.0),
        })
        .collect()
}

/// Call `out` with each record payload in file order: header, run record, then
/// each second the two summary records and the history row (`loss`) as
/// wandb-core writes them, and one stats record per node; then the exit record.
pub fn nodes_records(spec: &NodesSpec, mut out: impl FnMut(&[u8])) {
    use pb::record::RecordType as T;
    let mut num = 0i64;
    let mut emit = |r: T| {
        num += 1;
        out(&record(num, r));
    };
    emit(T::Header(header()));
    emit(T::Run(pb::RunRecord {
        run_id: spec.run_id.clone(),
        project: "leet-fixtures".into(),
        display_name: "multinode-run".into(),
        start_time: Some(timestamp(spec.start_time)),
        ..Default::default()
    }));
    for t in 0..spec.samples {
        let at = spec.start_time + t as f64 + 1.0;
        let loss = 2.0 * (-(t as f64) / 10.0).exp();
        let row = vec![
            item("_step", t.to_string()),
            item("_runtime", format!("{}", t + 1)),
            item("_timestamp", format!("{at}")),
            item("loss", format!("{}", (loss * 1e6).round() / 1e6)),
        ];
        // wandb-core's two summary records before each row: the runtime, then the row.
        emit(T::Summary(pb::SummaryRecord {
            update: vec![
                pb::SummaryItem {
                    nested_key: vec!["_wandb".into(), "runtime".into()],
                    value_json: format!("{}", t + 1),
                    ..Default::default()
                },
                summary_item("_runtime", format!("{}", t + 1)),
            ],
            ..Default::default()
        }));
        emit(T::Summary(pb::SummaryRecord {
            update: (row.iter())
                .map(|h| summary_item(&h.nested_key[0], h.value_json.clone()))
                .collect(),
            ..Default::default()
        }));
        emit(T::History(pb::HistoryRecord {
            item: row,
            ..Default::default()
        }));
        for n in 0..spec.labels.len() {
            emit(T::Stats(pb::StatsRecord {
                timestamp: Some(timestamp(at + 0.01 * n as f64)),
                item: node_items(spec, n, t),
                ..Default::default()
            }));
        }
    }
    emit(T::Exit(pb::RunExitRecord {
        exit_code: 0,
        runtime: i32::try_from(spec.samples).unwrap_or(i32::MAX),
        ..Default::default()
    }));
}

/// The whole run's `.wandb` file in memory.
#[must_use]
pub fn nodes_file(spec: &NodesSpec) -> Vec<u8> {
    let mut w = Writer::new();
    nodes_records(spec, |p| w.append(p));
    w.into_bytes()
}
