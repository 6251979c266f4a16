use std::io::{self, Write};
use std::path::Path;

use super::output::{Dest, OutputIsInput};
use super::*;
use leet_format::synth::{file_bytes, SynthSpec};

/// A writer that fails with "no space left" once `left` bytes have gone through:
/// a full disk part way through an export.
struct FullAfter<'a> {
    inner: &'a mut (dyn Write + Send),
    left: usize,
}

impl Write for FullAfter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let n = buf.len().min(self.left);
        let n = self.inner.write(&buf[..n])?;
        self.left -= n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn synth_run(dir: &Path) -> PathBuf {
    let run = dir.join("run-x.wandb");
    let spec = SynthSpec {
        steps: 3000,
        metrics: 8,
        ..SynthSpec::default()
    };
    std::fs::write(&run, file_bytes(&spec)).unwrap();
    run
}

#[test]
fn a_write_error_part_way_leaves_the_target_as_it_was_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = synth_run(dir.path());
    let target = dir.path().join("out.csv");
    std::fs::write(&target, b"old bytes\n").unwrap();
    let before = entries(dir.path());
    for format in [Format::Csv, Format::Jsonl, Format::Parquet] {
        let opts = ExportOptions {
            path: run.clone(),
            format: Some(format),
            ..ExportOptions::default()
        };
        let mut prog = Progress::default();
        let mut err = Vec::new();
        let src = RunFiles::One(run.clone());
        let scan = scan(&src, &opts, &mut prog, &mut err).unwrap();
        let mut seen_temp = false;
        let r = to_file(&target, |out| {
            seen_temp = entries(dir.path()).iter().any(|n| n.contains(".leet-tmp-"));
            let mut full = FullAfter {
                inner: out,
                left: 100_000,
            };
            write_rows(&src, &opts, scan, false, &mut full, &mut prog, &mut err)
        });
        let e = r.err().map(|e| error_line_of(&e)).unwrap_or_default();
        assert!(e.contains("No space left on device"), "{format:?}: {e}");
        assert!(seen_temp, "{format:?}: the rows went to a temporary file");
        assert_eq!(std::fs::read(&target).unwrap(), b"old bytes\n");
        assert_eq!(entries(dir.path()), before, "{format:?}");
    }
    // The same writer without the failure: the target is replaced, whole.
    let opts = ExportOptions {
        path: run.clone(),
        ..ExportOptions::default()
    };
    let whole = run_export(&opts);
    let opts = ExportOptions {
        output: Some(target.clone()),
        ..opts
    };
    assert!(run_export(&opts).is_empty());
    assert_eq!(std::fs::read(&target).unwrap(), whole);
    assert_eq!(entries(dir.path()), before);
}

fn error_line_of(e: &anyhow::Error) -> String {
    e.chain()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

/// `leet export` with these options; what it wrote to standard output.
fn run_export(opts: &ExportOptions) -> Vec<u8> {
    let mut out = Vec::new();
    let mut err = Vec::new();
    run(opts, &mut out, &mut err).unwrap();
    out
}

#[test]
fn a_target_that_is_the_input_is_refused_in_every_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run-20260101_000000-abc");
    std::fs::create_dir(&run_dir).unwrap();
    let run = synth_run(&run_dir);
    let link = dir.path().join("link.wandb");
    std::os::unix::fs::symlink(&run, &link).unwrap();
    let hard = dir.path().join("hard.wandb");
    std::fs::hard_link(&run, &hard).unwrap();
    for out in [run.clone(), link, hard, run_dir.clone()] {
        let e = Dest::plan(Some(&out), &run).unwrap_err();
        assert!(e.is::<OutputIsInput>(), "{}: {e}", out.display());
        let line = e.to_string();
        assert!(
            line.contains(&*out.to_string_lossy()) && line.contains(&*run.to_string_lossy()),
            "{line}"
        );
    }
    // Another file, new or existing; a device; standard output.
    let other = dir.path().join("other.csv");
    assert_eq!(
        Dest::plan(Some(&other), &run).unwrap(),
        Dest::File(other.clone())
    );
    std::fs::write(&other, b"x").unwrap();
    assert_eq!(Dest::plan(Some(&other), &run).unwrap(), Dest::File(other));
    let null = Path::new("/dev/null");
    assert_eq!(
        Dest::plan(Some(null), &run).unwrap(),
        Dest::Stream(null.to_path_buf())
    );
    assert_eq!(
        Dest::plan(Some(Path::new("-")), &run).unwrap(),
        Dest::Stdout
    );
    assert_eq!(Dest::plan(None, &run).unwrap(), Dest::Stdout);
    // The directory holding the run directory resolves to the run too.
    let e = Dest::plan(Some(dir.path()), &run).unwrap_err();
    assert!(e.is::<OutputIsInput>(), "{e}");
    // A directory holding no run is not a file to write.
    let empty = tempfile::tempdir().unwrap();
    let e = Dest::plan(Some(empty.path()), &run).unwrap_err();
    assert!(e.to_string().contains("is a directory"), "{e}");
}

