//! One distributed run's per-node directories (`tests/fixtures/multinode-sdk`,
//! written by the `wandb` SDK: README there) read together as one run, and the
//! resumed run's segments still apart.

use crate::common;

use common::screen::screen;

use std::path::{Path, PathBuf};

use leet::msg::Msg;
use leet::source::index::{scan_with, ScanOptions};
use leet::source::nodes::{group_for_path, read_group};
use leet::store::Run;
use leet::ui::{App, Cmd, Options};

/// When the SDK fixture's nodes wrote (Unix s), plus an hour: its fixed "now".
const SDK_NOW: f64 = 1_796_573_418.0;

fn sdk_wandb() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/multinode-sdk/wandb")
}

/// The fixture's run directories, in name order.
fn node_dirs() -> Vec<PathBuf> {
    leet::source::file::run_dirs(&sdk_wandb())
}

fn merged_run(path: &Path) -> Run {
    let (_, batch) = read_group(path).expect("a node of several");
    let mut run = Run::new();
    run.fold_batch(&batch);
    run
}

#[test]
fn each_node_opens_the_whole_group() {
    let dirs = node_dirs();
    assert_eq!(dirs.len(), 3);
    let mut groups = Vec::new();
    for d in &dirs {
        let file = leet::source::file::resolve_file(d).unwrap();
        for p in [d.clone(), file] {
            let g = group_for_path(&p).expect("a node of three");
            groups.push(g.iter().map(|n| n.file.clone()).collect::<Vec<_>>());
            assert_eq!(g.iter().filter(|n| n.primary).count(), 1);
        }
    }
    assert!(groups.windows(2).all(|w| w[0] == w[1]), "{groups:?}");
    assert_eq!(groups[0].len(), 3);
}

#[test]
fn the_sdk_nodes_read_as_one_run_with_every_nodes_series() {
    let run = merged_run(&sdk_wandb().join("latest-run"));
    // Only the primary logged history: 24 steps.
    assert_eq!(run.history_rows, 24);
    assert_eq!(run.last_step, Some(23));
    for n in 0..3 {
        let key = format!("memory_percent/l:node-{n}");
        let points = run.system.get(&key).map_or(0, leet::store::Series::count);
        assert!(points > 0, "{key}: no points");
    }
    // The run's facts and summary are the primary's.
    assert_eq!(run.info.display_name, "ddp-nodes");
    assert!(run.summary.number("train/loss").is_some());
    // Every node's console, each line prefixed with its label.
    let text: Vec<String> = run.console.lines().iter().map(|l| l.text.clone()).collect();
    for n in 0..3 {
        let up = format!("[node-{n}] node {n} up");
        assert!(text.iter().any(|l| l == &up), "{up}: {text:?}");
    }
}

#[test]
fn a_resumed_runs_segments_are_not_nodes() {
    let wandb = common::runs_dir().join("resumed/wandb");
    for d in leet::source::file::run_dirs(&wandb) {
        assert!(group_for_path(&d).is_none(), "{}", d.display());
    }
    // A run alone is no group either.
    assert!(group_for_path(&common::runs_dir().join("tiny/wandb/latest-run")).is_none());
}

fn scan(wandb: &Path, cache: &Path) -> Vec<leet::msg::RunIndexEntry> {
    let opts = ScanOptions {
        now: Some(SDK_NOW),
        ..ScanOptions::default()
    };
    scan_with(wandb, cache, &opts).entries
}

/// The app after `cmds`, readers reading their group whole (as the runtime's
/// reader does), the index scanned at the fixed "now".
fn carry_out(app: &mut App, cache: &Path, cmds: Vec<Cmd>) {
    let mut queue: std::collections::VecDeque<Cmd> = cmds.into();
    while let Some(cmd) = queue.pop_front() {
        let msgs = match cmd {
            Cmd::StartReader { path, tag } => {
                let (file, batch) = match read_group(&path) {
                    Some((nodes, b)) => (nodes[0].file.clone(), b),
                    None => leet::source::tail::read_batch(&path).unwrap(),
                };
                vec![
                    Msg::Tagged(
                        tag,
                        Box::new(Msg::Opened {
                            path: file,
                            len: batch.file_len,
                            modified: Some(SDK_NOW - 3600.0),
                        }),
                    ),
                    Msg::Tagged(tag, Box::new(Msg::Run(batch))),
                ]
            }
            Cmd::ScanIndex { wandb_dir, .. } => vec![Msg::Indexed {
                entries: scan(&wandb_dir, cache),
                wandb_dir,
            }],
            Cmd::StopReader { .. } | Cmd::SaveWorkspace { .. } => Vec::new(),
            cmd => leet::runtime::answer(cmd).into_iter().collect(),
        };
        for m in msgs {
            queue.extend(app.update(m).cmds);
        }
    }
}

