//! The nodes of one distributed run read as one run.
//!
//! Each node of a W&B run in shared mode writes its own `.wandb` file, in its own
//! run directory, with the same run id; on a shared filesystem they sit side by
//! side in one wandb directory. Run directories that share a run id are also the
//! segments of a resumed run, which must be stitched on the step axis instead.
//! [`are_nodes`] tells them apart: nodes write *at the same time*, a resumed
//! segment starts after the one before it ended and its run record says
//! `resumed`.
//!
//! A group of nodes is read by one thread ([`spawn`]): a reader per node (one file
//! handle each, at most [`MAX_NODES`]), each node's events made the run's by a
//! [`NodeView`] (system keys without a `/l:` label get the node's; console lines
//! prefixed with it; only the primary node's summary, config and run facts), all
//! sent as one run's batches.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use leet_format::decoder::Decoder;
use leet_format::event::{Event, Events};
use leet_format::leveldb::{self, Frame};

use super::file::{is_run_dir_name, resolve, wandb_dir_of, RunReader, Target};
use super::resolve::wandb_in_dir;
use super::tail::{mtime, Out, TailOptions};
use crate::msg::{Msg, RunBatch};

/// Most nodes read together; the others of a larger group are not read.
pub const MAX_NODES: usize = 256;

/// Bytes read from the start of each node's file to learn its facts.
const PEEK_BYTES: u64 = 64 << 10;

/// The W&B suffix of a system key written by one node of a shared run.
pub const LABEL_MARK: &str = leet_format::event::NODE_LABEL;

/// Where a run file sits in time, as far as telling nodes from segments goes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Span {
    /// Start (Unix s), from the run record.
    pub start: Option<f64>,
    /// The last sign of the file's run (Unix s): its newest record's time, or its
    /// start plus its runtime; None when nothing says.
    pub end: Option<f64>,
    /// The run record says it resumed an earlier run.
    pub resumed: bool,
}

/// Whether run files that share a run id are the nodes of one distributed run
/// (else they are the segments of a resumed run): two or more, none of them
/// resumed, every start known, and each (in start order) starting before the ones
/// before it ended, so they ran at the same time. A file whose end is unknown
/// ends at its start.
#[must_use]
pub fn are_nodes(spans: &[Span]) -> bool {
    if spans.len() < 2 || spans.iter().any(|s| s.resumed || s.start.is_none()) {
        return false;
    }
    let mut by_start: Vec<(f64, f64)> = spans
        .iter()
        .filter_map(|s| s.start.map(|a| (a, s.end.unwrap_or(a).max(a))))
        .collect();
    by_start.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut end = by_start[0].1;
    for &(start, e) in &by_start[1..] {
        if start >= end {
            return false;
        }
        end = end.max(e);
    }
    true
}

/// One node's file and what is known of it before it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFile {
    pub file: PathBuf,
    /// Its label until its system keys name one: its host where the hosts of the
    /// group differ, else its run directory's name.
    pub label: String,
    /// The node whose summary, config and run facts are the run's.
    pub primary: bool,
}

/// What a node's first bytes say.
#[derive(Debug, Clone, Default)]
struct Peek {
    run_id: String,
    span: Span,
    host: String,
    /// It wrote an environment record (only the primary node writes metadata).
    environment: bool,
    /// The label of its first labelled system key.
    label: Option<String>,
}

