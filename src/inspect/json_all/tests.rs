//! The parallel one-shot listing against the one-record-at-a-time reference, for
//! chunk and batch sizes small enough that records, blocks and damage straddle
//! every boundary.

use std::path::Path;

use super::print_in;
use crate::inspect::{run_reference, InspectOptions};
use leet_format::leveldb::Writer;
use leet_format::synth::{file_bytes, SynthSpec};

/// stdout and stderr of the reference, and of `print_in` with each size pair, must
/// be equal; returns the reference's stderr.
fn compare(name: &str, bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run-x.wandb");
    std::fs::write(&file, bytes).unwrap();
    let opts = InspectOptions {
        path: file.clone(),
        json: true,
        ..InspectOptions::default()
    };
    let (mut want_out, mut want_err) = (Vec::new(), Vec::new());
    let want = run_reference(&opts, &mut want_out, &mut want_err).map_err(|e| e.to_string());
    for (chunk, batch) in [
        (32 << 10, 1),
        (32 << 10, 5_000),
        (100_003, 64 << 10),
        (1 << 20, 256 << 10),
        (4 << 20, 256 << 10),
    ] {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let got = print_in(&file, &mut out, &mut err, chunk, batch)
            .map(|d| {
                if let Some(d) = d {
                    super::super::report_damage(&file, &d, &mut err).unwrap();
                }
            })
            .map_err(|e| e.to_string());
        let at = format!("{name}, chunk {chunk}, batch {batch}");
        assert_eq!(got, want, "{at}: result");
        assert!(
            out == want_out,
            "{at}: stdout differs{}",
            first_diff(&out, &want_out)
        );
        assert_eq!(
            String::from_utf8_lossy(&err),
            String::from_utf8_lossy(&want_err),
            "{at}: stderr"
        );
    }
    String::from_utf8_lossy(&want_err).into_owned()
}

fn first_diff(a: &[u8], b: &[u8]) -> String {
    let i = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let show = |s: &[u8]| {
        String::from_utf8_lossy(&s[i.saturating_sub(80)..(i + 80).min(s.len())]).into_owned()
    };
    format!(
        " at byte {i} ({} vs {} bytes):\n got  {}\n want {}",
        a.len(),
        b.len(),
        show(a),
        show(b)
    )
}

fn synth(steps: u64) -> Vec<u8> {
    file_bytes(&SynthSpec {
        steps,
        stats_every: 7,
        ..SynthSpec::default()
    })
}

#[test]
fn synthetic_runs_print_as_the_reference_prints_them() {
    assert_eq!(compare("empty run", &synth(0)), "");
    assert_eq!(compare("synth 2500", &synth(2_500)), "");
}

#[test]
fn damaged_and_cut_files_print_as_the_reference_prints_them() {
    let good = synth(600);
    let n = good.len();
    assert!(compare("cut mid-file", &good[..n / 2 + 13]).contains("incomplete"));
    compare("cut at a block", &good[..(n / 2) / 32_768 * 32_768]);
    compare("header only", &good[..7]);
    compare("shorter than the header", &good[..3]);
    compare("empty file", &[]);
    let mut bad = good.clone();
    bad[0] ^= 0xff;
    compare("bad header", &bad);
    for (i, step) in [(1usize, 9_973usize), (2, 31_337), (3, 65_521)] {
        let mut bad = good.clone();
        for at in (40 * i..n).step_by(step) {
            bad[at] ^= 0x5a;
        }
        let err = compare(&format!("bytes flipped every {step}"), &bad);
        assert!(err.contains("skipped"), "{err}");
    }
    let mut bad = good.clone();
    bad[40_000..40_000 + 32_768].fill(0);
    assert!(compare("a zeroed block", &bad).contains("skipped"));
    let mut bad = good.clone();
    bad.extend_from_slice(&[0xab; 5_000]);
    compare("garbage after the end", &bad);
}

#[test]
fn undecodable_records_are_reported_as_the_reference_reports_them() {
    let mut w = Writer::new();
    let mut num = 0;
    leet_format::synth::records(
        &SynthSpec {
            steps: 300,
            ..SynthSpec::default()
        },
        |p| {
            num += 1;
            w.append(p);
            match num % 50 {
                // Framing intact, protobuf not.
                7 => w.append(&[0x0a, 0x05, 0x61]),
                // A history item whose key is not UTF-8.
                19 => w.append(&[0x08, 0x01, 0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0xff]),
                // A record too big for one block, and an empty one.
                31 => {
                    let mut big = vec![0x08, 0x02, 0x6a, 0xc0, 0xbb, 0x03];
                    big.extend(std::iter::repeat_n(b'x', 60_864));
                    w.append(&big);
                    w.append(&[]);
                }
                _ => {}
            }
        },
    );
    let err = compare("bad records", &w.into_bytes());
    assert!(err.contains("undecodable record"), "{err}");
    assert!(err.contains("undecodable record(s)"), "{err}");
}

#[test]
fn a_missing_file_is_the_same_error() {
    let path = Path::new("/nonexistent/leet-json-all/run-x.wandb");
    let err = print_in(path, &mut Vec::new(), &mut Vec::new(), 1 << 20, 1 << 16)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("/nonexistent/leet-json-all/run-x.wandb: No such file or directory (os error 2)")
    );
}