#[test]
fn the_node_directories_list_as_one_run() {
    let wandb = std::fs::canonicalize(sdk_wandb()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(200, 60));
    let latest = std::fs::canonicalize(wandb.join("latest-run")).ok();
    app.open_workspace(wandb.clone(), None, latest, false);
    let cmds = app.take_cmds();
    carry_out(&mut app, cache.path(), cmds);
    let cmds = app.update(Msg::Tick(SDK_NOW)).cmds;
    carry_out(&mut app, cache.path(), cmds);
    let ws = app.runs.workspace.as_ref().unwrap();
    assert_eq!(
        ws.runs.len(),
        1,
        "{:?}",
        ws.runs.iter().map(|r| &r.key).collect::<Vec<_>>()
    );
    let r = &ws.runs[0];
    assert_eq!(r.node_count(), 3);
    assert!(!r.resumed());
    let s = screen(&app, 200, 60);
    assert!(s.contains("ddp-nodes (3 nodes)"), "{s}");
    assert!(!s.contains("segments"), "{s}");
    assert!(s.contains("3 nodes: offline-run-"), "{s}");
    // The run drawn is the whole group: every node's system series.
    let run = &app.shown.run;
    for n in 0..3 {
        let key = format!("memory_percent/l:node-{n}");
        assert!(run.system.get(&key).is_some_and(|s| s.count() > 0), "{key}");
    }
    assert_eq!(run.history_rows, 24);
}

/// The merged run's system sidebar: one series per node in each chart.
#[test]
fn the_merged_runs_system_sidebar_draws_every_node() {
    let (w, h) = (200, 60);
    let (_, batch) = read_group(&sdk_wandb().join("latest-run")).unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: PathBuf::from("multinode-sdk.wandb"),
        len: batch.file_len,
        modified: Some(SDK_NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(SDK_NOW));
    // The overview names the nodes.
    let s = screen(&app, w, h);
    assert!(s.contains("3: node-0 · node-1"), "{s}");
    // The overview hidden: the system sidebar's charts.
    app.update(Msg::char('['));
    let s = screen(&app, w, h);
    for n in 0..3 {
        assert!(s.contains(&format!("node-{n}")), "node-{n}: {s}");
    }
    insta::assert_snapshot!("nodes_sdk_200x60_system", s);
}

/// The workspace's overview of the group (from the index, the run not read)
/// names its nodes and lists the summary as the overview of the run read does
/// (`_wandb.runtime` with it, as W&B's own overview).
#[test]
fn the_workspace_overview_names_the_nodes_and_lists_the_runs_summary() {
    let wandb = std::fs::canonicalize(sdk_wandb()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(200, 60));
    app.open_workspace(wandb.clone(), None, None, false);
    let cmds = app.take_cmds();
    carry_out(&mut app, cache.path(), cmds);
    let s = screen(&app, 200, 60);
    assert!(s.contains("ddp-nodes (3 nodes)"), "{s}");
    assert!(s.contains("Nodes"), "{s}");
    assert!(s.contains("3: node-0 · node-1"), "{s}");
    assert!(s.contains("_wandb.runtime"), "{s}");
    let summary = |s: &str| {
        s.lines()
            .find_map(|l| {
                l.split("Summary [")
                    .nth(1)
                    .and_then(|t| t.split(']').next())
            })
            .map(str::to_owned)
    };
    let listed = summary(&s);
    assert!(listed.is_some(), "{s}");
    // The same run read, alone.
    let (_, batch) = read_group(&wandb.join("latest-run")).unwrap();
    let mut one = App::new(Options {
        color: false,
        ..Options::default()
    });
    one.update(Msg::Resize(200, 60));
    one.update(Msg::Opened {
        path: PathBuf::from("multinode-sdk.wandb"),
        len: batch.file_len,
        modified: Some(SDK_NOW - 3600.0),
    });
    one.update(Msg::Run(batch));
    let read = screen(&one, 200, 60);
    assert_eq!(summary(&read), listed, "{read}\n{s}");
}

