//! A viewer's first load runs its decode workers below the event loop's priority;
//! a one-shot read (`leet inspect`, [`RunReader::read_all_parallel`]) has no loop
//! and keeps its workers at the caller's priority, so on a busy machine it is not
//! starved by every other process. Its own test binary: no other test's workers
//! are alive while the threads are looked at.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use leet::decode::event::{Events, Sink};
use leet::decode::leveldb::Skip;
use leet::decode::synth::{file_bytes, SynthSpec};
use leet::source::file::{ParallelOptions, RunReader};

/// The nice value of every thread of this process.
fn nice_of_threads() -> Vec<i64> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| {
            // A thread that exits between the listing and this read is gone: skip it.
            let stat = std::fs::read_to_string(t.ok()?.path().join("stat")).ok()?;
            // Fields after the command name (which may hold spaces): state is the
            // 3rd field of the line, nice the 19th.
            let rest = &stat[stat.rfind(')').unwrap() + 2..];
            Some(rest.split(' ').nth(16).unwrap().parse().unwrap())
        })
        .collect()
}

/// Looks at the threads while the load is under way (the workers are alive while
/// batches are folded).
#[derive(Default)]
struct Watch {
    seen: Vec<Vec<i64>>,
}

impl Sink for Watch {
    fn fold(&mut self, _: &Events) {
        if self.seen.len() < 3 {
            self.seen.push(nice_of_threads());
        }
    }
    fn at_end(&mut self, _: u64, _: Option<Skip>) {}
}

#[test]
fn one_shot_reads_keep_their_workers_at_the_callers_priority() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.wandb");
    let bytes = file_bytes(&SynthSpec {
        steps: 12_000,
        ..SynthSpec::default()
    });
    assert!(bytes.len() as u64 > ParallelOptions::default().min_len);
    std::fs::write(&path, &bytes).unwrap();
    // Compared with the nice value the test started with: under `nice -n 19` the
    // workers cannot go below the loop (they never raise their priority), and stay
    // at the test's own.
    let own = nice_of_threads()[0];
    let worker = own.max(10);

    // The viewer's kind of load: two workers, below the loop.
    let opts = ParallelOptions {
        threads: 2,
        ..ParallelOptions::default()
    };
    let mut w = Watch::default();
    RunReader::open(&path)
        .unwrap()
        .load_parallel(&opts, |ev, _| w.fold(&ev))
        .unwrap();
    assert!(!w.seen.is_empty());
    if worker > own {
        assert!(
            w.seen
                .iter()
                .any(|s| s.iter().filter(|&&n| n == worker).count() == 2),
            "the viewer's workers should run below the loop: {:?} (own {own})",
            w.seen
        );
    } else {
        assert!(
            w.seen.iter().flatten().all(|&n| n == own),
            "already niced to {own}, a worker's priority changed: {:?}",
            w.seen
        );
    }

    // The first load's workers have been joined, but a joined thread can stay listed
    // in /proc for a moment after it wakes its joiner: wait until they are gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while nice_of_threads().iter().any(|&n| n != own) {
        assert!(
            std::time::Instant::now() < deadline,
            "the viewer's niced workers never went away: {:?}",
            nice_of_threads()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }

    // A one-shot read: the same file, workers at the caller's priority.
    let mut w = Watch::default();
    RunReader::open(&path)
        .unwrap()
        .read_all_parallel(&mut w)
        .unwrap();
    assert!(!w.seen.is_empty());
    if std::thread::available_parallelism().map_or(1, usize::from) > 1 {
        assert!(
            w.seen.iter().all(|s| s.len() > 2),
            "the read was not parallel: {:?}",
            w.seen
        );
    }
    assert!(
        w.seen.iter().flatten().all(|&n| n == own),
        "a one-shot read's workers were niced: {:?} (own {own})",
        w.seen
    );
}
