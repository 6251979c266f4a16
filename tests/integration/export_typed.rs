//! `leet export` to Parquet: the format from `-o`'s extension (a `--format` that
//! contradicts it is an error naming both), typed columns (`_step` and metrics
//! whose every value is an integer INT64, other numbers DOUBLE), zstd-compressed;
//! read back with the `parquet` crate.

use std::path::{Path, PathBuf};
use std::process::Output;

use parquet::basic::{Compression, Type as PhysicalType};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

/// A run file `run-NAME.wandb` in `dir` of one history record per row, each
/// row's items (key, value JSON) in order.
fn history_run(dir: &Path, name: &str, rows: &[Vec<(&str, String)>]) -> PathBuf {
    use leet::decode::leveldb::Writer;
    use leet::decode::pb;
    use pb::record::RecordType as T;
    use prost::Message as _;
    let mut w = Writer::new();
    for (num, row) in (1..).zip(rows) {
        let item = row
            .iter()
            .map(|(k, v)| pb::HistoryItem {
                key: (*k).into(),
                value_json: v.clone(),
                ..Default::default()
            })
            .collect();
        let rec = pb::Record {
            num,
            record_type: Some(T::History(pb::HistoryRecord {
                item,
                ..Default::default()
            })),
            ..Default::default()
        };
        w.append(&rec.encode_to_vec());
    }
    let file = dir.join(format!("run-{name}.wandb"));
    std::fs::write(&file, w.into_bytes()).unwrap();
    file
}

/// A run of 4 steps logging `epoch` (integers), `loss` (fractions) and `mixed`
/// (integers, then a fraction at step 3).
fn typed_run(dir: &Path) -> PathBuf {
    let rows: Vec<Vec<(&str, String)>> = (0..4_i64)
        .map(|step| {
            let mixed = if step == 3 {
                "2.5".to_owned()
            } else {
                step.to_string()
            };
            vec![
                ("_step", step.to_string()),
                ("epoch", (step / 2).to_string()),
                ("loss", format!("{}.25", 4 - step)),
                ("mixed", mixed),
            ]
        })
        .collect();
    history_run(dir, "typed", &rows)
}

fn export(args: &[&str]) -> Output {
    crate::common::isolated::leet()
        .arg("export")
        .args(args)
        .output()
        .unwrap()
}

/// Each column's name, physical type and compression (of the first row group).
fn columns(path: &Path) -> Vec<(String, PhysicalType, Compression)> {
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let md = r.metadata();
    let schema = md.file_metadata().schema_descr();
    (0..schema.num_columns())
        .map(|i| {
            let c = schema.column(i);
            let chunk = md.row_group(0).column(i);
            (c.name().to_owned(), c.physical_type(), chunk.compression())
        })
        .collect()
}

/// Every row's cells as text (`Field`'s debug form tells INT64 from DOUBLE).
fn rows(path: &Path) -> Vec<Vec<(String, String)>> {
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    r.get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(k, f)| {
                    let v = match f {
                        Field::Long(v) => format!("i{v}"),
                        Field::Double(v) => format!("d{v}"),
                        Field::Null => "null".to_owned(),
                        other => format!("{other:?}"),
                    };
                    (k.clone(), v)
                })
                .collect()
        })
        .collect()
}

