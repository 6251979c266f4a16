//! `leet export`: every format, read back (Parquet with the same crate), holds the
//! history values `leet inspect --json` prints; smoothed columns are the smoothing
//! module's; `--metrics` and `--system` select; a damaged file exports every intact
//! record and says what was lost.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use leet::store::smooth::Smoothing;
use serde_json::Value;

/// One exported or expected row: its step and its cells by column name.
type Rows = Vec<(Option<f64>, BTreeMap<String, Value>)>;

fn leet(args: &[&str]) -> Output {
    let out = crate::common::isolated::leet().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "leet {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every leaf of a history item, as logged (numbers, W&B's non-finite spellings,
/// booleans, strings, lists), nested keys joined with `.` as the decoder flattens
/// them (a typed value, an image or a histogram, too); a `null` is no value.
fn leaves(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(&key, v, out);
            }
        }
        Value::Null => {}
        v => {
            out.insert(prefix.to_owned(), v.clone());
        }
    }
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(common::json_number)
}

/// The history of `leet inspect --json`, one row per run of records with the same
/// step (the export's rows), `_step` out of the cells; `_runtime` and `_timestamp`
/// the latest of the row's records.
fn inspect_history(file: &Path) -> Rows {
    let out = leet(&["inspect", "--json", file.to_str().unwrap()]);
    let mut rows: Rows = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let Some(h) = v.get("history") else { continue };
        let mut cells = BTreeMap::new();
        leaves("", &h["item"], &mut cells);
        let step = num(cells.remove("_step").as_ref())
            .or_else(|| h["step"]["num"].as_f64())
            .or(Some(0.0));
        if cells.keys().all(|k| k == "_timestamp" || k == "_runtime") {
            continue;
        }
        match rows.last_mut() {
            Some((s, last)) if *s == step => {
                let clocks = ["_runtime", "_timestamp"].map(|k| num(last.get(k)));
                last.extend(cells);
                for (k, was) in ["_runtime", "_timestamp"].into_iter().zip(clocks) {
                    if let (Some(a), Some(b)) = (was, num(last.get(k))) {
                        last.insert(k.into(), Value::from(a.max(b)));
                    }
                }
            }
            _ => rows.push((step, cells)),
        }
    }
    rows
}

/// Minimal RFC 4180 reader (quoted fields with `""`).
pub(crate) fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    out
}

fn split_step(mut cells: BTreeMap<String, Value>) -> (Option<f64>, BTreeMap<String, Value>) {
    (num(cells.remove("_step").as_ref()), cells)
}

/// A CSV cell as a value: JSON where it reads as JSON (a number, a boolean, a
/// list), the non-finite as W&B spells them, else the text.
fn csv_value(s: &str) -> Value {
    match s {
        "inf" => Value::from("Infinity"),
        "-inf" => Value::from("-Infinity"),
        s => serde_json::from_str(s).unwrap_or_else(|_| Value::from(s)),
    }
}

fn from_csv(text: &str) -> Rows {
    let mut lines = text.lines();
    let header = csv_fields(lines.next().unwrap());
    lines
        .map(|l| {
            let cells = header
                .iter()
                .zip(csv_fields(l))
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (k.clone(), csv_value(&v)))
                .collect();
            split_step(cells)
        })
        .collect()
}

fn from_jsonl(text: &str) -> Rows {
    text.lines()
        .map(|l| split_step(serde_json::from_str(l).unwrap()))
        .collect()
}

