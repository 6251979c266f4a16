//! `leet export`: a run's full history (every logged point, not the capped store)
//! or its system metrics, as CSV, JSON lines or Parquet, wide (one row per step)
//! or long (one row per point), with smoothed columns when asked.
//!
//! The file is read twice through the ordinary reader, a chunk at a time: the
//! first pass finds the columns (and, with smoothing, each series' x range and
//! whether it is constant), the second writes the rows as it decodes them.
//! Smoothing streams too ([`crate::store::smooth::stream`]): a row waits only
//! until its smoothed values are known, none for TWEMA and EMA, the window for
//! the running average (N/2 points of that metric) and the Gaussian (3σ steps).
//! So memory is bounded by the window, never by the file's size.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use regex::Regex;
use rustc_hash::FxHashMap;

use crate::source::file::{
    resolve_readable, run_dirs, wandb_dir_of, ParallelOptions, PassedOver, RunReader,
};
use crate::source::nodes::{read_nodes, RunFiles};
use crate::source::resolve::run_count;
use crate::store::run::DamageReport;
use crate::store::smooth::stream::Prep;
use crate::store::smooth::Smoothing;
use crate::store::stitch;
use leet_format::event::{Event, Events};
use leet_format::leveldb::{Skip, SkipReason};
use leet_text::{sanitize, sanitize_path};

mod num;
mod output;
mod queue;
mod table;
#[cfg(test)]
mod tests;

use output::{Dest, Staged};
pub use output::{OutputInRun, OutputIsInput};
use queue::{Queue, Smoothed, Waiting};
use table::{is_integer, ColKind, Other, Table};
pub use table::{Format, FormatMismatch};

/// Bytes read at a time.
const CHUNK: usize = 4 << 20;
/// Files at least this big report progress on stderr even when it is not a terminal.
const BIG_FILE: u64 = 256 << 20;

/// Options of `leet export`.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    pub path: PathBuf,
    /// `--run ID`: that run of the directory, read whole (see `RunFiles::of_id`).
    pub run: Option<String>,
    /// `--format` (None: from the output's extension, else CSV; see [`Format::pick`]).
    pub format: Option<Format>,
    /// One row per point (`_step,_runtime,_timestamp,key,value`; `_timestamp,key,value`
    /// for the system metrics) instead of one per step.
    pub long: bool,
    /// Only the metrics whose key this matches (unanchored, as `regex` finds).
    pub metrics: Option<Regex>,
    /// System metrics (stats records) instead of the history.
    pub system: bool,
    pub smoothing: Smoothing,
    /// Where to write (None or `-`: stdout).
    pub output: Option<PathBuf>,
    /// stderr is a terminal: progress is drawn there, on one line erased when done
    /// (a big file's progress is written as lines wherever stderr goes).
    pub progress: bool,
    /// Standard output is a terminal: metric names written there are sanitized,
    /// and Parquet goes there only with an explicit `-o -`.
    pub stdout_terminal: bool,
}

/// One point of a selected series: its row's index value, time, column, value.
#[derive(Debug, Clone, Copy)]
struct Point {
    /// The row's step (history) or time (system): the x smoothing runs along.
    x: Option<f64>,
    /// The row's `_runtime` (history only).
    runtime: Option<f64>,
    time: Option<f64>,
    /// Its column (`u32`: a point stays 64 bytes).
    col: u32,
    /// The value as a double (NaN for one that is not a number).
    value: f64,
    /// A value that is not a plain double (a string, a boolean, a list, or an
    /// integer of 2^53 or more as logged, then `value` is its nearest double): its
    /// index in [`Points::others`] ([`NO_OTHER`]: none). Kept aside, so that a
    /// point stays small.
    other: u32,
}

/// [`Point::other`] of a plain double.
const NO_OTHER: u32 = u32::MAX;

impl Point {
    fn col(&self) -> usize {
        self.col as usize
    }
}

/// A record's points, and their values that are not plain doubles.
#[derive(Default)]
struct Points {
    list: Vec<Point>,
    others: Vec<Other>,
    /// The record's step exactly, where its points' `x` (a double) is not it: an
    /// integer of 2^53 or more as logged. Rows are keyed and written by it.
    step: Option<i64>,
}

impl Points {
    fn clear(&mut self) {
        self.list.clear();
        self.others.clear();
        self.step = None;
    }

    /// The row key of a point of this record: its step exactly when the double
    /// `x` does not hold it (rows of distinct steps stay apart).
    fn key(&self, p: &Point) -> (Option<f64>, Option<i64>) {
        (p.x, self.step)
    }

    /// The `_step` cell of this record beside its double: the exact integer when
    /// there is one.
    fn step_cell(&self) -> Option<Other> {
        self.step.map(Other::Int)
    }

    fn other(&self, p: &Point) -> Option<&Other> {
        if p.other == NO_OTHER {
            return None;
        }
        self.others.get(p.other as usize)
    }

    /// Whether `p` is a number (smoothing and numeric columns take it).
    fn is_number(&self, p: &Point) -> bool {
        matches!(self.other(p), None | Some(Other::Int(_) | Other::Big(_)))
    }

    /// Whether `p` is an integer an i64 holds (exactly).
    fn is_int(&self, p: &Point) -> bool {
        match self.other(p) {
            None => is_integer(p.value),
            Some(Other::Int(_)) => true,
            Some(_) => false,
        }
    }

    fn push(&mut self, p: Point, other: Option<Other>) {
        let mut p = p;
        if let Some(o) = other {
            p.other = u32::try_from(self.others.len()).unwrap_or(NO_OTHER);
            self.others.push(o);
        }
        self.list.push(p);
    }
}

/// A history value's JSON text (a row's `others`) as the export writes it: None
/// for `null` (a missing cell). With `keep` false a string is left empty: the
/// first pass needs only its kind (other text it checks is JSON).
fn other_of(text: &str, keep: bool) -> Option<Other> {
    match text.trim_ascii() {
        "null" => None,
        "true" => Some(Other::Bool(true)),
        "false" => Some(Other::Bool(false)),
        t if t.starts_with('"') => Some(match serde_json::from_str::<String>(t) {
            Ok(s) => Other::Str(if keep { s } else { String::new() }),
            Err(_) => Other::Json(t.to_owned()),
        }),
        t => Some(Other::Json(t.to_owned())),
    }
}

