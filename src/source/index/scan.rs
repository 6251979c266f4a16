//! One scan's work per run directory: a stat or two to tell a cached entry from a
//! file to read, and the reads, in parallel, told back to the scanning thread.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use super::{read_run, reread_after, stat, PROGRESS_EVERY};
use crate::msg::RunIndexEntry;

/// A run file to read: its directory, the file, its size and mtime as stated,
/// and the directory's mtime.
pub(super) struct ReadJob {
    dir: PathBuf,
    file: PathBuf,
    size: u64,
    mtime_ns: u64,
    ctime_ns: u64,
    dir_mtime_ns: u64,
    /// What an earlier scan read of it (shown while it is read again).
    prior: Option<RunIndexEntry>,
}

impl ReadJob {
    /// What a listing shows before the file is read: the earlier entry, else the
    /// directory, the id its name gives, the file's size and mtime.
    pub(super) fn placeholder(&self) -> RunIndexEntry {
        if let Some(p) = &self.prior {
            return p.clone();
        }
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // `run-20260101_000000-ID` (or `offline-run-…`): the id W&B named it by.
        let run_id = name
            .strip_prefix("offline-")
            .unwrap_or(&name)
            .strip_prefix("run-")
            .and_then(|r| r.split_once('-'))
            .map(|(_, id)| id.to_owned())
            .unwrap_or_default();
        RunIndexEntry {
            dir: self.dir.clone(),
            file: Some(self.file.clone()),
            size: self.size,
            mtime_ns: self.mtime_ns,
            dir_mtime_ns: self.dir_mtime_ns,
            run_id,
            reading: true,
            ..RunIndexEntry::default()
        }
    }

    fn read(self, now: f64) -> (RunIndexEntry, Outcome) {
        let mut e = read_run(&self.dir, &self.file, self.size, self.mtime_ns);
        e.ctime_ns = self.ctime_ns;
        e.dir_mtime_ns = self.dir_mtime_ns;
        e.read_at = now;
        // Seen before, smaller: it grew (a file copied over it would be read as
        // grown too, for one stale period at most).
        e.grown = self.prior.as_ref().is_some_and(|p| {
            p.file.as_ref() == Some(&self.file)
                && (p.size < self.size || (p.grown && p.size == self.size))
        });
        (e, Outcome::Read)
    }
}