fn peek(file: &Path) -> Peek {
    let mut data = Vec::new();
    let Ok(f) = super::small_file::open_regular(file) else {
        return Peek::default();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    if f.take(PEEK_BYTES).read_to_end(&mut data).is_err() {
        return Peek::default();
    }
    let mut p = Peek::default();
    let mut decoder = Decoder::new();
    let _ = leveldb::scan(&data, 0, |fr| {
        if let Frame::Record { offset, payload } = fr {
            decoder.record(offset, &payload);
        }
    });
    let ev = decoder.take();
    for e in &ev.list {
        match e {
            Event::Run(r) => {
                if p.run_id.is_empty() {
                    p.run_id.clone_from(&r.run_id);
                }
                if p.host.is_empty() {
                    p.host.clone_from(&r.host);
                }
                if let Some((s, n)) = r.start_time {
                    p.span.start = p.span.start.or(Some(s as f64 + f64::from(n) * 1e-9));
                }
                p.span.resumed |= r.resumed;
            }
            Event::Environment(_) => p.environment = true,
            Event::Stats { values, .. } if p.label.is_none() => {
                p.label = ev.values[values.start as usize..values.end as usize]
                    .iter()
                    .find_map(|&(k, _)| label_of(&ev.keys[k as usize]).map(str::to_owned));
            }
            _ => {}
        }
    }
    // Its run's last sign: the newest time its records tell (a file's mtime
    // says when it was copied, not when its run wrote it).
    p.span.end = if len <= PEEK_BYTES {
        newest_time(&ev)
    } else {
        tail_time(file, len).or_else(|| newest_time(&ev))
    };
    p
}

/// The newest time of the rows, samples and console writes of a batch (Unix s).
fn newest_time(ev: &Events) -> Option<f64> {
    let ts =
        |t: &Option<leet_format::event::Timestamp>| t.map(|(s, n)| s as f64 + f64::from(n) * 1e-9);
    ev.list
        .iter()
        .filter_map(|e| match e {
            Event::Row(r) => r.time,
            Event::Stats { time, .. } | Event::Console { time, .. } => ts(time),
            _ => None,
        })
        .reduce(f64::max)
}

/// The newest time of the records in the last [`PEEK_BYTES`] of a file `len`
/// bytes long, read from a block boundary.
fn tail_time(file: &Path, len: u64) -> Option<f64> {
    use std::io::{Seek, SeekFrom};
    let block = leveldb::BLOCK_SIZE as u64;
    let from = (len.saturating_sub(PEEK_BYTES) / block) * block;
    let mut f = super::small_file::open_regular(file).ok()?;
    f.seek(SeekFrom::Start(from)).ok()?;
    let mut data = Vec::new();
    f.take(len - from).read_to_end(&mut data).ok()?;
    let mut decoder = Decoder::new();
    let _ = leveldb::Scanner::at(from).scan_last(&data, |fr| {
        if let Frame::Record { offset, payload } = fr {
            decoder.record(offset, &payload);
        }
    });
    newest_time(&decoder.take())
}

/// Mark the runs that share a run id with others as nodes where those are the
/// nodes of one distributed run ([`are_nodes`]), not a resumed run's segments:
/// the picker then counts them as the workspace does. Only the runs of a shared
/// id are peeked at.
pub fn mark_nodes(runs: &mut [crate::msg::RunEntry]) {
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, r) in runs.iter().enumerate().filter(|(_, r)| !r.id.is_empty()) {
        by_id.entry(r.id.as_str()).or_default().push(i);
    }
    let groups: Vec<Vec<usize>> = by_id.into_values().filter(|g| g.len() > 1).collect();
    for g in groups {
        let spans: Vec<Span> = g
            .iter()
            .map(|&i| {
                runs[i]
                    .file
                    .as_deref()
                    .map(|f| peek(f).span)
                    .unwrap_or_default()
            })
            .collect();
        if are_nodes(&spans) {
            for i in g {
                runs[i].nodes = true;
            }
        }
    }
}

/// The `/l:` label of a system key.
#[must_use]
pub fn label_of(key: &str) -> Option<&str> {
    split_label(key).1
}

/// Whether a key describes the monitored process tree (`cpu`, `proc.*` but the
/// host-wide `proc.memory.availableMB`, `gpu.process.*`), not the host: the live
/// monitor charts these only while a process is monitored.
#[must_use]
pub fn is_process_key(key: &str) -> bool {
    let key = split_label(key).0;
    key == "cpu"
        || (key.starts_with("proc.") && key != "proc.memory.availableMB")
        || key.starts_with("gpu.process.")
}