/// An integer logged beyond 2^53, from its decimal text.
fn exact_of(text: &str) -> Other {
    text.parse::<i64>()
        .map_or_else(|_| Other::Big(text.to_owned()), Other::Int)
}

/// The selected columns, in first-seen order, and the keys `--metrics` left out.
#[derive(Default)]
struct Columns {
    names: Vec<String>,
    index: FxHashMap<String, usize>,
    /// Every key the filter did not match: named when nothing matched.
    others: BTreeSet<String>,
}

/// Metric names a no-match error lists.
const NAMED: usize = 5;

/// `--metrics REGEX` matched none of the run's metrics: nothing is written (a bare
/// header would read as an empty run), and the message lists a few of the names
/// that are there.
#[derive(Debug, thiserror::Error)]
#[error("--metrics '{}' matched no {what} in {}; {}", sanitize(.regex), sanitize_path(.file), available(.what, .some, *.count))]
pub struct NoMetricMatched {
    pub regex: String,
    pub file: PathBuf,
    /// `metric` or `system metric`.
    pub what: &'static str,
    /// The first few names, in sorted order.
    pub some: Vec<String>,
    /// How many names the run has.
    pub count: usize,
}

/// `its metrics: a, b` / `its 12 metrics include: a, b, c, d, e, …` / `it has none`.
fn available(what: &str, some: &[String], count: usize) -> String {
    let list = some
        .iter()
        .map(|s| sanitize(s))
        .collect::<Vec<_>>()
        .join(", ");
    match count {
        0 => format!("it has no {what}s"),
        n if n <= some.len() => format!("its {what}s: {list}"),
        n => format!("its {n} {what}s include: {list}, …"),
    }
}

/// Every point of `ev` in the selected columns, grouped by record: `f(record,
/// points)`; a key first seen is added to `cols` when `grow`. Where `ev` is of a
/// stitched run's `segment` (its JSON text), each record says so in `_segment`.
fn points_of(
    (ev, segment): (&Events, Option<&str>),
    system: bool,
    filter: Option<&Regex>,
    cols: &mut Columns,
    grow: bool,
    buf: &mut Points,
    mut f: impl FnMut(&mut Points),
) {
    let mut map: Vec<Option<Option<u32>>> = vec![None; ev.keys.len()];
    // A stitched run's rows and samples each say their segment (`_segment`).
    let segment = segment.and_then(|s| Some((new_col(SEGMENT_KEY, cols, grow, filter)?, s)));
    // The key's column, looked up once per batch; the slow part out of line.
    let mut col_of = |k: u32, cols: &mut Columns| -> Option<u32> {
        let slot = map.get_mut(k as usize)?;
        match *slot {
            Some(c) => c,
            None => {
                let c = new_col(&ev.keys[k as usize], cols, grow, filter);
                *slot = Some(c);
                c
            }
        }
    };
    // The next of the batch's integers of 2^53 and more (by value index).
    let mut exact = ev.exact.iter().peekable();
    let has_exact = !ev.exact.is_empty();
    for (at, e) in ev.list.iter().enumerate() {
        let (x, runtime, time, range, others) = match e {
            Event::Row(r) if !system && r.complete => {
                (r.step, r.runtime, r.time, &r.values, &r.others[..])
            }
            Event::Stats { time, values } if system => {
                let t = time.map(|(s, n)| {
                    let s = s as f64;
                    s + f64::from(n) / 1e9
                });
                (t, None, t, values, &[][..])
            }
            _ => continue,
        };
        buf.clear();
        if let Event::Row(r) = e {
            buf.step = ev.exact_step(at, r);
        }
        let vals = ev
            .values
            .get(range.start as usize..range.end as usize)
            .unwrap_or_default();
        for (i, &(k, value)) in (range.start..).zip(vals) {
            let Some(col) = col_of(k, cols) else {
                continue;
            };
            let p = Point {
                x,
                runtime,
                time,
                col,
                value,
                other: NO_OTHER,
            };
            if has_exact {
                while exact.next_if(|e| e.0 < i).is_some() {}
                if let Some((_, text)) = exact.next_if(|e| e.0 == i) {
                    buf.push(p, Some(exact_of(text)));
                    continue;
                }
            }
            buf.list.push(p);
        }
        let texts = (others.iter())
            .filter_map(|(k, text)| Some((col_of(*k, cols)?, text.as_str())))
            .chain(segment);
        for (col, text) in texts {
            if let Some(other) = other_of(text, !grow) {
                let p = Point {
                    x,
                    runtime,
                    time,
                    col,
                    value: f64::NAN,
                    other: NO_OTHER,
                };
                buf.push(p, Some(other));
            }
        }
        f(buf);
    }
}

/// The column of a key a batch names for the first time: a known one, a new one
/// (`grow`, the first pass) unless `filter` leaves it out, else None.
#[cold]
#[inline(never)]
fn new_col(key: &str, cols: &mut Columns, grow: bool, filter: Option<&Regex>) -> Option<u32> {
    let c = match cols.index.get(key) {
        Some(&c) => c,
        None if !grow => return None,
        // A stitched export's segment column is the rows' own, as `_step` is:
        // `--metrics` chooses among the metrics only.
        None if key != SEGMENT_KEY && filter.is_some_and(|r| !r.is_match(key)) => {
            cols.others.insert(key.to_owned());
            return None;
        }
        None => {
            cols.names.push(key.to_owned());
            cols.index.insert(key.to_owned(), cols.names.len() - 1);
            cols.names.len() - 1
        }
    };
    u32::try_from(c).ok()
}

/// Progress on stderr, a few times a second at most. On a terminal it is one line
/// drawn over itself and erased when its pass ends, so that none is left on the
/// screen or between the rows; elsewhere (a big file's log) a line each time.
#[derive(Default)]
struct Progress {
    on: bool,
    /// stderr is a terminal: draw in place.
    tty: bool,
    /// A line is drawn in place now.
    shown: bool,
    last: Option<Instant>,
    total: u64,
}

