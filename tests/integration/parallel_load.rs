//! The reader's events, folded, give the run the record-by-record fold gives; and a
//! first load decoded in parallel (block ranges on several threads, stitched at the
//! seams) gives the same run as a sequential read, byte for byte in its damage,
//! whatever the damage and wherever it sits relative to the seams.

use crate::common;

use std::path::Path;

use leet::decode::leveldb::{scan, Frame, Writer, BLOCK_SIZE};
use leet::decode::pb;
use leet::decode::synth::{file_bytes, SynthSpec};
use leet::source::file::{ParallelOptions, RunReader};
use leet::store::Run;
use prost::Message as _;
use rand::{Rng, SeedableRng};

/// Everything a run shows, as text (floats by their bits).
fn fingerprint(run: &Run) -> String {
    let series = |m: &leet::store::MetricStore| {
        m.iter()
            .map(|(k, s)| {
                let pts: Vec<(u64, u64)> = s
                    .points()
                    .iter()
                    .map(|(x, y)| (x.to_bits(), y.to_bits()))
                    .collect();
                format!(
                    "{k}={}:{pts:?} {:?} {:?}",
                    s.count(),
                    s.stats(),
                    s.x_bounds()
                )
            })
            .collect::<Vec<_>>()
    };
    format!(
        "info {:?}\nconfig {}\nsummary {}\nenv {:?}\nmetrics {:?}\nother {:?}\ndefs {:?}\n\
         media {:?} {:?}\nsystem {:?}\nconsole {:?}\nexit {:?} {:?}\nstep {:?} time {:?} rows {}\n\
         damage {:?}\ncounts {:?}\nproducer {}\ntimeline {:?} {:?} {:?}\nstitch {:?}\nbreaks {:?}",
        run.info,
        serde_json::Value::Object(run.config.to_json()),
        serde_json::Value::Object(run.summary.to_json()),
        run.environment,
        series(&run.metrics),
        run.latest_other,
        run.metric_defs,
        run.media_prefixes,
        run.media,
        series(&run.system),
        run.console,
        run.exit_code,
        run.exit_runtime,
        run.last_step,
        run.last_time.map(f64::to_bits),
        run.history_rows,
        run.damage,
        run.counts,
        run.producer,
        series_of(&run.timeline.wall),
        series_of(&run.timeline.runtime),
        series(&run.timeline.by_step),
        run.stitch,
        run.breaks.spans(),
    )
}

/// One series as text: its points by their bits, its statistics.
fn series_of(s: &leet::store::Series) -> String {
    let pts: Vec<(u64, u64)> = s
        .points()
        .iter()
        .map(|(x, y)| (x.to_bits(), y.to_bits()))
        .collect();
    format!("{pts:?} {:?} {:?}", s.stats(), s.x_bounds())
}

/// Each record folded on its own, in file order (one batch per record: nothing
/// coalesced), from a one-shot scan.
fn record_by_record(data: &[u8]) -> Run {
    let mut run = Run::new();
    let end = scan(data, 0, |f| match f {
        Frame::Record { offset, payload } => run.apply(offset, &payload),
        Frame::Skip(s) => run.skip(s),
    })
    .unwrap();
    run.damage.incomplete_tail = end.pending as u64;
    run
}

/// A sequential read, one block per poll.
fn sequential(path: &Path) -> Run {
    let mut reader = RunReader::open(path).unwrap().with_chunk(BLOCK_SIZE);
    reader.finish();
    let mut run = Run::new();
    reader.read_all(&mut run).unwrap();
    run
}

/// A parallel first load cut into ranges of `blocks` blocks, on `threads` threads;
/// then the polls after it (which find nothing new).
fn parallel(path: &Path, blocks: usize, threads: usize) -> (Run, usize) {
    let opts = ParallelOptions {
        threads,
        min_len: 0,
        ..ParallelOptions::default()
    }
    .with_range(blocks * BLOCK_SIZE);
    let mut reader = RunReader::open(path).unwrap().with_chunk(BLOCK_SIZE);
    reader.finish();
    let mut run = Run::new();
    let mut batches = 0;
    let p = reader
        .load_parallel(&opts, |ev, _| {
            batches += 1;
            run.fold(&ev);
        })
        .unwrap();
    run.damage.incomplete_tail = p.pending;
    run.damage.set_open(p.open);
    assert!(!p.restarted);
    // The reader stands where a sequential read would: the next polls add nothing.
    let before = fingerprint(&run);
    reader.read_all(&mut run).unwrap();
    assert_eq!(
        fingerprint(&run),
        before,
        "{}: a poll after the load changed the run",
        path.display()
    );
    (run, batches)
}

