//! Opening a run on a server: its facts, its history files (from the cache when
//! the run has not changed since they were kept, else downloaded with progress
//! and a cancel flag), the live rows after them, and, while it runs, polling for
//! more. Everything comes out as the file reader's events.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use bytes::Bytes;
use leet_format::event::Events;

use super::auth::ApiKey;
use super::cache::Cache;
use super::client::{with_retries, Client, Retrying, Timeouts};
use super::history::{self, HistoryRow};
use super::info::{self, RunMeta};
use super::records::Writer;
use super::url::RemoteUrl;
use super::RemoteError;
use crate::msg::FollowTrouble;

/// How often a running run is asked for new rows.
pub const POLL_EVERY: Duration = Duration::from_secs(5);
/// Live rows asked for at a time.
const PAGE: i64 = 10_000;
/// Empty pages of steps walked over in one look (a gap of a million steps); a
/// wider gap is walked on at the next look.
const MAX_EMPTY_PAGES: u32 = 100;
/// System metric rows asked for (the server samples them down to this).
const SYSTEM_SAMPLES: i64 = 10_000;
/// Console lines asked for (the tail).
const CONSOLE_LINES: i64 = 10_000;

/// How to open a run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub key: Option<ApiKey>,
    pub timeouts: Timeouts,
    pub cache: Option<Cache>,
    /// Decode without the series (a run only summarised).
    pub summary_only: bool,
    /// Also frame the records as a `.wandb` file ([`RemoteRun::framed`]).
    pub framing: bool,
    /// CA certificates (PEM) to trust instead of the public roots.
    pub ca_file: Option<std::path::PathBuf>,
}

/// Where an open stands, for a progress line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Asking for the run's facts.
    Info,
    /// Downloading history file `file` (from 0) of `files`: `bytes` of `total`.
    Download {
        file: usize,
        files: usize,
        bytes: u64,
        total: Option<u64>,
    },
    /// The history files came from the cache.
    Cached { files: usize },
    /// The server cannot be reached or is down: the copy of the run an earlier
    /// open kept, written this many seconds ago, is read instead.
    Kept { age_s: u64 },
    /// Asking for the live rows.
    Live,
    /// The server answered busy (`status`): asked again after `wait_s`, try
    /// `attempt` of `of`.
    Retrying {
        status: u16,
        wait_s: u64,
        attempt: u32,
        of: u32,
    },
}

impl From<Retrying> for Progress {
    fn from(r: Retrying) -> Self {
        Self::Retrying {
            status: r.status,
            wait_s: r.wait.as_secs(),
            attempt: r.attempt,
            of: r.of,
        }
    }
}

/// A run being read from a server.
#[derive(Debug)]
pub struct RemoteRun {
    client: Client,
    url: RemoteUrl,
    writer: Writer,
    /// The run's facts as last asked.
    pub meta: RunMeta,
    /// The largest `_step` read so far.
    pub last_step: Option<i64>,
    /// The steps below this were all asked for (gaps in the steps walked over).
    scanned_to: i64,
    /// The number of the last console line read.
    console_seen: Option<i64>,
    /// The `_timestamp` of the last system metrics row read.
    stats_seen: Option<f64>,
    /// The parts the server did not give at the last look, and why.
    missing: Option<String>,
}

