//! The settings file's bytes: read once at startup (before the terminal changes),
//! written by the runtime when a setting changes and on quit, each time merged
//! under a lock into the file as it is then. What the text means is
//! `ui::settings`'s business.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use leet_text::sanitize_path;

/// `$XDG_CONFIG_HOME/leet/config.toml`, else `$HOME/.config/leet/config.toml`.
#[must_use]
pub fn default_path() -> Option<PathBuf> {
    config_dir().map(|d| d.join("config.toml"))
}

/// leet's configuration directory (its settings and key map):
/// `$XDG_CONFIG_HOME/leet` when that is absolute (the XDG spec ignores a
/// relative or empty one, as for the state and the cache), else
/// `$HOME/.config/leet`. None without either.
#[must_use]
pub fn config_dir() -> Option<PathBuf> {
    super::index::xdg_dir_from(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
        ".config",
    )
}

pub use super::small_file::ReadError;

/// The text of the settings file: a regular file of at most `cap` bytes, UTF-8.
/// None when `path` does not exist and `optional`.
///
/// # Errors
/// [`ReadError`]: the cause, without the file's name.
pub fn read(path: &Path, cap: u64, optional: bool) -> Result<Option<String>, ReadError> {
    super::small_file::read_text(path, cap, optional, "the settings")
}

/// The newest save written by each writer of this process (an `App`), by file
/// (as named by the caller).
static WRITTEN: Mutex<BTreeMap<(PathBuf, u64), u64>> = Mutex::new(BTreeMap::new());

/// Save the settings file `path` as `merge` makes it from the file's text as it
/// is now (None: there is none), the file's directory created as needed. Another
/// leet may write the file too: its text is read and written under a lock, so
/// each one's changes are laid over the other's. `merge` answering None writes
/// nothing (the file now says not to). See [`merge_save`] for the numbering,
/// links and modes.
///
/// # Errors
/// The file cannot be read ([`read`]'s refusals included), `merge` refuses it,
/// or it cannot be written.
pub fn save(
    path: &Path,
    cap: u64,
    (writer, generation): (u64, u64),
    merge: impl FnOnce(Option<&str>) -> Result<Option<String>, String>,
) -> io::Result<()> {
    // A link may name a file in a directory not made yet (dotfiles not set up).
    let target = resolve_links(path)?;
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    merge_save(path, (writer, generation), |target| {
        let now = read(target, cap, true).map_err(|e| match e {
            ReadError::Io(r) | ReadError::Refused(r) => io::Error::other(r),
        })?;
        let text = merge(now.as_deref()).map_err(io::Error::other)?;
        Ok(text.map(String::into_bytes))
    })
}

/// Replace `path` with what `merge` makes of the file it names (its links
/// followed: see [`resolve_links`]), under an exclusive lock on a file beside
/// it ([`lock_beside`]), so another process's read-merge-write is not
/// interleaved with this one's; written by [`write_through`]. Saves are numbered
/// by writer: one at or below the number that writer last wrote to `path` is
/// skipped (a queued save never undoes the one written on quit).
///
/// # Errors
/// A link that cannot be followed, the lock, `merge`'s, the write's.
pub(crate) fn merge_save(
    path: &Path,
    (writer, generation): (u64, u64),
    merge: impl FnOnce(&Path) -> io::Result<Option<Vec<u8>>>,
) -> io::Result<()> {
    let mut written = WRITTEN.lock().unwrap_or_else(PoisonError::into_inner);
    let key = (path.to_owned(), writer);
    if written.get(&key).is_some_and(|&last| generation <= last) {
        return Ok(());
    }
    let target = resolve_links(path)?;
    let _lock = lock_beside(&target)?;
    if let Some(data) = merge(&target)? {
        write_through(&target, &data)?;
    }
    written.insert(key, generation);
    Ok(())
}

/// `path` with its last component's symbolic links followed (a dotfiles link to
/// a file elsewhere): the file a save must replace, keeping the link.
///
/// # Errors
/// A link that cannot be read, or a loop of links.
pub(crate) fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    // As many links as the kernel follows before ELOOP.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other(format!(
        "{}: too many levels of symbolic links",
        sanitize_path(path)
    )))
}

