//! Domain events: what a reader thread makes of record payloads, ready for the
//! store to fold without parsing anything.
//!
//! One [`Events`] is one batch of consecutive records. It is self-contained: the
//! metric keys and summary/config paths its events use are named in its own tables
//! (`keys`, `paths`) and referred to by index, so a row is a few `(u32, f64)` pairs
//! and batches decoded on different threads need no shared state.

use std::ops::Range;

use serde_json::{Map, Value};

use super::leveldb::Skip;
use super::record::RecordType;
use super::value;
use super::wire::ItemValue;

/// A timestamp as (seconds, nanos) since the Unix epoch, UTC.
pub type Timestamp = (i64, i32);

/// Run-level facts from `run` records (later records merge their non-empty fields).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunInfo {
    /// The run's id (the `run-<id>.wandb` part of the file name).
    pub run_id: String,
    /// The W&B entity (user or team).
    pub entity: String,
    /// The W&B project.
    pub project: String,
    /// The run's display name.
    pub display_name: String,
    /// The run's notes.
    pub notes: String,
    /// The run's tags.
    pub tags: Vec<String>,
    /// The run group.
    pub group: String,
    /// The job type.
    pub job_type: String,
    /// The host the run ran on.
    pub host: String,
    /// The sweep the run belongs to.
    pub sweep_id: String,
    /// When the run started.
    pub start_time: Option<Timestamp>,
    /// The first step of this segment (a resumed run continues an earlier one).
    pub starting_step: i64,
    /// Whether this segment resumes an earlier run.
    pub resumed: bool,
    /// Seconds the run had run before this segment.
    pub runtime: i32,
    /// The git remote URL of the code.
    pub git_remote: String,
    /// The git commit of the code.
    pub git_commit: String,
}

impl RunInfo {
    /// Lay a later run record's facts over these: its non-empty fields win.
    pub fn merge(&mut self, r: RunInfo) {
        let set = |dst: &mut String, src: String| {
            if !src.is_empty() {
                *dst = src;
            }
        };
        set(&mut self.run_id, r.run_id);
        set(&mut self.entity, r.entity);
        set(&mut self.project, r.project);
        set(&mut self.display_name, r.display_name);
        set(&mut self.notes, r.notes);
        set(&mut self.group, r.group);
        set(&mut self.job_type, r.job_type);
        set(&mut self.host, r.host);
        set(&mut self.sweep_id, r.sweep_id);
        if !r.tags.is_empty() {
            self.tags = r.tags;
        }
        if r.start_time.is_some() {
            self.start_time = r.start_time;
        }
        if r.starting_step != 0 {
            self.starting_step = r.starting_step;
        }
        self.resumed |= r.resumed;
        if r.runtime != 0 {
            self.runtime = r.runtime;
        }
        set(&mut self.git_remote, r.git_remote);
        set(&mut self.git_commit, r.git_commit);
    }
}

/// A `define_metric` declaration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricDef {
    /// The metric it declares, by name.
    pub name: String,
    /// Or the metrics it declares, by a name pattern (`glob_name`).
    pub glob: String,
    /// The metric to plot it against instead of the step.
    pub step_metric: String,
    /// Hidden from the UI.
    pub hidden: bool,
    /// Summary modes asked for (`min`, `max`, `mean`, `best`, `last`, ...).
    pub summary: Vec<&'static str>,
    /// 1 = minimize, 2 = maximize.
    pub goal: i32,
}

impl MetricDef {
    /// Whether this definition covers the history key `key`: by its exact name, or
    /// by its glob.
    #[must_use]
    pub fn matches(&self, key: &str) -> bool {
        (!self.name.is_empty() && self.name == key)
            || (!self.glob.is_empty()
                && node_label(&self.glob) == node_label(key)
                && glob_match(&self.glob, key))
    }

