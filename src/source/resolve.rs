//! Finding the `.wandb` file for a path, and the runs next to it.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub use crate::msg::RunEntry;
use leet_format::decoder::Decoder;
use leet_format::event::{Event, RunInfo};
use leet_format::leveldb::{self, Frame, HeaderError};
use leet_text::{sanitize, sanitize_path};

/// Why a path did not lead to a `.wandb` file, or the file could not be read.
#[derive(Debug, thiserror::Error)]
///
/// Paths are shown sanitized: a file name can hold escape sequences.
pub enum SourceError {
    #[error("{}: no such file or directory", sanitize_path(.path))]
    NotFound { path: PathBuf },
    /// A symbolic link (a `latest-run` whose run was deleted) to nothing.
    #[error(
        "{}: a symbolic link to {}, which does not exist",
        sanitize_path(.path),
        sanitize_path(.target)
    )]
    DanglingLink { path: PathBuf, target: PathBuf },
    #[error("{}: no .wandb run found (looked in: {})", sanitize_path(.path), sanitize(.looked))]
    NoRun { path: PathBuf, looked: String },
    /// Any other I/O error, named as the OS names it (permission denied, a loop of
    /// symbolic links, a path through something that is not a directory, ...).
    #[error("{}: {source}", sanitize_path(.path))]
    Io { path: PathBuf, source: io::Error },
    #[error("{}: {cause}", sanitize_path(.path))]
    BadHeader { path: PathBuf, cause: HeaderError },
    /// `leet` without a path found no run in the current directory (`here`), nor
    /// where `WANDB_DIR` says (`wandb_dir`: None when it is not set).
    #[error("current directory {here}; {}", wandb_dir_tried(.wandb_dir.as_deref()))]
    NoDefaultRun {
        here: Box<SourceError>,
        wandb_dir: Option<Box<SourceError>>,
    },
}

/// The `WANDB_DIR` half of [`SourceError::NoDefaultRun`]'s message.
fn wandb_dir_tried(e: Option<&SourceError>) -> String {
    e.map_or_else(
        || "WANDB_DIR is not set".to_owned(),
        |e| format!("WANDB_DIR {e}"),
    )
}

/// How resolution refers to a directory it could not use, for the NoRun list:
/// `missing` only when it does not exist, else the OS's reason.
fn why_unusable(e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::NotFound {
        "missing".to_owned()
    } else {
        e.to_string()
    }
}

/// The error for a path that cannot be used: [`SourceError::NotFound`] only when
/// it does not exist (a dangling symlink included), else the real cause.
fn path_error(path: &Path, e: io::Error) -> SourceError {
    if e.kind() == io::ErrorKind::NotFound {
        // A link that is there, to nothing: where it points is the cause.
        if let Ok(target) = std::fs::read_link(path) {
            return SourceError::DanglingLink {
                path: path.to_owned(),
                target,
            };
        }
        SourceError::NotFound {
            path: path.to_owned(),
        }
    } else {
        SourceError::Io {
            path: path.to_owned(),
            source: e,
        }
    }
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(io::Error) -> SourceError + '_ {
    move |source| SourceError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Whether `name` is a run directory name (`run-*` or `offline-run-*`).
#[must_use]
pub fn is_run_dir_name(name: &str) -> bool {
    name.starts_with("run-") || name.starts_with("offline-run-")
}

/// The run id a run directory's name ends in (`offline-run-20261130_174932-many0001`
/// → `many0001`); for `latest-run` and other names, that of the directory it leads to.
fn run_id_of_dir(dir: &Path) -> Option<String> {
    let id_of = |name: &str| {
        is_run_dir_name(name)
            .then(|| name.rsplit_once('-').map(|(_, id)| id.to_owned()))
            .flatten()
            .filter(|id| !id.is_empty())
    };
    let name = dir.file_name()?.to_string_lossy().into_owned();
    id_of(&name).or_else(|| {
        let real = std::fs::canonicalize(dir).ok()?;
        id_of(&real.file_name()?.to_string_lossy())
    })
}

/// The `.wandb` file inside a run directory: `run-<id>.wandb` where `<id>` is the
/// directory's (`offline-run-…-<id>`), else the newest of the others (a stray
/// `.wandb` beside the run's own file does not hide it).
pub(crate) fn wandb_in_dir(dir: &Path) -> Option<PathBuf> {
    if let Some(id) = run_id_of_dir(dir) {
        let own = dir.join(format!("run-{id}.wandb"));
        if own.is_file() {
            return Some(own);
        }
    }
    let mut found: Vec<(SystemTime, PathBuf)> = Vec::new();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "wandb") && p.is_file() {
            let t = e
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            found.push((t, p));
        }
    }
    // Several: a file that starts as a run does (or is still empty) comes first.
    let several = found.len() > 1;
    found
        .into_iter()
        .max_by_key(|(t, p)| (!several || starts_as_run(p), *t, p.clone()))
        .map(|(_, p)| p)
}

