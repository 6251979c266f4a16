//! Damaged, truncated and growing files: no panic, every intact record read, the loss
//! reported.

use crate::common;

use common::{json_diff, small_fixture_files};
use leet::decode::leveldb::{scan, Frame, Skip, Writer, BLOCK_SIZE};
use leet::source::file::RunReader;
use leet::store::Run;
use rand::{Rng, SeedableRng};

/// (offset, payload) of every record, and every skip.
fn records(data: &[u8]) -> (Vec<(u64, Vec<u8>)>, Vec<Skip>) {
    let mut recs = Vec::new();
    let mut skips = Vec::new();
    scan(data, 0, |f| match f {
        Frame::Record { offset, payload } => recs.push((offset, payload.into_owned())),
        Frame::Skip(s) => skips.push(s),
    })
    .unwrap();
    (recs, skips)
}

fn run_of(data: &[u8]) -> Run {
    let mut run = Run::new();
    scan(data, 0, |f| match f {
        Frame::Record { offset, payload } => run.apply(offset, &payload),
        Frame::Skip(s) => run.skip(s),
    })
    .unwrap();
    run
}

/// End offset of each record: our writer reproduces wandb-core's files byte for byte
/// (tested below), so its length after each append is where that record ends.
fn record_ends(data: &[u8]) -> Vec<usize> {
    let (recs, _) = records(data);
    let mut w = Writer::new();
    recs.iter()
        .map(|(_, p)| {
            w.append(p);
            w.bytes().len()
        })
        .collect()
}

fn check_cut(
    file: &std::path::Path,
    data: &[u8],
    all: &[(u64, Vec<u8>)],
    ends: &[usize],
    cut: usize,
) {
    let (got, skips) = records(&data[..cut]);
    assert!(skips.is_empty(), "{}: cut {cut}: {skips:?}", file.display());
    let complete = ends.iter().filter(|&&e| e <= cut).count();
    assert_eq!(got.len(), complete, "{}: cut {cut}", file.display());
    assert_eq!(got[..], all[..complete], "{}: cut {cut}", file.display());
}

#[test]
fn every_cut_of_every_small_fixture_yields_exactly_the_complete_records() {
    for file in small_fixture_files() {
        let data = std::fs::read(&file).unwrap();
        if data.len() > 60_000 {
            continue; // covered below with a stride: keeps the test under a few seconds
        }
        let (all, _) = records(&data);
        let ends = record_ends(&data);
        for cut in common::tier::positions(data.len()) {
            check_cut(&file, &data, &all, &ends, cut);
        }
    }
}

#[test]
fn cuts_of_larger_fixtures_with_stride() {
    for file in small_fixture_files() {
        let data = std::fs::read(&file).unwrap();
        if data.len() <= 60_000 {
            continue;
        }
        let (all, _) = records(&data);
        let ends = record_ends(&data);
        // The fast tier takes a tenth of the cuts and of the record ends.
        let sparse = if common::tier::exhaustive() { 1 } else { 10 };
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut cut = 0usize;
        while cut <= data.len() {
            check_cut(&file, &data, &all, &ends, cut);
            cut += rng.random_range(1..97) * sparse;
        }
        // and every offset around each record's end
        for &e in ends.iter().step_by(sparse) {
            for cut in e.saturating_sub(9)..(e + 9).min(data.len() + 1) {
                check_cut(&file, &data, &all, &ends, cut);
            }
        }
    }
}

/// Which records lie (at least partly) in [lo, hi): they may be lost; all others must survive.
fn must_survive(all: &[(u64, Vec<u8>)], lo: u64, hi: u64) -> Vec<(u64, Vec<u8>)> {
    let lo_block = lo / BLOCK_SIZE as u64 * BLOCK_SIZE as u64;
    let hi_block = hi.div_ceil(BLOCK_SIZE as u64) * BLOCK_SIZE as u64;
    all.iter()
        .filter(|(off, p)| {
            // A record spanning several blocks: its bytes run from off to ~off+len+headers.
            let end = off + p.len() as u64 + 7 * (p.len() as u64 / (BLOCK_SIZE as u64 - 7) + 2);
            end <= lo_block || *off >= hi_block
        })
        .cloned()
        .collect()
}