fn check_all_ways(name: &str, path: &Path) {
    let data = std::fs::read(path).unwrap();
    let want = fingerprint(&sequential(path));
    let one = fingerprint(&record_by_record(&data));
    assert_eq!(one, want, "{name}: record by record vs sequential");
    // Ranges of 1 to 3 blocks read in one piece; 5 and 8 blocks in several
    // pieces of two blocks (a record or damage can run across pieces, and a record
    // longer than a piece can cover a range's first piece); 64 blocks is the
    // default range.
    for (blocks, threads) in [(1, 3), (2, 2), (3, 4), (5, 2), (8, 3), (64, 2)] {
        let (run, _) = parallel(path, blocks, threads);
        let got = fingerprint(&run);
        if got != want {
            let (a, b): (Vec<_>, Vec<_>) = (got.lines().collect(), want.lines().collect());
            let diff = a.iter().zip(&b).find(|(x, y)| x != y);
            panic!("{name}: parallel {blocks} blocks x {threads} threads differs: {diff:?}");
        }
    }
}

#[test]
fn every_fixture_reads_the_same_record_by_record_sequentially_and_in_parallel() {
    for (name, dir) in common::fixture_runs() {
        check_all_ways(&name, &common::wandb_file(&dir));
    }
}

fn synth_file(dir: &Path, name: &str, spec: &SynthSpec) -> (std::path::PathBuf, Vec<u8>) {
    let bytes = file_bytes(spec);
    let path = dir.join(name);
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

#[test]
fn synthetic_runs_read_the_same_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SynthSpec {
        steps: 3000,
        stats_every: 7,
        ..SynthSpec::default()
    };
    let (path, _) = synth_file(dir.path(), "synth.wandb", &spec);
    check_all_ways("synth", &path);
    let (path, _) = synth_file(
        dir.path(),
        "nosummary.wandb",
        &SynthSpec {
            steps: 2000,
            summaries: false,
            finished: false,
            ..SynthSpec::default()
        },
    );
    check_all_ways("synth without summaries", &path);
}

/// Two run files joined into one (`cat a.wandb b.wandb > c.wandb`): read as the
/// first alone, in every way, the second said to be joined on and not read.
#[test]
fn a_run_file_with_another_joined_on_reads_as_the_first_alone_in_every_way() {
    let dir = tempfile::tempdir().unwrap();
    let (_, a) = synth_file(
        dir.path(),
        "a.wandb",
        &SynthSpec {
            steps: 2500,
            finished: false,
            ..SynthSpec::default()
        },
    );
    let (_, b) = synth_file(
        dir.path(),
        "b.wandb",
        &SynthSpec {
            run_id: "other001".into(),
            steps: 4000,
            stats_every: 5,
            ..SynthSpec::default()
        },
    );
    let mut joined = a.clone();
    joined.extend_from_slice(&b);
    let path = dir.path().join("joined.wandb");
    std::fs::write(&path, &joined).unwrap();
    check_all_ways("joined", &path);
    let run = sequential(&path);
    let alone = sequential(&dir.path().join("a.wandb"));
    assert_eq!(
        run.damage.appended,
        Some(leet::decode::leveldb::Skip {
            offset: a.len() as u64,
            len: b.len() as u64,
            reason: leet::decode::leveldb::SkipReason::AppendedFile,
        })
    );
    assert_eq!(run.damage.skipped_spans, 1);
    // Everything else is the first file's, as read alone.
    let without_damage = |r: &Run| {
        let mut r = r.clone();
        r.damage = leet::store::run::DamageReport::default();
        fingerprint(&r)
    };
    assert_eq!(without_damage(&run), without_damage(&alone));
    // The joined file's header and first block cut away: told by its records
    // (numbers already read, other bytes), the same in every way.
    let mut cut = a.clone();
    cut.extend_from_slice(&b[b.len() / 3..]);
    std::fs::write(&path, &cut).unwrap();
    check_all_ways("joined without its start", &path);
    let run = sequential(&path);
    let app = run.damage.appended.expect("another file");
    assert!(
        app.offset >= a.len() as u64 && app.end() == cut.len() as u64,
        "{app:?}"
    );
    assert_eq!(without_damage(&run), without_damage(&alone));
    // A copy of the file joined to itself is no other file: its records are
    // read once, the copy's dropped as read before.
    let mut twice = a.clone();
    twice.extend_from_slice(&a);
    std::fs::write(&path, &twice).unwrap();
    check_all_ways("twice", &path);
    let run = sequential(&path);
    assert_eq!(run.damage.appended, None);
    assert!(run.damage.duplicate_bytes as usize > a.len() / 2);
    assert_eq!(without_damage(&run), without_damage(&alone));
}