#[test]
fn a_link_to_another_file_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let run = synth_run(dir.path());
    let real = dir.path().join("real.csv");
    std::fs::write(&real, b"old").unwrap();
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let opts = ExportOptions {
        path: run,
        output: Some(link.clone()),
        ..ExportOptions::default()
    };
    assert!(run_export(&opts).is_empty());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .starts_with("_step,_runtime,_timestamp,lr,m0,m1,"));
}

#[test]
fn parquet_is_not_written_to_a_terminal_without_dash_o_dash() {
    let dir = tempfile::tempdir().unwrap();
    let file = synth_run(dir.path());
    let mut opts = ExportOptions {
        path: file,
        format: Some(Format::Parquet),
        stdout_terminal: true,
        ..ExportOptions::default()
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let e = run(&opts, &mut out, &mut err).unwrap_err();
    assert!(is_usage_error(&e), "{e}");
    assert!(out.is_empty());
    opts.output = Some("-".into());
    run(&opts, &mut out, &mut err).unwrap();
    assert!(out.starts_with(b"PAR1"));
}

#[test]
fn parquet_numbers_go_without_a_dictionary_and_the_long_form_s_names_with_one() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let run = synth_run(dir.path());
    for long in [false, true] {
        let target = dir.path().join(format!("out-{long}.parquet"));
        let opts = ExportOptions {
            path: run.clone(),
            output: Some(target.clone()),
            long,
            ..ExportOptions::default()
        };
        assert!(run_export(&opts).is_empty());
        let reader = SerializedFileReader::new(std::fs::File::open(&target).unwrap()).unwrap();
        let meta = reader.metadata();
        assert!(meta.num_row_groups() > 0);
        let mut names_seen = 0;
        for g in meta.row_groups() {
            for c in g.columns() {
                let text = c.column_type() == parquet::basic::Type::BYTE_ARRAY;
                names_seen += usize::from(text);
                assert_eq!(
                    c.dictionary_page_offset().is_some(),
                    text,
                    "long {long}: {}",
                    c.column_path()
                );
            }
        }
        assert_eq!(names_seen > 0, long, "the long form has a key column");
    }
}

#[test]
fn a_csv_not_on_a_terminal_writes_its_names_control_characters_as_text() {
    use leet_format::synth::{run_file, RunSpec};
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run-evil.wandb");
    let spec = RunSpec {
        metrics: vec!["loss".into(), "x\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2Jy".into()],
        steps: 5,
        ..RunSpec::default()
    };
    std::fs::write(&run, run_file(&spec)).unwrap();
    for long in [false, true] {
        let opts = ExportOptions {
            path: run.clone(),
            long,
            ..ExportOptions::default()
        };
        let text = String::from_utf8(run_export(&opts)).unwrap();
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(
            text.contains("x\\u{001b}]52;c;cHduZWQ=\\u{0007}\\u{001b}[2Jy"),
            "long {long}: {text}"
        );
    }
}