/// One run directory whose system keys carry node labels: the workspace's
/// overview names the nodes as the run read does.
#[test]
fn the_workspace_overview_names_the_labelled_nodes_of_one_directory() {
    let wandb = std::fs::canonicalize(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/multinode/wandb"),
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(200, 60));
    app.open_workspace(wandb, None, None, false);
    let cmds = app.take_cmds();
    carry_out(&mut app, cache.path(), cmds);
    let s = screen(&app, 200, 60);
    let row = s
        .lines()
        .find(|l| l.contains(" Nodes "))
        .unwrap_or_default();
    assert!(row.contains(": node-0 · node-1"), "{s}");
}

/// `leet export PATH` (CSV) to a string: its output and what it said on stderr.
fn export_csv(path: &Path) -> (String, String) {
    let opts = leet::inspect::export::ExportOptions {
        path: path.to_path_buf(),
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    leet::inspect::export::run(&opts, &mut out, &mut err).unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// `leet inspect --summary --json PATH`.
fn summary_of(path: &Path) -> serde_json::Value {
    let opts = leet::inspect::InspectOptions {
        path: path.to_path_buf(),
        json: true,
        summary: true,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    leet::inspect::run(&opts, &mut out, &mut err).unwrap();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn export_and_inspect_of_the_workspace_read_every_node_as_the_viewer() {
    // The newest directory is a node without history: it alone exported nothing.
    let (csv, err) = export_csv(&sdk_wandb());
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 25, "a header and 24 rows: {csv}");
    assert!(lines[0].contains("train/loss"), "{}", lines[0]);
    assert!(err.contains("the primary node of 3"), "{err}");
    let s = summary_of(&sdk_wandb());
    assert_eq!(s["step"], serde_json::json!(23), "{s}");
    assert!(s["file"].as_str().unwrap().contains("nodes001-1"), "{s}");
}

/// `inspect --json` of one node's own file (or directory) lists that node's
/// records, not the primary's; of the wandb directory, the primary's.
#[test]
fn inspect_of_a_node_s_own_file_lists_its_own_records() {
    let node1 = sdk_wandb().join("offline-run-20261206_151018-nodes001");
    let labels = |path: &Path| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_leet"))
            .args(["inspect", "--json"])
            .arg(path)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let stats = text
            .lines()
            .find(|l| l.contains("\"stats\""))
            .unwrap_or_default()
            .to_owned();
        (stats, String::from_utf8(out.stderr).unwrap())
    };
    for path in [node1.join("run-nodes001.wandb"), node1.clone()] {
        let (stats, err) = labels(&path);
        assert!(stats.contains("l:node-1"), "{}: {stats}", path.display());
        assert!(err.contains("one node of a run of 3"), "{err}");
    }
    let (stats, err) = labels(&sdk_wandb());
    assert!(!stats.contains("l:node-1"), "{stats}");
    assert!(err.contains("the primary node of a run of 3"), "{err}");
}

/// A resumed run of two segments in a wandb directory: the first logs steps
/// 0..10, the second resumes at step 5 (from a checkpoint) up to 15.
fn write_rewound(wandb: &Path) {
    write_rewound_with(wandb, &["loss"]);
}

/// [`write_rewound`], logging `metrics`.
fn write_rewound_with(wandb: &Path, metrics: &[&str]) {
    use leet::decode::synth::{run_dir_name, run_file, RunSpec};
    for (i, (first, start)) in [(0, 1_796_000_000.0), (5, 1_796_000_100.0)]
        .into_iter()
        .enumerate()
    {
        let spec = RunSpec {
            run_id: "rew1".into(),
            display_name: "rewound".into(),
            start_time: start,
            steps: 10,
            first_step: first,
            metrics: metrics.iter().map(|&m| m.to_owned()).collect(),
            seed: i as u64,
            exit_code: Some(0),
            resumed: i == 1,
            ..RunSpec::default()
        };
        let dir = wandb.join(run_dir_name(start, "rew1", true));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("run-rew1.wandb"), run_file(&spec)).unwrap();
    }
}

#[test]
fn export_and_inspect_of_the_workspace_stitch_a_resumed_runs_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    write_rewound(&wandb);
    let (csv, err) = export_csv(tmp.path());
    let steps: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    let want: Vec<String> = (0..15).map(|s| s.to_string()).collect();
    assert_eq!(
        steps, want,
        "every step once, the first segment's cut at 5: {csv}"
    );
    assert!(err.contains("newest of 2 segments"), "{err}");
    // From its second segment on, the rows are the second segment's.
    let second = export_csv(&wandb.join(run_dir_name_of(&wandb, 1))).0;
    let row5 = |csv: &str| {
        csv.lines()
            .find(|l| l.starts_with("5,"))
            .unwrap()
            .to_owned()
    };
    let column = |csv: &str, name: &str| {
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        header.iter().position(|h| *h == name)
    };
    let loss = |csv: &str| {
        let at = column(csv, "loss").unwrap();
        row5(csv).split(',').nth(at).unwrap().to_owned()
    };
    assert_eq!(loss(&csv), loss(&second));
    assert_eq!(summary_of(tmp.path())["step"], serde_json::json!(14));
    // Each stitched row names its segment (a logged file's path is relative to
    // that run directory); a segment named alone has no such column.
    let seg = column(&csv, "_segment").expect("_segment");
    let segments: Vec<&str> = (csv.lines().skip(1))
        .map(|l| l.split(',').nth(seg).unwrap())
        .collect();
    let (first, newest) = (run_dir_name_of(&wandb, 0), run_dir_name_of(&wandb, 1));
    assert!(segments[..5].iter().all(|s| *s == first), "{csv}");
    assert!(segments[5..].iter().all(|s| *s == newest), "{csv}");
    assert_eq!(column(&second, "_segment"), None);
    // A segment named alone is that segment alone.
    assert_eq!(second.lines().count(), 11);
}

