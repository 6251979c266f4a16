//! The statistics table (`T`, issue 14): for every fixture, each history key's last,
//! min (and its step), max (and its step), mean and count, computed here from
//! `leet inspect --json`'s history records, equal those the store holds and those
//! of the table's rows; also past the per-series point cap, where the charts hold
//! a decimated series but the statistics stay exact.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use leet::msg::Msg;
use leet::store::series::Stats;
use leet::ui::{App, Options, Overlay};
use serde_json::Value;

/// Statistics of one key, as the test computes them.
#[derive(Debug, Default)]
struct Expect {
    count: u64,
    non_finite: u64,
    last: Option<(f64, f64)>,
    min: Option<(f64, f64)>,
    max: Option<(f64, f64)>,
    sum: f64,
    finite: u64,
}

impl Expect {
    fn push(&mut self, x: f64, y: f64) {
        self.count += 1;
        self.last = Some((x, y));
        if !y.is_finite() {
            self.non_finite += 1;
            return;
        }
        if self.min.is_none_or(|m| y < m.1) {
            self.min = Some((x, y));
        }
        if self.max.is_none_or(|m| y > m.1) {
            self.max = Some((x, y));
        }
        self.sum += y;
        self.finite += 1;
    }
}

/// W&B's define_metric glob: `*` any run of characters, anchored.
fn glob(pat: &str, s: &str) -> bool {
    match pat.split_once('*') {
        None => pat == s,
        Some((head, rest)) => {
            let Some(tail) = s.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| glob(rest, &tail[i..]))
        }
    }
}

/// Per history key, the statistics of its points: x is the row's step, or the
/// value of the key's define_metric step metric (in the row, else the last seen).
fn expected(run_dir: &Path) -> BTreeMap<String, Expect> {
    let mut stats = BTreeMap::new();
    expected_into(&mut stats, run_dir, None);
    stats
}

/// [`expected`] of the rows of `run_dir` before step `cut` (all: None), pushed
/// after those already in `stats` (a resumed run's earlier segments).
fn expected_into(stats: &mut BTreeMap<String, Expect>, run_dir: &Path, cut: Option<f64>) {
    let out = crate::common::isolated::leet()
        .args(["inspect", "--json"])
        .arg(run_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut defs: Vec<(String, String, String)> = Vec::new();
    let mut last_seen: BTreeMap<String, f64> = BTreeMap::new();
    let mut rows = 0u64;
    let text = String::from_utf8(out.stdout).unwrap();
    for line in text.lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        match rec["type"].as_str() {
            Some("metric") => {
                let m = &rec["metric"];
                let s = |k: &str| m[k].as_str().unwrap_or_default().to_owned();
                defs.push((s("name"), s("glob_name"), s("step_metric")));
            }
            Some("history") => {
                let h = &rec["history"];
                // Its `_step` item, else the record's step (as the decoder takes it).
                let step = h["item"]["_step"]
                    .as_f64()
                    .or_else(|| h["step"]["num"].as_f64())
                    .unwrap_or(rows as f64);
                rows += 1;
                if cut.is_some_and(|c| step >= c) {
                    continue;
                }
                let item = h["item"].as_object().unwrap();
                // The row's step and times are no metrics.
                let vals: Vec<(&String, f64)> = item
                    .iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "_step" | "_runtime" | "_timestamp"))
                    .filter_map(|(k, v)| common::json_number(v).map(|y| (k, y)))
                    .collect();
                for &(k, y) in &vals {
                    last_seen.insert(k.clone(), y);
                }
                for &(k, y) in &vals {
                    let def = defs.iter().rev().find(|(name, g, _)| {
                        (!name.is_empty() && name == k) || (!g.is_empty() && glob(g, k))
                    });
                    let x = match def.map(|d| d.2.as_str()).filter(|s| !s.is_empty()) {
                        Some(sm) => match last_seen.get(sm) {
                            Some(&x) => x,
                            None => continue,
                        },
                        None => step,
                    };
                    stats.entry(k.clone()).or_default().push(x, y);
                }
            }
            _ => {}
        }
    }
}