/// Text values and names with a carriage return, an escape sequence, DEL, a C1
/// control and a bidi override: a CSV not on a terminal writes every one of them
/// as text (a carriage return hid the start of the row on a terminal); JSON
/// lines, wherever it goes, writes them as JSON escapes, which parse back to the
/// text as logged (to a terminal they were removed).
#[test]
fn text_that_acts_on_a_terminal_is_written_inert_csv_as_text_json_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let value = r#""a\rb\u001b[31mc\u007fd\u009be\u202ef""#;
    let logged = "a\rb\u{1b}[31mc\u{7f}d\u{9b}e\u{202e}f";
    let rows: Vec<Vec<(&str, &str)>> = (0..2)
        .map(|s| vec![("_step", ["0", "1"][s]), ("n\ra\u{202e}me", value)])
        .collect();
    let run = raw_run(dir.path(), &rows);
    let csv = String::from_utf8(run_export(&ExportOptions {
        path: run.clone(),
        ..ExportOptions::default()
    }))
    .unwrap();
    assert!(
        !csv.chars()
            .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
        "{csv:?}"
    );
    assert!(csv.contains(r"n\u{000d}a\u{202e}me"), "{csv}");
    assert!(
        csv.contains(r"a\u{000d}b\u{001b}[31mc\u{007f}d\u{009b}e\u{202e}f"),
        "{csv}"
    );
    for terminal in [false, true] {
        let jsonl = String::from_utf8(run_export(&ExportOptions {
            path: run.clone(),
            format: Some(Format::Jsonl),
            stdout_terminal: terminal,
            ..ExportOptions::default()
        }))
        .unwrap();
        assert!(
            !jsonl
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{jsonl:?}"
        );
        for line in jsonl.lines() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(row["n\ra\u{202e}me"], logged, "terminal {terminal}: {line}");
        }
    }
}

