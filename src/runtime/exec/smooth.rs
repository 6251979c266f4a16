//! `Cmd::Smooth` off the loop thread: a metric smoothed from every point it
//! logged. A series that still holds every point sends its points along; any
//! other is read again from its run file's full history, through the same reader
//! and decoder the tail uses, each point's x placed as the store places it (the
//! row's step, or the step metric `define_metric` names). The answer keeps the smoothed series as a
//! capped [`Series`] keeps points (min/max compaction), so it stays bounded
//! however long the run.
//!
//! One worker thread does the jobs in order; the jobs queued meanwhile are done
//! together, each file read once for all the metrics asked of it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender, SyncSender};
use std::time::Instant;

use rustc_hash::FxHashMap;

use crate::msg::{Msg, SmoothJob, Smoothed};
use crate::source::file::{resolve_file, RunReader};
use crate::store::series::Series;
use crate::store::smooth::Smoothing;
use leet_format::event::{Event, Events, MetricDef};

/// Bytes read at a time.
const CHUNK: usize = 4 << 20;

/// Start the smoothing worker; its answers go to `tx`.
pub(super) fn spawn(tx: SyncSender<Msg>) -> Sender<SmoothJob> {
    let (jobs, rx) = mpsc::channel::<SmoothJob>();
    let _ = std::thread::Builder::new()
        .name("leet-smooth".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut batch = vec![first];
                batch.extend(rx.try_iter());
                for msg in smooth_all(batch) {
                    if tx.send(msg).is_err() {
                        return;
                    }
                }
            }
        });
    jobs
}

/// The answers to `jobs`, in their order; each file named is read once.
pub(super) fn smooth_all(jobs: Vec<SmoothJob>) -> Vec<Msg> {
    let t0 = Instant::now();
    // The keys each file is asked for.
    let mut wanted: HashMap<&Path, Vec<&str>> = HashMap::new();
    for j in jobs.iter().filter(|j| j.points.is_none()) {
        let w = wanted.entry(j.path.as_path()).or_default();
        if !w.contains(&j.key.as_str()) {
            w.push(j.key.as_str());
        }
    }
    let read: HashMap<PathBuf, Result<Vec<Raw>, String>> = wanted
        .into_iter()
        .map(|(path, want)| {
            let got = full_history(path, &want).map(|series| {
                want.iter()
                    .zip(series)
                    .map(|(&k, s)| (k.to_owned(), s))
                    .collect()
            });
            (path.to_owned(), got)
        })
        .collect();
    let read_secs = t0.elapsed().as_secs_f64();
    jobs.into_iter()
        .map(|mut job| {
            let t = Instant::now();
            let points = job.points.take();
            let result = match points {
                Some(p) => {
                    let (xs, ys): (Vec<f64>, Vec<f64>) = p.into_iter().unzip();
                    smooth(&job, &xs, &ys)
                }
                None => match read.get(&job.path) {
                    Some(Ok(all)) => all.iter().find(|(k, _)| *k == job.key).map_or_else(
                        || Err("not read".to_owned()),
                        |(_, (xs, ys))| smooth(&job, xs, ys),
                    ),
                    Some(Err(e)) => Err(e.clone()),
                    None => Err("not read".to_owned()),
                },
            };
            let (points, count) = match result {
                Ok((p, n)) => (Ok(p), n),
                Err(e) => (Err(e), 0),
            };
            let secs = t.elapsed().as_secs_f64() + read_secs;
            Msg::Smoothed(Box::new(Smoothed {
                job,
                points,
                count,
                secs,
            }))
        })
        .collect()
}

/// One series' points: x and y.
type Points = (Vec<f64>, Vec<f64>);

/// A series read from a file: its key and its points.
type Raw = (String, Points);

/// `job`'s smoothing of `(xs, ys)`, kept as a capped series keeps points; and how
/// many points were smoothed.
fn smooth(job: &SmoothJob, xs: &[f64], ys: &[f64]) -> Result<(Vec<(f64, f64)>, u64), String> {
    let how: Smoothing = job.smoothing.parse()?;
    let smoothed = how.apply(xs, ys);
    let mut kept = Series::new(job.cap);
    for (&x, v) in xs.iter().zip(smoothed) {
        kept.push(x, v);
    }
    Ok((kept.kept(), kept.count()))
}