fn same(a: Option<(f64, f64)>, b: Option<(f64, f64)>) -> bool {
    a.map(|(x, y)| (x.to_bits(), y.to_bits())) == b.map(|(x, y)| (x.to_bits(), y.to_bits()))
}

/// `got` equals `want`: exactly, but for the mean (relative 1e-12).
fn check(what: &str, got: &Stats, want: &Expect) {
    assert_eq!(got.count, want.count, "{what}: count");
    assert_eq!(got.non_finite, want.non_finite, "{what}: NaN/inf count");
    assert!(
        same(got.last, want.last),
        "{what}: last {:?} {:?}",
        got.last,
        want.last
    );
    assert!(
        same(got.min, want.min),
        "{what}: min {:?} {:?}",
        got.min,
        want.min
    );
    assert!(
        same(got.max, want.max),
        "{what}: max {:?} {:?}",
        got.max,
        want.max
    );
    let mean = (want.finite > 0).then(|| want.sum / want.finite as f64);
    match (got.mean, mean) {
        (Some(g), Some(w)) => {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1e-300),
                "{what}: mean {g} {w}"
            );
        }
        (g, w) => assert_eq!(g, w, "{what}: mean"),
    }
}

fn load(dir: &Path, max_points: usize) -> App {
    let (_, batch) = leet::source::tail::read_batch(dir).unwrap();
    let mut app = App::new(Options {
        color: false,
        max_points,
        ..Options::default()
    });
    app.update(Msg::Resize(120, 40));
    app.update(Msg::Run(batch));
    app
}

/// The store's statistics of every key, and the table's rows, equal `expected`.
fn check_run(name: &str, dir: &Path, max_points: usize) -> usize {
    let want = expected(dir);
    let app = load(dir, max_points);
    let keys: Vec<&str> = app
        .shown
        .run
        .metrics
        .keys()
        .iter()
        .map(String::as_str)
        .collect();
    let want_keys: Vec<&str> = want.keys().map(String::as_str).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, want_keys, "{name}: history keys");
    let mut over_cap = 0;
    for (k, s) in app.shown.run.metrics.iter() {
        check(&format!("{name} {k} (store)"), &s.stats(), &want[k]);
        if s.count() > s.stored() as u64 {
            over_cap += 1;
        }
    }
    let rows = app.stats_rows();
    let row_keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
    let charted: Vec<&str> = app.charts.metric_keys.iter().map(String::as_str).collect();
    assert_eq!(
        row_keys, charted,
        "{name}: a row per charted metric, by name"
    );
    for r in rows.iter() {
        assert_eq!(r.cells.len(), 1);
        check(
            &format!("{name} {} (table)", r.key),
            r.cells[0].as_ref().unwrap(),
            &want[&r.key],
        );
    }
    over_cap
}

#[test]
fn table_numbers_equal_those_computed_from_inspect_json_for_every_fixture() {
    let mut nan = false;
    for (name, dir) in common::fixture_runs() {
        check_run(&name, &dir, Options::default().max_points);
        nan |= expected(&dir).values().any(|e| e.non_finite > 0);
    }
    // The fixtures do hold NaN and ±inf points (many_metrics), so their handling is checked.
    assert!(nan);
}

#[test]
fn stats_stay_exact_past_the_point_cap_where_the_charts_are_decimated() {
    // Fixtures with more rows than a 64-point cap (crashed has 251).
    let mut decimated = 0;
    for (name, dir) in common::fixture_runs() {
        decimated += check_run(&name, &dir, 64);
    }
    assert!(decimated > 0, "no fixture series went past the cap");
    // A generated run of 5,000 steps: every series compacted many times over.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run-synth001");
    std::fs::create_dir_all(&run).unwrap();
    let spec = leet::decode::synth::SynthSpec {
        steps: 5000,
        metrics: 6,
        ..Default::default()
    };
    std::fs::write(
        run.join("run-synth001.wandb"),
        leet::decode::synth::file_bytes(&spec),
    )
    .unwrap();
    let over = check_run("synth", &run, 64);
    assert!(over >= 6, "{over} series past the cap");
}