fn from_parquet(path: &Path) -> Rows {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    r.get_row_iter(None)
        .unwrap()
        .map(|row| {
            let row = row.unwrap();
            let cells = row
                .get_column_iter()
                .filter_map(|(k, f)| {
                    let v = match f {
                        Field::Double(v) => serde_json::Number::from_f64(*v).map_or_else(
                            || {
                                Value::from(if v.is_nan() {
                                    "NaN"
                                } else if *v > 0.0 {
                                    "Infinity"
                                } else {
                                    "-Infinity"
                                })
                            },
                            Value::Number,
                        ),
                        // A column of integers (`_step`, a counter) is INT64.
                        Field::Long(v) => Value::from(*v),
                        Field::Bool(b) => Value::Bool(*b),
                        // A string, or the JSON text of a value in a column of
                        // several kinds.
                        Field::Str(s) => csv_value(s),
                        Field::Null => return None,
                        other => panic!("{k}: {other:?}"),
                    };
                    Some((k.clone(), v))
                })
                .collect();
            split_step(cells)
        })
        .collect()
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Whether an exported cell is the logged value: a number the same double (an
/// integer of 2^53 or more the same integer), anything else equal.
fn cell_matches(got: &Value, want: &Value) -> bool {
    let Some(w) = common::json_number(want) else {
        return got == want;
    };
    let Some(g) = common::json_number(got) else {
        return false;
    };
    if w.abs() >= 9_007_199_254_740_992.0 && (want.is_i64() || want.is_u64()) {
        return got.as_i64() == want.as_i64() && got.as_u64() == want.as_u64();
    }
    same(g, w)
}

fn assert_rows(what: &str, got: &Rows, want: &Rows) {
    assert_eq!(got.len(), want.len(), "{what}: row count");
    for (i, ((gs, g), (ws, w))) in got.iter().zip(want).enumerate() {
        assert_eq!(gs, ws, "{what}: step of row {i}");
        assert_eq!(
            g.keys().collect::<Vec<_>>(),
            w.keys().collect::<Vec<_>>(),
            "{what}: cells of row {i}"
        );
        for (k, v) in g {
            assert!(
                cell_matches(v, &w[k]),
                "{what}: row {i} {k}: {v} != {}",
                w[k]
            );
        }
    }
}

fn export(file: &Path, args: &[&str]) -> Output {
    let mut a = vec!["export", file.to_str().unwrap()];
    a.extend_from_slice(args);
    leet(&a)
}

#[test]
fn every_format_of_every_fixture_reads_back_as_inspects_history() {
    let mut rows_seen = 0;
    for (name, dir) in common::fixture_runs() {
        let file = common::wandb_file(&dir);
        let want = inspect_history(&file);
        rows_seen += want.len();
        let csv = export(&file, &[]).stdout;
        assert_rows(
            &format!("{name} csv"),
            &from_csv(&String::from_utf8(csv).unwrap()),
            &want,
        );
        let jsonl = export(&file, &["--format", "jsonl"]).stdout;
        assert_rows(
            &format!("{name} jsonl"),
            &from_jsonl(&String::from_utf8(jsonl).unwrap()),
            &want,
        );
        // Parquet through -o, read back with the parquet crate.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("h.parquet");
        let o = export(&file, &["--format", "parquet", "-o", out.to_str().unwrap()]);
        assert!(o.stdout.is_empty());
        assert_rows(&format!("{name} parquet"), &from_parquet(&out), &want);
    }
    assert!(rows_seen > 500, "fixtures hold {rows_seen} rows");
}

/// One key's steps, values and smoothed values.
type Series = (Vec<f64>, Vec<f64>, Vec<f64>);

/// The long form's (step, key, value, smoothed) rows: those of a series of
/// numbers (the others, strings and booleans, have no smoothed value), and how
/// many rows there are in all.
fn long_rows(text: &str) -> (Vec<(f64, String, f64, f64)>, usize) {
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("_step,_runtime,_timestamp,key,value,smoothed")
    );
    let mut all = 0;
    let rows = lines
        .inspect(|_| all += 1)
        .filter_map(|l| {
            let f = csv_fields(l);
            Some((
                f[0].parse().unwrap(),
                f[3].clone(),
                f[4].parse().ok()?,
                f[5].parse().ok()?,
            ))
        })
        .collect();
    (rows, all)
}

#[test]
fn smoothed_columns_are_the_smoothing_modules_values_over_every_point() {
    let file = common::wandb_file(&common::runs_dir().join("many_metrics"));
    let want = inspect_history(&file);
    for kind in ["twema:0.6", "ema:0.9", "avg:10", "gauss:2"] {
        let s: Smoothing = kind.parse().unwrap();
        let text =
            String::from_utf8(export(&file, &["--long", "--smoothing", kind]).stdout).unwrap();
        let (rows, all) = long_rows(&text);
        let mut by_key: BTreeMap<String, Series> = BTreeMap::new();
        for (x, k, v, sm) in rows {
            let e = by_key.entry(k).or_default();
            e.0.push(x);
            e.1.push(v);
            e.2.push(sm);
        }
        // Every point of every series is there, in step order, as inspect has it.
        let points: usize = want
            .iter()
            .map(|(_, c)| {
                c.keys()
                    .filter(|k| !matches!(k.as_str(), "_runtime" | "_timestamp"))
                    .count()
            })
            .sum();
        assert_eq!(all, points);
        // The series of numbers are smoothed; strings, booleans and a series of
        // several kinds are not.
        for k in ["str_metric", "bool_metric", "mixed_metric"] {
            assert!(!by_key.contains_key(k), "{kind}: {k} smoothed");
        }
        assert!(by_key.values().filter(|e| e.0.len() >= 20).count() > 100);
        for (k, (xs, ys, sm)) in &by_key {
            let expect = s.apply(xs, ys);
            for (i, (a, b)) in sm.iter().zip(&expect).enumerate() {
                assert!(same(*a, *b), "{kind} {k} point {i}: {a} != {b}");
            }
        }
        // The wide form carries the same smoothed values, beside each metric.
        let wide = String::from_utf8(export(&file, &["--smoothing", kind]).stdout).unwrap();
        let header = csv_fields(wide.lines().next().unwrap());
        let (k, (_, _, sm)) = by_key.iter().next().unwrap();
        let col = header
            .iter()
            .position(|h| *h == format!("{k}_smoothed"))
            .unwrap();
        assert_eq!(header[col - 1], *k);
        let got: Vec<f64> = wide
            .lines()
            .skip(1)
            .filter_map(|l| csv_fields(l)[col].parse().ok())
            .collect();
        assert_eq!(got.len(), sm.len());
        assert!(
            got.iter().zip(sm).all(|(a, b)| same(*a, *b)),
            "{kind} wide {k}"
        );
    }
}

#[test]
fn metrics_regex_selects_the_columns() {
    let file = common::wandb_file(&common::runs_dir().join("many_metrics"));
    let all = String::from_utf8(export(&file, &[]).stdout).unwrap();
    let all_cols = csv_fields(all.lines().next().unwrap());
    assert!(all_cols.len() > 4, "{all_cols:?}");
    let pick = &all_cols[3];
    let re = format!("^{}$", regex::escape(pick));
    let one = String::from_utf8(export(&file, &["--metrics", &re]).stdout).unwrap();
    assert_eq!(
        csv_fields(one.lines().next().unwrap()),
        vec![
            "_step".to_owned(),
            "_runtime".to_owned(),
            "_timestamp".to_owned(),
            pick.clone(),
        ]
    );
    let want: Vec<String> = all
        .lines()
        .skip(1)
        .map(|l| csv_fields(l)[3].clone())
        .filter(|v| !v.is_empty())
        .collect();
    let got: Vec<String> = one
        .lines()
        .skip(1)
        .map(|l| csv_fields(l)[3].clone())
        .collect();
    assert_eq!(got, want);
    // A bad regex is a usage error naming the flag.
    let bad = crate::common::isolated::leet()
        .args(["export", file.to_str().unwrap(), "--metrics", "("])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--metrics"));
}

#[test]
fn system_exports_the_stats_records() {
    let file = common::wandb_file(&common::runs_dir().join("system"));
    let out = String::from_utf8(export(&file, &["--system", "--long"]).stdout).unwrap();
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("_timestamp,key,value"));
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    // As many points as the stats records of inspect --json hold.
    let inspect = leet(&["inspect", "--json", file.to_str().unwrap()]).stdout;
    let mut points = 0;
    for line in String::from_utf8(inspect).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Some(item) = v["stats"].get("item") {
            let mut cells = BTreeMap::new();
            leaves("", item, &mut cells);
            points += cells.len();
        }
    }
    assert!(points > 10, "{points} stats points");
    assert_eq!(rows.len(), points);
    assert!(rows
        .iter()
        .any(|r| r[1].starts_with("cpu") || r[1].starts_with("memory")));
}