impl Progress {
    fn tick(&mut self, label: &str, done: u64, err: &mut dyn Write) {
        if !self.on
            || self
                .last
                .is_some_and(|t| t.elapsed() < Duration::from_millis(250))
        {
            return;
        }
        self.last = Some(Instant::now());
        let pct = done
            .saturating_mul(100)
            .checked_div(self.total)
            .unwrap_or(100);
        let line = format!("{label} {pct}% {}/{}", bytes(done), bytes(self.total));
        // Progress is best effort: a closed stderr does not stop the export.
        if self.tty {
            let _ = write!(err, "\r{line}\x1b[K");
            let _ = err.flush();
            self.shown = true;
        } else {
            let _ = writeln!(err, "{line}");
        }
    }

    /// Erase the line drawn in place, if any (a pass ended, or the export failed:
    /// what follows on stderr starts on a clean line).
    fn clear(&mut self, err: &mut dyn Write) {
        if std::mem::take(&mut self.shown) {
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
        self.last = None;
    }
}

/// `560MiB`, `1.2GiB`.
fn bytes(n: u64) -> String {
    let f = n as f64;
    match n {
        0..1024 => format!("{n}B"),
        1024..1_048_576 => format!("{:.0}KiB", f / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.0}MiB", f / 1_048_576.0),
        _ => format!("{:.1}GiB", f / 1_073_741_824.0),
    }
}

/// Count the damage a batch holds.
fn tally(ev: &Events, damage: &mut DamageReport) {
    for e in &ev.list {
        match e {
            Event::Bad { offset, len } => {
                damage.bad_records += 1;
                damage.add(Skip {
                    offset: *offset,
                    len: *len,
                    reason: SkipReason::BadRecord,
                });
            }
            Event::Skip(s) => damage.add(*s),
            _ => {}
        }
    }
}

/// Read the whole run, handing on each batch in file order; the damage found.
/// A big file is decoded on every core ([`RunReader::load_parallel`], the
/// batches the same as a sequential read's), `f` running on this thread while
/// the workers decode what comes next. A run of several files is read as the
/// viewer reads it: a distributed run's nodes together, a resumed run's
/// segments one after another, each without the rows a later one logged again.
fn read(
    src: &RunFiles,
    label: &str,
    prog: &mut Progress,
    err: &mut dyn Write,
    f: impl FnMut(&Events, Option<&str>) -> io::Result<()>,
) -> anyhow::Result<DamageReport> {
    let r = read_run(src, label, prog, err, f);
    prog.clear(err);
    r
}

/// [`read`], leaving its progress line drawn.
fn read_run(
    src: &RunFiles,
    label: &str,
    prog: &mut Progress,
    err: &mut dyn Write,
    mut f: impl FnMut(&Events, Option<&str>) -> io::Result<()>,
) -> anyhow::Result<DamageReport> {
    let mut damage = DamageReport::default();
    match src {
        RunFiles::One(file) => {
            read_all(file, 0, label, prog, err, &mut damage, |ev| f(&ev, None))?;
        }
        RunFiles::Nodes(nodes) => {
            let mut res = Ok(());
            read_nodes(nodes, true, |b| {
                for ev in &b.events {
                    tally(ev, &mut damage);
                    if res.is_ok() {
                        res = f(ev, None);
                    }
                }
                damage.incomplete_tail = b.pending;
                damage.set_open(b.open);
                prog.tick(label, b.read_to, err);
                res.is_ok()
            });
            res?;
        }
        RunFiles::Segments(files) => {
            let firsts: Vec<Option<f64>> = files.iter().map(|f| first_step(f)).collect();
            let mut done = 0;
            for (file, cut) in files.iter().zip(stitch::cuts(&firsts)) {
                // Each row and system sample says the segment it came from
                // (`_segment`, its run directory's name): a logged file's path
                // (`img.path`) is relative to that directory's `files/`.
                let segment = serde_json::Value::from(
                    file.parent()
                        .and_then(Path::file_name)
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                )
                .to_string();
                // Each segment's damage is its own; the run's is the sum.
                let mut own = DamageReport::default();
                read_all(file, done, label, prog, err, &mut own, |mut ev| {
                    if let Some(c) = cut {
                        ev.list.retain(
                            |e| !matches!(e, Event::Row(r) if r.step.is_some_and(|s| s >= c)),
                        );
                    }
                    f(&ev, Some(&segment))
                })?;
                damage.absorb(&own);
                done += std::fs::metadata(file).map_or(0, |m| m.len());
            }
        }
    }
    Ok(damage)
}

/// The column of a resumed run's stitched export naming each row's segment, as
/// the columns know it: a name no history key has (a NUL in it), so that a metric
/// logged as `_segment` keeps its own column. Its header is [`SEGMENT_NAME`] (or
/// the first of `_segment_2`, … that no metric has).
const SEGMENT_KEY: &str = "\0leet:segment";

/// The header of the segment column (see [`SEGMENT_KEY`]).
const SEGMENT_NAME: &str = "_segment";

/// The step of a run file's first complete history row (where a resumed run's
/// earlier segments are cut): None when it has none.
pub(super) fn first_step(file: &Path) -> Option<f64> {
    let mut reader = RunReader::open(file).ok()?.with_chunk(CHUNK);
    reader.finish();
    loop {
        let (ev, p) = reader.poll_events().ok()?;
        let first = ev.list.iter().find_map(|e| match e {
            Event::Row(r) if r.complete => r.step,
            _ => None,
        });
        if first.is_some() || !p.more {
            return first;
        }
    }
}

/// Read one run file whole into `f`, its damage into `damage`; `before`: the
/// bytes of the run's files read before it (for the progress line).
fn read_all(
    file: &Path,
    before: u64,
    label: &str,
    prog: &mut Progress,
    err: &mut dyn Write,
    damage: &mut DamageReport,
    mut f: impl FnMut(Events) -> io::Result<()>,
) -> anyhow::Result<()> {
    let mut reader = RunReader::open(file)?.with_chunk(CHUNK);
    reader.finish();
    let par = ParallelOptions {
        below_loop: false,
        ..ParallelOptions::default()
    };
    if reader.wants_parallel(&par)? {
        let mut res = Ok(());
        let p = reader.load_parallel(&par, |ev, at| {
            if res.is_ok() {
                tally(&ev, damage);
                res = f(ev);
                prog.tick(label, before + at.read_to, err);
            }
        })?;
        res?;
        damage.incomplete_tail = p.pending;
        damage.set_open(p.open);
        if !p.more {
            return Ok(());
        }
    }
    loop {
        let (ev, p) = reader.poll_events()?;
        tally(&ev, damage);
        f(ev)?;
        damage.incomplete_tail = p.pending;
        damage.set_open(p.open);
        prog.tick(label, before + reader.offset(), err);
        if !p.more {
            return Ok(());
        }
    }
}

/// The output could not be written: its name and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {cause}", sanitize(.to))]
pub struct WriteFailed {
    /// The file as given to `-o` (its link's target for a link), or `standard output`.
    pub to: String,
    pub cause: io::Error,
}

/// A write to the output failed: [`run`] names the output ([`WriteFailed`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Unwritten(io::Error);

impl Unwritten {
    /// `e` naming the output `to` when it is a write error; else as it is.
    fn name(e: anyhow::Error, to: &str) -> anyhow::Error {
        match e.downcast::<Unwritten>() {
            Ok(Unwritten(cause)) => WriteFailed {
                to: to.to_owned(),
                cause,
            }
            .into(),
            Err(e) => e,
        }
    }
}

/// `--format parquet` with no `-o` while standard output is a terminal: binary
/// bytes would be drawn as escape sequences.
#[derive(Debug, thiserror::Error)]
#[error("--format parquet writes binary data and standard output is a terminal; give -o FILE (or -o - to write it there anyway)")]
pub struct ParquetToTerminal;

/// Whether `e` is a usage error (exit status 2): a `--metrics` that matches
/// nothing, an output that is the input, Parquet to a terminal, a `--format`
/// that the output's extension contradicts.
#[must_use]
pub fn is_usage_error(e: &anyhow::Error) -> bool {
    e.is::<NoMetricMatched>()
        || e.is::<OutputIsInput>()
        || e.is::<OutputInRun>()
        || e.is::<ParquetToTerminal>()
        || e.is::<FormatMismatch>()
}

/// What the first pass learnt: the columns and what smoothing needs.
struct Scan {
    cols: Columns,
    preps: Vec<Prep>,
    /// Whether the rows' x never goes back.
    rows_forward: bool,
    /// Per column, its kind: from the kinds of the values it logged.
    kinds: Vec<ColKind>,
    /// Whether every row's x is an integer (the history's `_step`, as it should be).
    x_int: bool,
    /// The long form's `value` column: every column's values together.
    value_kind: ColKind,
}

/// Pass 1: the columns, and with smoothing what each series' smoothing needs to
/// know of the whole series (its x range, whether it is constant), and whether
/// the rows' x ever goes back.
fn scan(
    src: &RunFiles,
    opts: &ExportOptions,
    prog: &mut Progress,
    err: &mut dyn Write,
) -> anyhow::Result<Scan> {
    let smooth = opts.smoothing != Smoothing::None;
    let filter = opts.metrics.as_ref();
    let mut cols = Columns::default();
    let mut preps: Vec<Prep> = Vec::new();
    let mut rows_forward = true;
    let mut last_x = f64::NEG_INFINITY;
    let mut buf = Points::default();
    let mut seen: Vec<Seen> = Vec::new();
    let mut x_int = true;
    read(src, "scanning", prog, err, |ev, segment| {
        points_of(
            (ev, segment),
            opts.system,
            filter,
            &mut cols,
            true,
            &mut buf,
            |pts| {
                for p in &pts.list {
                    if seen.len() <= p.col() {
                        seen.resize(p.col() + 1, Seen::default());
                    }
                    seen[p.col()].see(pts, p);
                    x_int &= pts.step.is_some() || p.x.is_none_or(is_integer);
                }
                if !smooth {
                    return;
                }
                for p in pts.list.iter().filter(|p| pts.is_number(p)) {
                    if preps.len() <= p.col() {
                        preps.resize_with(p.col() + 1, Prep::default);
                    }
                    let x = p.x.unwrap_or(f64::NAN);
                    preps[p.col()].see(x, p.value);
                    if x < last_x || x.is_nan() {
                        rows_forward = false;
                    }
                    last_x = last_x.max(x);
                }
            },
        );
        Ok(())
    })?;
    let metrics = cols.names.iter().filter(|n| *n != SEGMENT_KEY).count();
    if let Some(re) = filter.filter(|_| metrics == 0) {
        return Err(NoMetricMatched {
            regex: re.as_str().to_owned(),
            file: src.main().to_path_buf(),
            what: if opts.system {
                "system metric"
            } else {
                "metric"
            },
            count: cols.others.len(),
            some: std::mem::take(&mut cols.others)
                .into_iter()
                .take(NAMED)
                .collect(),
        }
        .into());
    }
    preps.resize_with(cols.names.len(), Prep::default);
    seen.resize(cols.names.len(), Seen::default());
    let (preps, seen) = cols.sort(preps, seen);
    // The long form's `value` holds the metrics' values; the segment has a column.
    let metric_seen: Vec<Seen> = cols
        .names
        .iter()
        .zip(&seen)
        .filter(|(n, _)| *n != SEGMENT_KEY)
        .map(|(_, s)| *s)
        .collect();
    Ok(Scan {
        cols,
        preps,
        rows_forward,
        kinds: seen.iter().copied().map(Seen::kind).collect(),
        x_int,
        value_kind: Seen::join(&metric_seen),
    })
}

impl Columns {
    /// Put the columns in the order every export of a run has, whatever order
    /// the file's rows list their keys in (wandb-core writes each row's keys in
    /// a new order, so the first row's would differ from run to run of one
    /// script): the keys in natural order (`layer2` before `layer10`; a logged
    /// object's fields side by side), a stitched run's `_segment` last. `a` and
    /// `b` hold something per column, in the columns' order so far: returned in
    /// the new order.
    fn sort<A, B>(&mut self, a: Vec<A>, b: Vec<B>) -> (Vec<A>, Vec<B>) {
        let mut order: Vec<usize> = (0..self.names.len()).collect();
        order.sort_by(|&i, &j| {
            let (x, y) = (&self.names[i], &self.names[j]);
            (x == SEGMENT_KEY)
                .cmp(&(y == SEGMENT_KEY))
                .then_with(|| leet_text::natural_cmp(x, y))
        });
        let mut a: Vec<Option<A>> = a.into_iter().map(Some).collect();
        let mut b: Vec<Option<B>> = b.into_iter().map(Some).collect();
        let mut names = Vec::with_capacity(order.len());
        let (mut na, mut nb) = (Vec::with_capacity(a.len()), Vec::with_capacity(b.len()));
        for &i in &order {
            names.push(std::mem::take(&mut self.names[i]));
            na.extend(a.get_mut(i).and_then(Option::take));
            nb.extend(b.get_mut(i).and_then(Option::take));
        }
        self.index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        self.names = names;
        (na, nb)
    }