/// A key without its W&B shared-mode suffix `/l:<label>` (`x_label`, one per node
/// of a multi-node run), and the label; an empty label is none. A disk's key
/// that ends in its metric (`disk./mnt/l:x.usageGB`: a path holding `/l:`) has no
/// label: a node's comes after the metric.
#[must_use]
pub fn split_label(key: &str) -> (&str, Option<&str>) {
    if key.starts_with("disk.") && (key.ends_with(".usagePercent") || key.ends_with(".usageGB")) {
        return (key, None);
    }
    match key.rfind(LABEL_MARK) {
        Some(at) if at + LABEL_MARK.len() < key.len() => {
            (&key[..at], Some(&key[at + LABEL_MARK.len()..]))
        }
        _ => (key, None),
    }
}

/// The run id of a run file's name (`run-<id>.wandb`).
fn id_of_file(file: &Path) -> Option<String> {
    let name = file.file_name()?.to_str()?;
    let id = name.strip_prefix("run-")?.strip_suffix(".wandb")?;
    (!id.is_empty()).then(|| id.to_owned())
}

/// Whether run directory `name` may hold run `id`: `…-<id>`, or `…-<id>-<n>`
/// (the SDK's name for a second directory started in the same second).
fn dir_may_hold(name: &str, id: &str) -> bool {
    let tail = |s: &str| s.strip_suffix(id).is_some_and(|r| r.ends_with('-'));
    tail(name)
        || name.rsplit_once('-').is_some_and(|(head, n)| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && tail(head)
        })
}

/// The node files of the distributed run `file` belongs to (`file`'s among
/// them), in run-directory order; None when it is not one node of several. Only
/// the directories whose names carry its run id are peeked.
#[must_use]
pub fn group_of(file: &Path) -> Option<Vec<NodeFile>> {
    let found = same_id(file)?;
    let spans: Vec<Span> = found.iter().map(|(_, p)| p.span).collect();
    are_nodes(&spans).then(|| node_files(found))
}

/// The segments of the resumed run `file` belongs to (`file` among them), oldest
/// first (run-directory order, as the workspace takes them); None when its run id
/// has no other run directory, or those are the nodes of one run.
#[must_use]
pub fn segments_of(file: &Path) -> Option<Vec<PathBuf>> {
    let found = same_id(file)?;
    let spans: Vec<Span> = found.iter().map(|(_, p)| p.span).collect();
    (!are_nodes(&spans)).then(|| found.into_iter().map(|(f, _)| f).collect())
}

/// The run directories of `file`'s wandb directory whose names carry run `id`
/// (one listing; nothing is read in them).
fn dirs_named_for(file: &Path, id: &str) -> Option<Vec<PathBuf>> {
    let wandb_dir = wandb_dir_of(file)?;
    let dirs = std::fs::read_dir(&wandb_dir)
        .ok()?
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            is_run_dir_name(&name) && dir_may_hold(&name, id)
        })
        .map(|e| e.path())
        .collect();
    Some(dirs)
}

/// The run files, and what their first bytes say, of every run directory of
/// `file`'s wandb directory that holds `file`'s run id, in run-directory order;
/// None when there are fewer than two, or `file` is not among them.
fn same_id(file: &Path) -> Option<Vec<(PathBuf, Peek)>> {
    let id = id_of_file(file)?;
    // Names first: a wandb directory of a thousand runs costs one listing, and
    // only the directories named for this run are looked into.
    let mut dirs = dirs_named_for(file, &id)?;
    if dirs.len() < 2 {
        return None;
    }
    dirs.sort();
    let mut found: Vec<(PathBuf, Peek)> = Vec::new();
    for dir in dirs {
        let Some(f) = wandb_in_dir(&dir) else {
            continue;
        };
        let p = peek(&f);
        if p.run_id == id {
            found.push((f, p));
        }
        if found.len() == MAX_NODES {
            break;
        }
    }
    (found.len() > 1 && found.iter().any(|(f, _)| same_file(f, file))).then_some(found)
}

/// How often a followed run looks for nodes of its run that were not there when
/// it was opened.
pub const REGROUP_EVERY: std::time::Duration = std::time::Duration::from_secs(3);