/// Open the run at `url`: its events so far, in batches.
///
/// # Errors
/// [`RemoteError::NoKey`] without a key; what the server's answers give;
/// [`RemoteError::Cancelled`] once `cancel` is set.
pub fn open(
    url: &RemoteUrl,
    opts: &Options,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<(RemoteRun, Vec<Events>), RemoteError> {
    let Some(key) = opts.key.clone() else {
        return Err(RemoteError::NoKey {
            host: leet_text::sanitize(url.netloc()),
            api: leet_text::sanitize(&url.api),
        });
    };
    if url.run.is_none() {
        return Err(RemoteError::Project(url.shown()));
    }
    let client = Client::new(&url.api, Some(key), opts.timeouts, opts.ca_file.as_deref())?;
    progress(Progress::Info);
    let meta = with_retries(cancel, &mut |r| progress(r.into()), || {
        info::run_meta(&client, url)
    })?;
    let (files, cached) =
        history_files(&client, url, &meta, opts.cache.as_ref(), cancel, progress)?;
    let mut run = RemoteRun {
        client,
        url: url.clone(),
        writer: match (opts.summary_only, opts.framing) {
            (true, false) => Writer::without_series(),
            (true, true) => Writer::without_series().framing(),
            (false, false) => Writer::new(),
            (false, true) => Writer::new().framing(),
        },
        meta,
        last_step: None,
        scanned_to: 0,
        console_seen: None,
        stats_seen: None,
        missing: None,
    };
    run.writer.meta(url, &run.meta);
    let mut batches = vec![run.writer.take()];
    for (i, f) in files.iter().enumerate() {
        check(cancel)?;
        let rows = history::read_rows(f.clone()).map_err(|e| {
            if cached {
                // Read back whole yet unreadable: the next open downloads again
                // rather than failing on the same bytes until the cache is cleared.
                if let Some(c) = &opts.cache {
                    c.remove(url);
                }
            }
            RemoteError::protocol(
                &url.shown(),
                format!("history file {}: not a readable Parquet file: {e}", i + 1),
            )
        })?;
        run.note_steps(&rows);
        run.writer.rows(rows);
        batches.push(run.writer.take());
    }
    if let (false, Some(c)) = (cached, &opts.cache) {
        // Kept only once every file has read as Parquet: a body of another kind
        // sent with 200 (an error page, a file cut short) is never served from
        // the cache. One that cannot be written costs the next open a download.
        let _ = c.put(url, &run.meta.version(), &files);
    }
    drop(files);
    progress(Progress::Live);
    batches.extend(run.live(cancel, &mut |r| progress(r.into()))?);
    // The console, the system metrics and the environment are niceties: a
    // server that does not give them still gives the run (and says so).
    run.extras(true, cancel);
    batches.push(run.writer.take());
    if !run.meta.running() {
        run.writer.exit(&run.meta);
        batches.push(run.writer.take());
    }
    Ok((run, batches))
}

/// Run `f` on a thread of `s` and give what joins it; where no thread can be
/// started, joining gives that error (the parts asked for so are niceties).
fn beside<'s, T: Send + 's>(
    s: &'s std::thread::Scope<'s, '_>,
    f: impl FnOnce() -> Result<T, RemoteError> + Send + 's,
) -> impl FnOnce() -> Result<T, RemoteError> + 's {
    let h = std::thread::Builder::new()
        .name("leet-remote".into())
        .spawn_scoped(s, f);
    move || match h {
        Ok(h) => h
            .join()
            .unwrap_or_else(|_| Err(RemoteError::protocol("leet", "a query's thread panicked"))),
        Err(e) => Err(RemoteError::protocol("leet", format!("no thread: {e}"))),
    }
}

/// One line naming the parts a server did not give, those that failed alike
/// together: `the server gave no console, system metrics: <why>`.
fn missing_text(missing: &[(&str, String)]) -> Option<String> {
    let mut by_cause: Vec<(Vec<&str>, &str)> = Vec::new();
    for (part, why) in missing {
        match by_cause.iter_mut().find(|(_, w)| w == why) {
            Some((parts, _)) => parts.push(part),
            None => by_cause.push((vec![part], why)),
        }
    }
    (!by_cause.is_empty()).then(|| {
        let said: Vec<String> = by_cause
            .iter()
            .map(|(parts, why)| format!("{}: {why}", parts.join(", ")))
            .collect();
        format!("the server gave no {}", said.join("; no "))
    })
}

fn check(cancel: &AtomicBool) -> Result<(), RemoteError> {
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(RemoteError::Cancelled);
    }
    Ok(())
}

/// The run's history files, and whether they came from the cache: a cached
/// entry at the run's version whose files all look like Parquet files
/// ([`history::check`]), else (the entry dropped) the files downloaded.
fn history_files(
    client: &Client,
    url: &RemoteUrl,
    meta: &RunMeta,
    cache: Option<&Cache>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Vec<Bytes>, bool), RemoteError> {
    let version = meta.version();
    if let Some(c) = cache {
        if let Some(files) = c.get(url, &version) {
            let files: Vec<Bytes> = files.into_iter().map(Bytes::from).collect();
            if files.iter().all(|f| history::check(f).is_ok()) {
                progress(Progress::Cached { files: files.len() });
                return Ok((files, true));
            }
            c.remove(url);
        }
    }
    let list = with_retries(cancel, &mut |r| progress(r.into()), || {
        info::history_files(client, url)
    })?;
    let n = list.urls.len();
    let mut files = Vec::with_capacity(n);
    for (i, u) in list.urls.iter().enumerate() {
        check(cancel)?;
        // Both closures report through `progress`, never at once: a cell lends it.
        let progress = std::cell::RefCell::new(&mut *progress);
        let file = with_retries(cancel, &mut |r| (progress.borrow_mut())(r.into()), || {
            client.download(u, cancel, u64::MAX, &mut |bytes, total| {
                (progress.borrow_mut())(Progress::Download {
                    file: i,
                    files: n,
                    bytes,
                    total,
                });
            })
        })?;
        files.push(Bytes::from(file));
    }
    Ok((files, false))
}