#[test]
fn a_stitched_exports_segment_column_is_kept_whatever_metrics_and_in_the_long_form() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    write_rewound(&wandb);
    let export = |metrics: Option<&str>, long: bool| {
        let opts = leet::inspect::export::ExportOptions {
            path: tmp.path().to_path_buf(),
            metrics: metrics.map(|m| regex::Regex::new(m).unwrap()),
            long,
            ..Default::default()
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let r = leet::inspect::export::run(&opts, &mut out, &mut err);
        (r, String::from_utf8(out).unwrap())
    };
    let (first, newest) = (run_dir_name_of(&wandb, 0), run_dir_name_of(&wandb, 1));
    // `--metrics` chooses metrics; the segment stays, last.
    let (r, csv) = export(Some("^loss$"), false);
    r.unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("_step,_runtime,_timestamp,loss,_segment"),
        "{csv}"
    );
    let segs: Vec<&str> = lines.map(|l| l.rsplit(',').next().unwrap()).collect();
    assert_eq!(segs.len(), 15, "{csv}");
    assert!(segs[..5].iter().all(|s| *s == first), "{csv}");
    assert!(segs[5..].iter().all(|s| *s == newest), "{csv}");
    // A pattern only the segment's column matches matches no metric.
    let (r, csv) = export(Some("segment"), false);
    let e = r.unwrap_err();
    assert!(leet::inspect::export::is_usage_error(&e), "{e:#}");
    assert!(csv.is_empty(), "{csv}");
    // The long form: each row names its segment in a last column, and no row
    // is the segment's own.
    let (r, csv) = export(None, true);
    r.unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("_step,_runtime,_timestamp,key,value,_segment"),
        "{csv}"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(!rows.is_empty());
    for r in &rows {
        assert_ne!(r[3], "_segment", "{csv}");
        let step: u32 = r[0].parse().unwrap();
        assert_eq!(r[5], if step < 5 { &first } else { &newest }, "{csv}");
    }
}