#[test]
fn a_damaged_file_exports_every_intact_record_and_reports_the_loss() {
    let src = common::wandb_file(&common::runs_dir().join("many_metrics"));
    let clean = std::fs::read(&src).unwrap();
    let mut data = clean.clone();
    // Zero one 32 KiB block in the middle: its records are lost, the rest intact.
    let block = 32 * 1024;
    let at = data.len() / 2 / block * block;
    data[at..at + block].fill(0);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run-damaged.wandb");
    std::fs::write(&file, &data).unwrap();
    let want = inspect_history(&file);
    assert!(
        want.len() < inspect_history(&src).len(),
        "the damage lost rows"
    );
    for format in ["csv", "jsonl", "parquet"] {
        let out = dir.path().join(format!("h.{format}"));
        let o = export(&file, &["--format", format, "-o", out.to_str().unwrap()]);
        let got = match format {
            "csv" => from_csv(&std::fs::read_to_string(&out).unwrap()),
            "jsonl" => from_jsonl(&std::fs::read_to_string(&out).unwrap()),
            _ => from_parquet(&out),
        };
        assert_rows(&format!("damaged {format}"), &got, &want);
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.contains("skipped 1 damaged span(s)")
                && err.contains("every intact record was read"),
            "{format}: {err}"
        );
    }
}

