//! The run model: every record of a `.wandb` file folded, in file order, into one run
//! (info, config, summary, environment, metric series, system series, console, state
//! and a report of the damage that was skipped).

use std::collections::BTreeMap;

use prost::Message as _;
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::console::{Console, Stream};
use super::metrics::MetricStore;
use crate::decode::leveldb::{Skip, SkipReason};
use crate::decode::pb;
use crate::decode::value;
use crate::decode::wire::{self, Field, Fields, ItemValue};

/// A timestamp as (seconds, nanos) since the Unix epoch, UTC.
pub type Timestamp = (i64, i32);

/// Run state, from the exit record (or its absence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Neither a run record nor an exit record (yet): a file just created, or one
    /// whose start was lost.
    Unknown,
    /// No exit record (yet): live, or crashed without one.
    Running,
    Finished,
    Failed,
}

impl RunState {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Unknown => "unknown",
            RunState::Running => "running",
            RunState::Finished => "finished",
            RunState::Failed => "failed",
        }
    }
}

/// Run-level facts from `run` records (later records merge their non-empty fields).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunInfo {
    pub run_id: String,
    pub entity: String,
    pub project: String,
    pub display_name: String,
    pub notes: String,
    pub tags: Vec<String>,
    pub group: String,
    pub job_type: String,
    pub host: String,
    pub sweep_id: String,
    pub start_time: Option<Timestamp>,
    pub starting_step: i64,
    pub resumed: bool,
    pub runtime: i32,
    pub git_remote: String,
    pub git_commit: String,
}

/// A `define_metric` declaration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricDef {
    pub name: String,
    pub glob: String,
    pub step_metric: String,
    pub hidden: bool,
    /// Summary modes asked for (`min`, `max`, `mean`, `best`, `last`, ...).
    pub summary: Vec<&'static str>,
    /// 1 = minimize, 2 = maximize.
    pub goal: i32,
}

/// What was lost to damage, and how the file ends.
///
/// The counts and `skips` include the span a live reader still holds open at the end
/// of what it read (see [`DamageReport::set_open`]), so a report taken at any moment
/// is the damage of the bytes read so far, and never counts a byte twice.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DamageReport {
    /// Skipped spans, in file order (kept up to a limit; counts are exact).
    pub skips: Vec<Skip>,
    pub skipped_spans: u64,
    pub skipped_bytes: u64,
    /// Records whose framing was intact but whose protobuf did not decode.
    pub bad_records: u64,
    /// Bytes at the end of the file that form an incomplete record.
    pub incomplete_tail: u64,
    /// The span still open at the end of what was read (counted above).
    open: Option<Skip>,
}

impl DamageReport {
    const KEEP: usize = 1000;

    /// A finished span. It replaces the open one, which it ends (a reader hands on
    /// the final form of a span it held open) or follows.
    pub fn add(&mut self, s: Skip) {
        self.retract_open();
        self.count(s);
    }

    /// The reader's open span, as it stands now (None once none is open): replaces
    /// the one set before.
    pub fn set_open(&mut self, s: Option<Skip>) {
        self.retract_open();
        if let Some(s) = s {
            self.count(s);
            self.open = Some(s);
        }
    }

    fn count(&mut self, s: Skip) {
        self.skipped_spans += 1;
        self.skipped_bytes += s.len;
        if self.skips.len() < Self::KEEP {
            self.skips.push(s);
        }
    }

    fn retract_open(&mut self) {
        if let Some(o) = self.open.take() {
            self.skipped_spans -= 1;
            self.skipped_bytes -= o.len;
            // Spans never overlap, so only the open one itself can equal it.
            if let Some(i) = self.skips.iter().rposition(|k| *k == o) {
                self.skips.remove(i);
            }
        }
    }

    /// Nothing was skipped (an incomplete tail is not damage).
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.skipped_spans == 0
    }
}

/// A summary value held in its cheapest form; JSON text is parsed only on demand.
#[derive(Debug, Clone, PartialEq)]
enum Raw {
    Json(String),
    Null,
    Bool(bool),
    Int(i64),
    Number(f64),
    Text(String),
}

impl Raw {
    fn set(&mut self, v: ItemValue<'_>) {
        match (self, v) {
            (Raw::Json(s), ItemValue::Json(t)) | (Raw::Text(s), ItemValue::Text(t)) => {
                s.clear();
                s.push_str(t);
            }
            (me, v) => *me = Raw::from(v),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Raw::Json(s) => value::parse_lenient(s),
            Raw::Null => Value::Null,
            Raw::Bool(b) => Value::Bool(*b),
            Raw::Int(i) => Value::from(*i),
            Raw::Number(f) => value::float(*f),
            Raw::Text(s) => Value::String(s.clone()),
        }
    }
}