/// Read `jobs` (each with its slot number) on up to `threads` threads (None: the
/// available parallelism), each file sequentially; `done` is called on this
/// thread as each one is read, and with None when none was for [`PROGRESS_EVERY`].
pub(super) fn read_jobs(
    jobs: Vec<(usize, ReadJob)>,
    threads: Option<usize>,
    now: f64,
    mut done: impl FnMut(Option<(usize, (RunIndexEntry, Outcome))>),
) {
    let threads = threads
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
        .clamp(1, jobs.len().max(1));
    let jobs: Vec<Mutex<Option<(usize, ReadJob)>>> =
        jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (jobs, next) = (&jobs, &next);
            s.spawn(move || {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let Some((k, job)) = job.lock().ok().and_then(|mut j| j.take()) else {
                        continue;
                    };
                    if tx.send((k, job.read(now))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        loop {
            match rx.recv_timeout(PROGRESS_EVERY) {
                Ok(out) => done(Some(out)),
                Err(mpsc::RecvTimeoutError::Timeout) => done(None),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    });
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Cached,
    /// Cached, and its directory's mtime changed: the cache needs writing.
    CachedMoved,
    Read,
    NoFile,
}

/// A run directory checked: done (cached, or no file), or its file to read.
pub(super) enum Check {
    Done(RunIndexEntry, Outcome),
    Read(ReadJob),
}

/// One run directory: its cached entry while its file's size and mtime match,
/// else its file to read.
pub(super) fn check_one(dir: PathBuf, prior: Option<RunIndexEntry>, now: f64) -> Check {
    let (_, dir_mtime_ns) = stat(&dir);
    // The directory unchanged: its file is the one cached (one stat to check it).
    let file = match &prior {
        Some(e) if e.dir_mtime_ns == dir_mtime_ns && e.file.is_some() => e.file.clone(),
        _ => crate::source::resolve::wandb_in_dir(&dir),
    };
    let Some(file) = file else {
        // A run file that is no file (a FIFO, a link in a loop) or a directory
        // that cannot be listed is a run that cannot be read, and says why: not
        // a run waiting for its file.
        let error = crate::source::resolve::why_no_run_file(&dir);
        let e = RunIndexEntry {
            dir,
            dir_mtime_ns,
            error,
            ..RunIndexEntry::default()
        };
        return Check::Done(e, Outcome::NoFile);
    };
    let (size, mtime_ns, ctime_ns) = super::stat_ctime(&file);
    match prior {
        Some(mut e)
            if e.file.as_ref() == Some(&file)
                && e.size == size
                && e.mtime_ns == mtime_ns
                && e.ctime_ns == ctime_ns
                && (size, mtime_ns) != (0, 0) =>
        {
            let moved = e.dir_mtime_ns != dir_mtime_ns;
            e.dir_mtime_ns = dir_mtime_ns;
            let o = if moved {
                Outcome::CachedMoved
            } else {
                Outcome::Cached
            };
            Check::Done(e, o)
        }
        // A run still writing grows at every scan: its file is read again at most
        // every `reread_after` (longer for bigger files), so a 1 GB live run costs
        // the index a read a minute, not one a second. Meanwhile its entry keeps
        // what was read, with the new mtime (it shows as alive).
        Some(mut e)
            if e.file.as_ref() == Some(&file)
                && size >= e.size
                && now - e.read_at < reread_after(size) =>
        {
            e.grown |= size > e.size;
            e.mtime_ns = mtime_ns;
            e.dir_mtime_ns = dir_mtime_ns;
            Check::Done(e, Outcome::Cached)
        }
        prior => Check::Read(ReadJob {
            dir,
            file,
            size,
            mtime_ns,
            ctime_ns,
            dir_mtime_ns,
            prior,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::RunStatus;
    use crate::source::index::{state_at, STALE_AFTER};
    use leet_format::synth::{run_file, RunSpec};

    fn checked(dir: &std::path::Path, prior: Option<RunIndexEntry>, now: f64) -> RunIndexEntry {
        match check_one(dir.to_owned(), prior, now) {
            Check::Done(e, _) => e,
            Check::Read(job) => job.read(now).0,
        }
    }

    #[test]
    fn a_file_seen_growing_is_alive_whatever_its_records_times_say() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("run-20260101_000000-skew0001");
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join("run-skew0001.wandb");
        // Records a week old (a writer whose clock is behind), no exit record.
        let now = 1_796_600_000.0;
        let spec = RunSpec {
            start_time: now - 7.0 * 86_400.0,
            exit_code: None,
            steps: 20,
            ..RunSpec::default()
        };
        let bytes = run_file(&spec);
        std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
        let real_now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        // First seen: a fresh mtime may be a copy's, the records say it went quiet.
        let e = checked(&dir, None, real_now);
        assert!(!e.grown);
        assert_eq!(state_at(&e, real_now, STALE_AFTER), RunStatus::Crashed);
        // Seen growing: the mtime is its sign of life.
        std::fs::write(&file, &bytes).unwrap();
        let e = checked(&dir, Some(e), real_now);
        assert!(e.grown);
        assert_eq!(state_at(&e, real_now, STALE_AFTER), RunStatus::Running);
        // Unchanged since: still alive, until it has been quiet for the stale limit.
        let e = checked(&dir, Some(e), real_now + 1.0);
        assert!(e.grown);
        assert_eq!(
            state_at(&e, real_now + 1.0, STALE_AFTER),
            RunStatus::Running
        );
        let later = real_now + STALE_AFTER + 5.0;
        assert_eq!(state_at(&e, later, STALE_AFTER), RunStatus::Crashed);
        // Replaced by a smaller file (a copy over it): not grown.
        std::fs::write(&file, &bytes[..bytes.len() / 3]).unwrap();
        let e = checked(&dir, Some(e), real_now + 2.0);
        assert!(!e.grown);
    }
}