    /// The same definition for one node's keys of a distributed run, whose keys
    /// carry its label (`train/*` → `train/*/l:node-1`, its step metric too).
    #[must_use]
    pub fn for_node(mut self, label: &str) -> Self {
        for s in [&mut self.name, &mut self.glob, &mut self.step_metric] {
            if !s.is_empty() && node_label(s).is_none() {
                s.push_str(NODE_LABEL);
                s.push_str(label);
            }
        }
        self
    }
}

/// What marks a node's label at the end of its keys in a distributed run
/// (`loss/l:node-1`).
pub const NODE_LABEL: &str = "/l:";

/// The node label a key (or a glob) ends with, mark included; None for the
/// primary node's keys. A glob applies only to keys of its own node.
fn node_label(s: &str) -> Option<&str> {
    s.rfind(NODE_LABEL).map(|i| &s[i..])
}

/// Add `def` to `defs` as W&B does: a metric (or glob) defined again is merged
/// into its definition, as protobuf's MergeFrom merges the two records: what the
/// later one sets wins, what it leaves unset stays (`define_metric("loss",
/// summary="min")` after `define_metric("loss", step_metric="epoch")` keeps the
/// step metric), summaries add up.
pub fn define(defs: &mut Vec<MetricDef>, def: MetricDef) {
    let Some(d) = defs
        .iter_mut()
        .find(|d| d.name == def.name && d.glob == def.glob)
    else {
        defs.push(def);
        return;
    };
    if !def.step_metric.is_empty() {
        d.step_metric = def.step_metric;
    }
    d.hidden |= def.hidden;
    for s in def.summary {
        if !d.summary.contains(&s) {
            d.summary.push(s);
        }
    }
    if def.goal != 0 {
        d.goal = def.goal;
    }
}

/// The step metric (the x axis) of the history key `key` under `defs` (in the
/// order defined), as W&B's handler resolves it: the definitions of its exact name
/// first (merged: the latest that names a step metric), and only where there are
/// none, the globs that match it. None: `_step`; never the key itself (a catch-all
/// `define_metric("*", step_metric="iter")` does not chart `iter` against itself).
#[must_use]
pub fn step_metric_for<'a>(defs: &'a [MetricDef], key: &str) -> Option<&'a str> {
    let named = |d: &MetricDef| !d.name.is_empty() && d.name == key;
    let globbed = |d: &MetricDef| !d.glob.is_empty() && d.matches(key);
    let exact = defs.iter().any(named);
    defs.iter()
        .rev()
        .filter(|d| if exact { named(d) } else { globbed(d) })
        .find(|d| !d.step_metric.is_empty())
        .map(|d| d.step_metric.as_str())
        .filter(|s| *s != key)
}

/// `*` wildcard match, as W&B's metric globs use.
#[must_use]
pub fn glob_match(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let mut rest = s;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else if let Some(pos) = rest.find(part) {
            rest = &rest[pos + part.len()..];
        } else {
            return false;
        }
    }
    true
}

/// A summary/config value held in its cheapest form; JSON text is parsed only on
/// demand.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// JSON text, not parsed yet.
    Json(String),
    /// JSON `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Number(f64),
    /// A string.
    Text(String),
}

impl Scalar {
    /// Take `v`, reusing this value's text buffer when both are text.
    pub fn set(&mut self, v: ItemValue<'_>) {
        match (self, v) {
            (Scalar::Json(s), ItemValue::Json(t)) | (Scalar::Text(s), ItemValue::Text(t)) => {
                s.clear();
                s.push_str(t);
            }
            (me, v) => *me = Scalar::from(v),
        }
    }

    /// As JSON (non-finite floats and non-JSON text as W&B shows them).
    #[must_use]
    pub fn to_json(&self) -> Value {
        match self {
            Scalar::Json(s) => value::parse_lenient(s),
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Int(i) => Value::from(*i),
            Scalar::Number(f) => value::float(*f),
            Scalar::Text(s) => Value::String(s.clone()),
        }
    }