    /// The column of a stitched export's segment, if it has one.
    fn segment(&self) -> Option<usize> {
        self.index.get(SEGMENT_KEY).copied()
    }
}

/// The kinds of value a column logged (a `null` is none).
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    number: bool,
    fraction: bool,
    boolean: bool,
    string: bool,
    json: bool,
    /// Some value's text is not JSON: a non-finite number (`NaN`), or a value
    /// logged as text that does not parse (`{bad json`, `nan`, `0x10`).
    not_json: bool,
}

impl Seen {
    #[inline]
    fn see(&mut self, pts: &Points, p: &Point) {
        if p.other == NO_OTHER {
            self.number = true;
            self.fraction |= !is_integer(p.value);
            self.not_json |= !p.value.is_finite();
            return;
        }
        match pts.other(p) {
            None | Some(Other::Int(_)) => {
                self.number = true;
                self.fraction |= !pts.is_int(p);
            }
            Some(Other::Big(t)) => {
                self.number = true;
                self.fraction = true;
                self.not_json = self.not_json || !is_json(t);
            }
            Some(Other::Bool(_)) => self.boolean = true,
            Some(Other::Str(_)) => self.string = true,
            Some(Other::Json(t)) => {
                self.json = true;
                self.not_json = self.not_json || !is_json(t);
            }
        }
    }

