//! The tail thread: a big file arrives in several batches (so the first frame is
//! drawn while the rest loads), with progress; nothing is read twice.

use std::sync::mpsc;
use std::time::Duration;

use leet::decode::leveldb::Writer;
use leet::decode::pb;
use leet::msg::Msg;
use leet::source::follow::spawn_tail;
use leet::source::tail::TailOptions;
use leet::ui::{App, Options};
use prost::Message as _;

fn history(i: i64) -> Vec<u8> {
    pb::Record {
        num: i + 1,
        record_type: Some(pb::record::RecordType::History(pb::HistoryRecord {
            item: vec![
                pb::HistoryItem {
                    key: "loss".into(),
                    value_json: format!("{}", 1.0 / (1.0 + i as f64)),
                    ..Default::default()
                },
                pb::HistoryItem {
                    key: "_step".into(),
                    value_json: i.to_string(),
                    ..Default::default()
                },
            ],
            step: Some(pb::HistoryStep { num: i }),
            ..Default::default()
        })),
        ..Default::default()
    }
    .encode_to_vec()
}

#[test]
fn big_file_loads_in_batches_with_progress() {
    let mut w = Writer::new();
    let n = 100_000;
    for i in 0..n {
        w.append(&history(i));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-big.wandb");
    std::fs::write(&path, w.bytes()).unwrap();
    let len = w.bytes().len() as u64;

    let (tx, rx) = mpsc::sync_channel(4);
    spawn_tail(
        path,
        tx,
        TailOptions {
            chunk: 1 << 20,
            poll: Duration::from_millis(50),
        },
    );
    let mut app = App::new(Options::default());
    let mut batches = 0;
    let mut first_progress = None;
    while app.shown.source.read_to < len || batches == 0 {
        let m = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        if matches!(m, Msg::Run(_)) {
            batches += 1;
        }
        app.update(m);
        if batches == 1 && first_progress.is_none() {
            first_progress = Some((
                app.shown.source.read_to,
                app.shown.source.file_len,
                app.shown.source.loading(),
            ));
            // An old file without its exit record read yet is loading, not "crashed?".
            app.update(Msg::Tick(leet::source::tail::unix_now() + 1e6));
            assert_eq!(app.live_state(), leet::ui::LiveState::Loading);
        }
    }
    let (read, total, loading) = first_progress.unwrap();
    assert!(loading && read < total && total == len, "{read}/{total}");
    assert!(batches >= 3, "{batches}");
    assert!(!app.shown.source.loading());
    assert_eq!(app.shown.run.history_rows, u64::try_from(n).unwrap());
    assert_eq!(app.shown.run.step(), n - 1);
    assert_eq!(app.shown.run.counts.total, u64::try_from(n).unwrap());
}

// ---------------------------------------------------------------------------------
// Follow equals a one-shot read: the same bytes give the same records and the same
// damage report however they arrive.

use crate::common;

use leet::decode::leveldb::{scan, Frame, Scanner, Skip, BLOCK_SIZE};
use leet::store::Run;
use rand::{Rng, SeedableRng};

/// Records (offset, payload) and finished damaged spans.
type Frames = (Vec<(u64, Vec<u8>)>, Vec<Skip>);

/// What a reader reports after some bytes: frames, the run's damage report, and the
/// incomplete tail.
#[derive(Debug, PartialEq)]
struct Report {
    frames: Frames,
    spans: Vec<Skip>,
    skipped_spans: u64,
    skipped_bytes: u64,
    bad_records: u64,
    pending: usize,
}

/// Hand a frame on; into `run` too when there is one (decoding records into a run
/// costs far more than framing them, so most cuts check the frames alone).
fn fold(run: &mut Option<Run>, frames: &mut Frames, f: Frame<'_>) {
    match f {
        Frame::Record { offset, payload } => {
            if let Some(run) = run {
                run.apply(offset, &payload);
            }
            frames.0.push((offset, payload.into_owned()));
        }
        Frame::Skip(s) => {
            if let Some(run) = run {
                run.skip(s);
            }
            frames.1.push(s);
        }
    }
}

fn report(frames: Frames, run: Option<&Run>, pending: usize) -> Report {
    let d = run.map(|r| r.damage.clone()).unwrap_or_default();
    Report {
        frames,
        spans: d.skips,
        skipped_spans: d.skipped_spans,
        skipped_bytes: d.skipped_bytes,
        bad_records: d.bad_records,
        pending,
    }
}

/// All of `data` read at once, as `leet inspect` does.
fn one_shot(data: &[u8], with_run: bool) -> Report {
    let mut run = with_run.then(Run::new);
    let mut frames = Frames::default();
    let end = scan(data, 0, |f| fold(&mut run, &mut frames, f)).unwrap();
    report(frames, run.as_ref(), end.pending)
}

/// `data` read as a live file (more may come) in two pieces: the damage so far,
/// with the open span.
fn one_shot_live(data: &[u8], with_run: bool) -> Report {
    let mut f = Follower::new(with_run);
    let half = data.len() / 2;
    f.feed(&data[..half]);
    f.feed(&data[half..]);
    f.so_far()
}

/// A follower that has been handed some pieces and keeps what it has not consumed,
/// as the tail does (the damage so far includes the span still open).
struct Follower {
    scanner: Scanner,
    buf: Vec<u8>,
    run: Option<Run>,
    frames: Frames,
    pending: usize,
}

impl Follower {
    fn new(with_run: bool) -> Self {
        Follower {
            scanner: Scanner::new(),
            buf: Vec::new(),
            run: with_run.then(Run::new),
            frames: Frames::default(),
            pending: 0,
        }
    }

    fn feed(&mut self, piece: &[u8]) {
        self.buf.extend_from_slice(piece);
        let (run, frames) = (&mut self.run, &mut self.frames);
        let end = self
            .scanner
            .scan(&self.buf, |f| fold(run, frames, f))
            .unwrap();
        self.buf.drain(..end.consumed);
        self.pending = end.pending;
        if let Some(run) = &mut self.run {
            run.damage.set_open(self.scanner.open_skip());
        }
    }

    /// The damage so far, as the TUI shows it: finished spans plus the open one.
    fn so_far(&self) -> Report {
        let mut frames = self.frames.clone();
        frames.1.extend(self.scanner.open_skip());
        report(frames, self.run.as_ref(), self.pending)
    }

    /// The file is complete: what is left is read as its last bytes.
    fn finish(mut self) -> Report {
        let (run, frames) = (&mut self.run, &mut self.frames);
        let end = self
            .scanner
            .scan_last(&self.buf, |f| fold(run, frames, f))
            .unwrap();
        self.pending = end.pending;
        if let Some(run) = &mut self.run {
            run.damage.set_open(None);
        }
        report(self.frames, self.run.as_ref(), self.pending)
    }
}

/// Feed `data` cut at `cut`, then the rest in random pieces; check the report after
/// the first piece (the damage of those bytes so far) and at the end. `whole` is
/// the one-shot report of `data`, with the run's damage report when `with_run`.
fn check_follow(
    name: &str,
    data: &[u8],
    whole: &Report,
    cut: usize,
    with_run: bool,
    rng: &mut impl Rng,
) {
    let mut f = Follower::new(with_run);
    f.feed(&data[..cut]);
    assert_eq!(
        f.so_far(),
        one_shot_live(&data[..cut], with_run),
        "{name}: after {cut} bytes"
    );
    let mut at = cut;
    while at < data.len() {
        let n = rng
            .random_range(1..=(data.len() / 8).max(64))
            .min(data.len() - at);
        f.feed(&data[at..at + n]);
        at += n;
    }
    assert_eq!(
        &f.finish(),
        whole,
        "{name}: cut at {cut}, then random pieces"
    );
}

/// A fixture's `.wandb` file by fixture name.
fn fixture(name: &str) -> Vec<u8> {
    let (_, dir) = common::fixture_runs()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap();
    std::fs::read(common::wandb_file(&dir)).unwrap()
}

/// Offsets of the chunk headers that start records in a clean file.
fn record_offsets(clean: &[u8]) -> Vec<usize> {
    one_shot(clean, false)
        .frames
        .0
        .iter()
        .map(|(o, _)| usize::try_from(*o).unwrap())
        .collect()
}

fn set_len(d: &mut [u8], chunk: usize, len: u16) {
    d[chunk + 4..chunk + 6].copy_from_slice(&len.to_le_bytes());
}

/// Damaged copies of a clean fixture: flipped bytes, a zeroed region, a huge length
/// field (first chunk, and one further on), a truncated tail (with damage before it).
fn damaged_variants(clean: &[u8], seed: u64) -> Vec<(String, Vec<u8>)> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let recs = record_offsets(clean);
    let n = clean.len();
    let mut out = Vec::new();

    let mut d = clean.to_vec();
    for _ in 0..3 {
        let at = rng.random_range(7..n);
        d[at] ^= 1 << rng.random_range(0..8);
    }
    out.push(("flipped bytes".to_owned(), d));

    let mut d = clean.to_vec();
    let lo = rng.random_range(7..n - 1);
    let hi = (lo + rng.random_range(200..1200)).min(n);
    d[lo..hi].fill(0);
    out.push((format!("zeroed {lo}..{hi}"), d));

    let mut d = clean.to_vec();
    set_len(&mut d, 7, u16::MAX);
    out.push(("first chunk claims 65535 bytes".to_owned(), d));

    let mut d = clean.to_vec();
    let mid = recs[recs.len() / 2];
    set_len(&mut d, mid, u16::MAX);
    out.push((format!("chunk at {mid} claims 65535 bytes"), d));

    let mut d = clean[..n * 2 / 3].to_vec();
    let at = rng.random_range(7..d.len() / 2);
    d[at] ^= 0x5A;
    out.push((format!("truncated at {}, byte {at} flipped", n * 2 / 3), d));
    out
}