fn key(app: &mut App, c: KeyCode) {
    app.update(Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
}

fn chars(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

#[test]
fn keys_open_sort_reverse_filter_scroll_and_close_the_table() {
    let dir = common::runs_dir().join("many_metrics/wandb/latest-run");
    let mut app = load(&dir, Options::default().max_points);
    chars(&mut app, "T");
    assert!(matches!(app.overlay, Overlay::Stats(_)));
    let n = app.stats_rows().len();
    assert!(n > 100, "{n} rows");
    // Sorted by name at first.
    let names: Vec<String> = app.stats_rows().iter().map(|r| r.key.clone()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    // → twice: by min; the values ascend (missing ones last), r: descend.
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Right);
    assert_eq!(app.stats.sort, 2);
    let mins = |app: &App| -> Vec<f64> {
        app.stats_rows()
            .iter()
            .filter_map(|r| r.cells[0].and_then(|s| s.min).map(|p| p.1))
            .collect()
    };
    let asc = mins(&app);
    assert!(
        asc.len() > 100 && asc.windows(2).all(|w| w[0] <= w[1]),
        "{asc:?}"
    );
    chars(&mut app, "r");
    let desc = mins(&app);
    assert!(desc.windows(2).all(|w| w[0] >= w[1]), "{desc:?}");
    assert_eq!(desc.first(), asc.last());
    // The selection moves and keeps in view.
    key(&mut app, KeyCode::End);
    assert_eq!(app.overlay.stats_cursor().sel, n - 1);
    assert!(
        app.overlay.stats_cursor().top + leet::ui::overlay::stats::body_rows(40)
            > app.overlay.stats_cursor().sel
    );
    key(&mut app, KeyCode::Home);
    assert_eq!(
        (
            app.overlay.stats_cursor().sel,
            app.overlay.stats_cursor().top
        ),
        (0, 0)
    );
    key(&mut app, KeyCode::PageDown);
    assert_eq!(
        app.overlay.stats_cursor().sel,
        leet::ui::overlay::stats::body_rows(40)
    );
    // `/` filters by name, live; tab makes it a glob; enter keeps it; esc closes.
    chars(&mut app, "/");
    chars(&mut app, "^eval/");
    let rows = app.stats_rows();
    assert!(!rows.is_empty() && rows.len() < n);
    assert!(rows.iter().all(|r| r.key.starts_with("eval/")));
    assert_eq!(app.overlay.stats_cursor().sel, 0);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.stats.filter.text, "^eval/");
    key(&mut app, KeyCode::Esc);
    assert!(matches!(app.overlay, Overlay::None));
    // The metric charts' filter was not touched.
    assert!(!app.charts.filter.is_active());
    chars(&mut app, "T");
    assert_eq!(app.stats_rows().len(), rows.len(), "the filter stays");
    chars(&mut app, "T");
    assert!(matches!(app.overlay, Overlay::None));
}

#[test]
fn compared_runs_get_a_column_group_each_with_their_own_stats() {
    let main = common::runs_dir().join("tiny/wandb/latest-run");
    let mut app = load(&main, Options::default().max_points);
    let others = common::compare_multi(&mut app, 2);
    let cmds = app.update(Msg::Tick(1.0)).cmds;
    let _ = cmds;
    for (i, (_, dir)) in others.iter().enumerate() {
        let (_, b) = leet::source::tail::read_batch(dir).unwrap();
        let tag = app.runs.compare[i].tag;
        app.update(Msg::Tagged(tag, Box::new(Msg::Run(b))));
    }
    chars(&mut app, "T");
    let runs = app.stats_runs();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[1].color, 1);
    let want: Vec<BTreeMap<String, Expect>> = std::iter::once(&main)
        .chain(others.iter().map(|(_, d)| d))
        .map(|d| expected(d))
        .collect();
    let mut shared = 0;
    for r in app.stats_rows().iter() {
        assert_eq!(r.cells.len(), 3);
        for (i, c) in r.cells.iter().enumerate() {
            match (c, want[i].get(&r.key)) {
                (Some(s), Some(e)) => check(&format!("run {i} {}", r.key), s, e),
                (None, None) => {}
                (c, e) => panic!("run {i} {}: {c:?} vs {e:?}", r.key),
            }
        }
        shared += usize::from(r.cells.iter().all(Option::is_some));
    }
    assert!(shared > 0, "no metric logged by all three runs");
    // → past the first group's seven columns sorts by the second run's last value.
    for _ in 0..8 {
        key(&mut app, KeyCode::Right);
    }
    assert_eq!(app.stats.sort, 8);
    let lasts: Vec<f64> = app
        .stats_rows()
        .iter()
        .filter_map(|r| r.cells[1].and_then(|s| s.last).map(|p| p.1))
        .collect();
    assert!(
        !lasts.is_empty() && lasts.windows(2).all(|w| w[0] <= w[1]),
        "{lasts:?}"
    );
}