#[test]
fn a_metrics_regex_that_matches_nothing_is_an_error_and_writes_nothing() {
    let file = common::wandb_file(&common::runs_dir().join("many_metrics"));
    let all = String::from_utf8(export(&file, &[]).stdout).unwrap();
    // The metric columns, after _step, _runtime and _timestamp.
    let mut names = csv_fields(all.lines().next().unwrap()).split_off(3);
    names.sort();
    let dir = tempfile::tempdir().unwrap();
    for (args, what) in [
        (&["--metrics", "^no_such_key$"][..], "metric"),
        (&["--metrics", "^no_such_key$", "--long"][..], "metric"),
        (
            &["--metrics", "^no_such_key$", "--system"][..],
            "system metric",
        ),
    ] {
        let out_file = dir.path().join("out.csv");
        let out = crate::common::isolated::leet()
            .arg("export")
            .arg(&file)
            .args(args)
            .arg("-o")
            .arg(&out_file)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("--metrics '^no_such_key$' matched no ")
                && err.contains(&format!("matched no {what} in ")),
            "{err}"
        );
        assert!(!out_file.exists(), "{args:?}: no file is created");
        assert!(out.stdout.is_empty());
        if what == "metric" {
            // The first few of the run's metric names, in order, and how many there are.
            let listed = format!(
                "its {} metrics include: {}, …",
                names.len(),
                names[..5].join(", ")
            );
            assert!(err.contains(&listed), "{err} lacks {listed}");
        }
    }
}