/// A run of wide rows (4,000 metrics a row, each row naming them all) loaded in
/// parallel with the ranges it widens for them: fewer batches (each names its
/// keys afresh), and the run folded the same as a sequential read.
#[test]
fn a_wide_run_is_read_in_wider_ranges_and_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SynthSpec {
        steps: 100,
        metrics: 4000,
        ..SynthSpec::default()
    };
    let (path, _) = synth_file(dir.path(), "wide.wandb", &spec);
    let load = |opts: &ParallelOptions| {
        let mut reader = RunReader::open(&path).unwrap();
        reader.finish();
        let mut run = Run::new();
        let mut batches = 0;
        let p = reader
            .load_parallel(opts, |ev, _| {
                batches += 1;
                run.fold(&ev);
            })
            .unwrap();
        run.damage.incomplete_tail = p.pending;
        run.damage.set_open(p.open);
        reader.read_all(&mut run).unwrap();
        (run, batches)
    };
    let opts = ParallelOptions {
        threads: 2,
        min_len: 0,
        ..ParallelOptions::default()
    };
    let (wide, wide_batches) = load(&opts);
    let (narrow, narrow_batches) = load(&ParallelOptions {
        widen: false,
        ..opts
    });
    assert!(
        wide_batches * 2 <= narrow_batches,
        "{wide_batches} batches widened, {narrow_batches} not"
    );
    let want = fingerprint(&sequential(&path));
    assert_eq!(fingerprint(&wide), want);
    assert_eq!(fingerprint(&narrow), want);
}

/// Damage at, just before and just after block boundaries (the seams of a parallel
/// load cut into one-block ranges), zero-filled blocks, and cuts mid-record.
#[test]
fn damage_at_the_seams_is_reported_exactly_as_a_sequential_read_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SynthSpec {
        steps: 1500,
        stats_every: 5,
        ..SynthSpec::default()
    };
    let clean = file_bytes(&spec);
    assert!(clean.len() > 8 * BLOCK_SIZE);
    let path = dir.path().join("damaged.wandb");
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for k in [1, 2, 5] {
        let seam = k * BLOCK_SIZE;
        for (what, at, len) in [
            ("header at the seam", seam, 3),
            ("bytes before the seam", seam - 9, 5),
            ("bytes after the seam", seam + 20, 4),
            ("across the seam", seam - 3, 10),
        ] {
            let mut d = clean.clone();
            for b in &mut d[at..at + len] {
                *b ^= 0x5A;
            }
            cases.push((format!("{what} {k}"), d));
        }
        let mut d = clean.clone();
        d[seam..seam + BLOCK_SIZE].fill(0);
        cases.push((format!("zero block {k}"), d));
        let mut d = clean.clone();
        d[seam - BLOCK_SIZE / 2..seam + BLOCK_SIZE / 2].fill(0);
        cases.push((format!("zeros across seam {k}"), d));
        cases.push((format!("cut before seam {k}"), clean[..seam - 11].to_vec()));
        cases.push((format!("cut at seam {k}"), clean[..seam].to_vec()));
        cases.push((format!("cut after seam {k}"), clean[..seam + 13].to_vec()));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(10);
    for i in 0..12 {
        let mut d = clean.clone();
        for _ in 0..rng.random_range(1..6) {
            let at = rng.random_range(7..d.len());
            d[at] ^= rng.random_range(1..=255u8);
        }
        if i % 3 == 0 {
            let cut = rng.random_range(7..d.len());
            d.truncate(cut);
        }
        cases.push((format!("random {i}"), d));
    }
    for (name, bytes) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let seq = sequential(&path);
        if !name.starts_with("cut") && !name.starts_with("random") {
            assert!(!seq.damage.is_clean(), "{name}: the case should be damaged");
        }
        check_all_ways(&name, &path);
    }
}