/// A followed run's look-out for the other nodes of its distributed run: a job
/// opened while it starts has node directories whose run record is not written
/// yet (or not made yet), and they are the run's once it is. Looked for at most
/// every [`REGROUP_EVERY`], while the run's file grows or a directory named for
/// its run id is not accounted for yet, and cheaply: a listing of the wandb
/// directory and a `stat` of each run file named for the run id; the files are
/// read only when those changed and some of them were not yet known as the
/// run's (or as another run's).
#[derive(Debug, Default)]
pub struct Regroup {
    next: Option<std::time::Instant>,
    /// The run files named for the run id at the last look, and their lengths.
    named: Vec<(PathBuf, u64)>,
    /// Whether the last grouping left some of them unaccounted for.
    unsettled: bool,
}

impl Regroup {
    /// The node group `file` belongs to now, when it holds more nodes than the
    /// `reading` read now; None when it is not time to look, or nothing changed.
    /// `grew`: the run's file grew since the last call.
    pub fn check(&mut self, file: &Path, reading: usize, grew: bool) -> Option<Vec<NodeFile>> {
        let now = std::time::Instant::now();
        if !(grew || self.unsettled) || self.next.is_some_and(|t| now < t) {
            return None;
        }
        self.next = Some(now + REGROUP_EVERY);
        let named = named_for(file)?;
        let news = named != self.named;
        let first = self.named.is_empty();
        let more = named.len() > self.named.len();
        self.named = named;
        if !(news && (first || more || self.unsettled)) || self.named.len() < 2 {
            return None;
        }
        let found = same_id(file);
        let spans: Vec<Span> = found.iter().flatten().map(|(_, p)| p.span).collect();
        let nodes = are_nodes(&spans);
        // Run files of one id that did not (yet) run at the same time, none of
        // them resumed: a node may have started and ended while this one was
        // quiet, which its later records will show; looked at again as it grows.
        let undecided = spans.len() > 1 && !nodes && spans.iter().all(|s| !s.resumed);
        self.unsettled = spans.len() < self.named.len() || undecided;
        let found = found?;
        if !nodes || found.len() <= reading {
            return None;
        }
        Some(node_files(found))
    }
}

/// The run files of `file`'s wandb directory whose directory is named for its
/// run id (`file`'s among them), with their lengths (0: no file yet), sorted.
fn named_for(file: &Path) -> Option<Vec<(PathBuf, u64)>> {
    let id = id_of_file(file)?;
    let name = format!("run-{id}.wandb");
    let mut named: Vec<(PathBuf, u64)> = dirs_named_for(file, &id)?
        .into_iter()
        .map(|d| {
            let f = d.join(&name);
            let len = std::fs::metadata(&f).map_or(0, |m| m.len());
            (f, len)
        })
        .collect();
    named.sort();
    Some(named)
}

/// The run ids the run directories of `wandb_dir` are named for (`…-<id>`, or
/// `…-<id>-<n>`), newest first, each once, sanitised.
fn ids_in(wandb_dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for d in super::file::run_dirs(wandb_dir).iter().rev() {
        let Some(name) = d.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let mut parts = name.rsplit('-');
        let last = parts.next().unwrap_or("");
        let id = if !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) {
            parts.next().unwrap_or(last)
        } else {
            last
        };
        let id = leet_text::sanitize(id);
        if !id.is_empty() && !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// What one run is made of, as the viewer reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunFiles {
    /// One run file.
    One(PathBuf),
    /// The nodes of a distributed run, read together.
    Nodes(Vec<NodeFile>),
    /// The segments of a resumed run, oldest first, stitched on the step axis
    /// (see [`crate::store::stitch`]).
    Segments(Vec<PathBuf>),
}

impl RunFiles {
    /// The run `file` belongs to, as `leet PATH` opens it when `file` is the run
    /// picked for `path`: its nodes wherever it is one node of several (a node
    /// opens its group); its segments where `path` names a workspace (a project or
    /// wandb directory, or `latest-run`), whose runs list shows them as one run.
    #[must_use]
    pub fn of(path: &Path, file: &Path) -> Self {
        if let Some(nodes) = group_of(file) {
            return Self::Nodes(nodes);
        }
        if super::resolve::names_workspace(path) {
            if let Some(segments) = segments_of(file) {
                return Self::Segments(segments);
            }
        }
        Self::One(file.to_path_buf())
    }