    /// Numbers: INT64 where every one is an integer an i64 holds, else DOUBLE;
    /// only booleans or only strings: their own; any mix, or lists and objects:
    /// each value's JSON text.
    fn kind(self) -> ColKind {
        match (self.number, self.boolean, self.string, self.json) {
            (_, false, false, false) if self.number && !self.fraction => ColKind::Int,
            (_, false, false, false) => ColKind::Num,
            (false, true, false, false) => ColKind::Bool,
            (false, false, true, false) => ColKind::Str,
            _ if self.not_json => ColKind::NotJson,
            _ => ColKind::Json,
        }
    }

    /// The kind of a column holding every one of these columns' values (the long
    /// form's `value`; INT64 when there are none).
    fn join(seen: &[Seen]) -> ColKind {
        if seen.is_empty() {
            return ColKind::Int;
        }
        let all = seen.iter().fold(Seen::default(), |a, s| Seen {
            number: a.number | s.number,
            fraction: a.fraction | s.fraction,
            boolean: a.boolean | s.boolean,
            string: a.string | s.string,
            json: a.json | s.json,
            not_json: a.not_json | s.not_json,
        });
        all.kind()
    }
}

/// Whether `text` is JSON a strict reader takes (serde_json's, as arrow's and
/// duckdb's: no `NaN`, no `0x10`, one value).
fn is_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Run `leet export`. Damage is reported on stderr and is not an error: every
/// intact record is exported. A file target is written whole or not at all.
///
/// # Errors
/// Resolution, I/O and header errors (each names the file); an output that is the
/// input ([`OutputIsInput`]); Parquet to a terminal ([`ParquetToTerminal`]);
/// write errors other than a broken pipe.
pub fn run(
    opts: &ExportOptions,
    stdout: &mut (dyn Write + Send),
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    let output = opts.output.as_deref().filter(|p| *p != Path::new("-"));
    let format = Format::pick(opts.format, output)?;
    let opts = &ExportOptions {
        format: Some(format),
        ..opts.clone()
    };
    // The run as the viewer opens it: its nodes, or its segments stitched.
    let (file, passed, src) = match &opts.run {
        Some(id) => {
            let src = RunFiles::of_id(&opts.path, id).map_err(anyhow::Error::msg)?;
            (src.main().to_path_buf(), Vec::new(), src)
        }
        None => {
            let (file, passed) = resolve_readable(&opts.path)?;
            let src = RunFiles::of(&opts.path, &file);
            (file, passed, src)
        }
    };
    // Before anything is opened for writing: no file of the run is written over.
    let mut dest = Dest::plan(opts.output.as_deref(), &file)?;
    for f in src.files() {
        dest = Dest::plan(opts.output.as_deref(), f)?;
    }
    if format == Format::Parquet && opts.output.is_none() && opts.stdout_terminal {
        return Err(ParquetToTerminal.into());
    }
    // Best effort, as progress is: a closed stderr does not stop the export.
    for p in &passed {
        let _ = writeln!(err, "leet: {p}");
    }
    if let Some(notice) = chosen_run(&opts.path, &src, &passed, opts.run.is_some()) {
        let _ = writeln!(err, "{notice}");
    }
    let total = src
        .files()
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    let mut prog = Progress {
        on: opts.progress || total >= BIG_FILE,
        tty: opts.progress,
        total,
        ..Progress::default()
    };
    let scan = scan(&src, opts, &mut prog, err)?;
    let written = match &dest {
        Dest::Stdout => write_rows(
            &src,
            opts,
            scan,
            opts.stdout_terminal,
            stdout,
            &mut prog,
            err,
        ),
        Dest::Stream(p) => {
            use std::io::IsTerminal as _;
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", sanitize_path(p)))?;
            let tty = f.is_terminal();
            let mut out = io::BufWriter::new(f);
            write_rows(&src, opts, scan, tty, &mut out, &mut prog, err)
        }
        Dest::File(target) => to_file(target, |out| {
            write_rows(&src, opts, scan, false, out, &mut prog, err)
        }),
    };
    let to = match &dest {
        Dest::Stdout => "standard output".to_owned(),
        Dest::Stream(p) | Dest::File(p) => p.display().to_string(),
    };
    match written.map_err(|e| Unwritten::name(e, &to)) {
        Ok(damage) => {
            super::report_damage(src.main(), &damage, err)?;
            Ok(())
        }
        // A closed pipe ends a stream quietly; a file has no reader to close it.
        Err(e) if matches!(dest, Dest::File(_)) || !is_broken_pipe(&e) => Err(e),
        Err(_) => Ok(()),
    }
}