#[test]
fn every_cut_of_a_small_damaged_fixture_followed_in_random_pieces_equals_one_shot() {
    // A 4 KB real run: every cut point of each damaged copy.
    let clean = fixture("multi.offline-run-20261130_175131-multi001");
    assert!(clean.len() < 20_000);
    let mut rng = rand::rngs::StdRng::seed_from_u64(8);
    for (what, data) in damaged_variants(&clean, 1) {
        let frames = one_shot(&data, false);
        let with_run = one_shot(&data, true);
        assert!(
            !frames.frames.1.is_empty() || frames.pending > 0,
            "{what}: the damage shows"
        );
        for cut in common::tier::positions(data.len()) {
            // The run's damage report on every 50th cut, the framing on all.
            if cut % 50 == 0 {
                check_follow(&what, &data, &with_run, cut, true, &mut rng);
            } else {
                check_follow(&what, &data, &frames, cut, false, &mut rng);
            }
        }
    }
}

#[test]
fn cuts_of_a_multi_block_damaged_fixture_followed_in_random_pieces_equal_one_shot() {
    // A 96 KB real run (three blocks; it ends mid-record): damage across block
    // boundaries, where recovery skips bytes that have not arrived yet. Cuts: every
    // offset near each block boundary and each damage edge, and a random sample.
    let clean = fixture("crashed");
    assert!(clean.len() > 2 * BLOCK_SIZE);
    let recs = record_offsets(&clean);
    let in_block1 = *recs.iter().find(|&&o| o > BLOCK_SIZE + 100).unwrap();
    let mut variants = damaged_variants(&clean, 2);
    let mut d = clean.clone();
    d[BLOCK_SIZE - 700..BLOCK_SIZE + 900].fill(0);
    variants.push(("zeroed across block 0/1".to_owned(), d));
    let mut d = clean.clone();
    set_len(&mut d, in_block1, u16::MAX);
    d[2 * BLOCK_SIZE + 10] ^= 0x10;
    variants.push((
        format!("chunk at {in_block1} claims 65535 bytes, a flip in block 2"),
        d,
    ));
    let mut d = clean.clone();
    d[BLOCK_SIZE..2 * BLOCK_SIZE + 40].fill(0);
    variants.push(("zeroed block 1 and into block 2".to_owned(), d));

    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for (what, data) in &variants {
        let frames = one_shot(data, false);
        let with_run = one_shot(data, true);
        // Where the damage starts and ends, and the block boundaries.
        let mut edges: Vec<usize> = vec![0, 7, BLOCK_SIZE, 2 * BLOCK_SIZE, data.len()];
        for s in &frames.frames.1 {
            edges.push(usize::try_from(s.offset).unwrap());
            edges.push(usize::try_from(s.end()).unwrap());
        }
        let mut cuts: Vec<usize> = edges
            .iter()
            .flat_map(|&e| e.saturating_sub(4)..(e + 5).min(data.len() + 1))
            .collect();
        cuts.extend((0..20).map(|_| rng.random_range(0..=data.len())));
        cuts.sort_unstable();
        cuts.dedup();
        for (i, &cut) in cuts.iter().enumerate() {
            if i % 16 == 0 {
                check_follow(what, data, &with_run, cut, true, &mut rng);
            } else {
                check_follow(what, data, &frames, cut, false, &mut rng);
            }
        }
    }
}