/// Where one wanted series stands while the file is read.
struct Want<'a> {
    key: &'a str,
    /// The step metric the store would place it by now (None: not looked up since
    /// the metric definitions last changed).
    step_metric: Option<Option<String>>,
    xs: Vec<f64>,
    ys: Vec<f64>,
}

/// Every point of each key of `want` in the complete history rows of the file at
/// `path` (a `.wandb` file or a run directory), placed as `Run::fold_row` places
/// them: x is the row's step (else its number), or with `define_metric` the step
/// metric's value in the row (else its last value; none yet: no point).
///
/// # Errors
/// The file cannot be found, opened or read (the message names it).
fn full_history(path: &Path, want: &[&str]) -> Result<Vec<Points>, String> {
    let file = resolve_file(path).map_err(|e| e.to_string())?;
    let mut reader = RunReader::open(&file)
        .map_err(|e| e.to_string())?
        .with_chunk(CHUNK);
    reader.finish();
    let mut h = History::new(want);
    loop {
        let (ev, p) = reader.poll_events().map_err(|e| e.to_string())?;
        if p.restarted {
            h = History::new(want);
        }
        h.fold(&ev);
        if !p.more {
            break;
        }
    }
    Ok(h.wants.into_iter().map(|w| (w.xs, w.ys)).collect())
}

/// The history state `Run::fold_row` keeps that places a point: rows counted,
/// metric definitions, and each key's last value (for step metrics).
struct History<'a> {
    wants: Vec<Want<'a>>,
    rows: u64,
    defs: Vec<MetricDef>,
    last: FxHashMap<String, f64>,
    row_steps: FxHashMap<String, f64>,
}

impl<'a> History<'a> {
    fn new(want: &[&'a str]) -> Self {
        Self {
            wants: want
                .iter()
                .map(|&key| Want {
                    key,
                    step_metric: None,
                    xs: Vec::new(),
                    ys: Vec::new(),
                })
                .collect(),
            rows: 0,
            defs: Vec::new(),
            last: FxHashMap::default(),
            row_steps: FxHashMap::default(),
        }
    }

    fn step_metric(defs: &[MetricDef], key: &str) -> Option<String> {
        leet_format::event::step_metric_for(defs, key).map(str::to_owned)
    }

    fn fold(&mut self, ev: &Events) {
        // The batch's key index -> the wants of that key.
        let mut of: Vec<Vec<usize>> = vec![Vec::new(); ev.keys.len()];
        for (i, k) in ev.keys.iter().enumerate() {
            for (j, w) in self.wants.iter().enumerate() {
                if w.key == k {
                    of[i].push(j);
                }
            }
        }
        for e in &ev.list {
            match e {
                Event::Metric(def) => {
                    leet_format::event::define(&mut self.defs, def.clone());
                    for w in &mut self.wants {
                        w.step_metric = None;
                    }
                }
                Event::Row(r) if r.complete => self.row(ev, r, &of),
                _ => {}
            }
        }
    }

    fn row(&mut self, ev: &Events, r: &leet_format::event::Row, of: &[Vec<usize>]) {
        let vals = ev
            .values
            .get(r.values.start as usize..r.values.end as usize)
            .unwrap_or_default();
        self.rows += 1;
        let x_default = r.step.unwrap_or(self.rows as f64 - 1.0);
        let defs = !self.defs.is_empty();
        if defs {
            self.row_steps.clear();
            for &(id, y) in vals {
                if let Some(k) = ev.keys.get(id as usize) {
                    self.row_steps.insert(k.clone(), y);
                }
            }
            for (k, v) in &self.row_steps {
                match self.last.get_mut(k) {
                    Some(l) => *l = *v,
                    None => {
                        self.last.insert(k.clone(), *v);
                    }
                }
            }
        }
        for &(id, y) in vals {
            let Some(ws) = of.get(id as usize) else {
                continue;
            };
            for &j in ws {
                let w = &mut self.wants[j];
                let sm = if defs {
                    w.step_metric
                        .get_or_insert_with(|| Self::step_metric(&self.defs, w.key))
                        .clone()
                } else {
                    None
                };
                let x = match &sm {
                    Some(s) => self.row_steps.get(s).or_else(|| self.last.get(s)).copied(),
                    None => Some(x_default),
                };
                if let Some(x) = x.filter(|x| x.is_finite()) {
                    w.xs.push(x);
                    w.ys.push(y);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