impl RemoteRun {
    /// What went wrong at the last look: the poll's error `poll`, else the parts
    /// the server did not give.
    pub fn trouble(&self, poll: Option<&RemoteError>) -> Option<FollowTrouble> {
        match poll {
            Some(e) => Some(FollowTrouble {
                text: format!("polling the server: {e}"),
                polls_fail: true,
            }),
            None => self.missing.as_ref().map(|m| FollowTrouble {
                text: m.clone(),
                polls_fail: false,
            }),
        }
    }

    /// The console lines and system metrics rows not read yet (those after the
    /// last line number and sample time read) and, with `environment`, the
    /// run's `wandb-metadata.json`, asked for at once: a server that hangs on
    /// them costs one timeout, not one each. They are niceties: a server that
    /// does not give them still gives the run, and [`Self::trouble`] says which
    /// it did not give.
    fn extras(&mut self, environment: bool, cancel: &AtomicBool) {
        let (client, url) = (&self.client, &self.url);
        let (console, stats, metadata) = std::thread::scope(|s| {
            let console = beside(s, || info::console_tail(client, url, CONSOLE_LINES));
            let stats = beside(s, || info::events(client, url, SYSTEM_SAMPLES));
            let metadata = environment.then(|| {
                beside(s, || {
                    match info::file_url(client, url, "wandb-metadata.json")? {
                        Some(u) => client
                            .download(&u, cancel, 16 << 20, &mut |_, _| {})
                            .map(Some),
                        None => Ok(None),
                    }
                })
            });
            (console(), stats(), metadata.map(|m| m()))
        });
        let mut missing = Vec::new();
        match console {
            Ok(lines) => self.console(lines),
            Err(e) => missing.push(("console", e.to_string())),
        }
        match stats {
            Ok(rows) => self.stats(rows),
            Err(e) => missing.push(("system metrics", e.to_string())),
        }
        match metadata {
            Some(Ok(Some(b))) => self.writer.environment(&b),
            Some(Err(e)) => missing.push(("environment", e.to_string())),
            Some(Ok(None)) | None => {}
        }
        self.missing = missing_text(&missing);
    }

    /// The console lines after the last line number read.
    fn console(&mut self, lines: Vec<info::ConsoleLine>) {
        let seen = self.console_seen;
        let new: Vec<_> = lines
            .into_iter()
            .filter(|l| seen.is_none() || l.number.is_some_and(|n| Some(n) > seen))
            .collect();
        self.console_seen = new.iter().filter_map(|l| l.number).max().or(seen);
        self.writer.console(&new);
    }

    /// The system metrics rows after the last sample time read.
    fn stats(&mut self, rows: Vec<serde_json::Map<String, serde_json::Value>>) {
        let seen = self.stats_seen;
        let time = |r: &serde_json::Map<String, serde_json::Value>| {
            r.get("_timestamp").and_then(serde_json::Value::as_f64)
        };
        let new: Vec<_> = rows
            .into_iter()
            .filter(|r| seen.is_none() || time(r).is_some_and(|t| Some(t) > seen))
            .collect();
        self.stats_seen = new.iter().filter_map(time).reduce(f64::max).or(seen);
        self.writer.stats(&new);
    }

    /// The run's `.wandb` bytes framed since the last call, when framing.
    pub fn framed(&mut self) -> &[u8] {
        self.writer.framed()
    }

    fn note_steps(&mut self, rows: &[HistoryRow]) {
        for row in rows {
            let step = row
                .iter()
                .find(|(p, _)| p.len() == 1 && p[0] == "_step")
                .and_then(|(_, v)| v.parse::<f64>().ok());
            if let Some(s) = step {
                self.last_step = Some(self.last_step.map_or(s as i64, |l| l.max(s as i64)));
            }
        }
    }

