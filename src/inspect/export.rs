//! `leet export`: a run's full history (every logged point, not the capped store)
//! or its system metrics, as CSV, JSON lines or Parquet, wide (one row per step)
//! or long (one row per point), with smoothed columns when asked.
//!
//! The file is read twice through the ordinary reader, a chunk at a time: the
//! first pass finds the columns (and, with smoothing, holds the selected series'
//! points, 16 bytes each), the second writes the rows as it decodes them. Without
//! smoothing, memory is bounded whatever the file's size.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use regex::Regex;
use rustc_hash::FxHashMap;

use crate::decode::event::{Event, Events};
use crate::decode::leveldb::{Skip, SkipReason};
use crate::source::file::{resolve_file, RunReader};
use crate::store::run::DamageReport;
use crate::store::smooth::Smoothing;

mod table;

pub use table::Format;
use table::{Cell, ColKind, Table};

/// Bytes read at a time.
const CHUNK: usize = 4 << 20;
/// Files at least this big report progress on stderr even when it is not a terminal.
const BIG_FILE: u64 = 256 << 20;

/// Options of `leet export`.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    pub path: PathBuf,
    pub format: Format,
    /// One row per point (`_step,_timestamp,key,value`) instead of one per step.
    pub long: bool,
    /// Only the metrics whose key this matches (unanchored, as `regex` finds).
    pub metrics: Option<Regex>,
    /// System metrics (stats records) instead of the history.
    pub system: bool,
    pub smoothing: Smoothing,
    /// Where to write (None or `-`: stdout).
    pub output: Option<PathBuf>,
    /// Report progress on stderr (besides for big files).
    pub progress: bool,
}

/// One point of a selected series: its row's index value, time, column, value.
struct Point {
    /// The row's step (history) or time (system): the x smoothing runs along.
    x: Option<f64>,
    time: Option<f64>,
    col: usize,
    value: f64,
}

/// The selected columns, in first-seen order.
#[derive(Default)]
struct Columns {
    names: Vec<String>,
    index: FxHashMap<String, usize>,
}

/// Every point of `ev` in the selected columns, grouped by record: `f(record,
/// points)`; a key first seen is added to `cols` when `grow`.
fn points_of(
    ev: &Events,
    system: bool,
    filter: Option<&Regex>,
    cols: &mut Columns,
    grow: bool,
    buf: &mut Vec<Point>,
    mut f: impl FnMut(&mut Vec<Point>),
) {
    // The batch's key index -> column, looked up once per batch.
    let mut map: Vec<Option<Option<usize>>> = vec![None; ev.keys.len()];
    let mut col_of = |k: u32, cols: &mut Columns| -> Option<usize> {
        let slot = map.get_mut(k as usize)?;
        *slot.get_or_insert_with(|| {
            let key = &ev.keys[k as usize];
            if let Some(&c) = cols.index.get(key) {
                return Some(c);
            }
            if !grow || filter.is_some_and(|r| !r.is_match(key)) {
                return None;
            }
            cols.names.push(key.clone());
            cols.index.insert(key.clone(), cols.names.len() - 1);
            Some(cols.names.len() - 1)
        })
    };
    for e in &ev.list {
        let (x, time, range) = match e {
            Event::Row(r) if !system && r.complete => (r.step, r.time, &r.values),
            Event::Stats { time, values } if system => {
                let t = time.map(|(s, n)| {
                    #[allow(clippy::cast_precision_loss)]
                    let s = s as f64;
                    s + f64::from(n) / 1e9
                });
                (t, t, values)
            }
            _ => continue,
        };
        buf.clear();
        let vals = ev
            .values
            .get(range.start as usize..range.end as usize)
            .unwrap_or_default();
        for &(k, value) in vals {
            if let Some(col) = col_of(k, cols) {
                buf.push(Point {
                    x,
                    time,
                    col,
                    value,
                });
            }
        }
        f(buf);
    }
}

/// Progress on stderr, a few times a second at most.
struct Progress {
    on: bool,
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
        // Progress is best effort: a closed stderr does not stop the export.
        let _ = writeln!(err, "{label} {pct}% {}/{}", bytes(done), bytes(self.total));
    }
}

/// `560MiB`, `1.2GiB`.
fn bytes(n: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let f = n as f64;
    match n {
        0..1024 => format!("{n}B"),
        1024..1_048_576 => format!("{:.0}KiB", f / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.0}MiB", f / 1_048_576.0),
        _ => format!("{:.1}GiB", f / 1_073_741_824.0),
    }
}

/// Read the whole file, handing on each batch; the damage found.
fn read(
    file: &Path,
    label: &str,
    prog: &mut Progress,
    err: &mut dyn Write,
    mut f: impl FnMut(&Events) -> io::Result<()>,
) -> anyhow::Result<DamageReport> {
    let mut reader = RunReader::open(file)?.with_chunk(CHUNK);
    reader.finish();
    let mut damage = DamageReport::default();
    loop {
        let (ev, p) = reader.poll_events()?;
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
        f(&ev)?;
        damage.incomplete_tail = p.pending;
        damage.set_open(p.open);
        prog.tick(label, reader.offset(), err);
        if !p.more {
            return Ok(damage);
        }
    }
}