/// What is exported, said on stderr: where `path` named a workspace of several
/// runs (a project or wandb directory) rather than one run, which of them and how
/// to export another; where the run is made of several files (a distributed
/// run's nodes, a resumed run's segments), that they are read as one. None when
/// `path` names the run's one file or its directory (`latest-run` too), or its
/// wandb directory holds no other run.
fn chosen_run(path: &Path, src: &RunFiles, passed: &[PassedOver], by_id: bool) -> Option<String> {
    let file = src.main();
    let run_dir = file.parent()?;
    let name = sanitize_path(Path::new(run_dir.file_name()?));
    let made_of = match src {
        // A resumed run's segment named by its own directory or file: its rows
        // alone, said, since the viewer's workspace shows the run stitched.
        RunFiles::One(f) => crate::source::nodes::segments_of(f).map_or_else(String::new, |s| {
            let whole = by_id_hint(f).map_or_else(String::new, |h| format!("; {h} exports them stitched"));
            format!(
                " (one of {} segments of a resumed run: its rows alone{whole})",
                s.len()
            )
        }),
        RunFiles::Nodes(n) => format!(
            " (the primary node of {}: every node's history read with it, as the viewer shows the run)",
            n.len()
        ),
        RunFiles::Segments(s) => format!(
            " (the newest of {} segments of a resumed run: all of them read, stitched as the viewer shows the run)",
            s.len()
        ),
    };
    let alone = (!made_of.is_empty()).then(|| format!("leet: exporting {name}{made_of}"));
    if by_id {
        return alone;
    }
    let mine: Vec<&Path> = src.files().iter().filter_map(|f| f.parent()).collect();
    let real = std::fs::canonicalize(path).ok();
    let names_it = path.file_name().is_some_and(|n| n == "latest-run")
        || src.files().iter().any(|f| {
            let f = std::fs::canonicalize(f).ok();
            let d = f.as_deref().and_then(Path::parent);
            real.is_some() && (f.as_deref() == real.as_deref() || d == real.as_deref())
        });
    if names_it {
        return alone;
    }
    let Some(wandb_dir) = wandb_dir_of(file) else {
        return alone;
    };
    let other = run_dirs(&wandb_dir)
        .into_iter()
        .rev()
        .find(|r| !mine.contains(&r.as_path()) && !passed.iter().any(|p| p.run_dir == *r));
    let Some(other) = other else {
        return alone;
    };
    // Another run named by its id: read whole whatever it is made of (a run
    // directory would be one segment of a resumed run).
    let how = crate::source::resolve::wandb_in_dir(&other)
        .as_deref()
        .and_then(by_id_hint)
        .unwrap_or_else(|| {
            format!(
                "give its run directory: leet export {}",
                sanitize_path(&other)
            )
        });
    Some(format!(
        "leet: {} holds {} runs; exporting the latest{}, {name}{made_of} (to export another: {how})",
        sanitize_path(&wandb_dir),
        run_count(&wandb_dir),
        if passed.is_empty() { "" } else { " readable one" },
    ))
}

/// `leet export WANDB_DIR --run ID` for the run of `file` (a `run-<id>.wandb` in
/// a wandb directory); None when its id or directory cannot be told.
pub(crate) fn by_id_hint(file: &Path) -> Option<String> {
    let id = file
        .file_name()?
        .to_str()?
        .strip_prefix("run-")?
        .strip_suffix(".wandb")?;
    let wandb_dir = wandb_dir_of(file)?;
    let plain = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    let dir = wandb_dir.to_string_lossy();
    (plain(id) && !dir.contains(char::is_whitespace))
        .then(|| format!("leet export {} --run {id}", sanitize_path(&wandb_dir)))
}

/// Write a file through a temporary one beside it: `f` writes, and only when it
/// succeeds is the file synced and renamed into place; otherwise (an error, a
/// signal) the temporary file is removed and `target` is untouched.
fn to_file<T>(
    target: &Path,
    f: impl FnOnce(&mut (dyn Write + Send)) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let mut staged = Staged::create(target).map_err(|e| {
        anyhow::anyhow!("cannot create a file beside {}: {e}", sanitize_path(target))
    })?;
    let v = f(staged.writer())?;
    staged
        .commit()
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", sanitize_path(target)))?;
    Ok(v)
}

/// Where a wide row's cells are: by metric column, its value's cell and its
/// smoothed value's (numbers, when smoothing).
struct Layout {
    cells: Vec<(usize, Option<usize>)>,
}