/// A 1.3 MB run with damage that runs on across many reads: six zeroed blocks, a
/// chunk too long for its block, flipped bytes in two blocks in a row, and a damaged
/// last record (damage up to the end of the file).
fn long_damaged_run() -> Vec<u8> {
    let mut w = Writer::new();
    for i in 0..20_000 {
        w.append(&history(i));
    }
    let mut d = w.into_bytes();
    let b = BLOCK_SIZE;
    d[3 * b + 100..9 * b + 50].fill(0);
    let recs = record_offsets(&d);
    let at = *recs.iter().find(|&&o| o > 12 * b + 300).unwrap();
    set_len(&mut d, at, u16::MAX);
    d[15 * b + 5000] ^= 0x01;
    d[16 * b + 20] ^= 0x80;
    let last = *recs.last().unwrap();
    d[last + 9] ^= 0xFF;
    d
}

#[test]
fn the_tui_reports_the_damage_of_a_one_shot_read_whatever_the_read_size() {
    let data = long_damaged_run();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-damaged.wandb");
    std::fs::write(&path, &data).unwrap();
    let len = data.len() as u64;
    let (_, whole) = leet::store::load(&path).unwrap();
    let want = leet::inspect::damage_json(&whole.damage);
    // One span per damaged region, as `inspect` reports: none past the end. The
    // bytes flipped in two blocks in a row are two spans (the records between
    // them are read).
    assert_eq!(whole.damage.skipped_spans, 5, "{want}");
    assert_eq!(whole.damage.skips.last().unwrap().end(), len, "{want}");
    assert_eq!(
        whole.damage.skipped_bytes,
        whole.damage.skips.iter().map(|s| s.len).sum::<u64>()
    );
    for chunk in [BLOCK_SIZE, BLOCK_SIZE + 1000, 3 * BLOCK_SIZE - 7, 2 << 20] {
        let (tx, rx) = mpsc::sync_channel(4);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        leet::source::follow::spawn_tail_tagged(
            path.clone(),
            tx,
            TailOptions {
                chunk,
                poll: Duration::from_millis(50),
            },
            1,
            stop.clone(),
        );
        let mut app = App::new(Options::default());
        let mut batches = 0;
        while app.shown.source.read_to < len || app.shown.source.file_len == 0 {
            let m = rx.recv_timeout(Duration::from_secs(20)).unwrap();
            let Msg::Tagged(_, m) = m else { continue };
            if matches!(*m, Msg::Run(_)) {
                batches += 1;
            }
            app.update(*m);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(
            batches > 1 || chunk > data.len(),
            "chunk {chunk}: {batches}"
        );
        let got = leet::inspect::damage_json(&app.shown.run.damage);
        assert_eq!(got, want, "chunk {chunk}, {batches} batches");
        assert_eq!(app.shown.run.counts, whole.counts, "chunk {chunk}");
    }
}

/// The damage lines of `leet inspect` stderr: "skipped N bytes at offset O: reason"
/// as (offset, len, reason), and the totals line's (spans, bytes).
/// (offset, len, reason) of a damaged span as `inspect` prints it.
type SpanLine = (u64, u64, String);

fn damage_lines(stderr: &str) -> (Vec<SpanLine>, Option<(u64, u64)>) {
    let mut spans = Vec::new();
    let mut totals = None;
    for l in stderr.lines() {
        if let Some((_, rest)) = l.split_once(": skipped ") {
            let w: Vec<&str> = rest.split(' ').collect();
            if w.get(1) == Some(&"bytes") && w.get(3) == Some(&"offset") {
                let reason = rest.split_once(": ").unwrap().1.to_owned();
                let off = w[4].trim_end_matches(':').parse().unwrap();
                spans.push((off, w[0].parse().unwrap(), reason));
            } else if w.get(1) == Some(&"damaged") {
                totals = Some((w[0].parse().unwrap(), w[3].parse().unwrap()));
            }
        }
    }
    (spans, totals)
}

fn leet() -> std::process::Command {
    crate::common::isolated::leet()
}

#[test]
fn inspect_follow_of_a_file_written_in_pieces_equals_inspect_of_the_whole_file() {
    // The case (the first chunk claims 65535 bytes; the file arrives as its
    // first 1,041 or 5,000 bytes, then the rest), and damage across blocks arriving
    // in random pieces.
    let clean = fixture("crashed");
    let mut first = clean.clone();
    set_len(&mut first, 7, u16::MAX);
    let mut across = clean.clone();
    across[BLOCK_SIZE - 700..BLOCK_SIZE + 900].fill(0);
    across[2 * BLOCK_SIZE + 10] ^= 0x10;
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let random: Vec<usize> = {
        let mut c: Vec<usize> = (0..12).map(|_| rng.random_range(1..across.len())).collect();
        c.sort_unstable();
        c
    };
    let cases: [(&str, &[u8], Vec<usize>); 3] = [
        ("65535 at 7, cut at 1041", &first, vec![1041]),
        ("65535 at 7, cut at 5000", &first, vec![5000]),
        ("zeroed across blocks, random pieces", &across, random),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, data, cuts) in cases {
        let whole = dir.path().join("whole.wandb");
        std::fs::write(&whole, data).unwrap();
        let once = leet()
            .args(["inspect", "--json"])
            .arg(&whole)
            .output()
            .unwrap();
        assert!(once.status.success(), "{name}");
        let summary = leet()
            .args(["inspect", "--summary", "--json"])
            .arg(&whole)
            .output()
            .unwrap();
        let summary: serde_json::Value = serde_json::from_slice(&summary.stdout).unwrap();
        let corruption = &summary["corruption"];
        assert!(corruption["skipped_spans"].as_u64().unwrap() >= 1, "{name}");

        let growing = dir.path().join("growing.wandb");
        std::fs::write(&growing, &data[..cuts[0]]).unwrap();
        let child = leet()
            .args(["inspect", "--json", "--follow", "--idle-timeout", "2"])
            .arg(&growing)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Each piece is read on its own (the follow polls every 50 ms).
        std::thread::sleep(Duration::from_millis(400));
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&growing)
            .unwrap();
        for w in cuts
            .windows(2)
            .map(|w| (w[0], w[1]))
            .chain([(*cuts.last().unwrap(), data.len())])
        {
            std::io::Write::write_all(&mut f, &data[w.0..w.1]).unwrap();
            std::thread::sleep(Duration::from_millis(100));
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{name}");
        let (a, b) = (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(once.stdout).unwrap(),
        );
        assert_eq!(a.lines().count(), b.lines().count(), "{name}: records");
        assert!(a == b, "{name}: the records differ");
        let (spans, totals) = damage_lines(&String::from_utf8(out.stderr).unwrap());
        let want: Vec<SpanLine> = corruption["spans"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["offset"].as_u64().unwrap(),
                    s["len"].as_u64().unwrap(),
                    s["reason"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(spans, want, "{name}: damaged spans");
        assert_eq!(
            totals,
            Some((
                corruption["skipped_spans"].as_u64().unwrap(),
                corruption["skipped_bytes"].as_u64().unwrap()
            )),
            "{name}: totals"
        );
        let (once_spans, _) = damage_lines(&String::from_utf8(once.stderr).unwrap());
        assert_eq!(spans, once_spans, "{name}: as `inspect` reports them");
    }
}

/// The screen as text (no colour).
fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    t.draw(|f| leet::ui::render::render(f, app)).unwrap();
    let buf = t.backend().buffer().clone();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n")
        .collect()
}

#[test]
fn a_file_with_a_bad_header_says_what_is_wrong_instead_of_loading() {
    let dir = tempfile::tempdir().unwrap();
    let mut rest = vec![0u8; 5000];
    rest[..7].copy_from_slice(&leet::decode::leveldb::FILE_HEADER);
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "notes.wandb",
            b"PK\x03\x04 a zip, not a run".to_vec(),
            "':W&B'",
        ),
        (
            "version.wandb",
            [b":W&B\xE1\xBE\x02".as_slice(), &rest[7..]].concat(),
            "store version 2",
        ),
        ("magic.wandb", b":W&B\x00\x00\x00".to_vec(), "magic 0xBEE1"),
        // Shorter than the header and not growing (written an hour ago).
        (
            "short.wandb",
            b":W&".to_vec(),
            "shorter than the 7-byte W&B header (3 bytes)",
        ),
    ];
    for (name, bytes, cause) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let old = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let (tx, rx) = mpsc::sync_channel(4);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        leet::source::follow::spawn_tail_tagged(
            path,
            tx,
            TailOptions {
                chunk: 1 << 20,
                poll: Duration::from_millis(50),
            },
            1,
            stop.clone(),
        );
        let mut app = App::new(Options {
            color: false,
            ..Options::default()
        });
        app.update(Msg::Resize(100, 30));
        // Until the reader has said its piece: the error, or (a short file) its bytes.
        loop {
            let Msg::Tagged(_, m) = rx.recv_timeout(Duration::from_secs(10)).unwrap() else {
                continue;
            };
            let done = matches!(*m, Msg::Unreadable(_) | Msg::Run(_));
            app.update(*m);
            if done {
                break;
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        app.update(Msg::Tick(leet::source::tail::unix_now()));
        let why = app.unreadable().unwrap_or_default();
        assert!(why.contains(name) && why.contains(cause), "{name}: {why:?}");
        assert_eq!(app.live_state(), leet::ui::LiveState::Unreadable, "{name}");
        assert!(!app.shown.source.loading(), "{name}");
        let s = screen(&app, 100, 30);
        assert!(!s.contains("loading"), "{name}: {s}");
        // The main area (right of the overview), its rows joined.
        let main: Vec<&str> = s
            .lines()
            .filter_map(|l| l.split_once('│').map(|(_, r)| r.trim()))
            .filter(|r| !r.is_empty())
            .collect();
        let main = main.join(" ");
        assert!(
            main.contains(name) && main.contains(cause),
            "{name}: the main area says why: {s}"
        );
    }
}

#[test]
fn a_file_shorter_than_the_header_is_waited_on_while_it_may_still_grow() {
    let now = 1_800_000_000.0;
    let mut app = App::new(Options::default());
    app.update(Msg::Opened {
        path: "new.wandb".into(),
        len: 3,
        modified: Some(now),
    });
    app.update(Msg::Run(leet::msg::RunBatch {
        read_to: 3,
        file_len: 3,
        pending: 3,
        ..Default::default()
    }));
    app.update(Msg::Tick(now + 1.0));
    assert_eq!(
        app.unreadable(),
        None,
        "just written: the header may follow"
    );
    app.update(Msg::Tick(now + 30.0));
    let why = app.unreadable().unwrap_or_default();
    assert!(
        why.starts_with("new.wandb: ") && why.contains("not growing"),
        "{why}"
    );
    // The header arrives: no complaint.
    app.update(Msg::Run(leet::msg::RunBatch {
        read_to: 7,
        file_len: 7,
        grew_at: Some(now + 31.0),
        ..Default::default()
    }));
    app.update(Msg::Tick(now + 60.0));
    assert_eq!(app.unreadable(), None);
}

/// The threads of this process named `name`.
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .count()
}