impl From<ItemValue<'_>> for Raw {
    fn from(v: ItemValue<'_>) -> Self {
        match v {
            ItemValue::Json(s) => Raw::Json(s.to_owned()),
            ItemValue::Null => Raw::Null,
            ItemValue::Bool(b) => Raw::Bool(b),
            ItemValue::Int(i) => Raw::Int(i),
            ItemValue::Number(f) => Raw::Number(f),
            ItemValue::Text(s) => Raw::Text(s.to_owned()),
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    path: Vec<String>,
    raw: Raw,
    seq: u64,
    removed: bool,
}

/// A nested key → value map folded from updates and removes, stored flat so that an
/// update of an existing key costs a hash lookup and no allocation.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    index: FxHashMap<String, usize>,
    /// The same keys, ordered: a remove finds a subtree with a range query.
    ordered: std::collections::BTreeSet<String>,
    entries: Vec<Entry>,
    seq: u64,
    joined: String,
}

const SEP: char = '\u{1f}';

impl Tree {
    fn join<'a>(out: &mut String, path: impl Iterator<Item = &'a str>) {
        out.clear();
        for (i, p) in path.enumerate() {
            if i > 0 {
                out.push(SEP);
            }
            out.push_str(p);
        }
    }

    /// Set `path` to `v`.
    pub fn update(&mut self, item: &wire::Item<'_>) {
        if item.path().nth(MAX_DEPTH).is_some() {
            let path = capped_path(item);
            let mut it = wire::Item {
                key: "",
                nested: wire::smallvec_lite::Path::default(),
                value: item.value,
            };
            for p in &path {
                it.nested.push(p);
            }
            return self.update(&it);
        }
        let mut joined = std::mem::take(&mut self.joined);
        Self::join(&mut joined, item.path());
        self.seq += 1;
        if let Some(&i) = self.index.get(joined.as_str()) {
            let e = &mut self.entries[i];
            e.raw.set(item.value);
            e.seq = self.seq;
            e.removed = false;
        } else {
            self.index.insert(joined.clone(), self.entries.len());
            self.ordered.insert(joined.clone());
            self.entries.push(Entry {
                path: item.path().map(str::to_owned).collect(),
                raw: Raw::from(item.value),
                seq: self.seq,
                removed: false,
            });
        }
        self.joined = joined;
    }

    /// Set the top-level `key` to a number (the live monitor's latest readings).
    pub fn set_number(&mut self, key: &str, v: f64) {
        self.update(&wire::Item {
            key,
            nested: wire::smallvec_lite::Path::default(),
            value: wire::ItemValue::Number(v),
        });
    }

    /// Set the top-level `key` to a JSON text (the live monitor's sampler options).
    pub fn set_json(&mut self, key: &str, json: &str) {
        self.update(&wire::Item {
            key,
            nested: wire::smallvec_lite::Path::default(),
            value: wire::ItemValue::Json(json),
        });
    }

    /// Lay `other`'s entries over this tree, in the order they were made there.
    pub fn merge_from(&mut self, other: Tree) {
        let mut entries = other.entries;
        entries.sort_by_key(|e| e.seq);
        for e in entries {
            self.seq += 1;
            let mut joined = std::mem::take(&mut self.joined);
            Self::join(&mut joined, e.path.iter().map(String::as_str));
            if let Some(&i) = self.index.get(joined.as_str()) {
                let mine = &mut self.entries[i];
                mine.raw = e.raw;
                mine.removed = e.removed;
                mine.seq = self.seq;
            } else {
                self.index.insert(joined.clone(), self.entries.len());
                self.ordered.insert(joined.clone());
                self.entries.push(Entry { seq: self.seq, ..e });
            }
            self.joined = joined;
        }
    }

    /// Remove `path` and everything below it.
    pub fn remove(&mut self, item: &wire::Item<'_>) {
        let capped = capped_path(item);
        let mut joined = String::new();
        Self::join(&mut joined, capped.iter().map(String::as_str));
        if let Some(&i) = self.index.get(joined.as_str()) {
            self.entries[i].removed = true;
        }
        // Descendants: keys that continue with the separator (the next char is the end).
        let lo = format!("{joined}{SEP}");
        let hi = format!("{joined}{}", char::from_u32(SEP as u32 + 1).unwrap_or(SEP));
        for k in self.ordered.range(lo..hi) {
            if let Some(&i) = self.index.get(k.as_str()) {
                self.entries[i].removed = true;
            }
        }
    }

    /// No live entry.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.iter().all(|e| e.removed)
    }

    /// The nested map, keys in first-seen order (later updates win).
    #[must_use]
    pub fn to_json(&self) -> Map<String, Value> {
        let mut order: Vec<&Entry> = self.entries.iter().filter(|e| !e.removed).collect();
        order.sort_by_key(|e| e.seq);
        let mut root = Map::new();
        for e in order {
            insert_path(&mut root, &e.path, e.raw.to_json());
        }
        // Restore first-seen key order at the top level for stable output.
        let mut ordered = Map::new();
        for e in &self.entries {
            if let Some(k) = e.path.first() {
                if let Some(v) = root.remove(k) {
                    ordered.insert(k.clone(), v);
                }
            }
        }
        ordered
    }

    /// Number of live leaf entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.iter().filter(|e| !e.removed).count()
    }

    /// A numeric leaf, if present (e.g. summary `_step`).
    #[must_use]
    pub fn number(&self, key: &str) -> Option<f64> {
        let &i = self.index.get(key)?;
        let e = &self.entries[i];
        if e.removed {
            return None;
        }
        match &e.raw {
            Raw::Json(s) => value::json_number(s),
            #[allow(clippy::cast_precision_loss)]
            Raw::Int(i) => Some(*i as f64),
            Raw::Number(f) => Some(*f),
            _ => None,
        }
    }
}