/// A record longer than a range: it spans one seam, or several (whole ranges with
/// no record starting in them).
#[test]
fn records_spanning_seams_are_stitched() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = Writer::new();
    let rec = |num: i64, r: pb::record::RecordType| {
        pb::Record {
            num,
            record_type: Some(r),
            ..Default::default()
        }
        .encode_to_vec()
    };
    let mut expected = Vec::new();
    for i in 0..40i64 {
        // Lines of 100 bytes to 120 KiB: some end in the block they start in, some
        // cross one boundary, some cross three.
        let n = if i % 5 == 4 {
            120 << 10
        } else {
            100 + (i as usize * 4099) % 40_000
        };
        let text: String = (0..n).map(|j| char::from(b'a' + (j % 26) as u8)).collect();
        expected.push(text.clone());
        w.append(&rec(
            i + 1,
            pb::record::RecordType::OutputRaw(pb::OutputRawRecord {
                line: text,
                ..Default::default()
            }),
        ));
    }
    let path = dir.path().join("long.wandb");
    std::fs::write(&path, w.bytes()).unwrap();
    check_all_ways("long records", &path);
    let (run, batches) = parallel(&path, 1, 2);
    assert!(batches > 20, "{batches} batches");
    assert_eq!(run.counts.total, 40);
    assert!(run.damage.is_clean(), "{:?}", run.damage);
    // Every line reached the console (kept there cut to its line limit).
    let shown: String = run
        .console
        .lines()
        .iter()
        .map(|l| l.text.clone())
        .chain(run.console.unfinished().map(|l| l.text))
        .collect();
    for text in &expected {
        assert!(shown.contains(&text[..50]), "a line is missing");
    }
}

/// The first batch goes out before the rest of the file is decoded: with the loop
/// not taking batches, the reader has handed on one range and waits.
#[test]
fn the_first_batch_is_sent_before_the_whole_file_is_decoded() {
    use leet::msg::Msg;
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = synth_file(
        dir.path(),
        "big.wandb",
        &SynthSpec {
            steps: 60_000,
            ..SynthSpec::default()
        },
    );
    assert!(bytes.len() > 8 << 20, "{}", bytes.len());
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handle = leet::source::follow::spawn_tail_tagged(
        path.clone(),
        tx,
        leet::source::tail::TailOptions::default(),
        7,
        stop.clone(),
    );
    let next = || match rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap() {
        Msg::Tagged(7, m) => *m,
        other => panic!("{other:?}"),
    };
    assert!(matches!(next(), Msg::Opened { .. }));
    let Msg::Run(first) = next() else {
        panic!("no batch")
    };
    assert_eq!(first.file_len, bytes.len() as u64);
    assert!(
        first.read_to <= 1 << 20,
        "first batch covers {} of {} bytes",
        first.read_to,
        first.file_len
    );
    let mut run = Run::new();
    run.fold_batch(&first);
    assert!(run.history_rows > 1000, "the first batch draws a chart");
    assert!(run.history_rows < 60_000);
    // The rest follows, and adds up to the whole run.
    let mut last = first.read_to;
    while last < bytes.len() as u64 {
        let Msg::Run(b) = next() else {
            panic!("not a batch")
        };
        assert!(b.read_to >= last);
        last = b.read_to;
        run.fold_batch(&b);
        run.damage.set_open(b.open);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    drop(rx);
    handle.join().unwrap();
    assert_eq!(run.history_rows, 60_000);
    assert_eq!(fingerprint(&run), fingerprint(&sequential(&path)));
}

/// A file that shrinks during its first load: no panic, and the next poll starts
/// over from the file as it is now.
#[test]
fn a_file_shrinking_under_the_first_load_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = synth_file(
        dir.path(),
        "shrink.wandb",
        &SynthSpec {
            steps: 20_000,
            ..SynthSpec::default()
        },
    );
    let opts = ParallelOptions {
        threads: 2,
        min_len: 0,
        ..ParallelOptions::default()
    }
    .with_range(4 * BLOCK_SIZE);
    let mut reader = RunReader::open(&path).unwrap();
    reader.finish();
    let mut first = true;
    let p = reader
        .load_parallel(&opts, |_, _| {
            if first {
                first = false;
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(bytes.len() as u64 / 10)
                    .unwrap();
            }
        })
        .unwrap();
    assert!(p.more);
    let mut run = Run::new();
    let p = reader.poll(&mut run).unwrap();
    assert!(p.restarted, "the next poll says the file started over");
    reader.read_all(&mut run).unwrap();
    assert_eq!(
        fingerprint(&run),
        fingerprint(&record_by_record(&bytes[..bytes.len() / 10]))
    );
}