/// Why a run directory gives [`wandb_in_dir`] no file, where something says so:
/// its own `run-<id>.wandb` is there but is no regular file (a directory, a FIFO,
/// a link that leads nowhere or round in a loop), or the directory cannot be
/// listed (permission denied). None: it has no run file yet (a run starting). The
/// cause without the directory's path (the runs list names it); nothing is
/// opened, so a FIFO cannot block.
pub(crate) fn why_no_run_file(dir: &Path) -> Option<String> {
    if let Some(id) = run_id_of_dir(dir) {
        let name = format!("run-{id}.wandb");
        let own = dir.join(&name);
        match std::fs::metadata(&own) {
            Ok(m) if m.is_file() => return None,
            Ok(m) => {
                return Some(format!(
                    "{name} is {}, not a run file",
                    super::small_file::file_kind(&m)
                ))
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound || own.is_symlink() => {
                return Some(format!("{name}: {e}"));
            }
            Err(_) => {}
        }
    }
    std::fs::read_dir(dir).err().map(|e| e.to_string())
}

/// Whether `file` starts as a `.wandb` transaction log does (`:W&B`), or is too
/// short yet to tell (a run just created).
fn starts_as_run(file: &Path) -> bool {
    let mut head = [0u8; 4];
    let n = super::small_file::open_regular(file)
        .and_then(|f| f.take(4).read(&mut head))
        .unwrap_or(0);
    head[..n] == leveldb::FILE_HEADER[..n]
}

/// Run directories in a wandb directory, oldest first (by name: the names embed
/// the start time; ties broken by modification time).
#[must_use]
pub fn run_dirs(wandb_dir: &Path) -> Vec<PathBuf> {
    // The entry's own type (no stat; a symlink is followed), so listing a wandb
    // directory of 1,000 runs, which the workspace does every second, costs a
    // directory read, not a thousand stats.
    let mut dirs: Vec<(String, String, PathBuf)> = std::fs::read_dir(wandb_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !is_run_dir_name(&name) {
                return None;
            }
            let p = e.path();
            let is_dir = match e.file_type() {
                Ok(t) if t.is_dir() => true,
                Ok(t) if !t.is_symlink() => false,
                _ => p.is_dir(),
            };
            is_dir.then(|| {
                let (stamp, rest) = run_dir_sort_key(&name);
                (stamp, rest, p)
            })
        })
        .collect();
    dirs.sort();
    // Runs started in the same second (a sweep) by when the directory last
    // changed, then by name: a stat only for those.
    let mut out = Vec::with_capacity(dirs.len());
    for group in dirs.chunk_by(|a, b| a.0 == b.0) {
        if group.len() == 1 {
            out.push(group[0].2.clone());
            continue;
        }
        let mut g: Vec<(SystemTime, &String, &PathBuf)> = group
            .iter()
            .map(|(_, rest, p)| {
                let modified = std::fs::metadata(p)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                (modified, rest, p)
            })
            .collect();
        g.sort();
        out.extend(g.into_iter().map(|(_, _, p)| p.clone()));
    }
    out
}

/// offline-run-YYYYMMDD_HHMMSS-id and run-YYYYMMDD_HHMMSS-id sort by the time in
/// their name (the stamp), then by the rest of the name.
fn run_dir_sort_key(name: &str) -> (String, String) {
    let rest = name
        .trim_start_matches("offline-")
        .trim_start_matches("run-");
    let stamp = rest.get(..15).unwrap_or(rest).to_owned();
    (stamp, rest.to_owned())
}

