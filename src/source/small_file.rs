//! A small configuration file's text (the key map, the settings), read once at
//! startup: a regular file only (a FIFO, device or directory is refused, and
//! opening one cannot block), at most a cap of bytes, UTF-8.

use std::io::{self, Read as _};
use std::path::Path;

/// Why a configuration file could not be read (the cause, without its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// It cannot be opened or read (the OS's reason).
    Io(String),
    /// Not a regular file, too big, not UTF-8.
    Refused(String),
}

/// Open `path` for reading if it is a regular file: a FIFO, device, socket or
/// directory is refused (`… is a FIFO, not a regular file`), and opening one
/// never blocks (a FIFO with no writer would hold the thread for good).
///
/// # Errors
/// The OS's, or `InvalidInput` for a file that is not a regular one.
pub fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK);
    let file = opts.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}, not a regular file", file_kind(&meta)),
        ));
    }
    Ok(file)
}

/// What kind of file `m` describes, for "not a regular file".
pub(crate) fn file_kind(m: &std::fs::Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Which directory of `path` is not one (`$XDG_CONFIG_HOME/leet` a regular file):
/// the OS's "Not a directory" names no file, and `path` itself may not exist.
fn not_a_directory(path: &Path) -> Option<String> {
    let (dir, meta) = (path.ancestors().skip(1))
        .filter(|d| !d.as_os_str().is_empty())
        .find_map(|d| std::fs::metadata(d).ok().map(|m| (d, m)))?;
    let kind = if meta.is_file() {
        "a regular file"
    } else {
        file_kind(&meta)
    };
    (!meta.is_dir()).then(|| format!("{} is {kind}, not a directory", dir.display()))
}

/// The text of `path`, `what` it is named in messages ("a key map"). None when
/// it does not exist and `optional`.
///
/// # Errors
/// [`ReadError`]: the cause, without the file's name.
pub fn read_text(
    path: &Path,
    cap: u64,
    optional: bool,
    what: &str,
) -> Result<Option<String>, ReadError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    // Opening a FIFO for reading blocks until a writer comes, unless non-blocking.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK);
    let file = match opts.open(path) {
        Ok(f) => f,
        Err(e) if optional && e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            return Err(ReadError::Io(
                not_a_directory(path).unwrap_or(e.to_string()),
            ))
        }
        Err(e) => return Err(ReadError::Io(e.to_string())),
    };
    let meta = file.metadata().map_err(|e| ReadError::Io(e.to_string()))?;
    if !meta.is_file() {
        return Err(ReadError::Refused(format!(
            "{}, not a regular file; {what} must be a regular file",
            file_kind(&meta)
        )));
    }
    let limit = if cap >= 1 << 20 && cap % (1 << 20) == 0 {
        format!("{} MiB", cap >> 20)
    } else {
        format!("{cap} bytes")
    };
    let too_big =
        |len: &str| ReadError::Refused(format!("{len} bytes, over the {limit} limit for {what}"));
    if meta.len() > cap {
        return Err(too_big(&meta.len().to_string()));
    }
    // The file may grow while it is read: never more than the cap.
    let mut data = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap + 1)
        .read_to_end(&mut data)
        .map_err(|e| ReadError::Io(e.to_string()))?;
    if data.len() as u64 > cap {
        return Err(too_big(&format!("more than {cap}")));
    }
    String::from_utf8(data).map(Some).map_err(|e| {
        ReadError::Refused(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A FIFO with no writer (put where a run file was) is refused at once,
    /// naming what it is: opening it plainly blocks its thread for good.
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("run-x.wandb");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(open_regular(&path).map(|_| ()).map_err(|e| e.to_string()));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("open_regular returned");
        assert_eq!(got, Err("a FIFO, not a regular file".to_owned()));
        // A directory too; a regular file opens.
        let e = open_regular(tmp.path()).unwrap_err().to_string();
        assert_eq!(e, "a directory, not a regular file");
        let f = tmp.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        assert!(open_regular(&f).is_ok());
    }
}