fn check_damage(name: &str, clean: &[u8], damaged: &[u8], lo: u64, hi: u64) {
    let (all, _) = records(clean);
    let (got, skips) = records(damaged);
    // Every record outside the damaged blocks is read, in order.
    let survive = must_survive(&all, lo, hi);
    let mut it = got.iter();
    for r in &survive {
        assert!(
            it.any(|g| g == r),
            "{name}: intact record at {} lost (damage {lo}..{hi})",
            r.0
        );
    }
    // Nothing is invented: every record read is one of the originals, or (rarely) a
    // record whose bytes happen to pass the checksum.
    for g in &got {
        assert!(
            all.contains(g) || (g.0 >= lo.saturating_sub(BLOCK_SIZE as u64) && g.0 < hi),
            "{name}: invented record at {}",
            g.0
        );
    }
    if got.len() < all.len() {
        // Lost records are reported: as skipped spans, or (damage reaching the end of
        // the file) as an incomplete tail that a live writer may still complete.
        let pending = scan(damaged, 0, |_| {}).unwrap().pending;
        assert!(
            !skips.is_empty() || pending > 0,
            "{name}: records lost without a report (damage {lo}..{hi})"
        );
    }
    // Spans lie inside the file, in order, never overlap, and the byte count is
    // their sum: nothing is counted twice or past the end.
    let mut at = 0;
    for s in &skips {
        assert!(
            s.offset >= at && s.len > 0 && s.end() <= damaged.len() as u64,
            "{name}: span {s:?} after {at} in a {}-byte file",
            damaged.len()
        );
        at = s.end();
    }
    // The run model survives and reports the same.
    let run = run_of(damaged);
    assert_eq!(
        run.damage.skipped_spans,
        skips.len() as u64 + run.damage.bad_records
    );
    assert_eq!(
        run.damage.skipped_bytes,
        run.damage.skips.iter().map(|s| s.len).sum::<u64>()
    );
}

#[test]
fn flipped_bits_zeroed_spans_and_garbage_lose_only_damaged_blocks() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    for file in small_fixture_files() {
        let clean = std::fs::read(&file).unwrap();
        let name = file.display().to_string();
        for _ in 0..60 {
            let mut d = clean.clone();
            let kind = rng.random_range(0..3);
            let lo = rng.random_range(7..d.len());
            let hi = match kind {
                0 => {
                    // flip one to three bits
                    for _ in 0..rng.random_range(1..4) {
                        let at = rng.random_range(lo..(lo + 64).min(d.len()));
                        d[at] ^= 1 << rng.random_range(0..8);
                    }
                    (lo + 64).min(d.len())
                }
                1 => {
                    let hi = (lo + rng.random_range(1..5000)).min(d.len());
                    d[lo..hi].fill(0);
                    hi
                }
                _ => {
                    let hi = (lo + rng.random_range(1..5000)).min(d.len());
                    rng.fill(&mut d[lo..hi]);
                    hi
                }
            };
            check_damage(&name, &clean, &d, lo as u64, hi as u64);
        }
    }
}

#[test]
fn random_files_and_headers_never_panic() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for _ in 0..300 {
        let n = rng.random_range(0..70_000);
        let mut d = vec![0u8; n];
        rng.fill(&mut d[..]);
        if n >= 7 && rng.random_bool(0.7) {
            d[..7].copy_from_slice(&leet::decode::leveldb::FILE_HEADER);
        }
        let mut run = Run::new();
        let _ = scan(&d, 0, |f| match f {
            Frame::Record { offset, payload } => run.apply(offset, &payload),
            Frame::Skip(s) => run.skip(s),
        });
        let _ = leet::inspect::summary_json(std::path::Path::new("x"), &run);
    }
}