/// A metric logged as `_segment` keeps its column and values in every form and
/// format; the stitched export's segment column takes the next free name.
#[test]
fn a_metric_named_like_the_segment_column_keeps_its_values() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    write_rewound_with(&wandb, &["loss", "_segment"]);
    let export_with =
        |long: bool, format: Option<leet::inspect::export::Format>, metrics: Option<&str>| {
            let opts = leet::inspect::export::ExportOptions {
                path: tmp.path().to_path_buf(),
                long,
                format,
                metrics: metrics.map(|m| regex::Regex::new(m).unwrap()),
                ..Default::default()
            };
            let (mut out, mut err) = (Vec::new(), Vec::new());
            leet::inspect::export::run(&opts, &mut out, &mut err).unwrap();
            String::from_utf8(out).unwrap()
        };
    let export = |long, format| export_with(long, format, None);
    let (first, newest) = (run_dir_name_of(&wandb, 0), run_dir_name_of(&wandb, 1));
    let csv = export(false, None);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("_step,_runtime,_timestamp,_segment,loss,_segment_2"),
        "{csv}"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 15, "{csv}");
    for r in &rows {
        let step: u32 = r[0].parse().unwrap();
        // The metric's own value (a number), then the row's segment.
        assert!(r[3].parse::<f64>().is_ok(), "{csv}");
        assert_eq!(r[5], if step < 5 { &first } else { &newest }, "{csv}");
    }
    // The same name whatever `--metrics` leaves out.
    let csv = export_with(false, None, Some("^loss$"));
    assert_eq!(
        csv.lines().next(),
        Some("_step,_runtime,_timestamp,loss,_segment_2"),
        "{csv}"
    );
    // The long form: the metric's points under its key, each row's segment in
    // the last column, never empty.
    let csv = export(true, None);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("_step,_runtime,_timestamp,key,value,_segment"),
        "{csv}"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows.iter().filter(|r| r[3] == "_segment").count(),
        15,
        "{csv}"
    );
    assert_eq!(rows.iter().filter(|r| r[3] == "loss").count(), 15, "{csv}");
    for r in &rows {
        let step: u32 = r[0].parse().unwrap();
        assert!(r[4].parse::<f64>().is_ok(), "{csv}");
        assert_eq!(r[5], if step < 5 { &first } else { &newest }, "{csv}");
    }
    // JSON lines: both under their own names.
    let jsonl = export(false, Some(leet::inspect::export::Format::Jsonl));
    for l in jsonl.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(v["_segment"].is_number(), "{l}");
        assert!(v["_segment_2"].is_string(), "{l}");
    }
}

#[test]
fn a_stitched_runs_system_export_says_each_samples_segment() {
    use leet::decode::leveldb::Writer;
    use leet::decode::pb;
    use leet::decode::synth::{run_dir_name, run_records, RunSpec};
    use prost::Message as _;
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    // Two segments of one run, each with three system samples after its rows.
    for (i, (first, start)) in [(0, 1_796_000_000.0), (5, 1_796_000_100.0)]
        .into_iter()
        .enumerate()
    {
        let spec = RunSpec {
            run_id: "sys1".into(),
            start_time: start,
            steps: 10,
            first_step: first,
            metrics: vec!["loss".into()],
            seed: i as u64,
            resumed: i == 1,
            // Its exit record after the samples (no writer writes after it).
            exit_code: None,
            ..RunSpec::default()
        };
        let mut w = Writer::new();
        run_records(&spec, |p| w.append(p));
        for k in 0..3_i64 {
            let stats = pb::Record {
                num: 1000 + k,
                record_type: Some(pb::record::RecordType::Stats(pb::StatsRecord {
                    timestamp: Some(prost_types::Timestamp {
                        seconds: start as i64 + 10 * k,
                        nanos: 0,
                    }),
                    item: vec![pb::StatsItem {
                        key: "cpu".into(),
                        value_json: format!("{}", 10 + k),
                    }],
                    ..Default::default()
                })),
                ..Default::default()
            };
            w.append(&stats.encode_to_vec());
        }
        let exit = pb::Record {
            num: 2000,
            record_type: Some(pb::record::RecordType::Exit(pb::RunExitRecord::default())),
            ..Default::default()
        };
        w.append(&exit.encode_to_vec());
        let dir = wandb.join(run_dir_name(start, "sys1", true));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("run-sys1.wandb"), w.into_bytes()).unwrap();
    }
    let (first, newest) = (run_dir_name_of(&wandb, 0), run_dir_name_of(&wandb, 1));
    for long in [false, true] {
        let opts = leet::inspect::export::ExportOptions {
            path: tmp.path().to_path_buf(),
            system: true,
            long,
            ..Default::default()
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        leet::inspect::export::run(&opts, &mut out, &mut err).unwrap();
        let csv = String::from_utf8(out).unwrap();
        let mut lines = csv.lines();
        let header = if long {
            "_timestamp,key,value,_segment"
        } else {
            "_timestamp,cpu,_segment"
        };
        assert_eq!(lines.next(), Some(header), "{csv}");
        let segs: Vec<&str> = lines.map(|l| l.rsplit(',').next().unwrap()).collect();
        assert_eq!(segs.len(), 6, "{csv}");
        assert!(segs[..3].iter().all(|s| *s == first), "{csv}");
        assert!(segs[3..].iter().all(|s| *s == newest), "{csv}");
    }
}

