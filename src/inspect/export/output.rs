//! Where an export goes, decided before anything is opened for writing.
//!
//! A file is written beside its target under a temporary name and renamed into
//! place only when whole (synced first), so an existing target keeps its bytes
//! until then and an export that fails or is interrupted leaves nothing behind.
//! A target that is the run being read is refused: truncating it first would
//! destroy the run.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::source::resolve::{is_run_dir_name, resolve_file, wandb_in_dir};
use leet_text::sanitize_path;

/// `-o` names the run being exported (the same file, through any link, or a
/// directory whose run is that file).
#[derive(Debug, thiserror::Error)]
#[error("-o '{}' is the run being exported ('{}'); nothing was written", sanitize_path(.output), sanitize_path(.input))]
pub struct OutputIsInput {
    pub output: PathBuf,
    pub input: PathBuf,
}

/// `-o` would write a run's own files: it is named like a run file (`*.wandb`,
/// which the run's directory would then hold beside its own, and which leet and
/// W&B read as a run), or it lies inside a W&B run directory (its console log,
/// its media, its config are the run's, never an export's).
#[derive(Debug, thiserror::Error)]
pub enum OutputInRun {
    #[error("-o '{}' is named like a run file (.wandb), which would be read as a run; name it .csv, .jsonl or .parquet; nothing was written", sanitize_path(.0))]
    RunFileName(PathBuf),
    #[error("-o '{}' is inside the W&B run directory '{}', whose files are the run's; write it elsewhere; nothing was written", sanitize_path(.output), sanitize_path(.run_dir))]
    InRunDir { output: PathBuf, run_dir: PathBuf },
}

/// How many directories above the output are looked into for a `.wandb` file
/// (`RUN/files/media/images/x.csv` is three below its run directory).
const RUN_DIR_DEPTH: usize = 4;

/// Whether `dir` is a W&B run directory: named `run-*` or `offline-run-*` inside
/// a `wandb` (or `.wandb`) directory, or (when `look_inside`) holding a `.wandb`
/// file beside a `files` folder, as a run directory copied under another name does.
fn is_run_dir(dir: &Path, look_inside: bool) -> bool {
    let named = dir
        .file_name()
        .is_some_and(|n| is_run_dir_name(&n.to_string_lossy()))
        && dir
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|p| p == "wandb" || p == ".wandb");
    named || (look_inside && dir.join("files").is_dir() && wandb_in_dir(dir).is_some())
}

/// The run directory `out` would be written inside, if any: each directory above
/// it (its real path where it exists, so a link into a run is seen through).
fn run_dir_above(out: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(out).ok()?;
    let mut spellings = vec![abs.clone()];
    // The deepest existing directory above it, its links resolved.
    if let Some(real) = abs
        .ancestors()
        .skip(1)
        .find_map(|d| fs::canonicalize(d).ok().map(|r| (d, r)))
        .and_then(|(d, r)| Some(r.join(abs.strip_prefix(d).ok()?)))
    {
        spellings.push(real);
    }
    spellings.iter().find_map(|p| {
        p.ancestors()
            .skip(1)
            .enumerate()
            .find(|(depth, d)| is_run_dir(d, *depth < RUN_DIR_DEPTH))
            .map(|(_, d)| d.to_path_buf())
    })
}

/// Refuse an output that would write a run's own files ([`OutputInRun`]).
fn check_not_in_run(out: &Path) -> Result<(), OutputInRun> {
    if out
        .extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("wandb"))
    {
        return Err(OutputInRun::RunFileName(out.to_path_buf()));
    }
    match run_dir_above(out) {
        Some(run_dir) => Err(OutputInRun::InRunDir {
            output: out.to_path_buf(),
            run_dir,
        }),
        None => Ok(()),
    }
}

/// Where the rows go.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Dest {
    /// Standard output (no `-o`, or `-o -`).
    Stdout,
    /// Something that is not a regular file (a terminal, a FIFO, `/dev/null`):
    /// written in place, as standard output is.
    Stream(PathBuf),
    /// A regular file (new or existing), staged beside it and renamed into place.
    File(PathBuf),
}

/// The file's identity after following links.
fn identity(m: &fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        (m.dev(), m.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        (0, 0)
    }
}

/// Whether `a` and `b` are the same file (same device and inode on Unix, the same
/// canonical path elsewhere).
fn same_file(a: &Path, am: &fs::Metadata, b: &Path, bm: &fs::Metadata) -> bool {
    if cfg!(unix) {
        identity(am) == identity(bm)
    } else {
        matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
    }
}