/// Deepest key path kept as nesting; deeper elements are joined with `.` into the
/// last one, so a hostile record cannot build a tree deep enough to exhaust the stack
/// when it is printed, flattened or dropped.
pub const MAX_DEPTH: usize = 32;

fn capped_path(item: &wire::Item<'_>) -> Vec<String> {
    let mut path: Vec<String> = item.path().take(MAX_DEPTH - 1).map(str::to_owned).collect();
    let rest: Vec<&str> = item.path().skip(MAX_DEPTH - 1).collect();
    if !rest.is_empty() {
        path.push(rest.join("."));
    }
    path
}

fn insert_path(map: &mut Map<String, Value>, path: &[String], v: Value) {
    let Some((head, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        map.insert(head.clone(), v);
        return;
    }
    let slot = map
        .entry(head.clone())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Value::Object(m) = slot {
        insert_path(m, rest, v);
    }
}

/// How many records of each type were read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordCounts {
    pub by_type: BTreeMap<&'static str, u64>,
    pub total: u64,
    pub last_num: i64,
}

/// Images kept per media key (the newest).
pub const MEDIA_PER_KEY: usize = 1024;

/// One logged image: where it sits in the run directory's `files/`.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaItem {
    /// The row's step (x of the metric charts).
    pub step: f64,
    /// Path relative to the run's `files/` directory.
    pub path: String,
    pub caption: String,
}

/// The text of a JSON string value (`"\"a\""` → `a`), else the text itself.
fn json_text(raw: &str) -> String {
    serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_owned())
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
    pub metric_defs: Vec<MetricDef>,
    /// Key prefixes of rich media objects (a history value with a `_type` field, e.g.
    /// images and histograms): their numeric fields are not metrics.
    pub media_prefixes: std::collections::BTreeSet<String>,
    /// Images logged under each media key (`wandb.Image`), oldest first, the newest
    /// [`MEDIA_PER_KEY`] kept per key.
    pub media: BTreeMap<String, std::collections::VecDeque<MediaItem>>,
    /// Media fields of the history row being read: (prefix, field, text).
    row_media: Vec<(String, String, String)>,
    /// System metrics: key → series over Unix time in seconds.
    pub system: MetricStore,
    pub console: Console,
    pub exit_code: Option<i32>,
    pub exit_runtime: Option<i32>,
    pub last_step: Option<i64>,
    /// Largest `_timestamp` / stats time seen, Unix seconds.
    pub last_time: Option<f64>,
    pub history_rows: u64,
    pub damage: DamageReport,
    pub counts: RecordCounts,
    pub producer: String,
    // Scratch space reused across records.
    key_buf: String,
    row: Vec<(usize, f64)>,
    row_steps: FxHashMap<String, f64>,
    step_metric_of: FxHashMap<String, Option<String>>,
    last_step_values: FxHashMap<String, f64>,
}

/// Record-type name of a oneof field number (as `wandb leet inspect` prints it).
#[must_use]
pub fn record_type_name(field: u32) -> &'static str {
    match field {
        2 => "history",
        3 => "summary",
        4 => "output",
        5 => "config",
        6 => "files",
        7 => "stats",
        8 => "artifact",
        9 => "tbrecord",
        10 => "alert",
        11 => "telemetry",
        12 => "metric",
        13 => "output_raw",
        17 => "run",
        18 => "exit",
        20 => "final",
        21 => "header",
        22 => "footer",
        23 => "preempting",
        24 => "noop_link_artifact",
        25 => "use_artifact",
        26 => "environment",
        27 => "output_logger",
        100 => "request",
        _ => "unknown",
    }
}