/// The header: the x column, the clocks (history), then the metrics (wide) or
/// key and value (long), each number with its smoothed column when smoothing.
/// A column's kind is its values' (`kinds`; `x_int`: `_step` [`ColKind::Int`]);
/// in the long form `value`'s is every metric's together.
fn header(
    opts: &ExportOptions,
    (names, left_out): (&[String], &[String]),
    kinds: &[ColKind],
    x_int: bool,
    value_kind: ColKind,
) -> (Vec<(String, ColKind)>, Layout) {
    let smooth = opts.smoothing != Smoothing::None;
    let kind = |int: bool| if int { ColKind::Int } else { ColKind::Num };
    let (x_name, x_kind) = if opts.system {
        ("_timestamp", ColKind::Num)
    } else {
        ("_step", kind(x_int))
    };
    let mut header: Vec<(String, ColKind)> = vec![(x_name.to_owned(), x_kind)];
    if !opts.system {
        header.push(("_runtime".to_owned(), ColKind::Num));
        header.push(("_timestamp".to_owned(), ColKind::Num));
    }
    let mut layout = Layout {
        cells: Vec::with_capacity(names.len()),
    };
    if opts.long {
        header.push(("key".to_owned(), ColKind::Text));
        header.push(("value".to_owned(), value_kind));
        if smooth {
            header.push(("smoothed".to_owned(), ColKind::Num));
        }
        // A stitched run's rows each name their segment, as the wide form's do.
        if names.iter().any(|n| n == SEGMENT_KEY) {
            header.push((SEGMENT_NAME.to_owned(), ColKind::Text));
        }
    } else {
        // Every name a metric or a fixed column has is its own; a smoothed column
        // (or a metric whose name only cleaning made equal to another's) takes the
        // first of `NAME`, `NAME_2`, `NAME_3`, … that none of them has, so no
        // reader finds two columns of one name.
        let mut taken: std::collections::HashSet<String> =
            header.iter().map(|(n, _)| n.clone()).collect();
        taken.extend(names.iter().cloned());
        let mut used: std::collections::HashSet<String> =
            header.iter().map(|(n, _)| n.clone()).collect();
        for (name, &kind) in names.iter().zip(kinds) {
            let at = header.len();
            let own = if name == SEGMENT_KEY {
                // Last: every metric's name is taken by now.
                let mut all = taken.clone();
                all.extend(left_out.iter().cloned());
                free_name(SEGMENT_NAME, &all)
            } else if used.contains(name) {
                free_name(name, &taken)
            } else {
                name.clone()
            };
            taken.insert(own.clone());
            used.insert(own.clone());
            header.push((own, kind));
            if smooth && kind.is_number() {
                layout.cells.push((at, Some(header.len())));
                let smoothed = free_name(&format!("{name}_smoothed"), &taken);
                taken.insert(smoothed.clone());
                used.insert(smoothed.clone());
                header.push((smoothed, ColKind::Num));
            } else {
                layout.cells.push((at, None));
            }
        }
    }
    (header, layout)
}

/// `want` when no column has it, else the first of `want_2`, `want_3`, … free.
fn free_name(want: &str, taken: &std::collections::HashSet<String>) -> String {
    if !taken.contains(want) {
        return want.to_owned();
    }
    // One of these is free: there are more of them than names taken.
    (2..=taken.len() + 2)
        .map(|n| format!("{want}_{n}"))
        .find(|n| !taken.contains(n))
        .unwrap_or_else(|| want.to_owned())
}

/// Pass 2: every row to `out`, as it is decoded; the damage found. Metric names
/// are [`sanitize`]d when `out` is a terminal (they come from the file), their
/// control characters written as text in a CSV elsewhere.
fn write_rows(
    src: &RunFiles,
    opts: &ExportOptions,
    scan: Scan,
    terminal: bool,
    out: &mut (dyn Write + Send),
    prog: &mut Progress,
    err: &mut dyn Write,
) -> anyhow::Result<DamageReport> {
    let Scan {
        cols,
        preps,
        rows_forward,
        kinds,
        x_int,
        value_kind,
    } = scan;
    if terminal && prog.tty {
        // The rows go to the terminal progress is drawn on: a line drawn there
        // would land between them (and the rows show how far it got).
        prog.on = false;
    }
    let format = opts.format.unwrap_or_default();
    let clean = if format == Format::Jsonl {
        // JSON lines escapes every character that could act on a terminal
        // itself (`table::json_inert`): the text is kept whole, wherever it goes.
        Clean::Keep
    } else if terminal {
        Clean::Sanitize
    } else if format == Format::Csv {
        // A CSV in a pipe often ends on a terminal (`| tail`): the control
        // characters of its text (names, text values) are written as text
        // (Parquet is not shown as text).
        Clean::Escape
    } else {
        Clean::Keep
    };
    let names: Vec<String> = (cols.names.iter())
        .map(|n| {
            if n == SEGMENT_KEY {
                n.clone()
            } else {
                clean.text(n)
            }
        })
        .collect();
    // A stitched export's segment column is named the same whatever `--metrics`
    // leaves out: the names of the metrics left out are taken too.
    let left_out: Vec<String> = cols.others.iter().map(|n| clean.text(n)).collect();
    let (header, layout) = header(opts, (&names, &left_out), &kinds, x_int, value_kind);
    let table = Table::new(format, &header, out).map_err(Unwritten)?;
    let plan = Plan {
        cols,
        preps,
        rows_forward,
        cells: header.len(),
        layout,
        kinds,
        clean,
    };
    // The rows are formatted and written on a thread of their own, handed over in
    // batches, while this one decodes and builds the next (formatting the numbers
    // was half of an export's CPU, all on one core).
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Waiting>>(BATCHES_AHEAD);
    let names = &names;
    std::thread::scope(|s| {
        let writer = std::thread::Builder::new()
            .name("leet-export-write".into())
            .spawn_scoped(s, move || {
                write_batches(table, &rx, names, 1 + time_cols_of(opts))
            })?;
        let built = build_rows(src, opts, plan, &tx, prog, err);
        drop(tx);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the export's writer panicked")));
        // The writer's error first: the reading stopped because of it.
        written.map_err(Unwritten)?;
        built
    })
}

/// Rows' batches on their way to the writer at most.
const BATCHES_AHEAD: usize = 4;
/// A batch holds about this many cells (so a wide table's batch stays small).
const BATCH_CELLS: usize = 1 << 16;

/// `_runtime` and `_timestamp` after `_step`; none after a system sample's time.
fn time_cols_of(opts: &ExportOptions) -> usize {
    if opts.system {
        0
    } else {
        2
    }
}

/// The writer's thread: every batch's rows to `table`, then its end.
fn write_batches(
    mut table: Table<'_>,
    rx: &std::sync::mpsc::Receiver<Vec<Waiting>>,
    names: &[String],
    key_at: usize,
) -> io::Result<()> {
    let mut cells = Vec::new();
    for batch in rx {
        for r in &batch {
            queue::write_row(&mut table, r, names, key_at, &mut cells)?;
        }
    }
    table.finish()
}

/// Text from the file on its way out: sanitized for a terminal, its control
/// characters written as text in a CSV, else as it is.
#[derive(Debug, Clone, Copy)]
enum Clean {
    Sanitize,
    Escape,
    Keep,
}

impl Clean {
    fn text(self, s: &str) -> String {
        match self {
            Clean::Sanitize => sanitize(s),
            // A carriage return too: in a cell shown on a terminal it hides the
            // start of the row (line feeds and tabs are the cell's layout, quoted).
            Clean::Escape => leet_text::escape_controls(s).replace('\r', "\\u{000d}"),
            Clean::Keep => s.to_owned(),
        }
    }