/// A run whose history records hold these (key, value_json) items, as logged.
fn raw_run(dir: &Path, rows: &[Vec<(&str, &str)>]) -> PathBuf {
    use leet_format::leveldb::Writer;
    use leet_format::pb;
    use pb::record::RecordType as T;
    use prost::Message as _;
    let mut w = Writer::new();
    for (num, row) in (1_i64..).zip(rows) {
        let item = row
            .iter()
            .map(|(k, v)| pb::HistoryItem {
                key: (*k).into(),
                value_json: (*v).into(),
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
    let file = dir.join("run-raw.wandb");
    std::fs::write(&file, w.into_bytes()).unwrap();
    file
}

#[test]
fn a_smoothed_column_never_takes_a_name_a_metric_or_another_column_has() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Vec<(&str, &str)>> = (0..4)
        .map(|s| {
            let step = ["0", "1", "2", "3"][s];
            vec![("_step", step), ("loss", step), ("loss_smoothed", "100.5")]
        })
        .collect();
    let run = raw_run(dir.path(), &rows);
    for format in [Format::Csv, Format::Jsonl, Format::Parquet] {
        let opts = ExportOptions {
            path: run.clone(),
            format: Some(format),
            smoothing: "ema:0.5".parse().unwrap(),
            ..ExportOptions::default()
        };
        let out = run_export(&opts);
        let names: Vec<String> = match format {
            Format::Csv => String::from_utf8(out)
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .split(',')
                .map(str::to_owned)
                .collect(),
            Format::Jsonl => {
                let line = String::from_utf8(out).unwrap();
                let first = line.lines().next().unwrap().to_owned();
                // Keys in the order written (serde_json's map would merge twins).
                first
                    .trim_matches(['{', '}'])
                    .split(',')
                    .map(|kv| kv.split(':').next().unwrap().trim_matches('"').to_owned())
                    .collect()
            }
            Format::Parquet => {
                use parquet::file::reader::{FileReader, SerializedFileReader};
                let r = SerializedFileReader::new(bytes::Bytes::from(out)).unwrap();
                let schema = r.metadata().file_metadata().schema_descr_ptr();
                (0..schema.num_columns())
                    .map(|i| schema.column(i).name().to_owned())
                    .collect()
            }
        };
        assert_eq!(
            names,
            [
                "_step",
                "_runtime",
                "_timestamp",
                "loss",
                "loss_smoothed_2",
                "loss_smoothed",
                "loss_smoothed_smoothed"
            ]
            .iter()
            .copied()
            .filter(|n| format != Format::Jsonl || !n.starts_with("_r") && !n.starts_with("_t"))
            .collect::<Vec<_>>(),
            "{format:?}"
        );
    }
}

#[test]
fn a_parquet_column_is_typed_json_only_when_every_cell_is_json() {
    use parquet::basic::ConvertedType;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        vec![("_step", "0"), ("nan", "1"), ("bad", "1"), ("ok", "1")],
        vec![
            ("_step", "1"),
            ("nan", "\"s1\""),
            ("bad", "{bad json"),
            ("ok", "\"s1\""),
        ],
        vec![
            ("_step", "2"),
            ("nan", "NaN"),
            ("bad", "0x10"),
            ("ok", "[1,2]"),
        ],
        vec![
            ("_step", "3"),
            ("nan", "Infinity"),
            ("bad", "[1,2,NaN]"),
            ("ok", "{\"a\":1}"),
        ],
    ];
    let run = raw_run(dir.path(), &rows);
    for long in [false, true] {
        let opts = ExportOptions {
            path: run.clone(),
            format: Some(Format::Parquet),
            long,
            ..ExportOptions::default()
        };
        let out = run_export(&opts);
        let r = SerializedFileReader::new(bytes::Bytes::from(out)).unwrap();
        let schema = r.metadata().file_metadata().schema_descr_ptr();
        let types: Vec<(String, ConvertedType)> = (0..schema.num_columns())
            .map(|i| {
                let c = schema.column(i);
                (c.name().to_owned(), c.converted_type())
            })
            .filter(|(n, _)| ["nan", "bad", "ok", "value"].contains(&n.as_str()))
            .collect();
        let want: Vec<(String, ConvertedType)> = if long {
            vec![("value".into(), ConvertedType::UTF8)]
        } else {
            vec![
                ("bad".into(), ConvertedType::UTF8),
                ("nan".into(), ConvertedType::UTF8),
                ("ok".into(), ConvertedType::JSON),
            ]
        };
        assert_eq!(types, want, "long {long}");
        // Named, so that leet reading the file back takes their text as values.
        let kv = r.metadata().file_metadata().key_value_metadata().unwrap();
        let named = kv
            .iter()
            .find(|k| k.key == crate::source::remote::history::VALUE_TEXT_KEY)
            .and_then(|k| k.value.clone());
        let want = if long {
            r#"["value"]"#
        } else {
            r#"["bad","nan"]"#
        };
        assert_eq!(named.as_deref(), Some(want), "long {long}");
        // Every cell of a JSON column parses as JSON.
        for row in r.get_row_iter(None).unwrap() {
            for (name, field) in row.unwrap().get_column_iter() {
                if name == "ok" {
                    if let parquet::record::Field::Str(s) = field {
                        serde_json::from_str::<serde_json::Value>(s).unwrap();
                    }
                }
            }
        }
    }
}

#[test]
fn progress_on_a_terminal_is_one_line_erased_when_done_and_none_beside_rows_there() {
    let dir = tempfile::tempdir().unwrap();
    let file = synth_run(dir.path());
    for stdout_terminal in [false, true] {
        let opts = ExportOptions {
            path: file.clone(),
            progress: true,
            stdout_terminal,
            ..ExportOptions::default()
        };
        let mut out = Vec::new();
        let mut err = Vec::new();
        run(&opts, &mut out, &mut err).unwrap();
        let err = String::from_utf8(err).unwrap();
        assert!(err.contains("scanning"), "{err:?}");
        assert!(!err.contains('\n'), "no line left: {err:?}");
        assert!(err.ends_with("\r\x1b[K"), "erased: {err:?}");
        // Each pass's line is erased before the next thing is written.
        assert_eq!(
            err.matches("\r\x1b[K").count(),
            if stdout_terminal { 1 } else { 2 },
            "{err:?}"
        );
        assert_eq!(err.contains("exporting"), !stdout_terminal, "{err:?}");
        assert!(!out.is_empty());
    }
}

#[test]
fn a_dangling_link_is_written_through_to_the_file_it_names_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let file = synth_run(dir.path());
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    // A relative link, through a second link, to a file not made yet.
    let real = dir.path().join("sub/real.csv");
    let mid = dir.path().join("sub/mid.csv");
    std::os::unix::fs::symlink("real.csv", &mid).unwrap();
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink("sub/mid.csv", &link).unwrap();
    let opts = ExportOptions {
        path: file,
        output: Some(link.clone()),
        ..ExportOptions::default()
    };
    assert!(run_export(&opts).is_empty());
    for l in [&link, &mid] {
        assert!(std::fs::symlink_metadata(l)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .starts_with("_step,_runtime,_timestamp,lr,m0,m1,"));
}

#[cfg(target_os = "linux")]
#[test]
fn a_write_error_names_the_output_and_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    let file = synth_run(dir.path());
    let full = Path::new("/dev/full");
    for format in [Format::Csv, Format::Jsonl, Format::Parquet] {
        let opts = ExportOptions {
            path: file.clone(),
            format: Some(format),
            output: Some(full.to_path_buf()),
            ..ExportOptions::default()
        };
        let mut out = Vec::new();
        let mut err = Vec::new();
        let e = run(&opts, &mut out, &mut err).unwrap_err();
        assert_eq!(
            crate::error_line(&e),
            "cannot write /dev/full: No space left on device (os error 28)",
            "{format:?}"
        );
    }
}

