//! `leet inspect --summary` reads rows for their steps and times only
//! (`RunReader::without_series`): it must print exactly what the full read prints,
//! and find exactly the same damage, on every fixture and on damaged and cut files,
//! read sequentially or in parallel.

use crate::common;

use std::path::Path;

use common::{fixture_runs, wandb_file};
use leet::decode::leveldb::{Writer, BLOCK_SIZE};
use leet::decode::pb;
use leet::decode::synth::{file_bytes, SynthSpec};
use leet::inspect::InspectOptions;
use leet::source::file::{ParallelOptions, RunReader};
use leet::store::Run;
use prost::Message as _;
use rand::{Rng, SeedableRng};

/// What the summary shows of a run, its state decided at a fixed time, with the
/// facts behind it (step, time, damage, counts).
fn summary_of(file: &Path, run: &Run) -> String {
    format!(
        "{}\nstep {:?} time {:?} exit {:?} {:?}\ndamage {:?}\ncounts {:?}\nenv {:?}\ndefs {:?}\nproducer {}",
        serde_json::to_string_pretty(&leet::inspect::summary_json_at(file, run, 1.9e9)).unwrap(),
        run.last_step,
        run.last_time.map(f64::to_bits),
        run.exit_code,
        run.exit_runtime,
        run.damage,
        run.counts,
        run.environment,
        run.metric_defs,
        run.producer,
    )
}

fn reader(path: &Path, series: bool) -> RunReader {
    let r = RunReader::open(path).unwrap().with_chunk(BLOCK_SIZE);
    if series {
        r
    } else {
        r.without_series()
    }
}

fn sequential(path: &Path, series: bool) -> Run {
    let mut reader = reader(path, series);
    reader.finish();
    let mut run = Run::new();
    reader.read_all(&mut run).unwrap();
    run
}

fn parallel(path: &Path, series: bool, blocks: usize, threads: usize) -> Run {
    let opts = ParallelOptions {
        threads,
        min_len: 0,
        ..ParallelOptions::default()
    }
    .with_range(blocks * BLOCK_SIZE);
    let mut reader = reader(path, series);
    reader.finish();
    let mut run = Run::new();
    let p = reader.load_parallel(&opts, |ev, _| run.fold(&ev)).unwrap();
    run.damage.incomplete_tail = p.pending;
    run.damage.set_open(p.open);
    reader.read_all(&mut run).unwrap();
    run
}

/// `leet inspect --summary` (text and JSON) as the user runs it, against the
/// reference path that reads everything: the same bytes on stdout and stderr.
fn same_inspect_output(name: &str, path: &Path) {
    for json in [true, false] {
        let opts = InspectOptions {
            path: path.to_owned(),
            json,
            summary: true,
            ..Default::default()
        };
        let (mut out_a, mut err_a, mut out_b, mut err_b) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let ra = leet::inspect::run(&opts, &mut out_a, &mut err_a).map_err(|e| e.to_string());
        let rb =
            leet::inspect::run_reference(&opts, &mut out_b, &mut err_b).map_err(|e| e.to_string());
        assert_eq!(ra, rb, "{name} json={json}");
        assert!(!out_a.is_empty(), "{name}: nothing printed");
        assert_eq!(
            String::from_utf8_lossy(&out_a),
            String::from_utf8_lossy(&out_b),
            "{name} json={json}: stdout"
        );
        assert_eq!(
            String::from_utf8_lossy(&err_a),
            String::from_utf8_lossy(&err_b),
            "{name} json={json}: stderr"
        );
    }
}

/// The summary-only reads (sequential, and parallel cut in several ways) against
/// the full sequential read.
fn same_summary_all_ways(name: &str, path: &Path) {
    let full = sequential(path, true);
    let want = summary_of(path, &full);
    let mut runs = vec![("sequential".to_owned(), sequential(path, false))];
    for (blocks, threads) in [(1, 3), (2, 2), (5, 2), (64, 2)] {
        runs.push((
            format!("parallel {blocks}x{threads}"),
            parallel(path, false, blocks, threads),
        ));
    }
    for (how, run) in runs {
        assert!(run.metrics.keys().is_empty(), "{name} {how}: kept series");
        assert!(run.system.keys().is_empty(), "{name} {how}: kept series");
        let got = summary_of(path, &run);
        if got != want {
            let diff = got.lines().zip(want.lines()).find(|(a, b)| a != b);
            panic!("{name} {how}: summary-only read differs: {diff:?}");
        }
    }
    same_inspect_output(name, path);
}