/// The record type and body of a record payload, without decoding the body.
#[must_use]
pub fn record_kind(payload: &[u8]) -> Option<(i64, u32, &[u8])> {
    let mut num = 0i64;
    let mut kind = None;
    let mut f = Fields::new(payload);
    for field in f.by_ref() {
        match field {
            Field::Varint(1, v) => num = v as i64,
            Field::Bytes(n, b) if (2..=27).contains(&n) && n != 16 && n != 19 || n == 100 => {
                kind = Some((n, b))
            }
            _ => {}
        }
    }
    if f.error {
        return None;
    }
    let (n, b) = kind.unwrap_or((0, &[]));
    Some((num, n, b))
}

impl Run {
    /// An empty run.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// State from the exit record.
    #[must_use]
    pub fn state(&self) -> RunState {
        match self.exit_code {
            None if !self.counts.by_type.contains_key("run") => RunState::Unknown,
            None => RunState::Running,
            Some(0) => RunState::Finished,
            Some(_) => RunState::Failed,
        }
    }

    /// Fold in a partial run that read other records of the same file (the parallel
    /// loader hands summary records to a second thread): its summary, counts and damage.
    pub fn absorb(&mut self, other: Run) {
        self.summary.merge_from(other.summary);
        for (k, n) in other.counts.by_type {
            *self.counts.by_type.entry(k).or_insert(0) += n;
        }
        self.counts.total += other.counts.total;
        self.counts.last_num = self.counts.last_num.max(other.counts.last_num);
        let d = other.damage;
        self.damage.bad_records += d.bad_records;
        self.damage.skipped_spans += d.skipped_spans;
        self.damage.skipped_bytes += d.skipped_bytes;
        // The part holds no open span: the reader that opened one is this run's.
        self.damage.skips.extend(d.skips);
        self.damage.skips.sort_by_key(|s| s.offset);
        self.damage.skips.truncate(DamageReport::KEEP);
        if let Some(o) = self.damage.open {
            if !self.damage.skips.contains(&o) {
                // Cut by the limit: keep the open span listed, so it can be replaced.
                self.damage.skips.pop();
                self.damage.skips.push(o);
            }
        }
    }

    /// Record a skipped span.
    pub fn skip(&mut self, s: Skip) {
        self.damage.add(s);
    }

    /// Fold one record payload (found at `offset`) into the run. A payload that does
    /// not decode is counted as damage, never a panic.
    pub fn apply(&mut self, offset: u64, payload: &[u8]) {
        let Some((num, kind, body)) = record_kind(payload) else {
            self.bad_record(offset, payload.len());
            return;
        };
        let ok = match kind {
            2 => self.apply_history(body),
            3 => self.apply_tree(body, false),
            5 => self.apply_tree(body, true),
            7 => self.apply_stats(body),
            13 | 4 => self.apply_output(body, kind == 4),
            _ => self.apply_other(payload),
        };
        if !ok {
            self.bad_record(offset, payload.len());
            return;
        }
        self.counts.total += 1;
        self.counts.last_num = num;
        *self
            .counts
            .by_type
            .entry(record_type_name(kind))
            .or_insert(0) += 1;
    }

    fn bad_record(&mut self, offset: u64, len: usize) {
        self.damage.bad_records += 1;
        self.damage.add(Skip {
            offset,
            len: len as u64,
            reason: SkipReason::BadRecord,
        });
    }

    /// Apply a summary/config record. A malformed record (framing intact, protobuf
    /// not) stops at the first bad field and is counted; items before it are kept.
    fn apply_tree(&mut self, body: &[u8], config: bool) -> bool {
        let tree = if config {
            &mut self.config
        } else {
            &mut self.summary
        };
        let mut f = Fields::new(body);
        for field in f.by_ref() {
            if let Field::Bytes(n @ (1 | 2), b) = field {
                let Some(it) = wire::item(b) else {
                    return false;
                };
                // A summary value set to null is a removal, as W&B treats it
                // (`run.summary.update({"x": None})`); config keeps its nulls.
                let null = !config
                    && match it.value {
                        wire::ItemValue::Null => true,
                        wire::ItemValue::Json(j) => j.trim() == "null",
                        _ => false,
                    };
                if n == 1 && !null {
                    tree.update(&it);
                } else {
                    tree.remove(&it);
                }
            }
        }
        !f.error
    }

    fn step_metric_for(&mut self, key: &str) -> Option<String> {
        if let Some(s) = self.step_metric_of.get(key) {
            return s.clone();
        }
        let found = self
            .metric_defs
            .iter()
            .rev()
            .find(|d| {
                (!d.name.is_empty() && d.name == key)
                    || (!d.glob.is_empty() && glob_match(&d.glob, key))
            })
            .map(|d| d.step_metric.clone())
            .filter(|s| !s.is_empty());
        self.step_metric_of.insert(key.to_owned(), found.clone());
        found
    }