/// Bytes cut out, random bytes put in, and parts of the file copied into it, at
/// random offsets and of lengths that are not multiples of 32 KiB: every record
/// after them is off the block grid (and a copied record comes twice), so the
/// workers' block-aligned starts find nothing and the seams are read again from
/// the exact state. The result is still the sequential read's, byte for byte.
#[test]
fn shifted_bytes_and_duplicated_parts_read_the_same_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    let clean = file_bytes(&SynthSpec {
        steps: 1500,
        stats_every: 5,
        ..SynthSpec::default()
    });
    let path = dir.path().join("shifted.wandb");
    let mut rng = rand::rngs::StdRng::seed_from_u64(26);
    for i in 0..9 {
        let mut d = clean.clone();
        for _ in 0..rng.random_range(1..=3) {
            let at = rng.random_range(7..d.len());
            let len = loop {
                let n = rng.random_range(1..3 * BLOCK_SIZE);
                if n % BLOCK_SIZE != 0 {
                    break n.min(d.len() - at);
                }
            };
            match i % 3 {
                0 => {
                    d.drain(at..at + len);
                }
                1 => {
                    let junk: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                    d.splice(at..at, junk);
                }
                _ => {
                    let from = rng.random_range(7..d.len() - len);
                    let copy = d[from..from + len].to_vec();
                    d.splice(at..at, copy);
                }
            }
        }
        std::fs::write(&path, &d).unwrap();
        let seq = sequential(&path);
        assert!(
            !seq.damage.is_clean(),
            "case {i}: the case should be damaged"
        );
        check_all_ways(&format!("shifted {i}"), &path);
    }
}

/// Whole blocks duplicated, swapped and moved (every chunk stays on the grid with
/// its checksum, so a record's first chunk meets another's last at each edit):
/// the parallel load reads what the sequential read does, seams and all.
#[test]
fn whole_blocks_moved_read_the_same_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    // Records of a few KiB, so most blocks end inside one.
    let clean = file_bytes(&SynthSpec {
        steps: 400,
        metrics: 200,
        ..SynthSpec::default()
    });
    let blocks = clean.len() / BLOCK_SIZE;
    assert!(blocks >= 8, "{blocks} blocks");
    let block = |k: usize| clean[k * BLOCK_SIZE..(k + 1) * BLOCK_SIZE].to_vec();
    let path = dir.path().join("moved.wandb");
    for k in [1, blocks / 2, blocks - 2] {
        let (a, b) = (k * BLOCK_SIZE, (k + 1) * BLOCK_SIZE);
        let duplicated = [&clean[..b], &block(k)[..], &clean[b..]].concat();
        let swapped = [
            &clean[..a],
            &block(k + 1)[..],
            &block(k)[..],
            &clean[b + BLOCK_SIZE..],
        ]
        .concat();
        let moved = [&clean[..a], &clean[b..], &block(k)[..]].concat();
        for (what, d) in [
            ("duplicated", duplicated),
            ("swapped", swapped),
            ("moved to the end", moved),
        ] {
            std::fs::write(&path, &d).unwrap();
            assert!(!sequential(&path).damage.is_clean(), "block {k} {what}");
            check_all_ways(&format!("block {k} {what}"), &path);
        }
    }
}