/// The wandb directory holding the run of `file` (`wandb/<run-dir>/run-x.wandb`),
/// when that run sits in a run directory.
#[must_use]
pub fn wandb_dir_of(file: &Path) -> Option<PathBuf> {
    let run_dir = file.parent()?;
    let name = run_dir.file_name()?.to_string_lossy();
    if !is_run_dir_name(&name) {
        return None;
    }
    let dir = run_dir.parent()?;
    Some(if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir.to_owned()
    })
}

/// Bytes read from the start of each `.wandb` file for its run record.
const PEEK_BYTES: u64 = 64 << 10;

/// Display name and id from the run records near the start of a `.wandb` file
/// (merged up to the first that names the run id).
fn peek_run(file: &Path) -> (String, String) {
    let mut data = Vec::new();
    if super::small_file::open_regular(file)
        .and_then(|f| f.take(PEEK_BYTES).read_to_end(&mut data))
        .is_err()
    {
        return (String::new(), String::new());
    }
    let mut info = RunInfo::default();
    let mut decoder = Decoder::new();
    let _ = leveldb::scan(&data, 0, |fr| {
        if let Frame::Record { offset, payload } = fr {
            if info.run_id.is_empty() {
                decoder.record(offset, &payload);
                for e in decoder.take().list {
                    if let Event::Run(r) = e {
                        info.merge(*r);
                    }
                }
            }
        }
    });
    (info.display_name, info.run_id)
}

/// How many runs the run picker lists in `wandb_dir`: its run directories, those
/// of one run id (a resumed run's segments, a distributed run's nodes) once. Only
/// the directories whose names give the same id are peeked at for it, so a wandb
/// directory of a thousand runs costs a listing.
#[must_use]
pub fn run_count(wandb_dir: &Path) -> usize {
    let mut by_name: std::collections::HashMap<String, Vec<PathBuf>> =
        std::collections::HashMap::new();
    for dir in run_dirs(wandb_dir) {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        by_name
            .entry(name_id(&name).to_owned())
            .or_default()
            .push(dir);
    }
    by_name
        .into_values()
        .map(|dirs| {
            if dirs.len() < 2 {
                return dirs.len();
            }
            let ids: Vec<String> = dirs
                .iter()
                .map(|d| wandb_in_dir(d).map(|f| peek_run(&f).1).unwrap_or_default())
                .collect();
            let unnamed = ids.iter().filter(|i| i.is_empty()).count();
            let named: std::collections::HashSet<&String> =
                ids.iter().filter(|i| !i.is_empty()).collect();
            unnamed + named.len()
        })
        .sum()
}

/// The run id a run directory's name gives (`offline-run-20261206_151017-ab12-1`
/// → `ab12`: the SDK adds `-<n>` to a second directory started in the same
/// second); the whole name when it has no such form.
fn name_id(name: &str) -> &str {
    let rest = name
        .strip_prefix("offline-run-")
        .or_else(|| name.strip_prefix("run-"))
        .and_then(|r| r.split_once('-'))
        .map_or("", |(_, id)| id);
    let id = match rest.rsplit_once('-') {
        Some((head, n)) if !head.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => rest,
    };
    if id.is_empty() {
        name
    } else {
        id
    }
}

/// Every run of the wandb directory that holds `file`'s run, newest first, with
/// each run's name read from its file. Empty when `file` is not in a run directory.
#[must_use]
pub fn sibling_runs(file: &Path) -> Vec<RunEntry> {
    file.parent().map_or_else(Vec::new, runs_next_to)
}

/// Every run of the wandb directory that holds the run directory `run_dir` (which
/// may have no `.wandb` file yet), newest first. Empty when it is not a run directory.
#[must_use]
pub fn runs_next_to(run_dir: &Path) -> Vec<RunEntry> {
    let Some(wandb_dir) = wandb_dir_of(&run_dir.join("x.wandb")) else {
        return Vec::new();
    };
    run_dirs(&wandb_dir)
        .into_iter()
        .rev()
        .map(|dir| {
            let file = wandb_in_dir(&dir);
            let meta = file.as_ref().and_then(|f| std::fs::metadata(f).ok());
            let (name, id) = file.as_deref().map(peek_run).unwrap_or_default();
            RunEntry {
                size: meta.as_ref().map_or(0, std::fs::Metadata::len),
                modified: meta
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                    .map(|d| d.as_secs_f64()),
                dir,
                file,
                name,
                id,
                segments: 1,
                nodes: false,
            }
        })
        .collect()
}