    fn apply_history(&mut self, body: &[u8]) -> bool {
        let mut step: Option<i64> = None;
        let mut key = std::mem::take(&mut self.key_buf);
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        self.row_steps.clear();
        let mut row_step = None;
        let mut f = Fields::new(body);
        let mut ok = true;
        for field in f.by_ref() {
            let it = match field {
                Field::Bytes(1, b) => match wire::item(b) {
                    Some(it) => it,
                    None => {
                        ok = false;
                        break;
                    }
                },
                Field::Bytes(2, b) => {
                    for g in Fields::new(b) {
                        if let Field::Varint(1, v) = g {
                            step = Some(v as i64);
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            it.flat_key_into(&mut key);
            let num = value::number(it.value);
            match key.as_str() {
                "_step" => {
                    // A non-finite step cannot place a point: the row falls back to
                    // the record's step or its row number.
                    if let Some(n) = num.filter(|n| n.is_finite()) {
                        row_step = Some(n);
                    }
                    continue;
                }
                "_runtime" => continue,
                "_timestamp" => {
                    if let Some(t) = num {
                        self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
                    }
                    continue;
                }
                _ => {}
            }
            match num {
                Some(y) => {
                    let slot = self.metrics.slot(&key);
                    row.push((slot, y));
                    if !self.metric_defs.is_empty() {
                        self.row_steps.insert(key.clone(), y);
                    }
                }
                None => {
                    if let Some(prefix) = key.strip_suffix("._type") {
                        if !self.media_prefixes.contains(prefix) {
                            self.media_prefixes.insert(prefix.to_owned());
                        }
                    }
                    let owned;
                    let text = match it.value {
                        ItemValue::Json(s) | ItemValue::Text(s) => s,
                        other => {
                            owned = value::to_json(other).to_string();
                            &owned
                        }
                    };
                    // The fields of an image object, gathered until the row's step
                    // is known.
                    if let Some((prefix, field)) = key.rsplit_once('.') {
                        if matches!(field, "_type" | "path" | "caption") {
                            self.row_media.push((
                                prefix.to_owned(),
                                field.to_owned(),
                                json_text(text),
                            ));
                        }
                    }
                    // Reuse the key's buffer: no allocation per row once seen.
                    if let Some(v) = self.latest_other.get_mut(key.as_str()) {
                        v.clear();
                        v.push_str(text);
                    } else {
                        self.latest_other.insert(key.clone(), text.to_owned());
                    }
                }
            }
        }
        if !ok || f.error {
            self.key_buf = key;
            self.row = row;
            self.row_media.clear();
            return false;
        }
        self.history_rows += 1;
        if row_step.is_none() {
            row_step = step.map(|s| s as f64);
        }
        #[allow(clippy::cast_possible_truncation)]
        if let Some(s) = row_step {
            self.last_step = Some(s as i64);
        }
        let x_default = row_step.unwrap_or(self.history_rows as f64 - 1.0);
        self.take_row_media(x_default);
        if self.metric_defs.is_empty() {
            for &(slot, y) in &row {
                self.metrics.push_at(slot, x_default, y);
            }
        } else {
            for (k, v) in &self.row_steps {
                self.last_step_values.insert(k.clone(), *v);
            }
            for &(slot, y) in &row {
                let name = self.metrics.keys()[slot].clone();
                let x = match self.step_metric_for(&name) {
                    Some(sm) => self
                        .row_steps
                        .get(&sm)
                        .or_else(|| self.last_step_values.get(&sm))
                        .copied(),
                    None => Some(x_default),
                };
                if let Some(x) = x {
                    self.metrics.push_at(slot, x, y);
                }
            }
        }
        self.key_buf = key;
        self.row = row;
        true
    }

    /// Record the row's images (`_type` `image-file` with a `path`) at `step`.
    fn take_row_media(&mut self, step: f64) {
        if self.row_media.is_empty() {
            return;
        }
        let fields = std::mem::take(&mut self.row_media);
        for (prefix, field, text) in &fields {
            if field != "_type" || text != "image-file" {
                continue;
            }
            let get = |want: &str| {
                fields
                    .iter()
                    .find(|(p, f, _)| p == prefix && f == want)
                    .map(|(_, _, t)| t.clone())
            };
            let Some(path) = get("path") else {
                continue;
            };
            let items = self.media.entry(prefix.clone()).or_default();
            if items.len() == MEDIA_PER_KEY {
                items.pop_front();
            }
            items.push_back(MediaItem {
                step,
                path,
                caption: get("caption").unwrap_or_default(),
            });
        }
        self.row_media = fields;
        self.row_media.clear();
    }

    fn apply_stats(&mut self, body: &[u8]) -> bool {
        let mut ts: Option<(i64, i32)> = None;
        let mut items = Vec::new();
        let mut f = Fields::new(body);
        for field in f.by_ref() {
            match field {
                Field::Bytes(2, b) => ts = wire::timestamp(b),
                Field::Bytes(3, b) => match wire::item(b) {
                    Some(it) => items.push(it),
                    None => return false,
                },
                _ => {}
            }
        }
        if f.error {
            return false;
        }
        #[allow(clippy::cast_precision_loss)]
        let x = ts.map_or_else(
            || self.last_time.unwrap_or(0.0),
            |(s, n)| s as f64 + f64::from(n) * 1e-9,
        );
        self.last_time = Some(self.last_time.map_or(x, |l| l.max(x)));
        let mut key = std::mem::take(&mut self.key_buf);
        for it in &items {
            it.flat_key_into(&mut key);
            if let Some(y) = value::number(it.value) {
                self.system.push(&key, x, y);
            }
        }
        self.key_buf = key;
        true
    }

    fn apply_output(&mut self, body: &[u8], legacy: bool) -> bool {
        let mut stream = Stream::Stderr;
        let mut ts = None;
        let mut line = "";
        let mut f = Fields::new(body);
        for field in f.by_ref() {
            match field {
                Field::Varint(1, v) => {
                    stream = if v == 1 {
                        Stream::Stdout
                    } else {
                        Stream::Stderr
                    }
                }
                Field::Bytes(2, b) => ts = wire::timestamp(b),
                Field::Bytes(3, b) => match wire::str_of(b) {
                    Some(s) => line = s,
                    None => return false,
                },
                _ => {}
            }
        }
        if f.error {
            return false;
        }
        if legacy {
            self.console.write_line(stream, ts, line);
        } else {
            self.console.write(stream, ts, line);
        }
        true
    }

    fn apply_other(&mut self, payload: &[u8]) -> bool {
        let Ok(rec) = pb::Record::decode(payload) else {
            return false;
        };
        use pb::record::RecordType as T;
        match rec.record_type {
            Some(T::Run(r)) => self.apply_run(r),
            Some(T::Exit(e)) => {
                self.exit_code = Some(e.exit_code);
                self.exit_runtime = Some(e.runtime);
            }
            Some(T::Environment(e)) => self.apply_environment(&e),
            Some(T::Metric(m)) => self.apply_metric(m),
            Some(T::Header(h)) => {
                if let Some(v) = h.version_info {
                    self.producer = v.producer;
                }
            }
            _ => {}
        }
        true
    }

    fn apply_run(&mut self, r: pb::RunRecord) {
        let i = &mut self.info;
        let set = |dst: &mut String, src: String| {
            if !src.is_empty() {
                *dst = src;
            }
        };
        set(&mut i.run_id, r.run_id);
        set(&mut i.entity, r.entity);
        set(&mut i.project, r.project);
        set(&mut i.display_name, r.display_name);
        set(&mut i.notes, r.notes);
        set(&mut i.group, r.run_group);
        set(&mut i.job_type, r.job_type);
        set(&mut i.host, r.host);
        set(&mut i.sweep_id, r.sweep_id);
        if !r.tags.is_empty() {
            i.tags = r.tags;
        }
        if let Some(t) = r.start_time {
            i.start_time = Some((t.seconds, t.nanos));
        }
        if r.starting_step != 0 {
            i.starting_step = r.starting_step;
        }
        i.resumed |= r.resumed || r.resume;
        if r.runtime != 0 {
            i.runtime = r.runtime;
        }
        if let Some(g) = r.git {
            set(&mut i.git_remote, g.remote_url);
            set(&mut i.git_commit, g.commit);
        }
        for (cfg, tree) in [(r.config.map(|c| c.update), &mut self.config)] {
            for item in cfg.into_iter().flatten() {
                apply_pb_item(tree, &item.key, &item.nested_key, &item.value_json);
            }
        }
        for item in r.summary.into_iter().flat_map(|s| s.update) {
            apply_pb_item(
                &mut self.summary,
                &item.key,
                &item.nested_key,
                &item.value_json,
            );
        }
    }

    fn apply_environment(&mut self, e: &pb::EnvironmentRecord) {
        // Every field of every record, later records replacing a field's earlier value.
        let json = crate::decode::json::message_json_names(e).unwrap_or_default();
        self.environment.extend(json);
    }

    fn apply_metric(&mut self, m: pb::MetricRecord) {
        let mut def = MetricDef {
            name: m.name,
            glob: m.glob_name,
            step_metric: m.step_metric,
            hidden: m.options.as_ref().is_some_and(|o| o.hidden),
            summary: Vec::new(),
            goal: m.goal,
        };
        if let Some(s) = m.summary {
            for (on, name) in [
                (s.min, "min"),
                (s.max, "max"),
                (s.mean, "mean"),
                (s.best, "best"),
                (s.last, "last"),
                (s.none, "none"),
                (s.copy, "copy"),
                (s.first, "first"),
            ] {
                if on {
                    def.summary.push(name);
                }
            }
        }
        if let Some(existing) = self
            .metric_defs
            .iter_mut()
            .find(|d| d.name == def.name && d.glob == def.glob)
        {
            *existing = def;
        } else {
            self.metric_defs.push(def);
        }
        self.step_metric_of.clear();
    }

    /// Whether a history key gets no chart: W&B's internal `_`-prefixed keys, fields
    /// of rich media objects, and keys hidden by `define_metric(hidden=True)`.
    #[must_use]
    pub fn is_hidden(&self, key: &str) -> bool {
        if key.starts_with('_') {
            return true;
        }
        if self.media_prefixes.iter().any(|p| {
            key.len() > p.len() && key.starts_with(p.as_str()) && key.as_bytes()[p.len()] == b'.'
        }) {
            return true;
        }
        self.metric_defs.iter().any(|d| {
            d.hidden
                && ((!d.name.is_empty() && d.name == key)
                    || (!d.glob.is_empty() && glob_match(&d.glob, key)))
        })
    }

    /// The x-axis name of a history key (`_step` unless define_metric chose another).
    #[must_use]
    pub fn x_axis_of(&self, key: &str) -> &str {
        self.metric_defs
            .iter()
            .rev()
            .find(|d| {
                (!d.name.is_empty() && d.name == key)
                    || (!d.glob.is_empty() && glob_match(&d.glob, key))
            })
            .map(|d| d.step_metric.as_str())
            .filter(|s| !s.is_empty())
            .unwrap_or("_step")
    }

    /// Runtime in seconds: from the exit record, else the span from the start time to
    /// the newest data.
    #[must_use]
    pub fn runtime(&self) -> Option<f64> {
        if let Some(r) = self.exit_runtime {
            return Some(f64::from(r));
        }
        #[allow(clippy::cast_precision_loss)]
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
        #[allow(clippy::cast_possible_truncation)]
        self.last_step
            .or(self.summary.number("_step").map(|s| s as i64))
    }
}

fn apply_pb_item(tree: &mut Tree, key: &str, nested: &[String], value_json: &str) {
    let mut it = wire::Item {
        key,
        nested: wire::smallvec_lite::Path::default(),
        value: ItemValue::Json(value_json),
    };
    for n in nested {
        it.nested.push(n);
    }
    tree.update(&it);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn span(offset: u64, len: u64) -> Skip {
        Skip {
            offset,
            len,
            reason: SkipReason::Checksum,
        }
    }

    #[test]
    fn the_open_span_is_counted_once_however_often_it_grows() {
        let mut d = DamageReport::default();
        d.add(span(10, 5));
        d.set_open(Some(span(100, 20)));
        d.set_open(Some(span(100, 50)));
        assert_eq!((d.skipped_spans, d.skipped_bytes), (2, 55));
        assert_eq!(d.skips, [span(10, 5), span(100, 50)]);
        // The reader hands on its final form, then a bad record after it.
        d.add(span(100, 60));
        d.add(Skip {
            offset: 200,
            len: 3,
            reason: SkipReason::BadRecord,
        });
        d.set_open(None);
        assert_eq!((d.skipped_spans, d.skipped_bytes), (3, 68));
        assert_eq!(d.skips[..2], [span(10, 5), span(100, 60)]);
        d.set_open(Some(span(300, 1)));
        d.set_open(None);
        assert_eq!(
            (d.skipped_spans, d.skipped_bytes, d.skips.len()),
            (3, 68, 3)
        );
    }

    #[test]
    fn absorbing_a_part_keeps_the_open_span_replaceable() {
        let mut run = Run::new();
        run.damage.set_open(Some(span(900, 10)));
        let mut part = Run::new();
        part.damage.add(span(50, 4));
        run.absorb(part);
        assert_eq!(run.damage.skips, [span(50, 4), span(900, 10)]);
        run.damage.add(span(900, 30));
        assert_eq!(run.damage.skips, [span(50, 4), span(900, 30)]);
        assert_eq!(
            (run.damage.skipped_spans, run.damage.skipped_bytes),
            (2, 34)
        );
    }

    #[test]
    fn globs() {
        assert!(glob_match("val/*", "val/acc"));
        assert!(!glob_match("val/*", "train/acc"));
        assert!(glob_match("*loss*", "train/loss_x"));
        assert!(glob_match("a", "a"));
        assert!(!glob_match("a", "ab"));
    }

    #[test]
    fn a_null_summary_value_removes_the_key_but_config_keeps_nulls() {
        use prost::Message as _;
        let item = |key: &str, v: &str| crate::decode::pb::SummaryItem {
            key: key.into(),
            value_json: v.into(),
            ..Default::default()
        };
        let summary = |items: Vec<crate::decode::pb::SummaryItem>| crate::decode::pb::Record {
            record_type: Some(crate::decode::pb::record::RecordType::Summary(
                crate::decode::pb::SummaryRecord {
                    update: items,
                    ..Default::default()
                },
            )),
            ..Default::default()
        };
        let mut run = Run::new();
        run.apply(
            0,
            &summary(vec![item("tmp", "1"), item("keep", "2")]).encode_to_vec(),
        );
        run.apply(1, &summary(vec![item("tmp", "null")]).encode_to_vec());
        assert_eq!(
            Value::Object(run.summary.to_json()),
            serde_json::json!({"keep": 2})
        );
        let config = crate::decode::pb::Record {
            record_type: Some(crate::decode::pb::record::RecordType::Config(
                crate::decode::pb::ConfigRecord {
                    update: vec![crate::decode::pb::ConfigItem {
                        key: "opt".into(),
                        value_json: "null".into(),
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            )),
            ..Default::default()
        };
        run.apply(2, &config.encode_to_vec());
        assert_eq!(
            Value::Object(run.config.to_json()),
            serde_json::json!({"opt": null})
        );
    }

    #[test]
    fn logged_images_are_listed_per_key_with_their_step() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/runs/many_metrics/wandb/offline-run-20261130_174932-many0001");
        let file = std::fs::read_dir(&dir)
            .expect("fixture")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "wandb"))
            .expect("wandb file");
        let data = std::fs::read(file).expect("read");
        let mut run = Run::new();
        crate::decode::leveldb::scan(&data, 0, |fr| {
            if let crate::decode::leveldb::Frame::Record { offset, payload } = fr {
                run.apply(offset, &payload);
            }
        })
        .expect("header");
        let imgs = run.media.get("img").expect("img key");
        let steps: Vec<f64> = imgs.iter().map(|m| m.step).collect();
        assert_eq!(steps, [0.0, 10.0]);
        assert!(
            imgs[0].path.starts_with("media/images/img_0_"),
            "{:?}",
            imgs[0]
        );
        assert_eq!(imgs[0].caption, "noise step 0");
        assert!(dir.join("files").join(&imgs[1].path).is_file());
        // Histograms are media too, but not images.
        assert_eq!(run.media.len(), 1, "{:?}", run.media.keys());
    }

    #[test]
    fn tree_updates_and_removes() {
        let mut t = Tree::default();
        let item = |k: &'static str, v: &'static str| wire::Item {
            key: k,
            nested: wire::smallvec_lite::Path::default(),
            value: ItemValue::Json(v),
        };
        let mut nested = wire::Item {
            key: "",
            nested: wire::smallvec_lite::Path::default(),
            value: ItemValue::Json("1"),
        };
        nested.nested.push("final");
        nested.nested.push("loss");
        t.update(&item("a", "1"));
        t.update(&nested);
        t.update(&item("a", "NaN"));
        assert_eq!(
            Value::Object(t.to_json()),
            serde_json::json!({"a": "NaN", "final": {"loss": 1}})
        );
        t.remove(&item("final", ""));
        assert_eq!(Value::Object(t.to_json()), serde_json::json!({"a": "NaN"}));
    }

    #[test]
    fn removing_a_subtree_leaves_its_siblings() {
        let mut t = Tree::default();
        let leaf = |a: &'static str, b: &'static str| {
            let mut it = wire::Item {
                key: "",
                nested: wire::smallvec_lite::Path::default(),
                value: ItemValue::Json("1"),
            };
            it.nested.push(a);
            it.nested.push(b);
            it
        };
        t.update(&leaf("a", "x"));
        t.update(&leaf("a", "y"));
        t.update(&leaf("ab", "x"));
        let mut a = wire::Item {
            key: "a",
            nested: wire::smallvec_lite::Path::default(),
            value: ItemValue::Null,
        };
        t.remove(&a);
        assert_eq!(
            Value::Object(t.to_json()),
            serde_json::json!({"ab": {"x": 1}})
        );
        a.key = "ab";
        t.remove(&a);
        assert!(t.is_empty());
    }

    #[test]
    fn hostile_depth_is_capped() {
        let names: Vec<String> = (0..100_000).map(|i| format!("k{i}")).collect();
        let mut deep = wire::Item {
            key: "",
            nested: wire::smallvec_lite::Path::default(),
            value: ItemValue::Json("1"),
        };
        for n in &names {
            deep.nested.push(n);
        }
        let mut t = Tree::default();
        t.update(&deep);
        let json = Value::Object(t.to_json());
        let mut depth = 0;
        let mut v = &json;
        while let Some((_, next)) = v.as_object().and_then(|o| o.iter().next()) {
            depth += 1;
            v = next;
        }
        assert_eq!(depth, MAX_DEPTH);
        let mut rows = Vec::new();
        crate::text::flatten_into("", json.as_object().expect("object"), &mut rows);
        assert_eq!(rows.len(), 1);
        t.remove(&deep);
        assert!(t.to_json().is_empty());
    }
}