/// Random runs (rows of 1 to 12 metrics, with or without summaries and stats, a
/// metric now and then that starts late), damaged at random (bytes flipped, a span
/// zeroed, the file cut), read in parallel in random ranges (down to one block, so
/// seams are everywhere) on 1 to 4 threads: the parallel load folds into the run
/// the sequential read gives, in every series' points and statistics.
#[test]
fn random_runs_damage_and_ranges_fold_the_same_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("random.wandb");
    let mut rng = rand::rngs::StdRng::seed_from_u64(37);
    let mut batches = 0;
    for case in 0..24 {
        let spec = SynthSpec {
            steps: rng.random_range(200..2500),
            metrics: rng.random_range(1..=12),
            summaries: rng.random_bool(0.5),
            stats_every: [0, 3, 50][rng.random_range(0..3)],
            finished: rng.random_bool(0.5),
            ..SynthSpec::default()
        };
        let mut d = file_bytes(&spec);
        if case % 4 == 3 {
            // A metric that only later rows log: its series is created mid-file.
            d = late_metric(&spec, rng.random_range(1..spec.steps));
        }
        match case % 6 {
            0 | 3 => {}
            1 => {
                for _ in 0..rng.random_range(1..5) {
                    let at = rng.random_range(7..d.len());
                    d[at] ^= rng.random_range(1..=255u8);
                }
            }
            2 => {
                let at = rng.random_range(7..d.len());
                let len = rng.random_range(1..2 * BLOCK_SIZE).min(d.len() - at);
                d[at..at + len].fill(0);
            }
            4 => {
                let cut = rng.random_range(7..d.len());
                d.truncate(cut);
            }
            _ => {
                let at = rng.random_range(7..d.len());
                d[at] ^= 0x41;
                let cut = rng.random_range(at..d.len());
                d.truncate(cut.max(at + 1));
            }
        }
        std::fs::write(&path, &d).unwrap();
        let want = fingerprint(&sequential(&path));
        for _ in 0..2 {
            let blocks = rng.random_range(1..=6);
            let threads = rng.random_range(1..=4);
            let (run, n) = parallel(&path, blocks, threads);
            batches += n;
            let got = fingerprint(&run);
            if got != want {
                let (a, b): (Vec<_>, Vec<_>) = (got.lines().collect(), want.lines().collect());
                let diff = a.iter().zip(&b).find(|(x, y)| x != y);
                panic!("case {case} ({spec:?}), {blocks} blocks x {threads} threads: {diff:?}");
            }
        }
    }
    // Cut in many ranges: seams were crossed everywhere.
    assert!(batches > 200, "too few ranges: {batches}");
}

/// A synthetic run whose rows from `from` on log one more metric, `late`.
fn late_metric(spec: &SynthSpec, from: u64) -> Vec<u8> {
    let mut w = Writer::new();
    let plain = file_bytes(spec);
    let mut records = Vec::new();
    scan(&plain, 0, |f| {
        if let Frame::Record { payload, .. } = f {
            records.push(payload.to_vec());
        }
    })
    .unwrap();
    for payload in records {
        let mut rec = pb::Record::decode(payload.as_slice()).unwrap();
        if let Some(pb::record::RecordType::History(h)) = &mut rec.record_type {
            let step = h.step.as_ref().map_or(0, |s| s.num);
            if u64::try_from(step).unwrap_or(0) >= from {
                h.item.push(pb::HistoryItem {
                    nested_key: vec!["late".into()],
                    value_json: format!("{}", step as f64 * 0.5),
                    ..Default::default()
                });
            }
        }
        w.append(&rec.encode_to_vec());
    }
    w.bytes().to_vec()
}
