//! `leet export` writes exactly the bytes it wrote before its float writer and its
//! first pass were made fast: every fixture, a synthetic run with system metrics,
//! the odd-rows file and damaged and cut copies, in CSV (wide, long, smoothed,
//! system), JSON lines and Parquet (its schema and every cell's bits), against
//! expected files made by the earlier implementation (`tests/fixtures/export/`;
//! `LEET_UPDATE_EXPECTED=1` writes them anew, with `LEET_EXPORT_BIN` the build to
//! write them with). Since values are exported as logged (integers of 2^53 and
//! more exactly, booleans, strings and lists too, a column of integers without
//! `.0` in JSON lines), the expected files are this build's, reviewed: they differ
//! from the earlier ones only there. Special values (NaN, ±inf, -0.0,
//! the largest and the smallest doubles) read back to the same bits.

use crate::common;

use std::path::{Path, PathBuf};

use leet::decode::leveldb::{Writer, BLOCK_SIZE};
use leet::decode::pb;
use leet::decode::synth::{file_bytes, SynthSpec};
use prost::Message as _;

fn expected_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export")
}

/// The export's variants: a name and the arguments after the file.
const VARIANTS: [(&str, &[&str]); 6] = [
    ("wide.csv", &[]),
    ("long.csv", &["--long"]),
    ("wide.jsonl", &["--format", "jsonl"]),
    ("system.csv", &["--system"]),
    ("twema.csv", &["--smoothing", "twema:0.6"]),
    ("wide.parquet", &["--format", "parquet"]),
];

/// A Parquet file as text: each column's name and physical type, then each row's
/// cells (a double as its bits, so that NaN payloads and -0.0 are compared too).
fn parquet_dump(path: &Path) -> String {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    use std::fmt::Write as _;
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut s = String::new();
    for c in r.metadata().file_metadata().schema_descr().columns() {
        writeln!(s, "{} {:?}", c.name(), c.physical_type()).unwrap();
    }
    for row in r.get_row_iter(None).unwrap() {
        let row = row.unwrap();
        let cells: Vec<String> = row
            .get_column_iter()
            .map(|(_, f)| match f {
                Field::Double(v) => format!("d{:016x}", v.to_bits()),
                Field::Long(v) => format!("i{v}"),
                Field::Str(v) => format!("s{v:?}"),
                Field::Bool(v) => format!("b{v}"),
                Field::Null => "-".to_owned(),
                other => format!("?{other:?}"),
            })
            .collect();
        writeln!(s, "{}", cells.join(",")).unwrap();
    }
    s
}

/// The leet under test, or (`LEET_EXPORT_BIN`, to write the expected files with
/// an earlier build) another.
fn leet() -> std::process::Command {
    match std::env::var_os("LEET_EXPORT_BIN") {
        Some(bin) => {
            let mut cmd = std::process::Command::new(bin);
            common::isolated::isolate(&mut cmd);
            cmd
        }
        None => common::isolated::leet(),
    }
}

/// What one export gave: its status, its stdout (a Parquet file as its dump) and
/// its stderr with the input's path taken out.
fn export_text(file: &Path, args: &[&str], parquet: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("out.parquet");
    let mut cmd = leet();
    cmd.arg("export").arg(file).args(args);
    if parquet {
        cmd.arg("-o").arg(&out_file);
    }
    let o = cmd.output().unwrap();
    let stdout = if parquet && o.status.success() {
        parquet_dump(&out_file)
    } else {
        String::from_utf8(o.stdout).unwrap()
    };
    // The run's file, and its wandb directory (named in a hint), wherever the
    // tree is.
    let wandb = file.parent().and_then(Path::parent).unwrap_or(file);
    let stderr = String::from_utf8(o.stderr)
        .unwrap()
        .replace(&file.display().to_string(), "FILE")
        .replace(&wandb.display().to_string(), "WANDB");
    format!(
        "status {:?}\n--- stderr\n{stderr}--- stdout\n{stdout}",
        o.status.code()
    )
}

/// Runs made here: a synthetic one with stats records, the odd rows, damaged and
/// cut copies.
fn made_runs(dir: &Path) -> Vec<(String, PathBuf)> {
    let synth = file_bytes(&SynthSpec {
        steps: 400,
        metrics: 6,
        stats_every: 7,
        ..SynthSpec::default()
    });
    let odd = crate::summary_only::odd_rows_file();
    let many = std::fs::read(common::wandb_file(&common::runs_dir().join("many_metrics"))).unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = vec![
        ("synth".into(), synth.clone()),
        ("odd".into(), odd.clone()),
        ("special".into(), special_values_file()),
    ];
    let mut zeroed = many.clone();
    let at = zeroed.len() / 2 / BLOCK_SIZE * BLOCK_SIZE;
    zeroed[at..at + BLOCK_SIZE].fill(0);
    cases.push(("many_metrics-zero-block".into(), zeroed));
    let mut odd_damaged = odd.clone();
    for b in &mut odd_damaged[2 * BLOCK_SIZE - 3..2 * BLOCK_SIZE + 7] {
        *b ^= 0x5A;
    }
    cases.push(("odd-across-seam".into(), odd_damaged));
    cases.push(("odd-cut".into(), odd[..3 * BLOCK_SIZE + 13].to_vec()));
    cases.push(("synth-cut".into(), synth[..synth.len() * 2 / 3].to_vec()));
    cases
        .into_iter()
        .map(|(name, bytes)| {
            let p = dir.join(format!("run-{name}.wandb"));
            std::fs::write(&p, bytes).unwrap();
            (name, p)
        })
        .collect()
}