    /// The live rows after the last step read, a page at a time.
    fn live(
        &mut self,
        cancel: &AtomicBool,
        report: &mut dyn FnMut(Retrying),
    ) -> Result<Vec<Events>, RemoteError> {
        let mut out = Vec::new();
        // The run's last step as its summary says: windows below it that hold no
        // row are a gap in the steps (a step given by the program can jump by
        // more than a page), not the end; W&B's `scan_history` also walks the
        // windows up to the last step. Steps only grow, so a window wholly below
        // the last step gets no row later and is not asked again.
        let last = self
            .meta
            .summary
            .get("_step")
            .and_then(serde_json::Value::as_f64)
            .map(|s| s as i64);
        let mut skipped = 0;
        loop {
            check(cancel)?;
            let from = self
                .last_step
                .map_or(0, |s| s.saturating_add(1))
                .max(self.scanned_to);
            let rows = with_retries(cancel, report, || {
                info::history_page(
                    &self.client,
                    &self.url,
                    from,
                    from.saturating_add(PAGE),
                    PAGE,
                )
            })?;
            if rows.is_empty() {
                let gap = last.is_some_and(|l| l >= from.saturating_add(PAGE));
                if gap && skipped < MAX_EMPTY_PAGES {
                    skipped += 1;
                    self.scanned_to = from.saturating_add(PAGE);
                    continue;
                }
                return Ok(out);
            }
            let before = self.last_step;
            let rows: Vec<_> = rows
                .into_iter()
                .filter(|r| {
                    r.get("_step")
                        .and_then(serde_json::Value::as_f64)
                        .is_some_and(|s| s as i64 >= from)
                })
                .collect();
            for r in &rows {
                if let Some(s) = r.get("_step").and_then(serde_json::Value::as_f64) {
                    self.last_step = Some(self.last_step.map_or(s as i64, |l| l.max(s as i64)));
                }
            }
            self.writer.json_rows(&rows);
            out.push(self.writer.take());
            // A server that answers rows it was not asked for would loop forever.
            // A window not full is the end unless the summary has later steps
            // (rows a step or more apart).
            let later = last.is_some_and(|l| Some(l) > self.last_step);
            if self.last_step == before || ((rows.len() as i64) < PAGE && !later) {
                return Ok(out);
            }
        }
    }

    /// One look for what changed since the last: new live rows, and when the run
    /// has ended, its summary and exit. Empty when nothing changed.
    ///
    /// # Errors
    /// What the server's answers give.
    pub fn poll(&mut self, cancel: &AtomicBool) -> Result<Vec<Events>, RemoteError> {
        // The run asked for first: its summary's last step tells the live rows'
        // walk how far the steps go (`live`).
        let meta = with_retries(cancel, &mut |_| {}, || {
            info::run_meta(&self.client, &self.url)
        })?;
        let before = std::mem::replace(&mut self.meta.summary, meta.summary.clone());
        let rows = self.live(cancel, &mut |_| {});
        self.meta.summary = before;
        let mut out: Vec<Events> = rows?.into_iter().filter(|e| !e.is_empty()).collect();
        self.extras(false, cancel);
        let more = self.writer.take();
        if !more.is_empty() {
            out.push(more);
        }
        if meta.version() != self.meta.version() {
            self.writer.summary(&meta.summary);
            if !meta.running() {
                self.writer.exit(&meta);
            }
            self.meta = meta;
            out.push(self.writer.take());
        }
        Ok(out)
    }

    /// Append what the server has new for a running run until it ends (or the file
    /// cannot be written), telling `polled` what went wrong at each poll
    /// ([`Self::trouble`]; None: it gave everything). A failed poll is tried
    /// again at the next: a server that is down for a while loses no rows, since
    /// each poll asks from the last step.
    pub fn follow(&mut self, file: &Path, polled: &dyn Fn(Option<FollowTrouble>)) {
        let never = AtomicBool::new(false);
        while self.meta.running() {
            std::thread::sleep(POLL_EVERY);
            let r = self.poll(&never);
            polled(self.trouble(r.as_ref().err()));
            if r.is_err() {
                continue;
            }
            let bytes = self.framed();
            if bytes.is_empty() {
                continue;
            }
            let ok = std::fs::OpenOptions::new()
                .append(true)
                .open(file)
                .and_then(|mut f| f.write_all(bytes));
            if ok.is_err() {
                return;
            }
        }
    }
}