    /// Run `id` of the wandb directory `path` names or lies in (a project or
    /// wandb directory, `latest-run`, a run directory or file), read whole as the
    /// viewer's workspace reads it: its nodes, or its segments stitched, or its
    /// one file. Its newest run directory named for the id that holds
    /// `run-<id>.wandb`. The error names the directory and the id.
    ///
    /// # Errors
    /// No wandb directory there, or no run of that id in it.
    pub fn of_id(path: &Path, id: &str) -> Result<Self, String> {
        let shown = |p: &Path| leet_text::sanitize_path(p);
        let id_ok = !id.is_empty() && !id.contains(['/', '\\']) && id != "." && id != "..";
        let wandb_dir = super::resolve::resolve_file(path)
            .ok()
            .and_then(|f| wandb_dir_of(&f))
            .or_else(|| {
                [path.to_path_buf(), path.join("wandb")]
                    .into_iter()
                    .find(|d| d.is_dir() && !super::file::run_dirs(d).is_empty())
            })
            .ok_or_else(|| format!("{}: no wandb directory of runs there", shown(path)))?;
        let name = format!("run-{id}.wandb");
        let file = super::file::run_dirs(&wandb_dir)
            .into_iter()
            .rev()
            .filter(|_| id_ok)
            .filter(|d| {
                d.file_name()
                    .is_some_and(|n| dir_may_hold(&n.to_string_lossy(), id))
            })
            .map(|d| d.join(&name))
            .find(|f| f.is_file())
            .ok_or_else(|| {
                let ids = ids_in(&wandb_dir);
                let near = ids.iter().find(|i| i.eq_ignore_ascii_case(id));
                let listed = match near {
                    Some(n) => format!("; did you mean {n}? (ids are told apart by case)"),
                    None if ids.is_empty() => String::new(),
                    None => {
                        let more = if ids.len() > 8 { ", …" } else { "" };
                        let first: Vec<&str> = ids.iter().take(8).map(String::as_str).collect();
                        format!("; runs here: {}{more}", first.join(", "))
                    }
                };
                format!(
                    "{}: no run with the id {} (its run directory is named …-{}, holding run-{}.wandb){listed}",
                    shown(&wandb_dir),
                    leet_text::sanitize(id),
                    leet_text::sanitize(id),
                    leet_text::sanitize(id)
                )
            })?;
        Ok(if let Some(nodes) = group_of(&file) {
            Self::Nodes(nodes)
        } else if let Some(segments) = segments_of(&file) {
            Self::Segments(segments)
        } else {
            Self::One(file)
        })
    }

    /// Its files: the primary node's first.
    #[must_use]
    pub fn files(&self) -> Vec<&Path> {
        match self {
            Self::One(f) => vec![f.as_path()],
            Self::Nodes(n) => {
                let mut v: Vec<&NodeFile> = n.iter().collect();
                v.sort_by_key(|n| !n.primary);
                v.into_iter().map(|n| n.file.as_path()).collect()
            }
            Self::Segments(s) => s.iter().map(PathBuf::as_path).collect(),
        }
    }