/// One follow thread for many runs: each gets its own tagged messages; a file
/// appended to is read on from where it was (the new steps as growth), a file
/// appearing in a waited-on run directory is picked up, a missing path is an error,
/// and a stopped run sends nothing more. No thread per run.
#[test]
fn one_follower_reads_many_runs_each_under_its_tag() {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let mut w = Writer::new();
    for i in 0..100 {
        w.append(&history(i));
    }
    let full = w.bytes().to_vec();
    let (tx, rx) = mpsc::sync_channel(64);
    let follower = leet::source::follow::Follower::spawn(TailOptions {
        chunk: 1 << 20,
        poll: Duration::from_millis(50),
    });
    let mut stops = HashMap::new();
    let mut follow = |tag: u64, path: std::path::PathBuf| {
        let stop = Arc::new(AtomicBool::new(false));
        stops.insert(tag, stop.clone());
        follower.follow(path, tx.clone(), tag, stop);
    };
    // Tags 0..40: whole files; 40: half a file that grows; 41: a run directory
    // with no file yet; 42: a path that does not exist.
    for tag in 0..40 {
        let p = dir.path().join(format!("run-{tag}.wandb"));
        std::fs::write(&p, &full).unwrap();
        follow(tag, p);
    }
    let half = history_len(&full, 50);
    let growing = dir.path().join("grow/run-grow.wandb");
    std::fs::create_dir(dir.path().join("grow")).unwrap();
    std::fs::write(&growing, &full[..half]).unwrap();
    follow(40, growing.clone());
    let waited = dir.path().join("run-20261130_000000-wait0001");
    std::fs::create_dir(&waited).unwrap();
    follow(41, waited.clone());
    follow(42, dir.path().join("missing"));

    let mut read_to: HashMap<u64, u64> = HashMap::new();
    let mut grew = false;
    let mut waiting = false;
    let mut error = false;
    let mut appended = false;
    let mut copied = false;
    let done = |r: &HashMap<u64, u64>, grew: bool| {
        (0..40).all(|t| r.get(&t) == Some(&(full.len() as u64)))
            && r.get(&41) == Some(&(full.len() as u64))
            && grew
    };
    while !(done(&read_to, grew) && waiting && error) {
        let Msg::Tagged(tag, m) = rx.recv_timeout(Duration::from_secs(20)).unwrap() else {
            panic!("untagged message")
        };
        match *m {
            Msg::Run(b) => {
                if tag == 40 && b.read_to == full.len() as u64 {
                    assert!(appended, "read past what was written");
                    assert!(b.grew_at.is_some(), "the appended steps are growth");
                    grew = true;
                }
                read_to.insert(tag, b.read_to);
            }
            Msg::Waiting(d) => {
                assert_eq!((tag, d), (41, waited.clone()));
                waiting = true;
            }
            Msg::Unreadable(_) => {
                assert_eq!(tag, 42);
                error = true;
            }
            Msg::Opened { .. } => {}
            m => panic!("{tag}: {m:?}"),
        }
        if !appended && read_to.get(&40) == Some(&(half as u64)) {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&growing)
                .unwrap();
            f.write_all(&full[half..]).unwrap();
            appended = true;
        }
        if waiting && !copied {
            std::fs::write(waited.join("run-wait0001.wandb"), &full).unwrap();
            copied = true;
        }
    }
    // A stopped run: appended to, it sends nothing (the others' messages may come).
    stops[&0].store(true, Ordering::Relaxed);
    {
        use std::io::Write as _;
        let p = dir.path().join("run-0.wandb");
        let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
        f.write_all(&full[leet::decode::leveldb::FILE_HEADER.len()..])
            .unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    while let Ok(m) = rx.try_recv() {
        assert!(!matches!(m, Msg::Tagged(0, _)), "a stopped run sent {m:?}");
    }
    // One follow thread for the 43 (other tests' `spawn_tail` threads have other
    // names; a thread it started is named by itself once running, long before now).
    assert_eq!(threads_named("leet-follow"), 1);
}