#[test]
fn undecodable_payload_is_counted_and_reading_goes_on() {
    let file = &small_fixture_files()[0];
    let clean = std::fs::read(file).unwrap();
    let (all, _) = records(&clean);
    let mut w = Writer::new();
    for (i, (_, p)) in all.iter().enumerate() {
        w.append(p);
        if i == 3 {
            w.append(&[0x0A, 0xFF, 0xFF, 0xFF]); // a framed record whose protobuf is cut
        }
    }
    let run = run_of(w.bytes());
    assert_eq!(run.damage.bad_records, 1);
    assert_eq!(run.counts.total, all.len() as u64);
}

#[test]
fn writer_reproduces_wandb_core_files_byte_for_byte() {
    for file in small_fixture_files() {
        let data = std::fs::read(&file).unwrap();
        let (all, _) = records(&data);
        let mut w = Writer::new();
        for (_, p) in &all {
            w.append(p);
        }
        let out = w.into_bytes();
        // A crashed file stops mid-record; compare the complete part.
        let n = out.len().min(data.len());
        assert_eq!(out[..n], data[..n], "{}", file.display());
        if !file.to_string_lossy().contains("crash") {
            assert_eq!(out.len(), data.len(), "{}", file.display());
        }
    }
}

#[test]
fn tailing_in_random_pieces_ends_with_the_one_shot_run() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let dir = tempfile::tempdir().unwrap();
    for file in small_fixture_files() {
        let data = std::fs::read(&file).unwrap();
        let (_, whole) = leet::store::load(&file).unwrap();
        let path = dir.path().join("growing.wandb");
        std::fs::write(&path, b"").unwrap();
        let mut reader = RunReader::open(&path).unwrap().with_chunk(BLOCK_SIZE);
        let mut run = Run::new();
        let mut written = 0;
        while written < data.len() {
            let n = rng.random_range(1..9000).min(data.len() - written);
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            std::io::Write::write_all(&mut f, &data[written..written + n]).unwrap();
            written += n;
            loop {
                if !reader.poll(&mut run).unwrap().more {
                    break;
                }
            }
        }
        let a = leet::inspect::summary_json(&path, &run);
        let b = leet::inspect::summary_json(&path, &whole);
        if let Some(d) = json_diff("tail", &a, &b) {
            panic!("{}: {d}", file.display());
        }
        assert_eq!(run.counts, whole.counts);
        for (k, s) in whole.metrics.iter() {
            let t = run.metrics.get(k).unwrap();
            assert_eq!(bits(t.points()), bits(s.points()), "{k}");
        }
        for (k, s) in whole.system.iter() {
            assert_eq!(
                bits(run.system.get(k).unwrap().points()),
                bits(s.points()),
                "{k}"
            );
        }
    }
}

/// A finished file damaged near its end, followed as the viewer follows a file
/// (polls, never told the file is complete): every record after the damage is
/// read, as a one-shot read finds them. A garbage header whose payload would run
/// past the end once held the search open, waiting for bytes that never came:
/// the exit record, the last console lines and summary were missing and the run
/// looked crashed.
#[test]
fn damage_near_the_end_of_a_followed_file_is_resynchronised_without_more_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for file in small_fixture_files() {
        let data = std::fs::read(&file).unwrap();
        let n = data.len();
        for back in (40..2400).step_by(160) {
            let Some(at) = n.checked_sub(back).filter(|&a| a > 7) else {
                continue;
            };
            let mut d = data.clone();
            d[at] ^= 0xFF;
            let path = dir.path().join("flipped.wandb");
            std::fs::write(&path, &d).unwrap();
            let (want, _) = records(&d);
            let mut reader = RunReader::open(&path).unwrap().with_chunk(BLOCK_SIZE);
            let mut got = 0u64;
            loop {
                let p = reader
                    .poll_frames(|f| {
                        if matches!(f, Frame::Record { .. }) {
                            got += 1;
                        }
                    })
                    .unwrap();
                if !p.more {
                    break;
                }
            }
            assert_eq!(got, want.len() as u64, "{} flipped at {at}", file.display());
            compared += 1;
        }
    }
    assert!(compared > 50, "{compared}");
}