#[test]
fn summary_only_read_equals_the_full_read_on_every_fixture() {
    for (name, dir) in fixture_runs() {
        same_summary_all_ways(&name, &wandb_file(&dir));
    }
}

fn rec(num: i64, r: pb::record::RecordType) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(r),
        ..Default::default()
    }
    .encode_to_vec()
}

fn item(key: &str, nested: &[&str], json: &str) -> pb::HistoryItem {
    pb::HistoryItem {
        key: key.into(),
        nested_key: nested.iter().map(|s| (*s).to_owned()).collect(),
        value_json: json.into(),
        ..Default::default()
    }
}

/// `from` replaced by `to` (same length) in a record's bytes: invalid UTF-8 where
/// prost only writes strings.
fn patched(mut bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
    bytes[at..at + to.len()].copy_from_slice(to);
    bytes
}

/// Rows of every shape the decoder reads: nested keys, text and JSON values, a NaN
/// step, keys in a new order each row, a key and a value that are not UTF-8 (bad
/// records), summaries set and removed, console lines, stats, a metric definition.
pub(crate) fn odd_rows_file() -> Vec<u8> {
    use pb::record::RecordType as T;
    let mut w = Writer::new();
    w.append(&rec(
        1,
        T::Run(pb::RunRecord {
            run_id: "odd00001".into(),
            project: "p".into(),
            ..Default::default()
        }),
    ));
    w.append(&rec(
        2,
        T::Metric(pb::MetricRecord {
            name: "val/acc".into(),
            step_metric: "epoch".into(),
            ..Default::default()
        }),
    ));
    let mut num = 3;
    for i in 0..1500i64 {
        let step = if i % 97 == 5 {
            "NaN".to_owned()
        } else {
            i.to_string()
        };
        let mut items = vec![
            item("_step", &[], &step),
            item("_timestamp", &[], &format!("{}.25", 1_790_000_000 + i)),
            item("loss", &[], &format!("{}", 1.0 / (i as f64 + 1.0))),
            item("", &["train", "deep"], "0.5"),
            item("note", &[], "\"text value\""),
            item("img", &[], r#"{"_type":"image-file","path":"a.png"}"#),
            item("epoch", &[], &(i / 10).to_string()),
            item("val/acc", &[], "1e-3"),
        ];
        items.rotate_left((i % 5) as usize);
        let mut bytes = rec(
            num,
            T::History(pb::HistoryRecord {
                item: items,
                step: Some(pb::HistoryStep { num: i }),
                ..Default::default()
            }),
        );
        if i % 211 == 7 {
            bytes = patched(bytes, b"loss", b"lo\xffs");
        }
        if i % 223 == 9 {
            bytes = patched(bytes, b"text value", b"text\xfevalue");
        }
        w.append(&bytes);
        num += 1;
        let summary = pb::SummaryRecord {
            update: vec![
                pb::SummaryItem {
                    key: "loss".into(),
                    value_json: format!("{i}"),
                    ..Default::default()
                },
                pb::SummaryItem {
                    nested_key: vec!["a".into(), "b".into()],
                    value_json: format!("\"s{i}\""),
                    ..Default::default()
                },
            ],
            remove: if i % 50 == 10 {
                vec![pb::SummaryItem {
                    key: "loss".into(),
                    ..Default::default()
                }]
            } else {
                Vec::new()
            },
            ..Default::default()
        };
        w.append(&rec(num, T::Summary(summary)));
        num += 1;
        if i % 7 == 0 {
            w.append(&rec(
                num,
                T::OutputRaw(pb::OutputRawRecord {
                    line: format!("line {i}\n"),
                    output_type: (i % 2) as i32,
                    ..Default::default()
                }),
            ));
            num += 1;
        }
        if i % 40 == 0 {
            w.append(&rec(
                num,
                T::Stats(pb::StatsRecord {
                    timestamp: Some(prost_types::Timestamp {
                        seconds: 1_790_000_000 + i + 3,
                        nanos: 0,
                    }),
                    item: vec![pb::StatsItem {
                        key: "cpu".into(),
                        value_json: "12.5".into(),
                    }],
                    ..Default::default()
                }),
            ));
            num += 1;
        }
    }
    w.into_bytes()
}

/// The same damage as the parallel-load tests (at and around block seams, zeroed
/// blocks, cuts, random bytes), on a synthetic run and on the odd-rows file.
#[test]
fn summary_only_read_equals_the_full_read_on_damaged_and_cut_files() {
    let dir = tempfile::tempdir().unwrap();
    let synth = file_bytes(&SynthSpec {
        steps: 1500,
        stats_every: 5,
        ..SynthSpec::default()
    });
    let odd = odd_rows_file();
    let path = dir.path().join("damaged.wandb");
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for (base, clean) in [("synth", &synth), ("odd", &odd)] {
        assert!(clean.len() > 6 * BLOCK_SIZE, "{base}: {}", clean.len());
        cases.push((format!("{base} clean"), clean.clone()));
        for k in [1, 2, 5] {
            let seam = k * BLOCK_SIZE;
            for (what, at, len) in [
                ("header at the seam", seam, 3),
                ("bytes before the seam", seam - 9, 5),
                ("across the seam", seam - 3, 10),
            ] {
                let mut d = clean.clone();
                for b in &mut d[at..at + len] {
                    *b ^= 0x5A;
                }
                cases.push((format!("{base} {what} {k}"), d));
            }
            let mut d = clean.clone();
            d[seam..seam + BLOCK_SIZE].fill(0);
            cases.push((format!("{base} zero block {k}"), d));
            cases.push((
                format!("{base} cut before seam {k}"),
                clean[..seam - 11].to_vec(),
            ));
            cases.push((
                format!("{base} cut after seam {k}"),
                clean[..seam + 13].to_vec(),
            ));
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for i in 0..8 {
            let mut d = clean.clone();
            for _ in 0..rng.random_range(1..6) {
                let at = rng.random_range(7..d.len());
                d[at] ^= rng.random_range(1..=255u8);
            }
            if i % 3 == 0 {
                let cut = rng.random_range(7..d.len());
                d.truncate(cut);
            }
            cases.push((format!("{base} random {i}"), d));
        }
    }
    let mut bad_records = 0;
    for (name, bytes) in cases {
        std::fs::write(&path, &bytes).unwrap();
        if name == "odd clean" {
            let run = sequential(&path, true);
            // The odd rows are read: bad UTF-8 gives bad records, a point per row.
            bad_records = run.damage.bad_records;
            assert!(run.metrics.get("loss").is_some_and(|s| s.count() > 1000));
            assert!(run.summary.number("loss").is_some());
        }
        same_summary_all_ways(&name, &path);
    }
    assert_eq!(bad_records, 8 + 7, "the odd file's bad UTF-8 records");
}

/// A console line longer than the console's line cap is kept in parts, but
/// `inspect --summary` counts and prints it as the one line it was written as
/// (as `wandb leet inspect` does).
#[test]
fn a_long_console_line_is_one_line_in_the_summary() {
    use leet::store::console::{Stream, MAX_LINE_CHARS};
    let mut run = Run::new();
    let long = format!("BIG:{}:END", "y".repeat(3 * MAX_LINE_CHARS));
    run.console.write(Stream::Stdout, Some((1, 0)), "before\n");
    run.console
        .write(Stream::Stdout, Some((2, 0)), &format!("{long}\n"));
    run.console.write(Stream::Stderr, Some((3, 0)), "after\n");
    let v = leet::inspect::summary_json_at(Path::new("none.wandb"), &run, 10.0);
    assert_eq!(v["console_lines"], serde_json::json!(3));
    let lines: Vec<&str> = v["console"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_str().unwrap())
        .collect();
    assert_eq!(lines, ["before", long.as_str(), "after"]);
    assert_eq!(v["console"][2]["stream"], serde_json::json!("stderr"));
}

/// A run file holding only its header (the SDK writes it first; a run killed
/// right after `wandb.init` stays so): the text summary says what the viewer
/// says of it, not `run: ()` and `state: unknown`.
#[test]
fn a_header_only_file_is_said_empty_as_the_viewer_says() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("offline-run-20261207_000000-kill0001");
    std::fs::create_dir_all(&run).unwrap();
    let file = run.join("run-kill0001.wandb");
    std::fs::write(&file, Writer::new().into_bytes()).unwrap();
    let summary = || {
        let out = common::isolated::leet()
            .args(["inspect", "--summary"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let s = summary();
    assert!(s.contains("run:        (no run record yet)"), "{s}");
    assert!(
        s.contains("state:      empty: waiting for the first record"),
        "{s}"
    );
    // Quiet past the stale limit: how long nothing came.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 3600);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let s = summary();
    assert!(
        s.contains("state:      empty: nothing written for 3h"),
        "{s}"
    );
}