/// The name of the `i`th run directory of `wandb`, in name order.
fn run_dir_name_of(wandb: &Path, i: usize) -> String {
    leet::source::file::run_dirs(wandb)[i]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn shared_wandb() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/multinode-shared/wandb")
}

#[test]
fn a_metric_logged_by_two_nodes_is_a_series_per_node() {
    let run = merged_run(&shared_wandb().join("offline-run-20261207_090835-qa16shared-1"));
    let values = |key: &str| -> Vec<f64> {
        let s = run.metrics.get(key).unwrap_or_else(|| panic!("{key}"));
        s.points().iter().map(|p| p.1).collect()
    };
    // The primary's own keys as logged; the other node's labelled with its label.
    assert_eq!(values("common"), (0..10).map(f64::from).collect::<Vec<_>>());
    assert_eq!(
        values("common/l:node-1"),
        (100..110).map(f64::from).collect::<Vec<_>>()
    );
    assert_eq!(values("only0").len(), 10);
    assert_eq!(values("only1/l:node-1").len(), 10);
    assert!(run.metrics.get("only1").is_none());
    // The statistics of `common` are the primary's, as its summary is.
    let st = run.metrics.get("common").unwrap().stats();
    assert_eq!((st.count, st.last.map(|p| p.1)), (10, Some(9.0)));
    let (csv, _) = export_csv(&shared_wandb());
    assert!(
        // In key order: a metric's nodes side by side.
        csv.starts_with("_step,_runtime,_timestamp,common,common/l:node-1,only0,only1/l:node-1\n"),
        "{csv}"
    );
}

/// A job opened while it starts: the second node's directory is there but its
/// file is empty (its run record not written yet) when the first node is opened
/// and followed; once the second node has written, the run is read again as the
/// two nodes, each record once.
#[test]
fn a_node_that_starts_after_the_run_was_opened_joins_it() {
    use leet::source::follow::spawn_tail;
    use leet::source::tail::TailOptions;
    use std::time::{Duration, Instant};

    let src = shared_wandb();
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let name = "run-qa16shared.wandb";
    let dirs = [
        "offline-run-20261207_090835-qa16shared",
        "offline-run-20261207_090835-qa16shared-1",
    ];
    let bytes: Vec<Vec<u8>> = dirs
        .iter()
        .map(|d| std::fs::read(src.join(d).join(name)).unwrap())
        .collect();
    for d in dirs {
        std::fs::create_dir_all(wandb.join(d)).unwrap();
    }
    let files: Vec<PathBuf> = dirs.iter().map(|d| wandb.join(d).join(name)).collect();
    // The primary has written part of its file (cut anywhere), the other node nothing.
    std::fs::write(&files[0], &bytes[0][..bytes[0].len() / 2]).unwrap();
    std::fs::write(&files[1], b"").unwrap();

    let (tx, rx) = std::sync::mpsc::sync_channel(64);
    spawn_tail(
        wandb.join(dirs[0]),
        tx,
        TailOptions {
            chunk: 1 << 20,
            poll: Duration::from_millis(20),
        },
    );
    let mut app = App::new(Options::default());
    let deadline = Instant::now() + Duration::from_secs(60);
    let pump = |app: &mut App, done: &dyn Fn(&App) -> bool| {
        while !done(app) {
            assert!(Instant::now() < deadline, "timed out");
            if let Ok(m) = rx.recv_timeout(Duration::from_millis(100)) {
                app.update(m);
            }
        }
    };
    let half = bytes[0].len() as u64 / 2;
    pump(&mut app, &|a| {
        a.shown.source.file_len == half && a.shown.source.read_to > 0 && !a.shown.source.loading()
    });
    assert!(app.shown.run.metrics.get("only1/l:node-1").is_none());

    // The other node writes; the primary writes on.
    std::fs::write(&files[1], &bytes[1]).unwrap();
    std::fs::write(&files[0], &bytes[0]).unwrap();
    let points = |a: &App, key: &str| a.shown.run.metrics.get(key).map_or(0, |s| s.count());
    pump(&mut app, &|a| {
        points(a, "only1/l:node-1") == 10 && points(a, "common") == 10
    });
    // Read again from the start as the group: nothing counted twice.
    let values = |key: &str| -> Vec<f64> {
        let s = app.shown.run.metrics.get(key).unwrap();
        s.points().iter().map(|p| p.1).collect()
    };
    assert_eq!(values("common"), (0..10).map(f64::from).collect::<Vec<_>>());
    assert_eq!(
        values("common/l:node-1"),
        (100..110).map(f64::from).collect::<Vec<_>>()
    );
    assert_eq!(
        app.shown.run.history_rows,
        merged_run(&wandb.join(dirs[0])).history_rows
    );
}