fn bits(p: &[(f64, f64)]) -> Vec<(u64, u64)> {
    p.iter().map(|(x, y)| (x.to_bits(), y.to_bits())).collect()
}

#[test]
fn a_truncated_or_replaced_file_is_read_again_from_the_start() {
    let files = small_fixture_files();
    let a = std::fs::read(&files[0]).unwrap();
    let b = std::fs::read(
        files
            .iter()
            .find(|f| f.to_string_lossy().contains("tiny"))
            .unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-x.wandb");
    std::fs::write(&path, &a).unwrap();
    let mut reader = RunReader::open(&path).unwrap();
    let mut run = Run::new();
    reader.read_all(&mut run).unwrap();
    assert!(!reader.poll(&mut Run::new()).unwrap().restarted);

    // Replaced by rename (a new inode at the same path).
    let tmp = dir.path().join("new.wandb");
    std::fs::write(&tmp, &b).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let mut again = Run::new();
    let p = reader.poll(&mut again).unwrap();
    assert!(p.restarted);
    while reader.poll(&mut again).unwrap().more {}
    let (_, fresh) = leet::store::load(&path).unwrap();
    assert_eq!(again.counts, fresh.counts);

    // Truncated in place and rewritten shorter.
    std::fs::write(&path, &b[..b.len() / 3]).unwrap();
    let mut third = Run::new();
    assert!(reader.poll(&mut third).unwrap().restarted);
    assert!(third.counts.total > 0);
}

/// One change to a file, at an offset of the original.
#[derive(Debug, Clone)]
enum Edit {
    /// Bytes [at, at + len) cut out.
    Cut { at: usize, len: usize },
    /// Bytes put in before `at`: random ones, or a copy of the file's own.
    Insert { at: usize, bytes: Vec<u8> },
}

impl Edit {
    /// Whether the record whose bytes are [s, e) is changed.
    fn touches(&self, s: usize, e: usize) -> bool {
        match self {
            Edit::Cut { at, len } => s < at + len && *at < e,
            Edit::Insert { at, .. } => s < *at && *at < e,
        }
    }
}

/// A length that is not a multiple of 32 KiB (those keep the block grid).
fn shift_len(rng: &mut rand::rngs::StdRng, max: usize) -> usize {
    loop {
        let n = rng.random_range(1..=max.max(1));
        if n % BLOCK_SIZE != 0 {
            return n;
        }
    }
}

/// 1 to 3 edits at random offsets of `data`, in file order, none overlapping; kind
/// 0 cuts, 1 inserts random bytes, 2 inserts a copy of another part of the file.
fn random_edits(rng: &mut rand::rngs::StdRng, data: &[u8], kind: usize) -> Vec<Edit> {
    let n = rng.random_range(1..=3usize);
    let mut ats: Vec<usize> = (0..n).map(|_| rng.random_range(8..data.len())).collect();
    ats.sort_unstable();
    ats.dedup();
    let mut edits = Vec::new();
    for (i, &at) in ats.iter().enumerate() {
        let room = ats.get(i + 1).unwrap_or(&data.len()) - at;
        let max = rng.random_range(1..=40_000usize);
        edits.push(match kind {
            0 => Edit::Cut {
                at,
                len: shift_len(rng, room.min(max)).min(room),
            },
            1 => {
                let len = shift_len(rng, max);
                Edit::Insert {
                    at,
                    bytes: (0..len).map(|_| rng.random()).collect(),
                }
            }
            _ => {
                let len = shift_len(rng, max.min(data.len() - 8));
                let from = rng.random_range(7..=data.len() - len);
                Edit::Insert {
                    at,
                    bytes: data[from..from + len].to_vec(),
                }
            }
        });
    }
    edits
}

fn apply(data: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = data.to_vec();
    // From the last one back, so each offset is still the original's.
    for e in edits.iter().rev() {
        match e {
            Edit::Cut { at, len } => {
                out.drain(*at..*at + *len);
            }
            Edit::Insert { at, bytes } => {
                out.splice(*at..*at, bytes.iter().copied());
            }
        }
    }
    out
}

/// Every record whose bytes no edit touches is read, byte for byte; every record
/// read is one of the file's (none glued from the chunks of two); none is read
/// twice; the reader fed the same bytes in pieces agrees.
fn check_resync(name: &str, data: &[u8], edits: &[Edit], pieces: Option<&[usize]>) {
    let (all, _) = records(data);
    let ends = record_ends(data);
    let damaged = apply(data, edits);
    let (got, skips) = records(&damaged);
    let case = || {
        format!(
            "{name}: {:?}",
            edits
                .iter()
                .map(|e| match e {
                    Edit::Cut { at, len } => format!("cut {at}+{len}"),
                    Edit::Insert { at, bytes } => format!("insert {at}+{}", bytes.len()),
                })
                .collect::<Vec<_>>()
        )
    };
    let originals: std::collections::HashSet<&[u8]> =
        all.iter().map(|(_, p)| p.as_slice()).collect();
    let read: std::collections::HashSet<&[u8]> = got.iter().map(|(_, p)| p.as_slice()).collect();
    assert_eq!(read.len(), got.len(), "{}: a record read twice", case());
    for (off, p) in &got {
        assert!(
            originals.contains(p.as_slice()),
            "{}: a record at {off} that the file does not have",
            case()
        );
    }
    for ((s, p), &e) in all.iter().zip(&ends) {
        let s = usize::try_from(*s).unwrap();
        if !edits.iter().any(|ed| ed.touches(s, e)) {
            assert!(
                read.contains(p.as_slice()),
                "{}: intact record at {s}..{e} lost; skips {skips:?}",
                case()
            );
        }
    }
    if let Some(cuts) = pieces {
        let mut s = leet::decode::leveldb::Scanner::new();
        let (mut recs, mut spans) = (Vec::new(), Vec::new());
        let mut from = 0;
        for &c in cuts
            .iter()
            .filter(|&&c| c < damaged.len())
            .chain(&[damaged.len()])
        {
            let last = c == damaged.len();
            let base = usize::try_from(s.base()).unwrap();
            let input = &damaged[base..c.max(base)];
            let mut emit = |f: Frame<'_>| match f {
                Frame::Record { offset, payload } => recs.push((offset, payload.into_owned())),
                Frame::Skip(k) => spans.push(k),
            };
            if last {
                s.scan_last(input, &mut emit)
            } else {
                s.scan(input, &mut emit)
            }
            .unwrap();
            from = c;
        }
        assert_eq!(from, damaged.len());
        assert_eq!(
            (recs, spans),
            (got, skips),
            "{}: read in pieces at {cuts:?}",
            case()
        );
    }
}