/// `latest-run` in a wandb directory: a symlink (relative or absolute), or a plain
/// file holding the run directory's name (what a copy without symlinks leaves).
fn latest_run(wandb_dir: &Path) -> Option<PathBuf> {
    let link = wandb_dir.join("latest-run");
    if let Ok(target) = std::fs::read_link(&link) {
        let p = if target.is_absolute() {
            target
        } else {
            wandb_dir.join(target)
        };
        if p.is_dir() {
            return Some(p);
        }
    }
    if link.is_dir() {
        return Some(link);
    }
    if link.is_file() {
        let text = std::fs::read_to_string(&link).ok()?;
        let name = text.trim();
        if !name.is_empty() && !name.contains('\n') {
            let p = if Path::new(name).is_absolute() {
                PathBuf::from(name)
            } else {
                wandb_dir.join(name)
            };
            if p.is_dir() {
                return Some(p);
            }
        }
    }
    None
}

/// The same place, spelled so that the run directory has its own name: `latest-run`
/// (a symlink, or a pointer file) becomes the run directory it names, also as the
/// directory of a file (`wandb/latest-run/run-x.wandb`), and a path ending in `.` or
/// `..` becomes the directory itself. Then the run's wandb directory and its
/// neighbours are found from the path, as for any run directory. Anything else is
/// left as given.
fn plain_spelling(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    if p.file_name().is_none() {
        // `.`, `..`, `/`: the directory's real name (a run directory opened as `.`).
        if let Ok(c) = std::fs::canonicalize(&p) {
            p = c;
        }
    }
    let latest = |p: &Path| p.file_name().is_some_and(|n| n == "latest-run");
    if latest(&p) {
        if let Some(run) = p.parent().and_then(latest_run) {
            return run;
        }
    } else if let Some(dir) = p.parent().filter(|d| latest(d)) {
        if let (Some(run), Some(name)) = (dir.parent().and_then(latest_run), p.file_name()) {
            return run.join(name);
        }
    }
    p
}

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A `.wandb` file.
    File(PathBuf),
    /// A run directory that has no `.wandb` file yet (a run just starting).
    EmptyRunDir(PathBuf),
}