#[test]
fn parquet_from_the_extension_typed_and_zstd_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let run = typed_run(dir.path());
    let out = dir.path().join("run.parquet");
    let o = export(&["-o", out.to_str().unwrap(), run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(&std::fs::read(&out).unwrap()[..4], b"PAR1");
    let zstd = |c: &Compression| matches!(c, Compression::ZSTD(_));
    let cols = columns(&out);
    let types: Vec<(&str, PhysicalType)> = cols.iter().map(|(n, t, _)| (n.as_str(), *t)).collect();
    assert_eq!(
        types,
        [
            ("_step", PhysicalType::INT64),
            ("_runtime", PhysicalType::DOUBLE),
            ("_timestamp", PhysicalType::DOUBLE),
            ("epoch", PhysicalType::INT64),
            ("loss", PhysicalType::DOUBLE),
            ("mixed", PhysicalType::DOUBLE),
        ]
    );
    assert!(cols.iter().all(|(_, _, c)| zstd(c)), "{cols:?}");
    let got = rows(&out);
    assert_eq!(got.len(), 4);
    let cell = |row: usize, name: &str| {
        got[row]
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(cell(3, "_step"), "i3");
    assert_eq!(cell(3, "epoch"), "i1");
    assert_eq!(cell(3, "loss"), "d1.25");
    assert_eq!(cell(2, "mixed"), "d2");
    assert_eq!(cell(3, "mixed"), "d2.5");

    // The long form: `value` is DOUBLE where any metric has fractions.
    let long = dir.path().join("long.PQ");
    let o = export(&[
        "--long",
        "-o",
        long.to_str().unwrap(),
        run.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cols = columns(&long);
    let value = cols.iter().find(|(n, _, _)| n == "value").unwrap();
    assert_eq!(value.1, PhysicalType::DOUBLE);
    let key = cols.iter().find(|(n, _, _)| n == "key").unwrap();
    assert_eq!(key.1, PhysicalType::BYTE_ARRAY);
    assert!(cols.iter().all(|(_, _, c)| zstd(c)), "{cols:?}");
}

#[test]
fn the_extension_picks_the_format_and_a_contradicting_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = typed_run(dir.path());
    let run = run.to_str().unwrap();
    // .jsonl: JSON lines without --format.
    let jsonl = dir.path().join("h.jsonl");
    let o = export(&["-o", jsonl.to_str().unwrap(), run]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert_eq!(text.lines().count(), 4);
    assert!(text.lines().all(|l| l.starts_with('{')), "{text}");
    // An extension of no format: CSV, as before.
    let other = dir.path().join("h.txt");
    let o = export(&["-o", other.to_str().unwrap(), run]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(&other)
        .unwrap()
        .starts_with("_step,_runtime,_timestamp,epoch,loss,mixed\n"));
    // --format that agrees with the extension: fine.
    let pq = dir.path().join("agree.parquet");
    let o = export(&["--format", "parquet", "-o", pq.to_str().unwrap(), run]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // --format against the extension: a usage error naming both, nothing written.
    let bad = dir.path().join("run.parquet");
    let o = export(&["--format", "csv", "-o", bad.to_str().unwrap(), run]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--format csv") && err.contains("run.parquet") && err.contains("parquet by"),
        "{err}"
    );
    assert!(!bad.exists(), "nothing is written");
}

/// `many_metrics`' first rows, exported to `dir` in `format`: the file.
fn many_metrics(dir: &Path, format: &str) -> PathBuf {
    let run = crate::common::wandb_file(&crate::common::runs_dir().join("many_metrics"));
    let out = dir.join(format!("mm.{format}"));
    let o = export(&["-o", out.to_str().unwrap(), run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "",
        "{format}: nothing left out"
    );
    out
}

#[test]
fn values_are_exported_as_logged_big_integers_booleans_and_strings_included() {
    let dir = tempfile::tempdir().unwrap();
    // As logged at steps 0..4 (`inspect --json`): big_int_metric 2^53 + step.
    let big = [
        "9007199254740992",
        "9007199254740993",
        "9007199254740994",
        "9007199254740995",
    ];
    let int = ["0", "7", "14", "21"];
    let boolean = ["false", "true", "false", "true"];
    let string = ["label-0", "label-1", "label-2", "label-3"];
    let mixed = ["0", "s1", "NaN", "4.5"];

    // CSV: the decimal text as logged.
    let csv = std::fs::read_to_string(many_metrics(dir.path(), "csv")).unwrap();
    let mut lines = csv.lines();
    // (Read as CSV: a cell of a list or a string may hold commas.)
    let header = crate::export::csv_fields(lines.next().unwrap());
    let first: Vec<Vec<String>> = lines.take(4).map(crate::export::csv_fields).collect();
    let col = |name: &str| -> Vec<&str> {
        let i = header.iter().position(|h| *h == name).unwrap();
        first.iter().map(|r| r[i].as_str()).collect()
    };
    assert_eq!(col("big_int_metric"), big);
    assert_eq!(col("int_metric"), int);
    assert_eq!(col("bool_metric"), boolean);
    assert_eq!(col("str_metric"), string);
    assert_eq!(col("mixed_metric"), mixed);

    // JSON lines: integers without `.0`, booleans and strings as JSON has them.
    let jsonl = std::fs::read_to_string(many_metrics(dir.path(), "jsonl")).unwrap();
    for (i, line) in jsonl.lines().take(4).enumerate() {
        for (key, want) in [
            ("_step", i.to_string()),
            ("big_int_metric", big[i].to_owned()),
            ("int_metric", int[i].to_owned()),
            ("bool_metric", boolean[i].to_owned()),
            ("str_metric", format!("\"{}\"", string[i])),
        ] {
            let cell = format!("\"{key}\":{want}");
            assert!(
                line.contains(&format!("{cell},")) || line.ends_with(&format!("{cell}}}")),
                "row {i}: no {cell} in {line}"
            );
        }
    }

    // Parquet: INT64 exact, BOOLEAN, UTF8; a column of several kinds is UTF8 of
    // each value's JSON text.
    let pq = many_metrics(dir.path(), "parquet");
    let types: std::collections::BTreeMap<String, PhysicalType> =
        columns(&pq).into_iter().map(|(n, t, _)| (n, t)).collect();
    for (name, t) in [
        ("_step", PhysicalType::INT64),
        ("big_int_metric", PhysicalType::INT64),
        ("int_metric", PhysicalType::INT64),
        ("bool_metric", PhysicalType::BOOLEAN),
        ("str_metric", PhysicalType::BYTE_ARRAY),
        ("mixed_metric", PhysicalType::BYTE_ARRAY),
        ("eval/loss", PhysicalType::DOUBLE),
    ] {
        assert_eq!(types.get(name), Some(&t), "{name}");
    }
    let got = rows(&pq);
    let cell = |row: usize, name: &str| {
        got[row]
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    for i in 0..4 {
        assert_eq!(cell(i, "big_int_metric"), format!("i{}", big[i]));
        assert_eq!(cell(i, "bool_metric"), format!("Bool({})", boolean[i]));
        assert_eq!(cell(i, "str_metric"), format!("Str({:?})", string[i]));
    }
    assert_eq!(cell(1, "mixed_metric"), "Str(\"\\\"s1\\\"\")");
    assert_eq!(cell(3, "mixed_metric"), "Str(\"4.5\")");
}

/// A run whose `_step`s are big integers (`step=time.time_ns()` logs ~1.8e18):
/// 0, 2^53 and 2^53 + 1 (one double apart from nothing: the same nearest double),
/// i64::MAX; `m` is 10 + the row.
fn big_step_run(dir: &Path) -> PathBuf {
    use leet::decode::leveldb::Writer;
    use leet::decode::pb;
    use pb::record::RecordType as T;
    use prost::Message as _;
    let mut w = Writer::new();
    for (i, step) in BIG_STEPS.iter().enumerate() {
        let item = [("_step", (*step).to_owned()), ("m", (10 + i).to_string())]
            .into_iter()
            .map(|(k, v)| pb::HistoryItem {
                key: k.into(),
                value_json: v,
                ..Default::default()
            })
            .collect();
        let rec = pb::Record {
            num: i as i64 + 1,
            record_type: Some(T::History(pb::HistoryRecord {
                item,
                ..Default::default()
            })),
            ..Default::default()
        };
        w.append(&rec.encode_to_vec());
    }
    let file = dir.join("run-bigstep.wandb");
    std::fs::write(&file, w.into_bytes()).unwrap();
    file
}

const BIG_STEPS: [&str; 4] = [
    "0",
    "9007199254740992",
    "9007199254740993",
    "9223372036854775807",
];

#[test]
fn big_integer_steps_stay_exact_and_apart_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let run = big_step_run(dir.path());
    let out = |name: &str, extra: &[&str]| -> PathBuf {
        let p = dir.path().join(name);
        let mut args = vec!["-o", p.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.push(run.to_str().unwrap());
        let o = export(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        p
    };
    // CSV, wide and long: a row per step, each written as logged.
    for (name, extra) in [("w.csv", &[][..]), ("l.csv", &["--long"][..])] {
        let csv = std::fs::read_to_string(out(name, extra)).unwrap();
        let got: Vec<(String, String)> = csv
            .lines()
            .skip(1)
            .map(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                (cells[0].to_owned(), cells[cells.len() - 1].to_owned())
            })
            .collect();
        let want: Vec<(String, String)> = BIG_STEPS
            .iter()
            .enumerate()
            .map(|(i, s)| ((*s).to_owned(), (10 + i).to_string()))
            .collect();
        assert_eq!(got, want, "{name}");
    }
    // JSON lines: every `_step` an integer (none `0.0`).
    let jsonl = std::fs::read_to_string(out("w.jsonl", &[])).unwrap();
    let steps: Vec<String> = jsonl
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["_step"].is_i64(), "{l}");
            v["_step"].to_string()
        })
        .collect();
    assert_eq!(steps, BIG_STEPS);
    // Parquet: `_step` INT64, exact.
    let pq = out("w.parquet", &[]);
    let types: std::collections::BTreeMap<String, PhysicalType> =
        columns(&pq).into_iter().map(|(n, t, _)| (n, t)).collect();
    assert_eq!(types.get("_step"), Some(&PhysicalType::INT64));
    let steps: Vec<String> = rows(&pq)
        .iter()
        .map(|r| r.iter().find(|(k, _)| k == "_step").unwrap().1.clone())
        .collect();
    let want: Vec<String> = BIG_STEPS.iter().map(|s| format!("i{s}")).collect();
    assert_eq!(steps, want);
}

/// A logged `-0` keeps its sign in every format: its column is a DOUBLE one
/// (INT64 has no `-0`), JSON lines write `-0.0`, CSV `-0`.
#[test]
fn a_negative_zero_keeps_its_sign_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let logged: Vec<Vec<(&str, String)>> = (0..3_i64)
        .map(|step| {
            let negz = if step == 0 {
                "-0".to_owned()
            } else {
                step.to_string()
            };
            vec![("_step", step.to_string()), ("negz", negz)]
        })
        .collect();
    let run = history_run(dir.path(), "negz", &logged);
    let out = dir.path().join("run.parquet");
    let o = export(&["-o", out.to_str().unwrap(), run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cols = columns(&out);
    assert!(
        cols.iter()
            .any(|(n, t, _)| n == "negz" && *t == PhysicalType::DOUBLE),
        "{cols:?}"
    );
    let first = &rows(&out)[0];
    let negz = first.iter().find(|(k, _)| k == "negz").unwrap();
    assert_eq!(negz.1, "d-0", "{first:?}");
    let o = export(&["--format", "jsonl", run.to_str().unwrap()]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.lines().next().unwrap().contains("\"negz\":-0.0"),
        "{text}"
    );
    let o = export(&[run.to_str().unwrap()]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        text.lines().nth(1).unwrap().rsplit(',').next(),
        Some("-0"),
        "{text}"
    );
}