/// Cases per fixture and kind: a few hundred in all by default; set
/// `LEET_RESYNC_CASES` for a longer sweep.
fn resync_cases() -> usize {
    std::env::var("LEET_RESYNC_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

#[test]
fn bytes_cut_inserted_or_duplicated_anywhere_lose_only_the_records_they_touch() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(26);
    let mut cases = 0;
    for file in small_fixture_files() {
        let data = std::fs::read(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for kind in 0..3 {
            for i in 0..resync_cases() {
                let edits = random_edits(&mut rng, &data, kind);
                let len = apply(&data, &edits).len();
                let pieces: Vec<usize> = (0..4).map(|_| rng.random_range(0..=len)).collect();
                let mut pieces = pieces;
                pieces.sort_unstable();
                check_resync(&name, &data, &edits, (i % 3 == 0).then_some(&pieces[..]));
                cases += 1;
            }
        }
    }
    assert!(cases >= 300, "{cases} cases");
}

/// Whole 32 KiB blocks duplicated, swapped, cut out or copied elsewhere: every
/// chunk after them stays on the block grid with its checksum whole, so the first
/// chunk of a record before the edit meets the last chunk of another after it.
/// That glued pair is damage, never a record: its number must not make the
/// intact copy of the record a duplicate, nor the records after it seem to follow
/// on from the ones before (then the records of a block moved later were all
/// dropped as read before). Every record the edits leave whole is read, once.
#[test]
fn whole_blocks_duplicated_swapped_cut_or_copied_lose_only_the_records_they_touch() {
    let mut cases = 0;
    for file in small_fixture_files() {
        let data = std::fs::read(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let blocks = data.len() / BLOCK_SIZE;
        let block = |k: usize| data[k * BLOCK_SIZE..(k + 1) * BLOCK_SIZE].to_vec();
        for k in 0..blocks {
            let at = (k + 1) * BLOCK_SIZE;
            let mut edits = vec![
                vec![Edit::Insert {
                    at,
                    bytes: block(k),
                }],
                vec![Edit::Cut {
                    at: k * BLOCK_SIZE,
                    len: BLOCK_SIZE,
                }],
            ];
            if k + 2 <= blocks {
                edits.push(vec![
                    Edit::Insert {
                        at: k * BLOCK_SIZE,
                        bytes: block(k + 1),
                    },
                    Edit::Cut {
                        at,
                        len: BLOCK_SIZE,
                    },
                ]);
            }
            if k >= 1 {
                // A later block copied in before an earlier one.
                edits.push(vec![Edit::Insert {
                    at: (k - 1) * BLOCK_SIZE,
                    bytes: block(k),
                }]);
            }
            for e in edits {
                if e.iter()
                    .any(|e| matches!(e, Edit::Cut { at: 0, .. } | Edit::Insert { at: 0, .. }))
                {
                    // The file's header starts block 0.
                    continue;
                }
                check_resync(&name, &data, &e, None);
                cases += 1;
            }
        }
    }
    assert!(cases >= 20, "{cases} cases");
}

/// `inspect --summary --json` of a file with bytes cut out of its middle and a part
/// of it copied in: the damage lists the resynchronised span (where reading went on)
/// and the duplicated records dropped, and the summary is the whole run's.
#[test]
fn inspect_summary_lists_the_resynchronised_spans_and_the_duplicates() {
    let file = small_fixture_files()
        .into_iter()
        .max_by_key(|f| std::fs::metadata(f).unwrap().len())
        .unwrap();
    let data = std::fs::read(&file).unwrap();
    let (all, _) = records(&data);
    let ends = record_ends(&data);
    // Cut from inside record 10 to inside record 12; copy records 20..=21 in
    // after record 40.
    let cut = Edit::Cut {
        at: ends[10] - 5,
        len: ends[12] - 3 - (ends[10] - 5),
    };
    let copy = Edit::Insert {
        at: ends[40],
        bytes: data[ends[19]..ends[21]].to_vec(),
    };
    let damaged = apply(&data, &[cut, copy]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-cut.wandb");
    std::fs::write(&path, &damaged).unwrap();
    let opts = leet::inspect::InspectOptions {
        path: path.clone(),
        json: true,
        summary: true,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    leet::inspect::run(&opts, &mut out, &mut err).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let c = &v["corruption"];
    let spans = c["spans"].as_array().unwrap();
    // The damaged record 10 and the cut-into record 12 (record 11 is gone).
    let first = &spans[0];
    assert_eq!(first["offset"], ends[9] as u64, "{c}");
    let resumed = (ends[12] - (ends[12] - 3 - (ends[10] - 5))) as u64;
    assert_eq!(first["resynchronised_at"], resumed, "{c}");
    assert_eq!(first["reason"], "checksum mismatch", "{c}");
    // The two copied records, read again after record 40 and dropped.
    let dup = spans
        .iter()
        .find(|s| s["reason"] == "duplicated record")
        .unwrap();
    assert_eq!(dup["len"], (ends[21] - ends[19]) as u64, "{c}");
    assert_eq!(c["duplicate_bytes"], (ends[21] - ends[19]) as u64, "{c}");
    assert_eq!(c["skipped_spans"], 2, "{c}");
    let text = String::from_utf8(err).unwrap();
    assert!(text.contains("resynchronised after"), "{text}");
    // Every record but 10..=12 was read, once.
    let (got, _) = records(&damaged);
    assert_eq!(got.len(), all.len() - 3);
}

/// The steps of `run`'s history read (every point of its `loss` series: the run
/// is small enough for the series to hold them all).
fn steps_read(run: &Run) -> std::collections::BTreeSet<i64> {
    let s = run.metrics.get("loss").expect("loss");
    s.points().iter().map(|&(x, _)| x as i64).collect()
}

/// Blocks moved within a file (a copy put together out of order): the steps a
/// break says were lost are exactly those read nowhere, not every step between
/// neighbours in the file. Whatever blocks are swapped, each lost step is in a
/// break and no step in a break was read.
#[test]
fn steps_lost_are_those_read_nowhere_when_blocks_are_moved() {
    use leet::decode::synth::{run_file, RunSpec};
    let clean = run_file(&RunSpec {
        steps: 3_000,
        metrics: (0..8)
            .map(|i| format!("m{i}"))
            .chain(["loss".into()])
            .collect(),
        ..RunSpec::default()
    });
    let blocks = clean.len() / BLOCK_SIZE;
    assert!(blocks >= 8, "{blocks} blocks");
    let mut lost_in_all = 0;
    for (i, j) in [(2, 3), (1, 5), (3, 6), (4, 2)] {
        let mut data = clean.clone();
        let (a, b) = (i * BLOCK_SIZE, j * BLOCK_SIZE);
        let bi = clean[a..a + BLOCK_SIZE].to_vec();
        data[a..a + BLOCK_SIZE].copy_from_slice(&clean[b..b + BLOCK_SIZE]);
        data[b..b + BLOCK_SIZE].copy_from_slice(&bi);
        let run = run_of(&data);
        let read = steps_read(&run);
        let (lo, hi) = (*read.first().unwrap(), *read.last().unwrap());
        let lost: Vec<i64> = (lo..=hi).filter(|s| !read.contains(s)).collect();
        let in_breaks: Vec<i64> = (run.breaks.spans().iter())
            .flat_map(|&(a, b)| (a as i64 + 1)..(b as i64))
            .collect();
        assert_eq!(
            in_breaks,
            lost,
            "blocks {i} and {j} swapped: {:?}",
            run.breaks.spans()
        );
        // A record cut at each edge of a moved block (a summary record, or a
        // row, whose step is then lost).
        assert!(lost.len() <= 4, "{lost:?}");
        lost_in_all += lost.len();
    }
    assert!(lost_in_all >= 4, "{lost_in_all} steps lost in all");
}

/// A FIFO where a run file was (no writer comes): the run reader refuses it at
/// once, saying what it is, instead of blocking its thread in `open()`.
#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_a_run_file_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("run-x.wandb");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = RunReader::open(&fifo)
            .map(|_| ())
            .map_err(|e| e.to_string());
        let _ = tx.send(r);
    });
    let e = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the open returned")
        .unwrap_err();
    assert!(e.contains("a FIFO, not a regular file"), "{e}");
}
