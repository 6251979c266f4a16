//! The run model: every event of a `.wandb` file folded, in file order, into one run
//! (info, config, summary, environment, metric series, system series, console, state
//! and a report of the damage that was skipped). Decoding happens before, in the
//! reader ([`leet_format::decoder`]); folding parses nothing.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::console::{Console, Stream};
use super::metrics::MetricStore;
use super::series::{Series, Stats};
use super::stitch::Stitch;
use crate::msg::RunBatch;
use leet_format::decoder::Decoder;
use leet_format::event::{Event, Events, Row, Sink};
use leet_format::leveldb::{Skip, SkipReason};
use leet_format::record::RecordType;

pub use super::damage::{Breaks, DamageReport};
pub use super::media::{MediaItem, MediaList, MEDIA_PER_KEY};
pub use super::tree::Tree;
pub use leet_format::event::{glob_match, MetricDef, RunInfo, Timestamp, MAX_DEPTH};

/// How many records of each type were read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordCounts {
    pub by_type: BTreeMap<&'static str, u64>,
    pub total: u64,
    pub last_num: i64,
}

/// Everything the viewer shows about one run.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub info: RunInfo,
    pub config: Tree,
    pub summary: Tree,
    /// Environment records merged into one JSON object (protobuf-JSON field names,
    /// as W&B shows them; a later record's field replaces an earlier one's).
    pub environment: Map<String, Value>,
    /// History metrics: key → series over `_step` (or the metric's step metric).
    pub metrics: MetricStore,
    /// Latest non-numeric history values, as JSON text.
    pub latest_other: BTreeMap<String, String>,
    /// The extremes of each metric's integers past 2^53, exact (the statistics'
    /// steps of ties in the double).
    pub exact: super::exact::ExactExtremes,
    pub metric_defs: Vec<MetricDef>,
    /// Key prefixes of rich media objects (a history value with a `_type` field, e.g.
    /// images and histograms): their numeric fields are not metrics.
    pub media_prefixes: BTreeSet<String>,
    /// Images logged under each media key (`wandb.Image`), oldest first, the newest
    /// [`MEDIA_PER_KEY`] kept per key.
    pub media: BTreeMap<String, MediaList>,
    /// Of a media key, the images older than those kept (past [`MEDIA_PER_KEY`]).
    pub media_dropped: BTreeMap<String, u64>,
    /// The run said it is about to be preempted (a `preempting` record).
    pub preempting: bool,
    /// System metrics: key → series over Unix time in seconds.
    pub system: MetricStore,
    /// Row times, and step-metric'd values by `_step` (charting against time or a metric).
    pub timeline: super::timeline::Timeline,
    pub console: Console,
    pub exit_code: Option<i32>,
    pub exit_runtime: Option<i32>,
    pub last_step: Option<i64>,
    /// The highest history step read (where damage's lost steps begin).
    pub(crate) top_step: Option<i64>,
    /// Largest `_timestamp` / stats time seen, Unix seconds.
    pub last_time: Option<f64>,
    pub history_rows: u64,
    pub damage: DamageReport,
    /// `_step` ranges lost to damage between history rows.
    pub breaks: Breaks,
    /// Its rows on the step axis, and where a later segment of its resumed run
    /// takes over (rows from there on are charted nowhere).
    pub stitch: Stitch,
    pub counts: RecordCounts,
    pub producer: String,
    // Scratch space reused across events.
    /// Media fields of the history row being folded: (prefix, field, text).
    pub(crate) row_media: Vec<(String, String, String)>,
    pub(crate) row: Vec<(usize, f64)>,
    pub(crate) row_steps: FxHashMap<String, f64>,
    pub(crate) step_metric_of: FxHashMap<String, Option<String>>,
    pub(crate) last_step_values: FxHashMap<String, f64>,
    /// Series of each key of the batch being folded (`usize::MAX`: not looked up).
    pub(crate) metric_of: Vec<usize>,
    pub(crate) system_of: Vec<usize>,
    /// Decodes the records handed to [`Run::apply`].
    local: Decoder,
}