    /// Its number, if it is one.
    #[must_use]
    pub fn number(&self) -> Option<f64> {
        match self {
            Scalar::Json(s) => value::json_number(s),
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Number(f) => Some(*f),
            _ => None,
        }
    }
}

impl From<ItemValue<'_>> for Scalar {
    fn from(v: ItemValue<'_>) -> Self {
        match v {
            ItemValue::Json(s) => Scalar::Json(s.to_owned()),
            ItemValue::Null => Scalar::Null,
            ItemValue::Bool(b) => Scalar::Bool(b),
            ItemValue::Int(i) => Scalar::Int(i),
            ItemValue::Number(f) => Scalar::Number(f),
            ItemValue::Text(s) => Scalar::Text(s.to_owned()),
        }
    }
}

/// A summary/config key path (already capped to [`MAX_DEPTH`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreePath {
    /// The elements joined with [`PATH_SEP`]: the path's identity.
    pub joined: String,
    /// The elements.
    pub parts: Vec<String>,
}

/// Separator of [`TreePath::joined`] (a control character no key uses).
pub const PATH_SEP: char = '\u{1f}';

/// Each proper ancestor of the joined path `joined`, nearest first: `a␟b␟c`
/// gives `a␟b`, then `a`.
pub fn ancestors(joined: &str) -> impl Iterator<Item = &str> {
    joined
        .char_indices()
        .rev()
        .filter(|&(_, c)| c == PATH_SEP)
        .map(move |(i, _)| &joined[..i])
}

/// Write `path`'s elements into `out` (cleared first), joined with [`PATH_SEP`].
pub fn join_path<'a>(out: &mut String, path: impl Iterator<Item = &'a str>) {
    out.clear();
    for (i, p) in path.enumerate() {
        if i > 0 {
            out.push(PATH_SEP);
        }
        out.push_str(p);
    }
}

/// Deepest key path kept as nesting; deeper elements are joined with `.` into the
/// last one, so a hostile record cannot build a tree deep enough to exhaust the stack
/// when it is printed, flattened or dropped.
pub const MAX_DEPTH: usize = 32;

/// One change to a summary or config tree. `u32`s index [`Events::paths`].
#[derive(Debug, Clone, PartialEq)]
pub enum TreeOp {
    /// Make sure the path has an entry (a new key takes its place in first-seen
    /// order here), without changing its value.
    Touch(u32),
    /// Set the path's value (the newest change of the tree).
    Set(u32, Scalar),
    /// Remove the path and everything below it.
    Remove(u32),
}

/// One history record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// The row's step: its `_step` item (when finite), else the record's step.
    pub step: Option<f64>,
    /// The largest `_timestamp` of the row.
    pub time: Option<f64>,
    /// The row's `_runtime` (seconds since the process started), when logged.
    pub runtime: Option<f64>,
    /// Numeric values other than `_step`, `_runtime`, `_timestamp`, in record order,
    /// as ranges of [`Events::values`].
    pub values: Range<u32>,
    /// Non-numeric values in record order: key index and the value's text (JSON).
    pub others: Vec<(u32, String)>,
    /// False when the record broke off: what came before the break is here (it
    /// names keys, moves the clock), but the row places no point.
    pub complete: bool,
}

