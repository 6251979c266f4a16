use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::index::{Chunked, Index};
use super::*;
use leet_format::leveldb::{scan, Skip, BLOCK_SIZE};
use leet_format::synth::{file_bytes, SynthSpec};

fn fixture(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs")
        .join(name)
        .join("wandb/latest-run");
    match crate::source::file::resolve(&dir).unwrap() {
        crate::source::file::Target::File(f) => f,
        other => panic!("no .wandb file: {other:?}"),
    }
}

/// Every row of the file, as one page.
fn all_rows(path: &std::path::Path, kind: Option<u8>, text: &str) -> RecordsPage {
    page_of(
        path,
        RecordsView {
            kind,
            text: text.into(),
            len: MAX_VIEW,
            ..RecordsView::default()
        },
    )
    .unwrap()
}

#[test]
fn offsets_past_each_4_gib_line_and_chunk_boundaries_round_trip() {
    let mut ix = Index::default();
    let offsets = [7, 100, (1 << 32) + 5, (1 << 32) + 9, (3 << 32) + 7, 5 << 32];
    for (i, &o) in offsets.iter().enumerate() {
        ix.push(o, u8::try_from(i).unwrap());
    }
    for (i, &o) in offsets.iter().enumerate() {
        assert_eq!(ix.offset(i), Some(o), "row {i}");
        assert_eq!(ix.kind(i), Some(u8::try_from(i).unwrap()));
    }
    assert_eq!(ix.offset(offsets.len()), None);
    let mut c = Chunked::default();
    for i in 0..200_000u32 {
        c.push(i);
    }
    assert_eq!(c.len(), 200_000);
    assert_eq!(c.get(65_535), Some(65_535));
    assert_eq!(c.get(65_536), Some(65_536));
    assert_eq!(c.get(199_999), Some(199_999));
    assert_eq!(c.get(200_000), None);
}

#[test]
fn rows_are_the_files_frames_and_bodies_are_the_inspect_json() {
    let path = fixture("crashed");
    let data = std::fs::read(&path).unwrap();
    let mut frames = Vec::new();
    scan(&data, 0, |f| {
        if let Frame::Record { offset, payload } = f {
            frames.push((offset, payload.into_owned()));
        }
    })
    .unwrap();
    let mut view = RecordsView {
        len: MAX_VIEW,
        ..RecordsView::default()
    };
    let mut r = Records::open(&path);
    r.ask(view.clone());
    while r.busy() {
        r.work();
    }
    assert_eq!(r.index.len(), frames.len());
    for (row, (offset, payload)) in frames.iter().enumerate() {
        assert_eq!(r.index.offset(row), Some(*offset));
        assert_eq!(r.index.kind(row), Some(hint::kind_of(payload)));
        // Read again from the file: the same payload.
        assert_eq!(
            r.payload(row).as_deref(),
            Some(payload.as_slice()),
            "row {row}"
        );
        // The body is the JSON `leet inspect --json` prints for the record.
        let mut line = Vec::new();
        json_fast::write_record(payload, &mut line, &mut json_fast::Scratch::default());
        let want: serde_json::Value = serde_json::from_slice(&line).unwrap();
        let got: serde_json::Value = serde_json::from_str(&r.body(row).join("\n")).unwrap();
        assert_eq!(got, want, "row {row}");
    }
    // A page: its rows in order, their hints, the selected body.
    view.selected = 8;
    r.ask(view);
    let page = r.page().unwrap();
    assert_eq!(page.total, frames.len() as u64);
    assert_eq!(page.rows.len(), MAX_VIEW);
    assert_eq!(page.rows[8].num, Some(9));
    assert_eq!(crate::msg::kind_name(page.rows[8].kind), "history");
    assert!(
        page.rows[8].hint.starts_with("_step=0 loss=1.0079"),
        "{:?}",
        page.rows[8]
    );
    assert_eq!(page.rows[9].hint, "crash-child step 0");
    let body = page.body.unwrap().join("\n");
    assert!(body.contains("\"history\""), "{body}");
}