/// A resumed run that is not the newest run of its wandb directory: the hint on
/// stderr names it by its id (`--run`), which reads it whole, stitched as the
/// viewer shows it (its own run directory would be one segment alone, and says
/// how to get the whole); `inspect --summary --run` reads it so too; an id of no
/// run there is an error naming the directory and the id.
#[test]
fn a_resumed_run_not_the_newest_is_exported_whole_by_its_id() {
    use leet::decode::synth::{run_dir_name, run_file, RunSpec};
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    write_rewound(&wandb);
    let (whole, _) = export_csv(tmp.path());
    // A newer run beside it.
    let spec = RunSpec {
        run_id: "newer1".into(),
        start_time: 1_796_000_500.0,
        steps: 3,
        metrics: vec!["acc".into()],
        exit_code: Some(0),
        ..RunSpec::default()
    };
    let dir = wandb.join(run_dir_name(spec.start_time, "newer1", true));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("run-newer1.wandb"), run_file(&spec)).unwrap();

    let (_, err) = export_csv(tmp.path());
    let hint = format!(
        "(to export another: leet export {} --run rew1)",
        wandb.display()
    );
    assert!(err.contains(&hint), "{err}");
    let by_id = |run: &str| {
        let opts = leet::inspect::export::ExportOptions {
            path: wandb.clone(),
            run: Some(run.to_owned()),
            ..Default::default()
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let r = leet::inspect::export::run(&opts, &mut out, &mut err);
        (
            r,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    };
    let (r, csv, err) = by_id("rew1");
    r.unwrap();
    assert_eq!(csv, whole);
    assert!(
        err.contains("newest of 2 segments") && !err.contains("holds"),
        "{err}"
    );
    // A segment's own directory: its rows alone, and how to get the whole.
    let (_, err) = export_csv(&wandb.join(run_dir_name_of(&wandb, 0)));
    assert!(
        err.contains("one of 2 segments") && err.contains("--run rew1 exports them stitched"),
        "{err}"
    );
    // The summary of the run by its id: the stitched run's last step.
    let opts = leet::inspect::InspectOptions {
        path: tmp.path().to_path_buf(),
        json: true,
        summary: true,
        run: Some("rew1".into()),
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    leet::inspect::run(&opts, &mut out, &mut err).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["step"], serde_json::json!(14));
    // No such run (the ids there named); nor a path smuggled in as an id.
    for id in ["nope", "../x", ""] {
        let (r, csv, _) = by_id(id);
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("no run with the id") && e.contains(&*wandb.to_string_lossy()),
            "{e}"
        );
        assert!(e.ends_with("; runs here: newer1, rew1"), "{e}");
        assert!(csv.is_empty());
    }
    let e = by_id("REW1").0.unwrap_err().to_string();
    assert!(
        e.ends_with("; did you mean rew1? (ids are told apart by case)"),
        "{e}"
    );
}