#[test]
fn long_help_names_every_column_the_long_form_writes() {
    let help = crate::common::isolated::leet()
        .args(["export", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let history = common::wandb_file(&common::runs_dir().join("tiny"));
    let system = common::wandb_file(&common::runs_dir().join("system"));
    for (file, args) in [
        (&history, &["--long"][..]),
        (&system, &["--long", "--system"][..]),
    ] {
        let out = String::from_utf8(export(file, args).stdout).unwrap();
        let header = out.lines().next().unwrap();
        assert!(help.contains(header), "{header} not in: {help}");
    }
    let out =
        String::from_utf8(export(&history, &["--long", "--smoothing", "ema:0.5"]).stdout).unwrap();
    assert_eq!(
        out.lines().next(),
        Some("_step,_runtime,_timestamp,key,value,smoothed")
    );
    assert!(help.contains("a smoothed column after value"), "{help}");
}

/// `leet ARGS` without asserting success.
fn leet_any(args: &[&std::ffi::OsStr]) -> Output {
    crate::common::isolated::leet().args(args).output().unwrap()
}

/// The directory's entries, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn an_export_over_its_own_run_is_refused_and_the_run_is_unchanged() {
    let src = common::wandb_file(&common::runs_dir().join("tiny"));
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run-20260101_000000-tiny");
    std::fs::create_dir(&run_dir).unwrap();
    let run = run_dir.join("run-tiny.wandb");
    std::fs::copy(&src, &run).unwrap();
    let bytes = std::fs::read(&run).unwrap();
    let link = dir.path().join("link.wandb");
    std::os::unix::fs::symlink(&run, &link).unwrap();
    let hard = dir.path().join("hard.wandb");
    std::fs::hard_link(&run, &hard).unwrap();
    let before = entries(&run_dir);
    // (input, -o): the file itself, a symlink to it, a hard link, the run directory,
    // and the run directory as input with its file as output.
    let cases = [
        (&run, &run),
        (&run, &link),
        (&link, &run),
        (&run, &hard),
        (&run, &run_dir),
        (&run_dir, &run),
    ];
    for (input, output) in cases {
        for format in ["csv", "parquet"] {
            let o = leet_any(&[
                "export".as_ref(),
                input.as_os_str(),
                "--format".as_ref(),
                format.as_ref(),
                "-o".as_ref(),
                output.as_os_str(),
            ]);
            let err = String::from_utf8_lossy(&o.stderr);
            let what = format!("{} -o {} ({format})", input.display(), output.display());
            assert_eq!(o.status.code(), Some(2), "{what}: {err}");
            assert_eq!(err.lines().count(), 1, "{what}: {err}");
            assert!(
                err.contains(&*output.to_string_lossy())
                    && err.contains(&*run.to_string_lossy())
                    && err.contains("is the run being exported"),
                "{what}: {err}"
            );
            assert!(o.stdout.is_empty());
            assert!(
                std::fs::read(&run).unwrap() == bytes,
                "{what}: the run changed"
            );
            assert_eq!(entries(&run_dir), before, "{what}");
        }
    }
}

#[test]
fn an_existing_target_keeps_its_bytes_when_the_export_fails() {
    let run = common::wandb_file(&common::runs_dir().join("tiny"));
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.csv");
    std::fs::write(&target, b"the old export\n").unwrap();
    let garbage = dir.path().join("run-bad.wandb");
    std::fs::write(&garbage, b"this is not a wandb file at all").unwrap();
    let missing = dir.path().join("missing.wandb");
    let failing: [Vec<&std::ffi::OsStr>; 3] = [
        vec![
            run.as_os_str(),
            "--metrics".as_ref(),
            "^no_such_metric$".as_ref(),
        ],
        vec![garbage.as_os_str()],
        vec![missing.as_os_str()],
    ];
    for args in failing {
        let mut a: Vec<&std::ffi::OsStr> = vec!["export".as_ref()];
        a.extend(&args);
        a.extend(["-o".as_ref(), target.as_os_str()]);
        let o = leet_any(&a);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(
            std::fs::read(&target).unwrap(),
            b"the old export\n",
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            entries(dir.path()),
            ["out.csv", "run-bad.wandb"],
            "{args:?}: no temporary file is left"
        );
    }
    // A successful export replaces it.
    export(&run, &["-o", target.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&target)
        .unwrap()
        .starts_with("_step,"));
    assert_eq!(entries(dir.path()), ["out.csv", "run-bad.wandb"]);
}

#[test]
fn an_export_ended_by_a_signal_leaves_no_partial_file_and_an_earlier_target_as_it_was() {
    use leet::decode::synth::{file_bytes, SynthSpec};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run-big.wandb");
    let spec = SynthSpec {
        steps: 200_000,
        metrics: 10,
        summaries: false,
        ..SynthSpec::default()
    };
    std::fs::write(&run, file_bytes(&spec)).unwrap();
    // SIGINT and SIGHUP find an earlier export there, which must keep its bytes.
    for (sig, name, old) in [
        (libc::SIGTERM, "term", None),
        (libc::SIGINT, "int", Some(&b"an earlier export\n"[..])),
        (libc::SIGHUP, "hup", Some(&b"another one\n"[..])),
    ] {
        let target = dir.path().join(format!("out-{name}.csv"));
        if let Some(old) = old {
            std::fs::write(&target, old).unwrap();
        }
        let mut child = crate::common::isolated::leet()
            .arg("export")
            .arg(&run)
            .arg("-o")
            .arg(&target)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Until the export is seen writing its temporary file (a bounded wait:
        // the first pass reads the whole run before it).
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let writing = std::fs::read_dir(dir.path()).unwrap().any(|e| {
                let e = e.unwrap();
                e.file_name().to_string_lossy().contains(".leet-tmp-")
                    && e.metadata().is_ok_and(|m| m.len() > 0)
            });
            if writing {
                break;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "{name}: the export ended before it was seen writing (a bigger run is needed)"
            );
            assert!(
                Instant::now() < deadline,
                "{name}: no temporary file was written"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        let pid = i32::try_from(child.id()).unwrap();
        // SAFETY: kill only sends a signal to our own child.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(128 + sig), "{name}: {status:?}");
        match old {
            Some(old) => {
                assert_eq!(std::fs::read(&target).unwrap(), old, "{name}");
                std::fs::remove_file(&target).unwrap();
            }
            None => assert!(!target.exists(), "{name}"),
        }
        assert_eq!(entries(dir.path()), ["run-big.wandb"], "{name}");
    }
}

/// Metric names a spreadsheet would run as a formula.
const FORMULAS: [&str; 6] = [
    "=cmd|' /C calc'!A0",
    "+1",
    "-2+3",
    "@SUM(1)",
    "\t=1+1",
    "\r=1+1",
];

/// A metric name that sets a terminal's title.
const TITLE: &str = "\u{1b}]2;pwned\u{7}=title";

/// A run whose history logs each of [`FORMULAS`] and [`TITLE`], with negative values.
fn hostile_run(dir: &Path) -> std::path::PathBuf {
    use leet::decode::leveldb::Writer;
    use leet::decode::pb;
    use pb::record::RecordType as T;
    use prost::Message as _;
    let mut w = Writer::new();
    for step in 0..3 {
        let mut item = vec![pb::HistoryItem {
            key: "_step".into(),
            value_json: step.to_string(),
            ..Default::default()
        }];
        item.extend(FORMULAS.iter().chain([&TITLE]).map(|k| pb::HistoryItem {
            key: (*k).into(),
            value_json: format!("-{step}.5"),
            ..Default::default()
        }));
        let rec = pb::Record {
            num: step + 1,
            record_type: Some(T::History(pb::HistoryRecord {
                item,
                ..Default::default()
            })),
            ..Default::default()
        };
        w.append(&rec.encode_to_vec());
    }
    let file = dir.join("run-hostile.wandb");
    std::fs::write(&file, w.into_bytes()).unwrap();
    file
}

/// Split CSV text into records of fields (RFC 4180: quoted fields may hold line breaks).
fn csv_records(text: &str) -> Vec<Vec<String>> {
    let mut records = vec![vec![String::new()]];
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let rec = records.last_mut().unwrap();
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                rec.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => rec.push(String::new()),
            ('\n', false) => records.push(vec![String::new()]),
            (c, _) => rec.last_mut().unwrap().push(c),
        }
    }
    records.retain(|r| r != &[String::new()]);
    records
}

#[test]
fn hostile_names_are_inert_csv_cells_and_negative_values_stay_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_run(dir.path());
    // Wide: every hostile header cell starts with ', numbers are left alone.
    let out = dir.path().join("wide.csv");
    export(&file, &["-o", out.to_str().unwrap()]);
    let wide = csv_records(&std::fs::read_to_string(&out).unwrap());
    let header = &wide[0];
    assert_eq!(header.len(), 3 + FORMULAS.len() + 1, "{header:?}");
    // A file keeps the name whole, its escape sequence written as text (it would
    // act on a terminal that `cat`s the file); a terminal gets it sanitized.
    assert!(
        header.contains(&r"\u{001b}]2;pwned\u{0007}=title".to_owned()),
        "{header:?}"
    );
    for name in FORMULAS {
        // A carriage return is written as text, which no spreadsheet runs.
        let inert = match name.strip_prefix('\r') {
            Some(rest) => format!("\\u{{000d}}{rest}"),
            None => format!("'{name}"),
        };
        assert!(
            header.contains(&inert),
            "{name:?} not neutralised in {header:?}"
        );
    }
    for row in &wide[1..] {
        for cell in &row[3..] {
            let v: f64 = cell.parse().unwrap();
            assert!(v < 0.0, "{cell}");
        }
    }
    // Long: every key cell.
    let long = csv_records(&String::from_utf8(export(&file, &["--long"]).stdout).unwrap());
    assert_eq!(long.len(), 1 + 3 * (FORMULAS.len() + 1));
    let title = r"\u{001b}]2;pwned\u{0007}=title";
    assert!(long.iter().any(|r| r[3] == title), "{long:?}");
    for row in long[1..].iter().filter(|r| r[3] != title) {
        let name = match row[3].strip_prefix(r"\u{000d}") {
            Some(rest) => format!("\r{rest}"),
            None => {
                assert!(row[3].starts_with('\''), "{row:?}");
                row[3][1..].to_owned()
            }
        };
        assert!(FORMULAS.contains(&name.as_str()), "{row:?}");
        assert!(row[4].parse::<f64>().unwrap() < 0.0, "{row:?}");
    }
    // Smoothed columns of a hostile name are neutralised too.
    let sm = String::from_utf8(export(&file, &["--smoothing", "ema:0.5"]).stdout).unwrap();
    let header = &csv_records(&sm)[0];
    assert!(header.contains(&"'+1_smoothed".to_owned()), "{header:?}");
}