#[test]
fn a_workspace_whose_newest_run_cannot_be_read_gives_the_newest_readable_one_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let wandb = dir.path().join("wandb");
    let good = wandb.join("offline-run-20261201_000000-aaa");
    let bad = wandb.join("offline-run-20261202_000000-zzz");
    std::fs::create_dir_all(&good).unwrap();
    std::fs::create_dir_all(&bad).unwrap();
    let good_file = good.join("run-aaa.wandb");
    std::fs::rename(synth_run(&good), &good_file).unwrap();
    std::fs::write(bad.join("run-zzz.wandb"), b"not a run, only text\n").unwrap();
    for path in [dir.path().to_path_buf(), wandb.clone()] {
        let opts = ExportOptions {
            path: path.clone(),
            ..ExportOptions::default()
        };
        let mut out = Vec::new();
        let mut err = Vec::new();
        run(&opts, &mut out, &mut err).unwrap();
        assert!(out.starts_with(b"_step,_runtime,_timestamp,lr,m0,m1,"));
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.contains(&format!("leet: skipped the run {}: ", bad.display()))
                && err.contains("bad header"),
            "{err}"
        );
        let inspect = crate::inspect::InspectOptions {
            path,
            summary: true,
            ..crate::inspect::InspectOptions::default()
        };
        let mut out = Vec::new();
        let mut err = Vec::new();
        crate::inspect::run(&inspect, &mut out, &mut err).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains(&*good_file.to_string_lossy()), "{out}");
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.contains("skipped the run") && err.contains("bad header"),
            "{err}"
        );
    }
    // The unreadable run named itself is still an error.
    let opts = ExportOptions {
        path: bad,
        ..ExportOptions::default()
    };
    let e = run(&opts, &mut Vec::new(), &mut Vec::new()).unwrap_err();
    assert!(crate::error_line(&e).contains("bad header"), "{e}");
}