fn rec(num: i64, r: pb::record::RecordType) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(r),
        ..Default::default()
    }
    .encode_to_vec()
}

/// Values a float writer can get wrong, one metric each, as W&B writes them.
const SPECIAL: [&str; 24] = [
    "NaN",
    "Infinity",
    "-Infinity",
    "-0.0",
    "0",
    "0.1",
    "1e-7",
    "-1e-7",
    "1.7976931348623157e308",
    "-1.7976931348623157e308",
    "5e-324",
    "2.2250738585072014e-308",
    "9007199254740993",
    "123456789012345678901234567890",
    "1e21",
    "1e22",
    "0.30000000000000004",
    "100",
    "-42",
    "1.5",
    "3.141592653589793",
    "6.02214076e23",
    "1e-300",
    "0.000001",
];

fn special_values_file() -> Vec<u8> {
    use pb::record::RecordType as T;
    let mut w = Writer::new();
    w.append(&rec(
        1,
        T::Run(pb::RunRecord {
            run_id: "special1".into(),
            ..Default::default()
        }),
    ));
    for step in 0..3i64 {
        let mut item = vec![pb::HistoryItem {
            key: "_step".into(),
            value_json: step.to_string(),
            ..Default::default()
        }];
        // The step shifts which value each key holds, so every column mixes.
        for i in 0..SPECIAL.len() {
            item.push(pb::HistoryItem {
                key: format!("v{i:02}"),
                value_json: SPECIAL[(i + step as usize) % SPECIAL.len()].into(),
                ..Default::default()
            });
        }
        w.append(&rec(
            2 + step,
            T::History(pb::HistoryRecord {
                item,
                step: Some(pb::HistoryStep { num: step }),
                ..Default::default()
            }),
        ));
    }
    w.into_bytes()
}

#[test]
fn every_export_is_the_bytes_the_earlier_implementation_wrote() {
    let update = std::env::var_os("LEET_UPDATE_EXPECTED").is_some();
    let dir = tempfile::tempdir().unwrap();
    let mut runs: Vec<(String, PathBuf)> = common::fixture_runs()
        .into_iter()
        .map(|(n, d)| (n, common::wandb_file(&d)))
        .collect();
    runs.extend(made_runs(dir.path()));
    let mut differ = Vec::new();
    for (name, file) in &runs {
        for (variant, args) in VARIANTS {
            let got = export_text(file, args, variant.ends_with("parquet"));
            let path = expected_dir().join(format!("{name}.{variant}.txt"));
            if update {
                std::fs::create_dir_all(expected_dir()).unwrap();
                std::fs::write(&path, &got).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if got != want {
                let line = got
                    .lines()
                    .zip(want.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                differ.push(format!(
                    "{name} {variant}: line {line}: got {:?} want {:?}",
                    got.lines().nth(line),
                    want.lines().nth(line)
                ));
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Every special value reads back from CSV (Rust's parser takes `NaN`, `inf`) and
/// from Parquet with the bits it was logged with.
#[test]
fn special_values_round_trip_exactly_in_csv_and_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run-special.wandb");
    std::fs::write(&file, special_values_file()).unwrap();
    let want: Vec<f64> = SPECIAL
        .iter()
        .map(|s| leet::decode::value::json_number(s).unwrap())
        .collect();
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    let csv = common::isolated::leet()
        .arg("export")
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8(csv.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let mut seen = 0;
    for (step, line) in lines.enumerate() {
        for (name, cell) in header.iter().zip(line.split(',')) {
            let Some(i) = name.strip_prefix('v').and_then(|i| i.parse::<usize>().ok()) else {
                continue;
            };
            let got: f64 = cell.parse().unwrap();
            let w = want[(i + step) % want.len()];
            assert!(same(got, w), "csv {name} step {step}: {cell} for {w:e}");
            seen += 1;
        }
    }
    assert_eq!(seen, 3 * SPECIAL.len());
    let out = dir.path().join("s.parquet");
    let o = common::isolated::leet()
        .arg("export")
        .arg(&file)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success());
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let r = SerializedFileReader::new(std::fs::File::open(&out).unwrap()).unwrap();
    let mut seen = 0;
    for (step, row) in r.get_row_iter(None).unwrap().enumerate() {
        for (name, f) in row.unwrap().get_column_iter() {
            let Some(i) = name.strip_prefix('v').and_then(|i| i.parse::<usize>().ok()) else {
                continue;
            };
            let got = match f {
                Field::Double(v) => *v,
                other => panic!("{name}: {other:?}"),
            };
            let w = want[(i + step) % want.len()];
            assert!(
                same(got, w),
                "parquet {name} step {step}: {got:e} for {w:e}"
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 3 * SPECIAL.len());
}