/// Resolve a user path to the `.wandb` file to show: a `.wandb` file; a run
/// directory; a wandb directory (or a project directory holding `wandb/` or
/// `.wandb/`) → its `latest-run`, else its newest run directory.
///
/// # Errors
/// [`SourceError::NotFound`] for a missing path, [`SourceError::NoRun`] (naming
/// every place looked at) when nothing fits.
pub fn resolve(path: &Path) -> Result<Target, SourceError> {
    let plain = plain_spelling(path);
    let path = plain.as_path();
    let meta = std::fs::metadata(path).map_err(|e| path_error(path, e))?;
    if meta.is_file() {
        // A `latest-run` pointer stored as a plain file (a copy that lost the symlink).
        if path.file_name().is_some_and(|n| n == "latest-run") {
            if let Some(run) = path.parent().and_then(latest_run) {
                return resolve(&run);
            }
        }
        return Ok(Target::File(path.to_owned()));
    }
    if !meta.is_dir() {
        // A FIFO or a device: a run is read by offset, from a file.
        return Err(SourceError::Io {
            path: path.to_owned(),
            source: io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file or a directory",
            ),
        });
    }
    // A directory we may not list is not "no run here".
    std::fs::read_dir(path).map_err(|e| path_error(path, e))?;
    let mut looked = Vec::new();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A run directory (or latest-run itself).
    if let Some(f) = wandb_in_dir(path) {
        return Ok(Target::File(f));
    }

    if is_run_dir_name(&name) || name == "latest-run" {
        return empty_run_dir(path.to_owned());
    }
    let mut candidates = vec![path.to_owned()];
    for sub in ["wandb", ".wandb"] {
        let d = path.join(sub);
        match std::fs::metadata(&d) {
            Ok(m) if m.is_dir() => candidates.push(d),
            Ok(_) => looked.push(format!("{} (not a directory)", d.display())),
            Err(e) => looked.push(format!("{} ({})", d.display(), why_unusable(&e))),
        }
    }
    for wandb_dir in candidates {
        if let Err(e) = std::fs::read_dir(&wandb_dir) {
            looked.push(format!("{} ({})", wandb_dir.display(), why_unusable(&e)));
            continue;
        }
        // A latest-run that is there but leads nowhere usable (a symlink loop, no
        // permission): say so rather than "no latest-run".
        let link = wandb_dir.join("latest-run");
        if std::fs::symlink_metadata(&link).is_ok() {
            if let Err(e) = std::fs::metadata(&link) {
                looked.push(format!("{} ({})", link.display(), why_unusable(&e)));
            }
        }
        if let Some(run) = latest_run(&wandb_dir) {
            if let Some(f) = wandb_in_dir(&run) {
                return Ok(Target::File(f));
            }
            // The newest run has not written its file yet: wait for it rather than
            // show an older run.
            return empty_run_dir(run);
        }
        let runs = run_dirs(&wandb_dir);
        for run in runs.iter().rev() {
            if let Some(f) = wandb_in_dir(run) {
                return Ok(Target::File(f));
            }
            looked.push(run.display().to_string());
        }
        // Run directories, none with its file yet (a first run starting): wait
        // for the newest, as for a run directory named directly.
        if let Some(newest) = runs.last() {
            return empty_run_dir(newest.clone());
        }
        looked.push(format!(
            "{} (no latest-run, no run-*/offline-run-* with a .wandb)",
            wandb_dir.display()
        ));
    }
    looked.dedup();
    Err(SourceError::NoRun {
        path: path.to_owned(),
        looked: looked.join(", "),
    })
}

/// A run directory without a run file: one to wait in, unless its own run file
/// is there but is no file ([`why_no_run_file`]: a FIFO, a link in a loop), which
/// is an error naming the cause rather than a run that never starts.
fn empty_run_dir(dir: PathBuf) -> Result<Target, SourceError> {
    match why_no_run_file(&dir) {
        Some(why) => Err(SourceError::Io {
            path: dir,
            source: io::Error::other(why),
        }),
        None => Ok(Target::EmptyRunDir(dir)),
    }
}

/// [`resolve`] for callers that need a file now: a run directory without a
/// `.wandb` file yet is an error rather than something to wait for.
///
/// # Errors
/// As [`resolve`], and [`SourceError::NoRun`] for an empty run directory.
pub fn resolve_file(path: &Path) -> Result<PathBuf, SourceError> {
    match resolve(path)? {
        Target::File(f) => Ok(f),
        Target::EmptyRunDir(d) => Err(SourceError::NoRun {
            looked: d.display().to_string(),
            path: d,
        }),
    }
}

/// A run [`resolve_readable`] passed over: its file cannot be read at all.
#[derive(Debug, thiserror::Error)]
#[error("skipped the run {}: {why}", sanitize_path(.run_dir))]
pub struct PassedOver {
    pub run_dir: PathBuf,
    /// Why (its header, or the I/O error), naming the file.
    pub why: SourceError,
}

/// Whether `file` starts as a `.wandb` file: the check a first read makes (a file
/// shorter than the header whose bytes agree with it so far passes: a run whose
/// first record is not written yet).
///
/// # Errors
/// [`SourceError::BadHeader`] for another header, [`SourceError::Io`] when it
/// cannot be read.
pub fn check_header(file: &Path) -> Result<(), SourceError> {
    let mut head = Vec::with_capacity(leveldb::FILE_HEADER.len());
    super::small_file::open_regular(file)
        .and_then(|f| {
            f.take(leveldb::FILE_HEADER.len() as u64)
                .read_to_end(&mut head)
        })
        .map_err(io_err(file))?;
    match leveldb::check_header(&head) {
        Ok(()) | Err(HeaderError::TooShort) => Ok(()),
        Err(cause) => Err(SourceError::BadHeader {
            path: file.to_owned(),
            cause,
        }),
    }
}

/// Whether `path` names a workspace (a project or wandb directory, or its
/// `latest-run`), which `leet PATH` opens as its runs list, rather than one run.
#[must_use]
pub fn names_workspace(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "latest-run") || !names_a_run(path)
}