impl Run {
    /// An empty run.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes after the last record of a run that has ended (its exit record read)
    /// that form no record: nothing more is coming to finish them, so they are
    /// lost (0 while the run may still write them, or when there are none).
    #[must_use]
    pub fn unfinished_tail(&self) -> u64 {
        if self.exit_code.is_some() {
            self.damage.incomplete_tail
        } else {
            0
        }
    }

    /// Record a skipped span.
    pub fn skip(&mut self, s: Skip) {
        self.damage.add(s);
        self.breaks.damage(self.top_step);
    }

    /// Decode one record payload (found at `offset`) and fold it in: for records
    /// that did not come through a reader (tests, hand-made batches). A payload
    /// that does not decode is counted as damage, never a panic.
    pub fn apply(&mut self, offset: u64, payload: &[u8]) {
        self.local.record(offset, payload);
        let ev = self.local.take();
        self.fold(&ev);
    }

    /// The integers past 2^53 of row `r` (in `ev.exact`): per value its key, the
    /// integer and its series' count before the row is folded.
    fn exact_before(&self, ev: &Events, r: &Row) -> Vec<(String, i128, u64)> {
        let (start, end) = (r.values.start, r.values.end);
        let from = ev.exact.partition_point(|e| e.0 < start);
        (ev.exact[from..].iter())
            .take_while(|e| e.0 < end)
            .filter_map(|(i, text)| {
                let v: i128 = text.parse().ok()?;
                let &(id, _) = ev.values.get(*i as usize)?;
                let key = ev.keys.get(id as usize)?;
                let before = self.metrics.get(key).map_or(0, Series::count);
                Some((key.clone(), v, before))
            })
            .collect()
    }

    /// After the row of `exact` ([`Run::exact_before`]) is folded: each value
    /// its series took (a row cut by a later segment is charted nowhere) counted
    /// at its point's x.
    fn exact_after(&mut self, exact: Vec<(String, i128, u64)>) {
        for (key, v, before) in exact {
            let x = (self.metrics.get(&key))
                .filter(|s| s.count() > before)
                .and_then(Series::last)
                .map(|p| p.0);
            if let Some(x) = x {
                self.exact.entry(key).or_default().add(x, v);
            }
        }
    }

    /// `key`'s statistics: its series' (None where it has none), the steps and
    /// values of extremes past 2^53 exact.
    #[must_use]
    pub fn stats_of(&self, key: &str) -> Option<Stats> {
        let s = self.metrics.get(key)?.stats();
        Some(match self.exact.get(key) {
            Some(e) => e.apply(s),
            None => s,
        })
    }

    /// Fold a reader's batch of events.
    pub fn fold(&mut self, ev: &Events) {
        self.start_batch(ev);
        for (at, e) in ev.list.iter().enumerate() {
            match e {
                Event::Row(r) => {
                    // Integers past 2^53 in the row (rare: the decoder lists them).
                    let exact = if ev.exact.is_empty() || !r.complete {
                        Vec::new()
                    } else {
                        self.exact_before(ev, r)
                    };
                    self.fold_row(ev, r);
                    if !exact.is_empty() {
                        self.exact_after(exact);
                    }
                    if let Some(s) = ev.exact_step(at, r).filter(|_| r.complete) {
                        // The step as logged, which its double is not.
                        self.last_step = Some(s);
                        self.top_step = self.top_step.max(Some(s));
                    }
                    if r.complete && self.breaks.wants(self.last_step) {
                        self.breaks.row(self.last_step);
                    }
                }
                Event::Stats { time, values } => self.fold_stats(ev, *time, values),
                Event::Console {
                    stdout,
                    time,
                    text,
                    legacy,
                    node,
                } => {
                    let stream = if *stdout {
                        Stream::Stdout
                    } else {
                        Stream::Stderr
                    };
                    match (node, legacy) {
                        (Some(n), true) => self.console.write_line_from(n, stream, *time, text),
                        (Some(n), false) => self.console.write_from(n, stream, *time, text),
                        (None, true) => self.console.write_line(stream, *time, text),
                        (None, false) => self.console.write(stream, *time, text),
                    }
                }
                Event::Run(info) => self.info.merge((**info).clone()),
                Event::Exit { code, runtime } => {
                    self.exit_code = Some(*code);
                    self.exit_runtime = Some(*runtime);
                }
                Event::Environment(m) => self.environment.extend(m.clone()),
                Event::Metric(def) => self.add_metric_def(def.clone()),
                Event::Producer(p) => self.producer.clone_from(p),
                Event::Preempting => self.preempting = true,
                Event::Bad { offset, len } => {
                    self.damage.bad_records += 1;
                    self.damage.add(Skip {
                        offset: *offset,
                        len: *len,
                        reason: SkipReason::BadRecord,
                    });
                    self.breaks.damage(self.top_step);
                }
                Event::Skip(s) => self.skip(*s),
            }
        }
        self.config.apply(&ev.paths, &ev.config);
        self.summary.apply(&ev.paths, &ev.summary);
        let t = &ev.tally;
        for (i, &n) in t.by_kind.iter().enumerate() {
            if n > 0 {
                *self
                    .counts
                    .by_type
                    .entry(RecordType::ALL[i].name())
                    .or_insert(0) += n;
            }
        }
        self.counts.total += t.total;
        if let Some(n) = t.last_num {
            self.counts.last_num = n;
        }
    }

