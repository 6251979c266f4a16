//! The files leet writes of runs on a server, beside the download cache: made
//! readable by their user alone, each run's folder claimed by one leet process
//! (a lock file), and how the polls of the runs followed into them go.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::msg::FollowTrouble;

/// Create `dir` and the folders above it that are missing, readable by the
/// user alone (0700): what a run logged (its config, console, metrics) is not
/// for the other users of a shared host. Folders already there keep their mode.
///
/// # Errors
/// Creating a folder.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// Write `bytes` to `path`, readable by the user alone (0600), whatever mode a
/// file already there had.
///
/// # Errors
/// Opening or writing the file.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    let mut o = fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(path)?;
    #[cfg(unix)]
    f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    f.write_all(bytes)
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
    create_private_dir(root)?;
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
            create_private_dir(&dir)?;
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
pub(crate) fn try_lock(f: &std::fs::File) -> std::io::Result<bool> {
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
pub(crate) fn try_lock(_: &std::fs::File) -> std::io::Result<bool> {
    Ok(true)
}

/// One folder that counts toward the bound on what leet keeps of remote runs.
struct Kept {
    used: std::time::SystemTime,
    size: u64,
    path: PathBuf,
    /// The lock file claiming it ([`claim`]), for a run's `.wandb` folder.
    lock: Option<PathBuf>,
}

/// Remove the least recently used folders of `cache` (download cache entries,
/// used when their `used` file was touched) and of `runs` (the folders [`claim`]
/// hands out, used when a file in them was last written) while both together are
/// over `limit` bytes. A run folder whose lock another process (or this one)
/// holds is being viewed and is never removed; the lock is held while one is
/// removed, so no process claims it meanwhile. Lock files stay: empty, one per
/// folder name, and a lock file removed while another process opens it would let
/// two processes claim one folder.
pub(crate) fn evict(cache: &Path, used: &str, runs: Option<&Path>, limit: u64) {
    let mut kept: Vec<Kept> = Vec::new();
    for e in fs::read_dir(cache).into_iter().flatten().flatten() {
        let path = e.path();
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let used = fs::metadata(path.join(used))
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        kept.push(Kept {
            used,
            size: size_of(&path, 0).0,
            path,
            lock: None,
        });
    }
    for e in runs
        .map(fs::read_dir)
        .into_iter()
        .flatten()
        .flatten()
        .flatten()
    {
        let path = e.path();
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let (size, used) = size_of(&path, 0);
        kept.push(Kept {
            used,
            size,
            lock: path.parent().map(|r| r.join(format!(".{name}.lock"))),
            path,
        });
    }
    let mut total: u64 = kept.iter().map(|k| k.size).sum();
    kept.sort_by_key(|k| k.used);
    for k in kept {
        if total <= limit {
            break;
        }
        let gone = match &k.lock {
            None => fs::remove_dir_all(&k.path).is_ok(),
            Some(lock) => {
                let mut o = fs::OpenOptions::new();
                o.create(true).truncate(false).write(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
                // Without advisory locks (not unix) no folder is known to be free.
                let free = o
                    .open(lock)
                    .ok()
                    .filter(|_| cfg!(unix))
                    .filter(|f| try_lock(f).unwrap_or(false));
                // Dropped (unlocked) only once the folder is gone.
                free.is_some() && fs::remove_dir_all(&k.path).is_ok()
            }
        };
        if gone {
            total = total.saturating_sub(k.size);
        }
    }
}

/// Deepest folder counted: a run's folder holds a workspace of run folders.
const DEPTH: u32 = 8;

/// The bytes of the files under `p` and the latest time one was written;
/// links are not followed.
fn size_of(p: &Path, depth: u32) -> (u64, std::time::SystemTime) {
    let mut size = 0u64;
    let mut used = std::time::UNIX_EPOCH;
    for e in fs::read_dir(p).into_iter().flatten().flatten() {
        let Ok(m) = e.metadata() else { continue };
        if m.is_dir() {
            if depth < DEPTH {
                let (s, u) = size_of(&e.path(), depth + 1);
                size = size.saturating_add(s);
                used = used.max(u);
            }
        } else {
            size = size.saturating_add(m.len());
            used = used.max(m.modified().unwrap_or(std::time::UNIX_EPOCH));
        }
    }
    (size, used)
}

/// The files of runs read from a server whose last look went wrong, and how.
static TROUBLE: std::sync::Mutex<Vec<(PathBuf, FollowTrouble)>> = std::sync::Mutex::new(Vec::new());

/// Note how the last look at the run read into `file` went (None: it gave all).
pub(crate) fn note(file: &Path, trouble: Option<FollowTrouble>) {
    let mut t = TROUBLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    t.retain(|(f, _)| f != file);
    if let Some(trouble) = trouble {
        t.push((file.to_owned(), trouble));
    }
}

/// What went wrong at the last look at a run read from a server: a failed
/// poll first (the run is quiet because the server does not answer, not
/// because it stopped), else the parts a server did not give.
pub fn follow_trouble() -> Option<FollowTrouble> {
    let t = TROUBLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    t.iter()
        .find(|(_, t)| t.polls_fail)
        .or_else(|| t.first())
        .map(|(_, t)| t.clone())
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