#[test]
fn the_live_monitor_has_no_table_and_the_help_lists_its_keys() {
    let mut live = App::live(Options::default(), 60.0);
    live.update(Msg::Resize(120, 40));
    chars(&mut live, "T");
    assert!(matches!(live.overlay, Overlay::None));
    let km = leet::ui::keymap::Keymap::builtin();
    let lines = leet::ui::keymap::help_lines(&km, false);
    let at = lines
        .iter()
        .position(|l| l.0.is_empty() && l.1 == "Statistics table")
        .unwrap();
    let section: Vec<&(String, String)> = lines[at + 1..]
        .iter()
        .take_while(|l| !l.0.is_empty())
        .collect();
    for (keys, what) in [
        ("r", "Reverse the sort order"),
        ("left, a, <, right, d, >", "Sort by another column"),
        (
            "tab, shift+right, backtab, shift+left",
            "Same column of the next / previous run",
        ),
        ("/", "Filter the metrics by name"),
        ("esc, T", "Close the table"),
    ] {
        assert!(
            section.iter().any(|l| l.0 == keys && l.1 == what),
            "{keys} {what}: {section:?}"
        );
    }
    assert!(lines
        .iter()
        .any(|l| l.0 == "T" && l.1.starts_with("Statistics table")));
}

/// The workspace of `wandb` (`leet WANDB-DIR`) with every reader it asks for
/// carried out (the whole directory read at once) and the index read at a fixed
/// "now"; then `T`.
fn workspace_table(wandb: &Path, max_points: usize) -> App {
    use leet::source::index::{scan_with, ScanOptions};
    use leet::ui::Cmd;
    let cache = tempfile::tempdir().unwrap();
    let opts = ScanOptions {
        now: Some(common::screen::NOW),
        ..ScanOptions::default()
    };
    let scan = |d: &Path| scan_with(d, cache.path(), &opts).entries;
    let mut app = App::new(Options {
        color: false,
        max_points,
        ..Options::default()
    });
    app.update(Msg::Resize(120, 40));
    let latest = scan(wandb).first().map(|e| e.dir.clone());
    app.open_workspace(wandb.to_path_buf(), None, latest, false);
    let mut queue: std::collections::VecDeque<Cmd> = app.take_cmds().into();
    while let Some(cmd) = queue.pop_front() {
        let msgs = match cmd {
            Cmd::StartReader { path, tag } => {
                let (_, b) = leet::source::tail::read_batch(&path).unwrap();
                vec![Msg::Tagged(tag, Box::new(Msg::Run(b)))]
            }
            Cmd::ScanIndex { wandb_dir, .. } => vec![Msg::Indexed {
                entries: scan(&wandb_dir),
                wandb_dir,
            }],
            _ => Vec::new(),
        };
        for m in msgs {
            queue.extend(app.update(m).cmds);
        }
    }
    chars(&mut app, "T");
    assert!(matches!(app.overlay, Overlay::Stats(_)));
    app
}

/// The table has one column group, `label`, whose numbers are `want`'s.
fn check_one_group(app: &App, label: &str, want: &BTreeMap<String, Expect>) {
    let runs = app.stats_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].label, label);
    let rows = app.stats_rows();
    assert_eq!(
        rows.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(),
        want.keys().map(String::as_str).collect::<Vec<_>>()
    );
    for r in rows.iter() {
        assert_eq!(r.cells.len(), 1);
        check(&r.key, r.cells[0].as_ref().unwrap(), &want[&r.key]);
    }
}