    /// The file that names the run: the primary node's, the newest segment's.
    #[must_use]
    pub fn main(&self) -> &Path {
        match self {
            Self::One(f) => f,
            Self::Nodes(n) => n
                .iter()
                .find(|n| n.primary)
                .or(n.first())
                .map_or(Path::new(""), |n| n.file.as_path()),
            Self::Segments(s) => s.last().map_or(Path::new(""), PathBuf::as_path),
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || std::fs::canonicalize(a)
            .ok()
            .is_some_and(|x| std::fs::canonicalize(b).ok() == Some(x))
}

/// Labels and the primary: the node with an environment record (else the largest
/// file; else the first).
fn node_files(found: Vec<(PathBuf, Peek)>) -> Vec<NodeFile> {
    let hosts: std::collections::HashSet<&str> =
        found.iter().map(|(_, p)| p.host.as_str()).collect();
    let distinct_hosts = hosts.len() == found.len() && !hosts.contains("");
    let size = |f: &Path| std::fs::metadata(f).map_or(0, |m| m.len());
    let primary = found
        .iter()
        .position(|(_, p)| p.environment)
        .or_else(|| (0..found.len()).max_by_key(|&i| (size(&found[i].0), std::cmp::Reverse(i))))
        .unwrap_or(0);
    found
        .into_iter()
        .enumerate()
        .map(|(i, (file, p))| {
            let dir_name = || {
                file.parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            let label = p.label.unwrap_or_else(|| {
                if distinct_hosts {
                    p.host.clone()
                } else {
                    dir_name()
                }
            });
            NodeFile {
                file,
                label,
                primary: i == primary,
            }
        })
        .collect()
}

/// The node group a followed path (a run directory or file) opens, if it is one
/// node of several.
#[must_use]
pub fn group_for_path(path: &Path) -> Option<Vec<NodeFile>> {
    match resolve(path) {
        Ok(Target::File(f)) => group_of(&f),
        _ => None,
    }
}

/// One node's events made the run's.
#[derive(Debug, Clone, Default)]
pub struct NodeView {
    label: String,
    /// The label its history keys carry (a node other than the primary's): the
    /// one known when it was opened, kept, so that a series keeps its name when
    /// the label is learnt later.
    rows_label: String,
    /// The label came from the node's own keys (else it was guessed).
    learned: bool,
    primary: bool,
}

impl NodeView {
    #[must_use]
    pub fn new(n: &NodeFile) -> Self {
        Self {
            label: n.label.clone(),
            rows_label: n.label.clone(),
            learned: false,
            primary: n.primary,
        }
    }

    /// The node's label as it stands.
    #[must_use]
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Make a batch of this node's events the run's: system keys without a label
    /// take the node's, console text comes in whole lines each prefixed with the
    /// node's label, and a node other than the primary keeps its history rows
    /// (their keys labelled too), system samples, console and damage but says
    /// nothing of the run's summary, config, facts or end.
    pub fn view(&mut self, mut ev: Events) -> Events {
        self.learn(&ev);
        let mut renamed: HashMap<u32, u32> = HashMap::new();
        let mut rows: HashMap<u32, u32> = HashMap::new();
        let list = std::mem::take(&mut ev.list);
        let mut out = Vec::with_capacity(list.len());
        for e in list {
            match e {
                Event::Stats { time, values } => {
                    for i in values.start..values.end {
                        let k = ev.values[i as usize].0;
                        ev.values[i as usize].0 =
                            Self::labelled(&self.label, &mut ev.keys, &mut renamed, k);
                    }
                    out.push(Event::Stats { time, values });
                }
                // Another node's history keys carry its label as its system keys
                // do: a metric logged by several nodes is a series per node, never
                // one line zig-zagging between them.
                Event::Row(mut r) if !self.primary => {
                    for i in r.values.start..r.values.end {
                        let k = ev.values[i as usize].0;
                        ev.values[i as usize].0 =
                            Self::labelled(&self.rows_label, &mut ev.keys, &mut rows, k);
                    }
                    for (k, _) in &mut r.others {
                        *k = Self::labelled(&self.rows_label, &mut ev.keys, &mut rows, *k);
                    }
                    out.push(Event::Row(r));
                }
                // Its console text as written, named as its: the run's console
                // keeps each node's lines, cursor and partial line its own.
                Event::Console {
                    stdout,
                    time,
                    text,
                    legacy,
                    node: _,
                } => out.push(Event::Console {
                    stdout,
                    time,
                    text,
                    legacy,
                    node: Some(self.label.clone()),
                }),
                // Its metric definitions apply to its own (labelled) keys: a
                // step metric of its own, its hidden metrics.
                Event::Metric(def) if !self.primary => {
                    out.push(Event::Metric(def.for_node(&self.rows_label)));
                }
                Event::Run(_) | Event::Exit { .. } | Event::Environment(_) | Event::Producer(_)
                    if !self.primary => {}
                e => out.push(e),
            }
        }
        ev.list = out;
        if !self.primary {
            ev.summary.clear();
            ev.config.clear();
        }
        ev
    }

    /// Key `k` of a batch's `keys` with `label` (`key/l:<label>`), added to
    /// `keys` once per batch (`renamed`); a key already labelled as it is.
    fn labelled(
        label: &str,
        keys: &mut Vec<String>,
        renamed: &mut HashMap<u32, u32>,
        k: u32,
    ) -> u32 {
        *renamed.entry(k).or_insert_with(|| {
            if label_of(&keys[k as usize]).is_some() {
                k
            } else {
                keys.push(format!("{}{LABEL_MARK}{label}", keys[k as usize]));
                (keys.len() - 1) as u32
            }
        })
    }

    /// The label of the node's first labelled system key, once.
    fn learn(&mut self, ev: &Events) {
        if self.learned {
            return;
        }
        for e in &ev.list {
            if let Event::Stats { values, .. } = e {
                let found = ev.values[values.start as usize..values.end as usize]
                    .iter()
                    .find_map(|&(k, _)| label_of(&ev.keys[k as usize]));
                if let Some(l) = found {
                    l.clone_into(&mut self.label);
                    self.learned = true;
                    return;
                }
            }
        }
    }
}

/// Follow a group of nodes as one run on a thread of its own, which ends when
/// `out` is stopped or the loop is gone.
pub(super) fn spawn(nodes: Vec<NodeFile>, out: Out, opts: TailOptions) -> JoinHandle<()> {
    spawn_as(nodes, out, opts, false)
}

/// [`spawn`] for a run followed until now as fewer nodes (one file, or a smaller
/// group): its first batch says the run is read again from the start, so what
/// was read of it is replaced, never added to.
pub(super) fn spawn_regrouped(nodes: Vec<NodeFile>, out: Out, opts: TailOptions) -> JoinHandle<()> {
    spawn_as(nodes, out, opts, true)
}

fn spawn_as(nodes: Vec<NodeFile>, out: Out, opts: TailOptions, again: bool) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("leet-nodes".into())
        .spawn(move || follow(nodes, &out, opts, again))
        .unwrap_or_else(|_| std::thread::spawn(|| {}))
}

/// Each node's reader and view.
struct Node {
    reader: Option<RunReader>,
    view: NodeView,
}

fn open_all(nodes: &[NodeFile], opts: TailOptions) -> Vec<Node> {
    nodes
        .iter()
        .map(|n| Node {
            reader: RunReader::open(&n.file)
                .ok()
                .map(|r| r.with_chunk(opts.chunk)),
            view: NodeView::new(n),
        })
        .collect()
}

/// Follow a node group; `again`: the run was read before as fewer nodes.
fn follow(mut nodes: Vec<NodeFile>, out: &Out, opts: TailOptions, again: bool) {
    let mut readers = open_all(&nodes, opts);
    if !send_opened(&nodes, &readers, out) {
        return;
    }
    let mut restarted = again;
    // The first read reached the end: what comes later is growth.
    let mut loaded = false;
    let mut regroup = Regroup::default();
    while !out.stopped() {
        match poll_all(&mut readers, restarted) {
            Polled::Restart => {
                readers = open_all(&nodes, opts);
                restarted = true;
                loaded = false;
            }
            polled => {
                // At the end of what there is to read: a node that joined since
                // makes the group read again, whole; else wait for more.
                let (at_end, grew) = match polled {
                    Polled::Batch(mut b, more) => {
                        restarted = false;
                        let grew = loaded && b.read_to > 0;
                        if grew {
                            b.grew_at = Some(super::tail::unix_now());
                        }
                        loaded |= !more;
                        if !out.send(Msg::Run(b)) {
                            return;
                        }
                        (!more, grew)
                    }
                    // Nothing new: before the first read's end, only a wait.
                    _ if !loaded => {
                        std::thread::sleep(opts.poll);
                        continue;
                    }
                    _ => (true, false),
                };
                if !at_end {
                    continue;
                }
                if let Some(group) = joined(&nodes, &mut regroup, grew) {
                    nodes = group;
                    readers = open_all(&nodes, opts);
                    if !send_opened(&nodes, &readers, out) {
                        return;
                    }
                    restarted = true;
                    loaded = false;
                    continue;
                }
                std::thread::sleep(opts.poll);
            }
        }
    }
}

/// A node that joined the job since the group was opened: the larger group.
fn joined(nodes: &[NodeFile], regroup: &mut Regroup, grew: bool) -> Option<Vec<NodeFile>> {
    let primary = nodes.iter().find(|n| n.primary).or(nodes.first())?;
    regroup.check(&primary.file, nodes.len(), grew)
}

/// Say which file the group is read as (its primary node's) and its length;
/// false when the loop is gone.
fn send_opened(nodes: &[NodeFile], readers: &[Node], out: &Out) -> bool {
    let Some(primary) = nodes.iter().find(|n| n.primary).or(nodes.first()) else {
        return false;
    };
    let len: u64 = readers
        .iter()
        .filter_map(|n| n.reader.as_ref()?.file_len().ok())
        .sum();
    out.send(Msg::Opened {
        path: primary.file.clone(),
        len,
        modified: mtime(&primary.file),
    })
}

enum Polled {
    /// A node's file started again: every node is read again from its start.
    Restart,
    /// A batch, and whether some node has more to read now.
    Batch(RunBatch, bool),
    Nothing,
}

/// One poll of every node, as one batch: each node's events in turn, the bytes
/// read and the lengths summed over the nodes (the primary's damaged span held
/// open, the others' counted when closed).
fn poll_all(nodes: &mut [Node], restarted: bool) -> Polled {
    let mut b = RunBatch {
        restarted,
        ..RunBatch::default()
    };
    let mut changed = restarted;
    let mut more = false;
    for n in nodes.iter_mut() {
        let Some(reader) = n.reader.as_mut() else {
            continue;
        };
        if let Ok((ev, p)) = reader.poll_events() {
            if p.restarted {
                return Polled::Restart;
            }
            changed |= p.bytes > 0 || !ev.is_empty();
            more |= p.more;
            if !ev.is_empty() {
                b.events.push(n.view.view(ev));
            }
            b.pending += p.pending;
            if n.view.primary {
                b.open = p.open;
            }
        }
        b.read_to += reader.offset();
        b.file_len += reader.file_len().unwrap_or_else(|_| reader.offset());
    }
    if changed {
        Polled::Batch(b, more)
    } else {
        Polled::Nothing
    }
}

/// Read a node group whole into one batch (tests, `inspect`): the node files read
/// and the batch. None when `path` is not one node of several.
#[must_use]
pub fn read_group(path: &Path) -> Option<(Vec<NodeFile>, RunBatch)> {
    let nodes = group_for_path(path)?;
    let mut all = RunBatch::default();
    read_nodes(&nodes, false, |b| {
        all.absorb(b);
        true
    });
    Some((nodes, all))
}

/// Read a node group whole as the viewer's reader thread does (each node's
/// events made the run's by its [`NodeView`]), handing on each poll's batch
/// until `f` says stop. `finish`: the files as they are now are all there is (a
/// one-shot read: see [`RunReader::finish`]).
pub fn read_nodes(nodes: &[NodeFile], finish: bool, mut f: impl FnMut(RunBatch) -> bool) {
    let mut readers = open_all(nodes, TailOptions::default());
    if finish {
        for r in readers.iter_mut().filter_map(|n| n.reader.as_mut()) {
            r.finish();
        }
    }
    loop {
        match poll_all(&mut readers, false) {
            Polled::Batch(b, more) => {
                if !f(b) || !more {
                    return;
                }
            }
            Polled::Restart | Polled::Nothing => return,
        }
    }
}

#[cfg(test)]
mod tests;