/// Run `leet export`. Damage is reported on stderr and is not an error: every
/// intact record is exported.
///
/// # Errors
/// Resolution, I/O and header errors (each names the file); write errors other
/// than a broken pipe.
pub fn run(
    opts: &ExportOptions,
    stdout: &mut (dyn Write + Send),
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    let file = resolve_file(&opts.path)?;
    let total = std::fs::metadata(&file).map_or(0, |m| m.len());
    let mut prog = Progress {
        on: opts.progress || total >= BIG_FILE,
        last: None,
        total,
    };
    let smooth = opts.smoothing != Smoothing::None;
    let filter = opts.metrics.as_ref();
    // Pass 1: the columns, and the selected series when smoothing.
    let mut cols = Columns::default();
    let mut series: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    let mut buf = Vec::new();
    read(&file, "scanning", &mut prog, err, |ev| {
        points_of(ev, opts.system, filter, &mut cols, true, &mut buf, |pts| {
            if smooth {
                for p in pts.iter() {
                    if series.len() <= p.col {
                        series.resize_with(p.col + 1, Default::default);
                    }
                    series[p.col].0.push(p.x.unwrap_or(f64::NAN));
                    series[p.col].1.push(p.value);
                }
            }
        });
        Ok(())
    })?;
    series.resize_with(cols.names.len(), Default::default);
    let smoothed: Vec<Vec<f64>> = series
        .into_iter()
        .map(|(xs, ys)| opts.smoothing.apply(&xs, &ys))
        .collect();
    let mut cursor = vec![0usize; smoothed.len()];

    let x_name = if opts.system { "_timestamp" } else { "_step" };
    let mut header: Vec<(String, ColKind)> = vec![(x_name.to_owned(), ColKind::Num)];
    if !opts.system {
        header.push(("_timestamp".to_owned(), ColKind::Num));
    }
    if opts.long {
        header.push(("key".to_owned(), ColKind::Text));
        header.push(("value".to_owned(), ColKind::Num));
        if smooth {
            header.push(("smoothed".to_owned(), ColKind::Num));
        }
    } else {
        for name in &cols.names {
            header.push((name.clone(), ColKind::Num));
            if smooth {
                header.push((format!("{name}_smoothed"), ColKind::Num));
            }
        }
    }
    let mut file_out;
    let out: &mut (dyn Write + Send) = match &opts.output {
        Some(p) if p.as_os_str() != "-" => {
            file_out = io::BufWriter::new(std::fs::File::create(p).map_err(|e| {
                anyhow::anyhow!("cannot create {}: {e}", crate::text::sanitize_path(p))
            })?);
            &mut file_out
        }
        _ => stdout,
    };
    let mut table = Table::new(opts.format, &header, out)?;
    let time_col = usize::from(!opts.system);
    let first_metric = 1 + time_col;
    let names = cols.names.clone();
    let per = if smooth { 2 } else { 1 };
    // Wide: the row being built (a record with the same step as the one before
    // adds to its row).
    let mut row: Vec<Option<f64>> = vec![None; header.len()];
    let mut row_x: Option<Option<f64>> = None;
    let emit = |table: &mut Table<'_>, row: &mut Vec<Option<f64>>| -> io::Result<()> {
        let cells: Vec<Cell<'_>> = row.iter().map(|v| Cell::Num(*v)).collect();
        table.row(&cells)?;
        row.iter_mut().for_each(|v| *v = None);
        Ok(())
    };
    let result = read(&file, "exporting", &mut prog, err, |ev| {
        let mut res = Ok(());
        points_of(ev, opts.system, filter, &mut cols, false, &mut buf, |pts| {
            if res.is_err() {
                return;
            }
            for p in pts.iter() {
                let s = smoothed.get(p.col).and_then(|v| {
                    let i = cursor[p.col];
                    cursor[p.col] += 1;
                    v.get(i).copied()
                });
                if opts.long {
                    let mut cells = [Cell::Num(None); 5];
                    let mut n = 0;
                    let mut push = |c| {
                        cells[n] = c;
                        n += 1;
                    };
                    push(Cell::Num(p.x));
                    if !opts.system {
                        push(Cell::Num(p.time));
                    }
                    push(Cell::Text(&names[p.col]));
                    push(Cell::Num(Some(p.value)));
                    if smooth {
                        push(Cell::Num(s));
                    }
                    if let Err(e) = table.row(&cells[..n]) {
                        res = Err(e);
                        return;
                    }
                    continue;
                }
                let same = row_x.is_some_and(|rx| rx.is_some() && rx == p.x);
                if !same && row_x.is_some() {
                    if let Err(e) = emit(&mut table, &mut row) {
                        res = Err(e);
                        return;
                    }
                }
                if !same {
                    row_x = Some(p.x);
                    row[0] = p.x;
                }
                if !opts.system {
                    row[1] = match (row[1], p.time) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                }
                let c = first_metric + p.col * per;
                row[c] = Some(p.value);
                if smooth {
                    row[c + 1] = s;
                }
            }
        });
        res
    });
    let finished = result.and_then(|damage| {
        if !opts.long && row_x.is_some() {
            emit(&mut table, &mut row)?;
        }
        table.finish()?;
        Ok(damage)
    });
    match finished {
        Ok(damage) => {
            super::report_damage(&file, &damage, err)?;
            Ok(())
        }
        Err(e) if is_broken_pipe(&e) => Ok(()),
        Err(e) => Err(e),
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