#[test]
fn a_resumed_run_is_one_column_group_of_its_stitched_steps() {
    // The fixture: 30 steps, then an offline restart at step 0 for 20 steps. The
    // second segment wins from its first step: the table is its numbers alone.
    let wandb = common::runs_dir().join("resumed/wandb");
    let app = workspace_table(&wandb, Options::default().max_points);
    let second = wandb.join("offline-run-20261130_175128-resum001");
    check_one_group(&app, "resumed-run (2 segments)", &expected(&second));
    // → past the first group's seven columns stops at its last.
    let mut app = app;
    for _ in 0..20 {
        key(&mut app, KeyCode::Right);
    }
    assert_eq!(app.stats.sort, 7);
}

#[test]
fn a_run_resumed_from_a_checkpoint_joins_its_segments_numbers_exactly() {
    use leet::decode::synth::{run_dir_name, run_file, RunSpec};
    // 0..3000, then resumed from step 2000 to 4000: the first segment's steps
    // before 2000 and the whole second, each series compacted past a 64-point cap.
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let mut dirs = Vec::new();
    for (start, first_step, steps, lr) in [(1e9, 0, 3000, "0.001"), (1e9 + 4e3, 2000, 2000, "0.01")]
    {
        let spec = RunSpec {
            run_id: "resum003".into(),
            display_name: "rewound".into(),
            start_time: start,
            config: vec![("lr".into(), lr.into())],
            first_step,
            steps,
            resumed: first_step > 0,
            ..RunSpec::default()
        };
        let dir = wandb.join(run_dir_name(start, &spec.run_id, false));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("run-resum003.wandb"), run_file(&spec)).unwrap();
        dirs.push(dir);
    }
    let app = workspace_table(&wandb, 64);
    let mut want = BTreeMap::new();
    expected_into(&mut want, &dirs[0], Some(2000.0));
    expected_into(&mut want, &dirs[1], None);
    assert_eq!(want["loss"].count, 4000);
    check_one_group(&app, "rewound (2 segments)", &want);
    let compacted = std::iter::once(&app.shown.run)
        .chain(app.runs.compare.iter().map(|c| &c.run))
        .filter_map(|r| r.metrics.get("loss"))
        .all(|s| s.count() > s.stored() as u64);
    assert!(compacted, "both segments' series past their cap");
}

#[test]
fn the_sort_column_moves_a_whole_run_at_a_time() {
    use leet::ui::overlay::stats::{sort_by_other_run as other, FIELDS};
    let n = FIELDS.len();
    // From the metric name: the second run's last; back from the first run: the name.
    assert_eq!(other(0, 3, true), 1 + n);
    assert_eq!(other(0, 3, false), 0);
    assert_eq!(other(0, 1, true), 0);
    assert_eq!(other(1 + 5, 3, false), 0);
    // The same field (mean) of the next or previous run, and no further than the last.
    assert_eq!(other(1 + 5, 3, true), 1 + n + 5);
    assert_eq!(other(1 + n + 5, 3, true), 1 + 2 * n + 5);
    assert_eq!(other(1 + 2 * n + 5, 3, true), 1 + 2 * n + 5);
    assert_eq!(other(1 + 2 * n + 5, 3, false), 1 + n + 5);
}

/// The rows are made once for what they show: moving the selection reuses them
/// (it made every row of every metric again, a third of a second a key on a run
/// of 100,000 metrics); a new order, a filter or new records make them again.
#[test]
fn the_rows_are_made_again_only_when_what_they_show_changes() {
    let dir = common::runs_dir().join("many_metrics/wandb/latest-run");
    let mut app = load(&dir, Options::default().max_points);
    chars(&mut app, "T");
    let first = app.stats_rows();
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::PageDown);
    assert!(
        std::sync::Arc::ptr_eq(&first, &app.stats_rows()),
        "a move made them again"
    );
    key(&mut app, KeyCode::Right);
    let sorted = app.stats_rows();
    assert!(!std::sync::Arc::ptr_eq(&first, &sorted));
    assert_eq!(sorted.len(), first.len());
    chars(&mut app, "/loss");
    let filtered = app.stats_rows();
    assert!(filtered.len() < first.len() && !filtered.is_empty());
    assert!(app
        .stats_count()
        .starts_with(&format!("[{}/", filtered.len())));
}
