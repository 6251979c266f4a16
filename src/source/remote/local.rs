//! A run on a server, written as a local `.wandb` file, so that everything that
//! opens run files (the viewer and `--compare`, `inspect`, `export`) opens it
//! unchanged. While the run is running, a thread keeps asking the server for new
//! rows and appends them to the file, which the viewer's follow thread reads as
//! it reads a run being written. The files live beside the download cache, in
//! `leet/remote-runs/`, one per run, replaced at each open.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::auth::find_key;
use super::cache::{entry_name, Cache, DEFAULT_LIMIT};
use super::fetch::{self, Options, Progress};
use super::project;
use super::url::RemoteUrl;
use super::{is_url, RemoteError};

/// The environment, with `WANDB_API_KEY` as it was at the first look: it is
/// taken out of the process's environment then (see [`local_path`]), and a second
/// URL (`--compare`) still needs it.
fn env(k: &str) -> Option<String> {
    static KEY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if k == "WANDB_API_KEY" {
        return KEY.get_or_init(|| std::env::var(k).ok()).clone();
    }
    std::env::var(k).ok()
}

/// `path` itself when it is not a URL; else the run at that URL, downloaded (or
/// from the cache) and written as a `.wandb` file, whose path is returned, and
/// followed while it runs; the download stops when `cancel` is set. A project's URL, where `projects` allows it, is its
/// workspace ([`project::workspace`]). `progress` hears how the download goes.
///
/// # Errors
/// What opening the run on the server gives ([`fetch::open`]); writing the file;
/// [`RemoteError::Project`] for a project's URL where a run is needed.
pub fn local_path(
    path: &Path,
    projects: bool,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<PathBuf, RemoteError> {
    let Some(text) = path.to_str().filter(|s| is_url(s)) else {
        return Ok(path.to_owned());
    };
    let url = RemoteUrl::parse(text, env("WANDB_BASE_URL").as_deref())?;
    let cache_dir = Cache::default_dir(&env);
    let opts = Options {
        key: find_key(url.netloc(), &env),
        cache: cache_dir.clone().map(|d| Cache::new(d, DEFAULT_LIMIT)),
        summary_only: true,
        framing: true,
        ca_file: leet_sampler::tls::ca_file_from_env(),
        ..Options::default()
    };
    if std::env::var_os("WANDB_API_KEY").is_some() {
        // Held by the client from here on: the programs leet starts (samplers,
        // tools) do not inherit it. This is the first URL opened (the variable is
        // there), before the viewer's threads start; the one other thread then,
        // waiting for a key that cancels, reads no environment.
        std::env::remove_var("WANDB_API_KEY");
    }
    let root = cache_dir
        .as_deref()
        .and_then(Path::parent)
        .map_or_else(std::env::temp_dir, Path::to_path_buf)
        .join("remote-runs");
    if url.run.is_none() && projects {
        return project::workspace(&url, &opts, &root);
    }
    let (mut run, _) = fetch::open(&url, &opts, cancel, progress)?;
    let name = entry_name(&url);
    let io = |e: std::io::Error| RemoteError::protocol(&root.display().to_string(), e);
    let dir = claim(&root, &name).map_err(io)?;
    let file = dir.join(format!("run-{name}.wandb"));
    let tmp = file.with_extension("wandb.tmp");
    super::cache::write_private(&tmp, run.framed()).map_err(io)?;
    std::fs::rename(&tmp, &file).map_err(io)?;
    if run.meta.running() {
        let f = file.clone();
        std::thread::spawn(move || {
            run.follow(&f, &|e| note_poll(&f, e));
            note_poll(&f, None);
        });
    }
    Ok(file)
}

/// The followed runs' files whose last poll failed, and its error (sanitized).
static TROUBLE: std::sync::Mutex<Vec<(PathBuf, String)>> = std::sync::Mutex::new(Vec::new());

/// Note how the last poll of the run followed into `file` went.
pub(crate) fn note_poll(file: &Path, e: Option<&RemoteError>) {
    let mut t = TROUBLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    t.retain(|(f, _)| f != file);
    if let Some(e) = e {
        t.push((file.to_owned(), format!("polling the server: {e}")));
    }
}

/// The error of a followed run's last poll, when it failed (the first such run):
/// the run is quiet because the server does not answer, not because it stopped.
pub fn follow_trouble() -> Option<String> {
    TROUBLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .first()
        .map(|(_, e)| e.clone())
}

/// Folders of one run (or project) that as many leet processes can write at once.
const SLOTS: usize = 16;

/// The folders this process writes and their locks, held until it ends.
static HELD: std::sync::Mutex<Vec<(PathBuf, std::fs::File)>> = std::sync::Mutex::new(Vec::new());

/// A folder under `root` for `name`'s files that no other leet process writes:
/// `name`, else `name-1`, `name-2` … , each claimed by an advisory lock on a file
/// beside it held for the rest of the process. Two viewers of one running run
/// both replacing and appending to one file duplicated and tore its records;
/// each now follows the run into a file of its own. The same process asking
/// again (`leet URL --compare URL`) gets its folder again, so the viewer sees
/// one run twice and says so.
///
/// # Errors
/// Creating the folders or lock files; every folder taken.
pub(crate) fn claim(root: &Path, name: &str) -> std::io::Result<PathBuf> {
    super::cache::create_private_dir(root)?;
    let mut held = HELD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for k in 0..SLOTS {
        let slot = if k == 0 {
            name.to_owned()
        } else {
            format!("{name}-{k}")
        };
        let mut o = std::fs::OpenOptions::new();
        o.create(true).truncate(false).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let dir = root.join(&slot);
        if held.iter().any(|(d, _)| *d == dir) {
            return Ok(dir);
        }
        let lock = o.open(root.join(format!(".{slot}.lock")))?;
        if try_lock(&lock)? {
            super::cache::create_private_dir(&dir)?;
            held.push((dir.clone(), lock));
            return Ok(dir);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::WouldBlock,
        format!("{SLOTS} other leet processes are following this run"),
    ))
}

/// Whether `f`'s exclusive lock was taken (false: another process holds it).
#[cfg(unix)]
fn try_lock(f: &std::fs::File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd as _;
    // SAFETY: a valid descriptor, owned by `f` for the call.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.kind() == std::io::ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(e)
    }
}

#[cfg(not(unix))]
fn try_lock(_: &std::fs::File) -> std::io::Result<bool> {
    Ok(true)
}

/// A progress line for stderr.
pub fn progress_line(p: Progress) -> Option<String> {
    match p {
        Progress::Download {
            file,
            files,
            bytes,
            total,
        } if Some(bytes) == total => Some(format!(
            "downloaded history file {} of {files} ({bytes} bytes)",
            file + 1
        )),
        Progress::Cached { files } => Some(format!("history files from the cache ({files})")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_folder_claimed_by_another_process_is_not_given() {
        let tmp = tempfile::tempdir().expect("tmp");
        // Held as another process holds it: a lock on a file description of its own.
        let other = std::fs::File::create(tmp.path().join(".run.lock")).expect("lock file");
        assert!(try_lock(&other).expect("lock"));
        let one = claim(tmp.path(), "run").expect("one");
        assert_eq!(one, tmp.path().join("run-1"));
        // This process asking again gets its own folder again.
        let two = claim(tmp.path(), "run").expect("two");
        assert_eq!(one, two);
        drop(other);
        assert!(one.is_dir());
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&one).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let other = claim(tmp.path(), "other").expect("other");
        assert_eq!(other, tmp.path().join("other"));
    }
}