/// What one record (or a damaged span) tells the run.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A history row.
    Row(Row),
    /// A system metrics sample; values index [`Events::values`].
    Stats {
        /// When it was sampled.
        time: Option<Timestamp>,
        /// The sample's (key index, value) pairs.
        values: Range<u32>,
    },
    /// Console output (`output_raw`, or the older line-wise `output` when `legacy`).
    Console {
        /// Standard output (else standard error).
        stdout: bool,
        /// When it was written.
        time: Option<Timestamp>,
        /// The text as written (untrusted: sanitize it before showing it).
        text: String,
        /// From an `output` record (else `output_raw`).
        legacy: bool,
        /// The node that wrote it, by its label, where a distributed run's nodes
        /// are read as one run (their consoles then share one, each node's lines
        /// its own): set by that reader, never by the decoder.
        node: Option<String>,
    },
    /// A run record's facts.
    Run(Box<RunInfo>),
    /// The run ended.
    Exit {
        /// The process's exit code.
        code: i32,
        /// Seconds the run ran.
        runtime: i32,
    },
    /// An environment record, as protobuf-JSON fields.
    Environment(Map<String, Value>),
    /// A `define_metric` declaration.
    Metric(MetricDef),
    /// The header record's producer.
    Producer(String),
    /// A `preempting` record: the run said it is about to be preempted
    /// (`wandb.mark_preempting()`).
    Preempting,
    /// A framed record whose protobuf did not decode.
    Bad {
        /// File offset of the record.
        offset: u64,
        /// Length of its payload, bytes.
        len: u64,
    },
    /// A damaged span the framing skipped.
    Skip(Skip),
}

/// How many records of each kind a batch holds (bad records not counted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// By [`RecordType::index`].
    pub by_kind: [u64; RecordType::ALL.len()],
    /// Records counted.
    pub total: u64,
    /// Number of the last record counted.
    pub last_num: Option<i64>,
}

impl Tally {
    pub(crate) fn count(&mut self, kind: RecordType, num: i64) {
        self.by_kind[kind.index()] += 1;
        self.total += 1;
        self.last_num = Some(num);
    }
}

/// A batch of decoded records, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Events {
    /// Flat metric keys (history and stats), by index.
    pub keys: Vec<String>,
    /// Summary and config paths, by index.
    pub paths: Vec<TreePath>,
    /// The events, in file order.
    pub list: Vec<Event>,
    /// (key index, value) of every row and stats sample.
    pub values: Vec<(u32, f64)>,
    /// History values logged as integers that a double does not hold exactly
    /// (2^53 and beyond): (index in [`Events::values`], the decimal text as logged),
    /// in order. Their entry in `values` is the nearest double.
    pub exact: Vec<(u32, String)>,
    /// Rows whose step is an integer that a double does not hold exactly (2^53
    /// and beyond): (index in [`Events::list`], the step), in order. The row's
    /// `step` is its nearest double; read it with [`Events::exact_step`].
    pub exact_steps: Vec<(u32, i64)>,
    /// The batch's summary changes, coalesced: folding them after the other events
    /// leaves the tree as folding each record's changes in turn would.
    pub summary: Vec<TreeOp>,
    /// The batch's config changes, coalesced likewise.
    pub config: Vec<TreeOp>,
    /// The records of each kind in the batch.
    pub tally: Tally,
}

impl Events {
    /// Whether it holds a framed record (decoded or not), not just damaged spans.
    #[must_use]
    pub fn has_records(&self) -> bool {
        self.tally.total > 0 || self.list.iter().any(|e| matches!(e, Event::Bad { .. }))
    }

    /// The step of the row at `index` in [`Events::list`] as an exact integer,
    /// where its `step` (a double) is not one: logged as an integer of 2^53 or
    /// more. A search, so only for the rare row whose step is that big.
    #[must_use]
    #[inline]
    pub fn exact_step(&self, index: usize, row: &Row) -> Option<i64> {
        if self.exact_steps.is_empty() || row.step.is_none_or(|s| s.abs() < value::EXACT_INT) {
            return None;
        }
        let at = self
            .exact_steps
            .binary_search_by_key(&index, |&(i, _)| i as usize)
            .ok()?;
        let (_, step) = self.exact_steps[at];
        // A later `_step` of the same row replaced the one kept.
        (row.step == Some(step as f64)).then_some(step)
    }

    /// Nothing in it.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
            && self.summary.is_empty()
            && self.config.is_empty()
            && self.tally.total == 0
    }
}