#[test]
fn smoothing_parameters_out_of_bounds_are_usage_errors_that_state_the_range() {
    let file = common::wandb_file(&common::runs_dir().join("tiny"));
    for (arg, range) in [
        ("gauss:1e-170", "from 1e-6 to 1e15"),
        ("gauss:1e308", "from 1e-6 to 1e15"),
        ("gauss:0", "from 1e-6 to 1e15"),
        ("ema:1", "from 0 to 0.999"),
        ("twema:1.5", "from 0 to 1 "),
        ("avg:0", "from 1 to 1000000"),
    ] {
        let o = leet_any(&[
            "export".as_ref(),
            file.as_os_str(),
            "--smoothing".as_ref(),
            arg.as_ref(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{arg}: {err}");
        assert!(
            err.contains("--smoothing") && err.contains(range),
            "{arg}: {err}"
        );
        assert!(o.stdout.is_empty());
    }
    for arg in ["gauss:1e-6", "gauss:1e15", "ema:0.999", "twema:1"] {
        let out = String::from_utf8(export(&file, &["--smoothing", arg]).stdout).unwrap();
        assert!(
            !out.lines().skip(1).any(|l| l.contains("NaN")),
            "{arg}: {out}"
        );
    }
}

#[test]
fn two_runs_of_one_script_export_the_same_columns_in_key_order_whatever_order_their_rows_list_them()
{
    // wandb-core writes each row's keys in a new order: the columns do not
    // follow the file's first row but the keys' natural order, as the charts do.
    let dir = tempfile::tempdir().unwrap();
    let metrics = ["m10", "b", "m2", "a/x", "a/sample.width"];
    let mut headers = Vec::new();
    for (i, order) in [metrics.to_vec(), metrics.iter().rev().copied().collect()]
        .into_iter()
        .enumerate()
    {
        let spec = leet::decode::synth::RunSpec {
            run_id: format!("ord{i}"),
            steps: 5,
            metrics: order.iter().map(|m| (*m).to_owned()).collect(),
            exit_code: Some(0),
            ..Default::default()
        };
        let file = dir.path().join(format!("run-ord{i}.wandb"));
        std::fs::write(&file, leet::decode::synth::run_file(&spec)).unwrap();
        for args in [&[][..], &["--format", "jsonl"][..]] {
            let o = export(&file, args);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let out = String::from_utf8(o.stdout).unwrap();
            let first = out.lines().next().unwrap().to_owned();
            if args.is_empty() {
                headers.push(first);
            } else {
                // JSON lines: the keys of a row in the same order.
                let keys: Vec<&str> = first
                    .split('"')
                    .skip(1)
                    .step_by(2)
                    .filter(|k| !k.starts_with('_'))
                    .collect();
                assert_eq!(keys, ["a/sample.width", "a/x", "b", "m2", "m10"], "{first}");
            }
        }
    }
    assert_eq!(
        headers[0], "_step,_runtime,_timestamp,a/sample.width,a/x,b,m2,m10",
        "{headers:?}"
    );
    assert_eq!(headers[0], headers[1]);
}