/// Whether `path` names one run (a file, a run directory, a directory holding a
/// `.wandb`), not a workspace.
fn names_a_run(path: &Path) -> bool {
    let plain = plain_spelling(path);
    plain.is_file()
        || wandb_in_dir(&plain).is_some()
        || plain
            .file_name()
            .is_some_and(|n| is_run_dir_name(&n.to_string_lossy()))
}

/// [`resolve_file`] for a one-shot read (`leet export`, `leet inspect`): where
/// `path` names a workspace (a project or wandb directory, or its `latest-run`)
/// rather than one run, and the run it would pick cannot be read at all (a text
/// file where the `.wandb` file should be), the newest run that can is picked, as
/// the viewer draws it first; the runs passed over come with it, to be said. A
/// run named itself is never replaced; when no run can be read, the newest is
/// given as [`resolve_file`] gives it, and reading it says why.
///
/// # Errors
/// As [`resolve_file`].
pub fn resolve_readable(path: &Path) -> Result<(PathBuf, Vec<PassedOver>), SourceError> {
    let file = resolve_file(path)?;
    let Err(why) = check_header(&file) else {
        return Ok((file, Vec::new()));
    };
    let via_latest = path.file_name().is_some_and(|n| n == "latest-run");
    let names_run = names_a_run(path);
    let (Some(wandb_dir), Some(run_dir)) = (wandb_dir_of(&file), file.parent()) else {
        return Ok((file, Vec::new()));
    };
    if names_run && !via_latest {
        return Ok((file, Vec::new()));
    }
    let mut passed = vec![PassedOver {
        run_dir: run_dir.to_path_buf(),
        why,
    }];
    for run in run_dirs(&wandb_dir).iter().rev() {
        let Some(f) = wandb_in_dir(run).filter(|f| *f != file) else {
            continue;
        };
        match check_header(&f) {
            Ok(()) => return Ok((f, passed)),
            Err(why) => passed.push(PassedOver {
                run_dir: run.clone(),
                why,
            }),
        }
    }
    Ok((file, Vec::new()))
}

/// What `leet PATH` opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opening {
    /// The workspace of a wandb directory (a project directory, a wandb directory,
    /// or its `latest-run` spelled in any way), with its latest run read first.
    Workspace { wandb_dir: PathBuf, run: Target },
    /// One run (a run directory, a `.wandb` file), and the wandb directory it sits
    /// in, if any (the run view's esc goes to its workspace).
    Run {
        target: Target,
        wandb_dir: Option<PathBuf>,
    },
    /// A workspace with no run yet (a project opened before its first run
    /// starts): the wandb directory the SDK will write its runs to, watched.
    Empty { wandb_dir: PathBuf },
}

/// The wandb directory to wait in where `dir` (a directory, named or the current
/// one) holds no run yet: `dir` itself when it is named `wandb` or `.wandb`, else
/// its `wandb` or `.wandb` directory, else the `wandb` the SDK makes there (as
/// `wandb.init` does in the directory it runs in). None when `dir` is no
/// directory.
#[must_use]
pub fn wandb_dir_to_wait_in(dir: &Path) -> Option<PathBuf> {
    if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    if matches!(name.as_deref(), Some("wandb" | ".wandb")) {
        return Some(dir.to_path_buf());
    }
    let sub = |s: &str| Some(dir.join(s)).filter(|d| d.is_dir());
    Some(
        sub("wandb")
            .or_else(|| sub(".wandb"))
            .unwrap_or_else(|| dir.join("wandb")),
    )
}

/// [`opening`] of a directory with no run yet: the workspace waiting in it
/// ([`wandb_dir_to_wait_in`]); other errors as they are.
///
/// # Errors
/// As [`opening`], except [`SourceError::NoRun`] of a directory.
pub fn opening_or_wait(path: &Path) -> Result<Opening, SourceError> {
    match opening(path) {
        Err(SourceError::NoRun { .. }) if path.is_dir() => wandb_dir_to_wait_in(path)
            .map(|wandb_dir| Opening::Empty { wandb_dir })
            .ok_or_else(|| SourceError::NotFound {
                path: path.to_owned(),
            }),
        r => r,
    }
}