/// A node that starts and ends while the node followed is quiet: when it is
/// first seen the two did not (yet) run at the same time, so it reads as an
/// earlier segment; the followed node's later records show they did, and the
/// run is read again as the two nodes then.
#[test]
fn a_node_that_ran_while_the_followed_one_was_quiet_joins_when_it_writes_again() {
    use leet::decode::synth::{run_dir_name, run_file, RunSpec};
    use leet::source::follow::spawn_tail;
    use leet::source::tail::TailOptions;
    use std::time::{Duration, Instant};

    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let spec = |start: f64, steps: u64, metric: &str| RunSpec {
        run_id: "quiet1".into(),
        display_name: "job".into(),
        start_time: start,
        steps,
        metrics: vec![metric.into()],
        exit_code: None,
        ..RunSpec::default()
    };
    let dirs = [
        wandb.join(run_dir_name(1_796_000_000.0, "quiet1", true)),
        wandb.join(run_dir_name(1_796_000_010.0, "quiet1", true)),
    ];
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
    }
    let files: Vec<PathBuf> = dirs.iter().map(|d| d.join("run-quiet1.wandb")).collect();
    // Node 0 wrote its first rows (up to +3 s), then went quiet; node 1 is made.
    let whole0 = run_file(&spec(1_796_000_000.0, 60, "loss"));
    let early = run_file(&spec(1_796_000_000.0, 3, "loss"));
    let cut = whole0
        .iter()
        .zip(&early)
        .take_while(|(a, b)| a == b)
        .count()
        / leet::decode::leveldb::BLOCK_SIZE
        * leet::decode::leveldb::BLOCK_SIZE;
    let cut = cut.max(early.len().min(whole0.len()) / 2);
    std::fs::write(&files[0], &whole0[..cut]).unwrap();
    std::fs::write(&files[1], b"").unwrap();

    let (tx, rx) = std::sync::mpsc::sync_channel(64);
    spawn_tail(
        dirs[0].clone(),
        tx,
        TailOptions {
            chunk: 1 << 20,
            poll: Duration::from_millis(20),
        },
    );
    let mut app = App::new(leet::ui::Options::default());
    let deadline = Instant::now() + Duration::from_secs(60);
    let pump = |app: &mut App, until: Instant, done: &dyn Fn(&App) -> bool| {
        while !done(app) && Instant::now() < until {
            assert!(Instant::now() < deadline, "timed out");
            if let Ok(m) = rx.recv_timeout(Duration::from_millis(100)) {
                app.update(m);
            }
        }
    };
    pump(&mut app, deadline, &|a| {
        a.shown.source.read_to > 0 && !a.shown.source.loading()
    });
    // Node 1 runs from +10 s to +13 s, wholly in node 0's quiet time.
    std::fs::write(&files[1], run_file(&spec(1_796_000_010.0, 3, "other"))).unwrap();
    pump(&mut app, Instant::now() + Duration::from_secs(4), &|_| {
        false
    });
    assert!(app
        .shown
        .run
        .metrics
        .keys()
        .iter()
        .all(|k| !k.contains("/l:")));
    // Node 0 writes on, to +60 s: the two ran at the same time.
    std::fs::write(&files[0], &whole0).unwrap();
    let joined = |a: &App| {
        a.shown
            .run
            .metrics
            .keys()
            .iter()
            .any(|k| k.starts_with("other/l:"))
    };
    pump(&mut app, deadline, &joined);
    assert!(joined(&app));
    assert_eq!(
        app.shown.run.metrics.get("loss").map(|s| s.count()),
        Some(60)
    );
}

/// `inspect --summary` of a resumed run read whole starts when its first segment
/// did (as the viewer's overview says); of one segment's own directory, it says
/// it is that segment alone and how to read the run whole.
#[test]
fn the_summary_of_a_resumed_run_starts_with_its_first_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    write_rewound(&wandb);
    let whole = summary_of(tmp.path());
    let first = leet::text::rfc3339(1_796_000_000, 0).unwrap();
    assert_eq!(whole["start_time"], serde_json::json!(first));
    let opts = leet::inspect::InspectOptions {
        path: wandb.join(run_dir_name_of(&wandb, 0)),
        json: true,
        summary: true,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    leet::inspect::run(&opts, &mut out, &mut err).unwrap();
    let err = String::from_utf8(err).unwrap();
    assert!(
        err.contains(
            "is one of 2 segments of a resumed run: its summary alone; leet inspect --summary"
        ) && err.contains("--run rew1 reads them stitched"),
        "{err}"
    );
}