    fn other(self, o: Other) -> Other {
        match (self, o) {
            (Clean::Keep, o) => o,
            (_, Other::Str(s)) => Other::Str(self.text(&s)),
            (_, Other::Json(s)) => Other::Json(self.text(&s)),
            (_, o) => o,
        }
    }
}

/// What pass 2 builds its rows from: the first pass's columns and smoothing
/// preparation, and the header's layout.
struct Plan {
    cols: Columns,
    preps: Vec<Prep>,
    rows_forward: bool,
    /// Cells in a row.
    cells: usize,
    layout: Layout,
    kinds: Vec<ColKind>,
    clean: Clean,
}

/// Pass 2's reading: every row built as it is decoded and handed to the writer in
/// order (`tx`); the damage found.
fn build_rows(
    src: &RunFiles,
    opts: &ExportOptions,
    plan: Plan,
    tx: &std::sync::mpsc::SyncSender<Vec<Waiting>>,
    prog: &mut Progress,
    err: &mut dyn Write,
) -> anyhow::Result<DamageReport> {
    let Plan {
        mut cols,
        preps,
        rows_forward,
        cells,
        layout,
        kinds,
        clean,
    } = plan;
    let smooth = opts.smoothing != Smoothing::None;
    let filter = opts.metrics.as_ref();
    let mut buf = Points::default();
    let mut smoothed = Smoothed::new(opts.smoothing, &preps);
    let time_cols = time_cols_of(opts);
    // Rows wait here until their smoothed values are known (at once without
    // smoothing, or with TWEMA and EMA; for the window's length with the others).
    let mut queue = Queue::default();
    let mut batch = Vec::new();
    let mut batch_cells = 0;
    // Hand the batch over once it is big enough (`all`: whatever it holds); false
    // when the writer is gone (its error says why).
    let mut hand = |queue: &mut Queue, smoothed: &mut Smoothed, all: bool| -> bool {
        batch_cells += queue.ready(smoothed, &mut batch);
        if batch_cells >= BATCH_CELLS || (all && !batch.is_empty()) {
            batch_cells = 0;
            return tx.send(std::mem::take(&mut batch)).is_ok();
        }
        true
    };
    // Wide: the row being built (a record with the same step as the one before
    // adds to its row).
    let mut row = Waiting::new(cells);
    let mut row_x: Option<(Option<f64>, Option<i64>)> = None;
    let long_key_at = 1 + time_cols;
    let segment_col = cols.segment();
    let result = read(src, "exporting", prog, err, |ev, segment| {
        let mut res = Ok(());
        points_of(
            (ev, segment),
            opts.system,
            filter,
            &mut cols,
            false,
            &mut buf,
            |pts| {
                if res.is_err() {
                    return;
                }
                let mut others = std::mem::take(&mut pts.others);
                // The long form: the record's segment goes in its rows' last cell.
                let segment = segment_col
                    .filter(|_| opts.long)
                    .and_then(|c| pts.list.iter().find(|p| p.col() == c))
                    .and_then(|p| others.get(p.other as usize).cloned())
                    .map(|o| clean.other(o));
                for p in &pts.list {
                    if opts.long && Some(p.col()) == segment_col {
                        continue;
                    }
                    let (num, other) = match others.get_mut(p.other as usize) {
                        None => (Some(p.value), None),
                        Some(o) => {
                            let o = std::mem::replace(o, Other::Bool(false));
                            (o.is_number().then_some(p.value), Some(clean.other(o)))
                        }
                    };
                    let seq = (smooth && num.is_some() && kinds[p.col()].is_number())
                        .then(|| smoothed.push(p.col(), p.x.unwrap_or(f64::NAN), p.value));
                    if opts.long {
                        let mut w = Waiting::new(cells);
                        w.key = Some(p.col());
                        w.set(0, p.x, pts.step_cell());
                        if !opts.system {
                            w.nums[1] = p.runtime;
                            w.nums[2] = p.time;
                        }
                        w.set(long_key_at + 1, num, other);
                        if segment.is_some() {
                            w.set(cells - 1, None, segment.clone());
                        }
                        if let Some(seq) = seq {
                            w.waits.push((long_key_at + 2, p.col(), seq));
                        }
                        queue.rows.push_back(w);
                        continue;
                    }
                    let key = pts.key(p);
                    let same = row_x.is_some_and(|rx| rx.0.is_some() && rx == key);
                    if !same && row_x.is_some() {
                        let done = std::mem::replace(&mut row, Waiting::new(cells));
                        queue.rows.push_back(done);
                    }
                    if !same {
                        row_x = Some(key);
                        row.set(0, p.x, pts.step_cell());
                    }
                    if !opts.system {
                        // A row of several records: the latest clock of them.
                        let later = |a: Option<f64>, b: Option<f64>| match (a, b) {
                            (Some(a), Some(b)) => Some(a.max(b)),
                            (a, b) => a.or(b),
                        };
                        row.nums[1] = later(row.nums[1], p.runtime);
                        row.nums[2] = later(row.nums[2], p.time);
                    }
                    let (at, smoothed_at) = layout.cells[p.col()];
                    row.set(at, num, other);
                    if let Some(s) = smoothed_at {
                        // A later value of the same key at the same step replaces it.
                        row.waits.retain(|w| w.0 != s);
                        if let Some(seq) = seq {
                            row.waits.push((s, p.col(), seq));
                        }
                    }
                }
                // Kept for the next record's (its strings moved out above).
                others.clear();
                pts.others = others;
                if smooth && rows_forward {
                    if let Some(x) = pts.list.last().and_then(|p| p.x) {
                        smoothed.advance(x);
                    }
                }
                if !hand(&mut queue, &mut smoothed, false) {
                    res = Err(io::Error::other("the export's writer stopped"));
                }
            },
        );
        res
    });
    let damage = result?;
    if !opts.long && row_x.is_some() {
        queue.rows.push_back(row);
    }
    smoothed.finish();
    hand(&mut queue, &mut smoothed, true);
    Ok(damage)
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<WriteFailed>()
        .map(|w| &w.cause)
        .or_else(|| e.downcast_ref::<io::Error>())
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