impl Dest {
    /// Decide where `output` writes when `input` (a resolved `.wandb` file) is read.
    ///
    /// # Errors
    /// [`OutputIsInput`]; [`OutputInRun`]; a target that is a directory (holding
    /// no run) or whose state cannot be read.
    pub(super) fn plan(output: Option<&Path>, input: &Path) -> anyhow::Result<Self> {
        let Some(out) = output.filter(|p| p.as_os_str() != "-") else {
            return Ok(Dest::Stdout);
        };
        let refuse = || OutputIsInput {
            output: out.to_path_buf(),
            input: input.to_path_buf(),
        };
        let in_meta = fs::metadata(input)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", sanitize_path(input)))?;
        let meta = match fs::metadata(out) {
            Ok(m) => m,
            // Nothing there: a new file. A dangling link is written through too, as
            // a link to a file is: the file it names is created, the link kept.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                check_not_in_run(out)?;
                let target = dangling_target(out)?;
                if target != out {
                    check_not_in_run(&target)?;
                }
                return Ok(Dest::File(target));
            }
            Err(e) => anyhow::bail!("cannot write {}: {e}", sanitize_path(out)),
        };
        if same_file(out, &meta, input, &in_meta) {
            return Err(refuse().into());
        }
        if meta.is_dir() {
            // A run directory (or a wandb directory) whose run is the input.
            if let Ok(run) = resolve_file(out) {
                if fs::metadata(&run).is_ok_and(|m| same_file(&run, &m, input, &in_meta)) {
                    return Err(refuse().into());
                }
            }
            anyhow::bail!("cannot write {}: it is a directory", sanitize_path(out));
        }
        if !meta.is_file() {
            return Ok(Dest::Stream(out.to_path_buf()));
        }
        check_not_in_run(out)?;
        // A link to a regular file is written through: the file it names is replaced.
        let real = if fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink()) {
            let real = fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf());
            check_not_in_run(&real)?;
            real
        } else {
            out.to_path_buf()
        };
        Ok(Dest::File(real))
    }
}

/// Links followed at most, as the kernel's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// The path a link that names nothing (through any chain of links) would create;
/// `out` itself when it is no link.
///
/// # Errors
/// A chain longer than [`MAX_LINKS`] or a link that cannot be read.
fn dangling_target(out: &Path) -> anyhow::Result<PathBuf> {
    let mut p = out.to_path_buf();
    for _ in 0..MAX_LINKS {
        if !fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Ok(p);
        }
        let to = fs::read_link(&p)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", sanitize_path(out)))?;
        // A relative link is taken from its own directory (an absolute one replaces it).
        p = match p.parent() {
            Some(dir) => dir.join(to),
            None => to,
        };
    }
    anyhow::bail!(
        "cannot write {}: too many levels of symbolic links",
        sanitize_path(out)
    )
}

/// The temporary file being written now, removed by the signal handler.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

fn pending() -> std::sync::MutexGuard<'static, Option<PathBuf>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// SIGTERM, SIGINT, SIGHUP and SIGQUIT remove the temporary file and end the process with
/// 128 + the signal's number (as `leet sample` does), instead of leaving a
/// partial file. Installed once, when the first temporary file is made.
fn clean_up_on_signals() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
        let signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP, SIGQUIT]);
        let spawned = signals.and_then(|mut signals| {
            std::thread::Builder::new()
                .name("leet-export-signals".into())
                .spawn(move || {
                    if let Some(sig) = signals.forever().next() {
                        // Held until exit: a rename under way finishes first, and
                        // none starts after.
                        let tmp = pending();
                        if let Some(p) = tmp.as_ref() {
                            let _ = fs::remove_file(p);
                        }
                        std::process::exit(128 + sig);
                    }
                })
        });
        if let Err(e) = spawned {
            let _ = writeln!(io::stderr(), "leet: cannot handle signals: {e}");
        }
    });
}

/// A file written under a temporary name beside its target; [`Staged::commit`]
/// renames it into place, dropping it uncommitted removes it.
pub(super) struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    file: BufWriter<File>,
}

/// `.NAME.leet-tmp-PID-N` beside `target`.
fn temp_name(target: &Path, n: u32) -> PathBuf {
    let name = target
        .file_name()
        .map_or_else(|| "export".into(), |n| n.to_string_lossy());
    let tmp = format!(".{name}.leet-tmp-{}-{n}", std::process::id());
    target.with_file_name(tmp)
}

impl Staged {
    /// Create the temporary file (exclusively: never an existing one), with the
    /// mode of the file it will replace.
    ///
    /// # Errors
    /// The file cannot be created.
    pub(super) fn create(target: &Path) -> io::Result<Self> {
        clean_up_on_signals();
        let mut n = 0;
        loop {
            let tmp = temp_name(target, n);
            // Registered under the lock it is created under: a signal between the
            // two cannot leave it behind.
            let mut slot = pending();
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(f) => {
                    if let Ok(m) = fs::metadata(target) {
                        // Best effort: the new file is whole either way.
                        let _ = f.set_permissions(m.permissions());
                    }
                    *slot = Some(tmp.clone());
                    return Ok(Self {
                        tmp,
                        target: target.to_path_buf(),
                        file: BufWriter::with_capacity(1 << 16, f),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// The temporary file, to write to.
    pub(super) fn writer(&mut self) -> &mut (dyn Write + Send) {
        &mut self.file
    }

    /// Flush, sync and rename into place (then sync the directory, best effort).
    ///
    /// # Errors
    /// Any of those steps; the temporary file is then removed.
    pub(super) fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        self.file.get_ref().sync_all()?;
        let mut slot = pending();
        fs::rename(&self.tmp, &self.target)?;
        *slot = None;
        drop(slot);
        // Renamed: nothing for drop to remove.
        self.tmp = PathBuf::new();
        let dir = match self.target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if self.tmp.as_os_str().is_empty() {
            return;
        }
        let mut slot = pending();
        let _ = fs::remove_file(&self.tmp);
        if slot.as_ref() == Some(&self.tmp) {
            *slot = None;
        }
    }
}