    /// Fold a batch from a reader thread (its events, and any raw records and spans
    /// a hand-made batch carries). The open span and the pending tail are the
    /// caller's to take: a compared run keeps no tail.
    pub fn fold_batch(&mut self, b: &RunBatch) {
        for ev in &b.events {
            self.fold(ev);
        }
        for (off, payload) in &b.records {
            self.apply(*off, payload);
        }
        for s in &b.skips {
            self.skip(*s);
        }
    }

    fn add_metric_def(&mut self, def: MetricDef) {
        leet_format::event::define(&mut self.metric_defs, def);
        self.step_metric_of.clear();
    }

    /// Whether a history key gets no chart: W&B's internal `_`-prefixed keys, fields
    /// of rich media objects, and keys hidden by `define_metric(hidden=True)`.
    #[must_use]
    pub fn is_hidden(&self, key: &str) -> bool {
        if key.starts_with('_') {
            return true;
        }
        if self.is_media_field(key) {
            return true;
        }
        self.hidden_by_define(key)
    }

    /// Whether a history key is a field of a rich media object (`img.width`,
    /// `samples.count`), not a metric.
    #[must_use]
    pub fn is_media_field(&self, key: &str) -> bool {
        self.media_prefixes.iter().any(|p| {
            key.len() > p.len() && key.starts_with(p.as_str()) && key.as_bytes()[p.len()] == b'.'
        })
    }

    /// Whether a history key is hidden by `define_metric(hidden=True)` (the user
    /// may show those: `H`).
    #[must_use]
    pub fn hidden_by_define(&self, key: &str) -> bool {
        self.metric_defs.iter().any(|d| d.hidden && d.matches(key))
    }

    /// The x-axis name of a history key (`_step` unless define_metric chose another).
    #[must_use]
    pub fn x_axis_of(&self, key: &str) -> &str {
        leet_format::event::step_metric_for(&self.metric_defs, key).unwrap_or("_step")
    }

    /// Runtime in seconds: from the exit record, else the span from the start time to
    /// the newest data.
    #[must_use]
    pub fn runtime(&self) -> Option<f64> {
        if let Some(r) = self.exit_runtime {
            return Some(f64::from(r));
        }
        let start = self
            .info
            .start_time
            .map(|(s, n)| s as f64 + f64::from(n) * 1e-9)?;
        self.last_time.map(|t| (t - start).max(0.0))
    }

    /// The last history step, else the summary `_step`, else 0. (wandb-core writes a
    /// row's summary before its history record, so after a crash the summary can be
    /// one step ahead of what was really logged.)
    #[must_use]
    pub fn step(&self) -> i64 {
        self.known_step().unwrap_or(0)
    }

    /// [`Run::step`], or None when the file has said nothing about steps yet.
    #[must_use]
    pub fn known_step(&self) -> Option<i64> {
        self.last_step
            .or(self.summary.number("_step").map(|s| s as i64))
    }
}

impl Sink for Run {
    fn fold(&mut self, events: &Events) {
        Run::fold(self, events);
    }

    fn at_end(&mut self, pending: u64, open: Option<Skip>) {
        self.damage.incomplete_tail = pending;
        self.damage.set_open(open);
    }
}

#[cfg(test)]
mod tests;