/// Where the record of step `n` starts (the file cut there ends between records).
fn history_len(full: &[u8], n: i64) -> usize {
    let mut w = Writer::new();
    for i in 0..n {
        w.append(&history(i));
    }
    assert!(full.starts_with(w.bytes()));
    w.bytes().len()
}

/// A run that cannot be opened (gone, or not readable) is unreadable, with the
/// reason, and not a run still loading: the reader stops there, so nothing would
/// ever change a "running ●" and "opening…" shown instead.
#[test]
fn a_run_that_cannot_be_opened_is_unreadable_not_loading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gone").join("run-x.wandb");
    let (tx, rx) = mpsc::sync_channel(4);
    spawn_tail(path, tx, TailOptions::default());
    let mut app = App::new(Options::default());
    let m = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(matches!(m, Msg::Unreadable(_)), "{m:?}");
    app.update(m);
    assert_eq!(app.live_state(), leet::ui::LiveState::Unreadable);
    assert!(app.unreadable().is_some_and(|w| w.contains("run-x.wandb")));
}

#[test]
fn inspect_follow_says_when_the_file_is_replaced_and_read_again() {
    let data = fixture("tiny");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.wandb");
    // No exit record yet: the follow goes on.
    std::fs::write(&path, &data[..data.len() / 2]).unwrap();
    let mut child = leet()
        .args(["inspect", "--json", "--follow", "--idle-timeout", "3"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let lines = std::thread::spawn(move || {
        use std::io::BufRead as _;
        let mut n = 0;
        for l in std::io::BufReader::new(stdout).lines() {
            if l.is_err() {
                break;
            }
            n += 1;
            let _ = tx.send(n);
        }
        n
    });
    // The first file read (its records printed), then another one renamed over it.
    rx.recv_timeout(Duration::from_secs(60))
        .expect("records printed");
    let other = dir.path().join("other.wandb");
    std::fs::write(&other, &data[..data.len() / 3]).unwrap();
    std::fs::rename(&other, &path).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let printed = lines.join().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("the file shrank or was replaced; read again from its start"),
        "{err}"
    );
    assert!(printed > 0);
}