#[test]
fn a_damaged_span_is_a_row_and_the_records_around_it_are_kept() {
    let mut data = std::fs::read(fixture("crashed")).unwrap();
    assert!(data.len() > 2 * BLOCK_SIZE);
    // Garbage over the middle of the second block.
    let at = BLOCK_SIZE + 5000;
    for b in &mut data[at..at + 600] {
        *b = 0xA5;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-damaged.wandb");
    std::fs::write(&path, &data).unwrap();
    let mut want: Vec<(u64, Option<Skip>)> = Vec::new();
    let mut nums: Vec<Option<u64>> = Vec::new();
    scan(&data, 0, |f| match f {
        Frame::Record { offset, payload } => {
            want.push((offset, None));
            let num = leet_format::record::record_kind(&payload).map(|(n, _, _)| n);
            nums.push(num.and_then(|n| u64::try_from(n).ok()));
        }
        Frame::Skip(s) => {
            want.push((s.offset, Some(s)));
            nums.push(None);
        }
    })
    .unwrap();
    let skips: Vec<Skip> = want.iter().filter_map(|w| w.1).collect();
    assert_eq!(skips.len(), 1, "{skips:?}");
    let page = all_rows(&path, None, "");
    assert_eq!(page.total, want.len() as u64);
    // Each record's row carries its own number (records lost to the damage leave
    // a gap, as `inspect --json` shows); the damaged span's row has none.
    let after = want.iter().position(|w| w.1.is_some()).unwrap() + 1;
    assert!(
        nums[after].unwrap() > nums[after - 2].unwrap() + 1,
        "a gap in the numbers after the damage: {nums:?}"
    );
    for ((row, (offset, skip)), num) in page.rows.iter().zip(&want).zip(&nums) {
        assert_eq!(row.offset, *offset);
        assert_eq!(row.num, *num, "at {offset}");
        assert_eq!(row.kind == KIND_SKIP, skip.is_some());
        if let Some(s) = skip {
            assert_eq!(
                row.hint,
                format!("⚠ {} bytes skipped ({})", s.len, s.reason)
            );
        }
    }
    // The damage is found by its kind and by its text.
    let by_kind = all_rows(&path, Some(KIND_SKIP), "");
    assert_eq!(by_kind.total, 1);
    assert_eq!(by_kind.rows[0].offset, skips[0].offset);
    let by_text = all_rows(&path, None, "bytes skipped");
    assert_eq!(by_text.total, 1);
    let body = by_text.body.unwrap().join("\n");
    assert!(
        body.contains(&format!("\"len\": {}", skips[0].len)),
        "{body}"
    );
}

#[test]
fn text_and_type_filters_match_what_inspect_json_prints() {
    let path = fixture("crashed");
    let data = std::fs::read(&path).unwrap();
    let re = regex::bytes::RegexBuilder::new("step 24")
        .case_insensitive(true)
        .build()
        .unwrap();
    let mut want = Vec::new();
    let mut history = 0;
    scan(&data, 0, |f| {
        if let Frame::Record { offset, payload } = f {
            let mut line = Vec::new();
            json_fast::write_record(&payload, &mut line, &mut json_fast::Scratch::default());
            if re.is_match(&line) {
                want.push(offset);
            }
            history += u64::from(hint::kind_of(&payload) == 1);
        }
    })
    .unwrap();
    assert!(want.len() > 10, "{want:?}");
    let page = all_rows(&path, None, "STEP 24");
    let got: Vec<u64> = page.rows.iter().map(|r| r.offset).collect();
    assert_eq!(got, want);
    assert_eq!(page.checked, page.indexed);
    let page = all_rows(&path, Some(1), "");
    assert_eq!(page.total, history);
    assert!(page.rows.iter().all(|r| r.kind == 1));
    // Type and text together: history records of steps 24 and 240-249.
    let both = all_rows(&path, Some(1), "\"_step\":24");
    assert_eq!(both.total, 11);
    // A pattern that does not compile is an error, and filters nothing.
    let bad = all_rows(&path, None, "(");
    assert!(
        bad.error
            .as_deref()
            .is_some_and(|e| e.starts_with("filter:")),
        "{bad:?}"
    );
    assert_eq!(bad.total, bad.indexed);
}

fn recv_until(
    rx: &mpsc::Receiver<Msg>,
    what: &str,
    ok: impl Fn(&RecordsPage) -> bool,
) -> RecordsPage {
    let t0 = Instant::now();
    loop {
        let left = Duration::from_secs(20).saturating_sub(t0.elapsed());
        match rx.recv_timeout(left) {
            Ok(Msg::Records(p)) if ok(&p) => return *p,
            Ok(_) => {}
            Err(e) => panic!("no page with {what}: {e}"),
        }
    }
}

#[test]
fn the_worker_follows_a_growing_file_and_a_new_filter_replaces_the_old() {
    let src = std::fs::read(fixture("tiny")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-grow.wandb");
    let cut = 2000;
    std::fs::write(&path, &src[..cut]).unwrap();
    let mut all = 0;
    scan(&src, 0, |f| {
        all += u64::from(matches!(f, Frame::Record { .. }));
    })
    .unwrap();
    let (tx, rx) = mpsc::sync_channel(64);
    let h = spawn(path.clone(), tx);
    h.view(RecordsView {
        gen: 1,
        len: 10,
        follow: true,
        ..RecordsView::default()
    });
    let first = recv_until(&rx, "the first records", |p| {
        p.gen == 1 && p.total > 0 && !p.indexing
    });
    assert!(first.total < all);
    assert_eq!(first.selected, first.total - 1);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&src[cut..])
        .unwrap();
    let grown = recv_until(&rx, "every record", |p| p.total == all);
    assert_eq!(grown.selected, all - 1, "the end is followed");
    assert_eq!(grown.from, all - 10);
    assert_eq!(
        grown.rows.last().map(|r| r.kind),
        Some(14),
        "the exit record"
    );
    // A text filter, then another before looking: the answer is the second's.
    h.view(RecordsView {
        gen: 2,
        text: "history".into(),
        len: 10,
        ..RecordsView::default()
    });
    h.view(RecordsView {
        gen: 3,
        text: "\"type\":\"exit\"".into(),
        len: 10,
        ..RecordsView::default()
    });
    let p = recv_until(&rx, "the exit filter", |p| {
        p.gen == 3 && p.checked == p.indexed
    });
    assert_eq!(p.total, 1);
    assert_eq!(p.rows[0].kind, 14);
    drop(h);
}

#[test]
fn a_file_that_cannot_be_opened_is_an_error_page() {
    let (tx, rx) = mpsc::sync_channel(4);
    let h = spawn(PathBuf::from("/nonexistent/run-x\u{1b}[2J.wandb"), tx);
    h.view(RecordsView::default());
    let p = recv_until(&rx, "an error", |p| p.error.is_some());
    let e = p.error.unwrap();
    assert!(e.contains("No such file") && !e.contains('\u{1b}'), "{e}");
}

#[test]
fn the_index_holds_about_5_bytes_a_record() {
    let spec = SynthSpec {
        steps: 150_000,
        metrics: 1,
        summaries: true,
        ..SynthSpec::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-synth.wandb");
    std::fs::write(&path, file_bytes(&spec)).unwrap();
    let (rows, bytes) = index_bytes(&path).unwrap();
    assert!(rows > 450_000, "{rows}");
    // 5 bytes a row, and at most one chunk of each vector unused.
    assert!(
        bytes <= rows * 5 + (5 << 16) + 4096,
        "{bytes} bytes for {rows} rows"
    );
}

#[test]
fn damage_at_the_end_is_told_while_held_open() {
    let mut data = std::fs::read(fixture("tiny")).unwrap();
    let n = data.len();
    // The last bytes garbled: a span the scanner holds open (more may extend it).
    for b in &mut data[n - 300..] {
        *b = 0x5A;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-tail.wandb");
    std::fs::write(&path, &data).unwrap();
    let page = all_rows(&path, None, "");
    let (offset, len) = page.open_damage.expect("no open damage");
    assert!(
        offset >= (n - 300) as u64 - 64 && offset + len <= n as u64,
        "{offset} {len}"
    );
}