/// Decide what `leet PATH` opens (see [`Opening`]).
///
/// # Errors
/// As [`resolve`].
pub fn opening(path: &Path) -> Result<Opening, SourceError> {
    let target = resolve(path)?;
    let run_dir = match &target {
        Target::File(f) => f.parent().map(Path::to_path_buf),
        Target::EmptyRunDir(d) => Some(d.clone()),
    };
    let wandb_dir = run_dir
        .as_deref()
        .and_then(|d| wandb_dir_of(&d.join("x.wandb")));
    let named_latest = |p: &Path| p.file_name().is_some_and(|n| n == "latest-run");
    let via_latest = named_latest(path) || path.parent().is_some_and(named_latest);
    let names_run = names_a_run(path);
    match wandb_dir {
        Some(wandb_dir) if via_latest || !names_run => Ok(Opening::Workspace {
            wandb_dir,
            run: target,
        }),
        wandb_dir => Ok(Opening::Run { target, wandb_dir }),
    }
}

/// What `leet` with no PATH opens, as `wandb leet` finds its runs: the current
/// directory's (`cwd`: a project, wandb or run directory), else those under
/// `wandb_dir_env`, the value of `WANDB_DIR`. The SDK writes runs to
/// `$WANDB_DIR/wandb/` (or `$WANDB_DIR/.wandb/`), so that is where they are looked
/// for; `WANDB_DIR` naming the wandb directory itself works too. An empty value is
/// no value; a relative one is taken from `cwd`.
///
/// The path opened (`cwd`, or `WANDB_DIR` under it) and what it opens.
///
/// # Errors
/// [`SourceError::NoDefaultRun`], saying what was tried in both places.
pub fn opening_default(
    cwd: &Path,
    wandb_dir_env: Option<&OsStr>,
) -> Result<(PathBuf, Opening), SourceError> {
    let here = match opening(cwd) {
        Ok(o) => return Ok((cwd.to_owned(), o)),
        Err(e) => Box::new(e),
    };
    let Some(dir) = wandb_dir_env.filter(|v| !v.is_empty()) else {
        return Err(SourceError::NoDefaultRun {
            here,
            wandb_dir: None,
        });
    };
    let path = cwd.join(dir);
    match opening(&path) {
        Ok(o) => Ok((path, o)),
        Err(e) => Err(SourceError::NoDefaultRun {
            here,
            wandb_dir: Some(Box::new(e)),
        }),
    }
}

/// [`opening_default`], or where neither place holds a run yet, the workspace
/// waiting where the SDK will write them: under `WANDB_DIR` when it is set,
/// else in the current directory ([`wandb_dir_to_wait_in`]).
///
/// # Errors
/// As [`opening_default`], where the place to wait is no directory.
pub fn opening_default_or_wait(
    cwd: &Path,
    wandb_dir_env: Option<&OsStr>,
) -> Result<(PathBuf, Opening), SourceError> {
    let err = match opening_default(cwd, wandb_dir_env) {
        Ok(o) => return Ok(o),
        Err(e) => e,
    };
    let SourceError::NoDefaultRun { here, wandb_dir } = &err else {
        return Err(err);
    };
    let no_run = |e: &SourceError| matches!(e, SourceError::NoRun { .. });
    let place = match wandb_dir_env.filter(|v| !v.is_empty()) {
        // A `WANDB_DIR` not made yet: the SDK makes it, and its `wandb` in it.
        Some(dir)
            if wandb_dir.as_deref().is_some_and(|e| {
                matches!(
                    e,
                    SourceError::NotFound { .. } | SourceError::DanglingLink { .. }
                )
            }) =>
        {
            let place = cwd.join(dir);
            let wandb_dir = place.join("wandb");
            return Ok((place, Opening::Empty { wandb_dir }));
        }
        Some(dir) if wandb_dir.as_deref().is_some_and(no_run) => cwd.join(dir),
        None if no_run(here) => cwd.to_path_buf(),
        _ => return Err(err),
    };
    match wandb_dir_to_wait_in(&place) {
        Some(wandb_dir) => Ok((place, Opening::Empty { wandb_dir })),
        None => Err(err),
    }
}

#[cfg(test)]
mod tests;
