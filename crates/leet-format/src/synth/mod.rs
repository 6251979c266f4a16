//! Synthetic runs shaped like wandb-core's output (header, run, then per step two
//! summary records and one history record, then the exit record), written with our
//! [`Writer`]. For benchmarks, memory checks, tests and the demo.

use prost::Message as _;

mod nodes;
pub use nodes::{nodes_file, nodes_records, NodesSpec};

use super::leveldb::Writer;
use super::pb;

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthSpec {
    /// The run id.
    pub run_id: String,
    /// History rows written.
    pub steps: u64,
    /// Metrics in each row.
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

/// The header record every synthetic run starts with (its producer named).
fn header() -> pb::HeaderRecord {
    pb::HeaderRecord {
        version_info: Some(pb::VersionInfo {
            producer: "leet-synth".into(),
            ..Default::default()
        }),
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

/// A history record's payload numbered `num`, of these (key, value_json) items
/// as logged (each under `key`, as older SDKs write them): tests of one shape.
#[must_use]
pub fn history_record(num: i64, items: &[(&str, &str)]) -> Vec<u8> {
    let item = (items.iter())
        .map(|(k, v)| pb::HistoryItem {
            key: (*k).to_owned(),
            value_json: (*v).to_owned(),
            ..Default::default()
        })
        .collect();
    record(
        num,
        pb::record::RecordType::History(pb::HistoryRecord {
            item,
            ..Default::default()
        }),
    )
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
    out(&record(next(), T::Header(header())));
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

/// One whole run as wandb-core writes it (see [`run_records`]), with values that
/// look like training curves: for tests, benchmarks and the end-to-end tests of the
/// multi-run workspace.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// The run id.
    pub run_id: String,
    /// The run's display name.
    pub display_name: String,
    /// The W&B project.
    pub project: String,
    /// Unix seconds.
    pub start_time: f64,
    /// `wandb.init(config=…)`, in the run record: (dotted path, JSON value), e.g.
    /// `("model.layers", "4")`. `lr` sets how fast the curves fall or rise.
    pub config: Vec<(String, String)>,
    /// A config record after the history (keys added or changed later).
    pub late_config: Vec<(String, String)>,
    /// History rows written: steps `first_step..first_step + steps`.
    pub steps: u64,
    /// A resumed segment continues the steps of the one before.
    pub first_step: u64,
    /// Metric names (`loss`, `acc`, `val/loss`, …; see [`curve`]).
    pub metrics: Vec<String>,
    /// Deterministic noise: two runs of one config differ by their seed.
    pub seed: u64,
    /// The exit record's code; None: no exit record (crashed, or still running).
    pub exit_code: Option<i32>,
    /// The run record's `resumed` flag (a later segment of the same run id).
    pub resumed: bool,
    /// The run's tags.
    pub tags: Vec<String>,
    /// The run's notes.
    pub notes: String,
    /// Seconds between two rows (`_runtime`, `_timestamp`).
    pub step_seconds: f64,
    /// Summary keys removed after the history (a removal record).
    pub summary_remove: Vec<String>,
}

impl Default for RunSpec {
    fn default() -> Self {
        Self {
            run_id: "synth001".into(),
            display_name: "synth-run".into(),
            project: "leet-synth".into(),
            start_time: 1_796_000_000.0,
            config: vec![("lr".into(), "0.001".into())],
            late_config: Vec::new(),
            steps: 100,
            first_step: 0,
            metrics: vec!["loss".into(), "acc".into(), "val/loss".into()],
            seed: 0,
            exit_code: Some(0),
            resumed: false,
            tags: Vec::new(),
            notes: String::new(),
            step_seconds: 1.0,
            summary_remove: Vec::new(),
        }
    }
}

impl RunSpec {
    /// The config's `lr` (1e-3 without one).
    #[must_use]
    pub fn lr(&self) -> f64 {
        self.config
            .iter()
            .rev()
            .find(|(k, _)| k == "lr")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(1e-3)
    }
}

/// Uniform in [-1, 1], a pure function of its inputs (splitmix64).
fn noise(seed: u64, metric: &str, step: u64) -> f64 {
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(step)
        .wrapping_add(u64::from(crc32fast::hash(metric.as_bytes())) << 20);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// The value of `metric` at `step` for a run of learning rate `lr` and `seed`
/// (rounded to 6 digits): a name with `acc` rises from 0.1 towards 1, `lr` decays
/// slowly from `lr`, anything else falls like a loss from 2.4 towards 0.1 (a `val`
/// one a little higher and noisier). The larger the `lr`, the faster (rate
/// ∝ √(lr / 1e-3)); the seed adds a few percent of noise and shifts the floor.
#[must_use]
pub fn curve(metric: &str, step: u64, lr: f64, seed: u64) -> f64 {
    let s = step as f64;
    let rate = 0.01 * (lr.max(1e-9) / 1e-3).sqrt();
    let left = (-s * rate).exp();
    let n = noise(seed, metric, step);
    let shift = 0.02 * noise(seed, metric, u64::MAX);
    let v = if metric == "lr" {
        lr * (-s / 5000.0).exp()
    } else if metric.contains("acc") {
        (1.0 - 0.9 * left + 0.01 * n + shift).clamp(0.0, 1.0)
    } else if metric.contains("val") {
        0.15 + 2.3 * left + 0.04 * n * (0.2 + left) + shift
    } else {
        0.1 + 2.3 * left + 0.025 * n * (0.2 + left) + shift
    };
    (v * 1e6).round() / 1e6
}

/// Config items as wandb-core writes them: one per top-level key, its whole
/// subtree as JSON (`key:"model", value_json:{"layers":4}`). A value that is not
/// JSON is written as a JSON string.
fn config_items(pairs: &[(String, String)]) -> Vec<pb::ConfigItem> {
    let mut tree = serde_json::Map::new();
    for (path, json) in pairs {
        let v = serde_json::from_str(json).unwrap_or_else(|_| json.clone().into());
        let path: Vec<String> = path.split('.').map(str::to_owned).collect();
        super::value::insert_path(&mut tree, &path, v);
    }
    tree.into_iter()
        .map(|(key, v)| pb::ConfigItem {
            key,
            value_json: v.to_string(),
            ..Default::default()
        })
        .collect()
}

fn timestamp(t: f64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.floor() as i64,
        nanos: ((t - t.floor()) * 1e9) as i32,
    }
}

/// Call `out` with each record payload of the run in file order, as wandb-core
/// writes them: header; run record (config with `_wandb: {}`, start time, display
/// name, project, tags, notes, `resumed`, `starting_step`); per step the two
/// summary records (`_wandb.runtime` and `_runtime`, then the row's values) and
/// the history record (`_step`, `_runtime`, `_timestamp`, the metrics); then the
/// late config record, the summary removals, and the exit record.
pub fn run_records(spec: &RunSpec, mut out: impl FnMut(&[u8])) {
    use pb::record::RecordType as T;
    let mut num = 0i64;
    let mut emit = |r: T| {
        num += 1;
        out(&record(num, r));
    };
    emit(T::Header(header()));
    let mut config = vec![("_wandb".to_owned(), "{}".to_owned())];
    config.extend(spec.config.iter().cloned());
    emit(T::Run(pb::RunRecord {
        run_id: spec.run_id.clone(),
        project: spec.project.clone(),
        display_name: spec.display_name.clone(),
        notes: spec.notes.clone(),
        tags: spec.tags.clone(),
        config: Some(pb::ConfigRecord {
            update: config_items(&config),
            ..Default::default()
        }),
        start_time: Some(timestamp(spec.start_time)),
        resumed: spec.resumed,
        starting_step: i64::try_from(spec.first_step).unwrap_or(i64::MAX),
        ..Default::default()
    }));
    let lr = spec.lr();
    let mut runtime = 0.0;
    for k in 0..spec.steps {
        let step = spec.first_step + k;
        runtime = (k + 1) as f64 * spec.step_seconds;
        let t = spec.start_time + runtime;
        let mut items = vec![
            item("_step", step.to_string()),
            item("_runtime", format!("{runtime}")),
            item("_timestamp", format!("{t}")),
        ];
        for m in &spec.metrics {
            items.push(item(m, format!("{}", curve(m, step, lr, spec.seed))));
        }
        let secs = (runtime as i64).to_string();
        emit(T::Summary(pb::SummaryRecord {
            update: vec![
                pb::SummaryItem {
                    nested_key: vec!["_wandb".into(), "runtime".into()],
                    value_json: secs.clone(),
                    ..Default::default()
                },
                summary_item("_runtime", secs),
            ],
            ..Default::default()
        }));
        emit(T::Summary(pb::SummaryRecord {
            update: items
                .iter()
                .map(|h| pb::SummaryItem {
                    nested_key: h.nested_key.clone(),
                    value_json: h.value_json.clone(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }));
        emit(T::History(pb::HistoryRecord {
            item: items,
            ..Default::default()
        }));
    }
    if !spec.late_config.is_empty() {
        emit(T::Config(pb::ConfigRecord {
            update: config_items(&spec.late_config),
            ..Default::default()
        }));
    }
    if !spec.summary_remove.is_empty() {
        emit(T::Summary(pb::SummaryRecord {
            remove: spec
                .summary_remove
                .iter()
                .map(|k| summary_item(k, String::new()))
                .collect(),
            ..Default::default()
        }));
    }
    if let Some(code) = spec.exit_code {
        emit(T::Exit(pb::RunExitRecord {
            exit_code: code,
            runtime: runtime.ceil() as i32,
            ..Default::default()
        }));
    }
}

/// The run's `.wandb` file in memory (LevelDB-framed, W&B's header).
#[must_use]
pub fn run_file(spec: &RunSpec) -> Vec<u8> {
    let mut w = Writer::new();
    run_records(spec, |p| w.append(p));
    w.into_bytes()
}

/// The SDK's run directory name for a run started at `start_time` (Unix seconds,
/// shown in UTC; the SDK uses local time): `run-YYYYMMDD_HHMMSS-<id>`, with
/// `offline-` before it when `offline`.
#[must_use]
pub fn run_dir_name(start_time: f64, run_id: &str, offline: bool) -> String {
    let t = leet_text::rfc3339(start_time.floor() as i64, 0).unwrap_or_default();
    // "YYYY-MM-DDTHH:MM:SSZ" → "YYYYMMDD_HHMMSS".
    let digits: String = t.chars().filter(char::is_ascii_digit).collect();
    let (date, time) = digits.split_at(digits.len().min(8));
    let prefix = if offline { "offline-run" } else { "run" };
    format!("{prefix}-{date}_{time}-{run_id}")
}

#[cfg(test)]
mod tests;