/// Whatever folds a reader's events: the store's run.
pub trait Sink {
    /// Fold a batch.
    fn fold(&mut self, events: &Events);
    /// Where the reader stands after it: bytes of an unfinished record at the end,
    /// and the damaged span held open there (see `DamageReport::set_open`).
    fn at_end(&mut self, pending: u64, open: Option<Skip>);
}

#[cfg(test)]
mod step_metric_tests {
    use super::{step_metric_for, MetricDef};

    fn def(name: &str, glob: &str, step: &str) -> MetricDef {
        MetricDef {
            name: name.into(),
            glob: glob.into(),
            step_metric: step.into(),
            hidden: false,
            summary: Vec::new(),
            goal: 0,
        }
    }

    /// As W&B's handler: a metric's own definitions before any glob, merged (a later
    /// one without a step metric keeps the earlier one's); globs only for metrics
    /// defined by no name; never a metric against itself.
    #[test]
    fn a_metric_s_own_definition_wins_over_globs_and_never_steps_by_itself() {
        // define_metric("iter"); define_metric("*", step_metric="iter")
        let defs = [def("iter", "", ""), def("", "*", "iter")];
        assert_eq!(step_metric_for(&defs, "iter"), None);
        assert_eq!(step_metric_for(&defs, "acc"), Some("iter"));
        // The glob alone also covers its own step metric: still not by itself.
        let defs = [def("", "*", "iter")];
        assert_eq!(step_metric_for(&defs, "iter"), None);
        // A name's definition wins over a later glob, and merges with its own.
        let defs = [
            def("val/loss", "", "epoch"),
            def("val/loss", "", ""),
            def("", "val/*", "val/step"),
        ];
        assert_eq!(step_metric_for(&defs, "val/loss"), Some("epoch"));
        assert_eq!(step_metric_for(&defs, "val/acc"), Some("val/step"));
        // The latest glob that names one.
        let defs = [def("", "train/*", "a"), def("", "*", "b")];
        assert_eq!(step_metric_for(&defs, "train/x"), Some("b"));
        assert_eq!(step_metric_for(&[], "x"), None);
    }

    /// A node's definitions, labelled for its keys, apply to its keys alone; the
    /// primary's (unlabelled) globs never to another node's keys.
    #[test]
    fn a_node_s_definitions_apply_to_its_own_keys() {
        let defs = [
            def("", "train/*", "train/global_step"),
            def("", "train/*", "train/global_step").for_node("node-1"),
            def("secret", "", "").for_node("node-1"),
        ];
        assert_eq!(
            step_metric_for(&defs, "train/loss"),
            Some("train/global_step")
        );
        assert_eq!(
            step_metric_for(&defs, "train/loss/l:node-1"),
            Some("train/global_step/l:node-1")
        );
        assert!(defs[2].matches("secret/l:node-1") && !defs[2].matches("secret"));
        assert!(!defs[0].matches("train/loss/l:node-1"));
        // Labelled once: a key that already carries a label keeps it.
        assert_eq!(def("a/l:x", "", "").for_node("node-1").name, "a/l:x");
    }

    /// A metric defined again keeps what the later definition leaves unset.
    #[test]
    fn a_metric_defined_again_is_merged() {
        let mut defs = Vec::new();
        super::define(&mut defs, def("loss", "", "epoch"));
        let mut again = def("loss", "", "");
        again.summary = vec!["min"];
        super::define(&mut defs, again);
        assert_eq!(defs.len(), 1);
        assert_eq!(step_metric_for(&defs, "loss"), Some("epoch"));
        assert_eq!(defs[0].summary, ["min"]);
        let mut hidden = def("loss", "", "step2");
        hidden.hidden = true;
        super::define(&mut defs, hidden);
        assert_eq!(
            (defs[0].step_metric.as_str(), defs[0].hidden),
            ("step2", true)
        );
    }
}