/// An exclusive advisory lock on `<file>.lock` (created beside `file`, 0600),
/// held until the returned file is dropped. Every leet writing `file` takes it
/// first, so a read-merge-write is not interleaved with another's.
///
/// # Errors
/// The lock file cannot be created or locked.
pub(crate) fn lock_beside(file: &Path) -> io::Result<File> {
    let mut name = file.as_os_str().to_owned();
    name.push(".lock");
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    // A FIFO there must not block the open (nothing reads it): refused, named.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK);
    let name = PathBuf::from(name);
    let not_regular = |meta: &std::fs::Metadata| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "its lock file {} is {}, not a regular file",
                sanitize_path(&name),
                super::small_file::file_kind(meta)
            ),
        )
    };
    if let Some(meta) = std::fs::metadata(&name).ok().filter(|m| !m.is_file()) {
        return Err(not_regular(&meta));
    }
    let f = opts.open(&name)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    #[cfg(unix)]
    loop {
        use std::os::fd::AsRawFd as _;
        // SAFETY: `f` is an open file for the whole call; flock only reads its fd.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(f)
}

/// Replace `file` (no link: see [`resolve_links`]) with `data` atomically: a
/// temporary file beside it, given the old file's permissions (a 0600 file stays
/// 0600), synced, then renamed over it. A failure leaves the old file whole and
/// no temporary file behind.
///
/// # Errors
/// Creating, writing or renaming the temporary file.
pub(crate) fn write_through(file: &Path, data: &[u8]) -> io::Result<()> {
    super::index::cache::write_atomic(file, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO as the lock file (nothing reads it) is refused at once: opening
    /// it to write blocked the save, and quitting waited on it for good.
    #[cfg(unix)]
    #[test]
    fn a_fifo_as_the_lock_file_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("workspace.json");
        let lock = dir.path().join("workspace.json.lock");
        let c = std::ffi::CString::new(lock.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(lock_beside(&file).map(|_| ()).map_err(|e| e.to_string()));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("lock_beside returned");
        let e = got.unwrap_err();
        assert!(
            e.contains("workspace.json.lock is a FIFO, not a regular file"),
            "{e}"
        );
        // A directory there: said.
        let file = dir.path().join("other.json");
        std::fs::create_dir(dir.path().join("other.json.lock")).expect("dir");
        assert!(lock_beside(&file).is_err());
    }

    #[test]
    fn a_missing_optional_file_is_none_and_others_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("config.toml");
        assert_eq!(read(&p, 100, true), Ok(None));
        assert!(matches!(read(&p, 100, false), Err(ReadError::Io(_))));
        assert!(matches!(
            read(dir.path(), 100, true),
            Err(ReadError::Refused(r)) if r.contains("a directory")
        ));
        std::fs::write(&p, "x".repeat(101)).expect("write");
        assert!(matches!(
            read(&p, 100, true),
            Err(ReadError::Refused(r)) if r.contains("101 bytes")
        ));
        std::fs::write(&p, b"a\xffb").expect("write");
        assert!(matches!(
            read(&p, 100, true),
            Err(ReadError::Refused(r)) if r.contains("offset 1")
        ));
        std::fs::write(&p, "rows = 2\n").expect("write");
        assert_eq!(read(&p, 100, true), Ok(Some("rows = 2\n".into())));
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_to_a_file_made_where_they_point_and_a_loop_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink("dotfiles/leet/config.toml", &link).expect("link");
        let put = |_: Option<&str>| Ok(Some("rows = 2\n".to_owned()));
        save(&link, 100, (7, 1), put).expect("save");
        assert!(std::fs::symlink_metadata(&link).expect("stat").is_symlink());
        let target = dir.path().join("dotfiles/leet/config.toml");
        assert_eq!(std::fs::read_to_string(target).expect("read"), "rows = 2\n");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::os::unix::fs::symlink(&b, &a).expect("link");
        std::os::unix::fs::symlink(&a, &b).expect("link");
        let e = save(&a, 100, (7, 1), put).expect_err("a loop");
        assert!(e.to_string().contains("too many levels"), "{e}");
    }

    #[test]
    fn an_older_save_never_replaces_a_newer_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("sub/dir/config.toml");
        let base = 0;
        let put = |t: &'static str| move |_: Option<&str>| Ok(Some(t.to_owned()));
        save(&p, 100, (1, base + 2), put("new")).expect("save");
        save(&p, 100, (1, base + 1), put("old")).expect("save");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "new");
        // Another writer's numbers are its own.
        save(&p, 100, (2, base + 1), put("other")).expect("save");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "other");
        save(&p, 100, (1, base + 3), put("newer")).expect("save");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "newer");
    }
}
