//! App state transitions driven by messages: filter editing, liveness, mouse,
//! samples, prefix keys.

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use leet::msg::{FollowTrouble, Msg, RunBatch, Sample};
use leet::ui::{App, Cmd, LiveState, Options, Overlay};

/// The app at 200×50 with `fixture`'s latest run read (also the paste tests').
pub(crate) fn app(fixture: &str) -> App {
    let dir = common::runs_dir().join(fixture).join("wandb/latest-run");
    let (_, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(200, 50));
    app.update(Msg::Run(batch));
    app
}

/// `many_metrics` with a plain list of 33 numbers, `edges`, in its summary: a
/// row per element, `edges[0]` … `edges[32]` (its histogram is one row).
fn many_metrics_with_edges() -> App {
    use leet::decode::pb;
    use prost::Message as _;
    let mut a = app("many_metrics");
    let list: Vec<String> = (0..33).map(|i| i.to_string()).collect();
    let record = pb::Record {
        num: 1_000_000,
        record_type: Some(pb::record::RecordType::Summary(pb::SummaryRecord {
            update: vec![pb::SummaryItem {
                key: "edges".into(),
                value_json: format!("[{}]", list.join(",")),
                ..Default::default()
            }],
            ..Default::default()
        })),
        ..Default::default()
    };
    let at = a.shown.source.read_to;
    a.update(Msg::Run(RunBatch {
        records: vec![(at, record.encode_to_vec())],
        read_to: at,
        file_len: a.shown.source.file_len,
        ..RunBatch::default()
    }));
    a
}

thread_local! {
    /// Reader starts and stops the app asked for, in order (each test runs on its
    /// own thread).
    static READERS: std::cell::RefCell<Vec<Cmd>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Apply messages as the runtime does: the commands that ask for something are
/// answered at once by the real executor (`runtime::answer`) and the answers
/// applied in turn; reader starts and stops are kept for [`readers`].
fn send(app: &mut App, msgs: impl IntoIterator<Item = Msg>) {
    for m in msgs {
        let mut queue: std::collections::VecDeque<Cmd> = app.update(m).cmds.into();
        while let Some(cmd) = queue.pop_front() {
            if cmd.is_reader() {
                READERS.with(|r| r.borrow_mut().push(cmd));
            } else if let Some(answer) = leet::runtime::answer(cmd) {
                queue.extend(app.update(answer).cmds);
            }
        }
    }
}

/// The reader commands since the last call (and those asked for outside an update).
fn readers(app: &mut App) -> Vec<Cmd> {
    let mut v = app.take_cmds();
    v.extend(READERS.with(|r| std::mem::take(&mut *r.borrow_mut())));
    v
}

#[test]
fn filter_is_live_keeps_last_valid_set_and_esc_restores() {
    let mut a = app("many_metrics");
    let total = a.charts.shown.len();
    send(&mut a, [Msg::char('/')]);
    send(&mut a, Msg::typed("LOSS"));
    let n_loss = a.charts.shown.len();
    assert!(n_loss > 0 && n_loss < total, "case-insensitive, live");
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert_eq!(a.charts.filter.text, "LOSS");
    // An invalid pattern shows its error and keeps the last valid match set.
    send(&mut a, [Msg::char('/')]);
    send(&mut a, Msg::typed("(ev"));
    assert!(a.charts.filter.error.is_some());
    let n_before = a.charts.shown.len();
    assert!(n_before > 0);
    // Esc restores the filter in force before editing.
    send(&mut a, [Msg::key(KeyCode::Esc)]);
    assert_eq!(a.charts.filter.text, "LOSS");
    assert_eq!(a.charts.shown.len(), n_loss);
    // Ctrl+L clears; Ctrl+C quits even while typing a filter.
    send(&mut a, [Msg::ctrl('l')]);
    assert_eq!(a.charts.shown.len(), total);
    send(&mut a, [Msg::char('/')]);
    assert!(a.update(Msg::ctrl('c')).quit);
}

/// An app stale after 60 s, its file opened, last modified at 1000 s.
fn opened_stale_after_60() -> App {
    let mut a = App::new(Options {
        stale_after: 60.0,
        ..Options::default()
    });
    send(
        &mut a,
        [Msg::Opened {
            path: "x.wandb".into(),
            len: 0,
            modified: Some(1000.0),
        }],
    );
    a
}

#[test]
fn a_run_whose_server_polls_fail_shows_why_and_is_not_called_crashed() {
    let mut a = opened_stale_after_60();
    a.update(Msg::Tick(1100.0));
    assert!(matches!(a.live_state(), LiveState::MaybeCrashed(_)));
    let e = "polling the server: http://h/graphql: the server answered HTTP 500 \x1b[31m";
    a.update(Msg::FollowTrouble(Some(FollowTrouble {
        text: e.into(),
        polls_fail: true,
    })));
    a.update(Msg::Tick(1200.0));
    assert!(matches!(a.live_state(), LiveState::Running(_)));
    let shown = a.shown.source.error.clone().expect("the error is shown");
    assert!(
        shown.contains("HTTP 500") && !shown.contains('\x1b'),
        "{shown}"
    );
    // It stays while the polls fail, and goes when they answer.
    a.update(Msg::Tick(1300.0));
    assert_eq!(a.shown.source.error.as_deref(), Some(shown.as_str()));
    a.update(Msg::FollowTrouble(None));
    a.update(Msg::Tick(1301.0));
    assert_eq!(a.shown.source.error, None);
    assert!(matches!(a.live_state(), LiveState::MaybeCrashed(_)));
}

#[test]
fn parts_a_server_did_not_give_are_said_and_do_not_hide_a_quiet_run() {
    let mut a = opened_stale_after_60();
    let e = "the server gave no console, system metrics: http://h/graphql: timed out";
    a.update(Msg::FollowTrouble(Some(FollowTrouble {
        text: e.into(),
        polls_fail: false,
    })));
    a.update(Msg::Tick(1100.0));
    assert_eq!(a.shown.source.error.as_deref(), Some(e));
    // The polls answer: a run quiet that long may have crashed.
    assert!(matches!(a.live_state(), LiveState::MaybeCrashed(_)));
}

#[test]
fn quiet_run_becomes_possibly_crashed_and_revives() {
    let mut a = opened_stale_after_60();
    a.update(Msg::Tick(1001.0));
    assert_eq!(a.live_state(), LiveState::Live);
    a.update(Msg::Tick(1030.0));
    assert!(matches!(a.live_state(), LiveState::Running(_)));
    a.update(Msg::Tick(1100.0));
    assert!(matches!(a.live_state(), LiveState::MaybeCrashed(_)));
    a.update(Msg::Run(RunBatch {
        grew_at: Some(1101.0),
        ..RunBatch::default()
    }));
    a.update(Msg::Tick(1102.0));
    assert_eq!(a.live_state(), LiveState::Live);
}

#[test]
fn mouse_click_focuses_and_wheel_zooms_x() {
    let mut a = app("tiny");
    assert_eq!(a.charts.grid.focus, 0);
    let body = leet::ui::layout::grid_body(a.screen.areas.grid);
    let (c, r) = a.charts.grid.shape(a.charts.shown.len());
    let cell = leet::ui::layout::grid_cell(body, c, r, 1);
    let at = |kind| {
        Msg::Mouse(MouseEvent {
            kind,
            column: cell.x + cell.width / 2,
            row: cell.y + cell.height / 2,
            modifiers: KeyModifiers::NONE,
        })
    };
    a.update(at(MouseEventKind::Down(MouseButton::Left)));
    assert_eq!(a.charts.grid.focus, 1);
    let key = a.focused_key().unwrap().to_owned();
    a.update(at(MouseEventKind::ScrollUp));
    let (x0, x1) = a.charts.zoom[&key];
    assert!(x0 > 0.0 || x1 < 49.0, "{x0} {x1}");
    a.update(at(MouseEventKind::ScrollDown));
    a.update(at(MouseEventKind::ScrollDown));
    assert!(
        !a.charts.zoom.contains_key(&key),
        "zoomed back out to the full range"
    );
}

#[test]
fn keys_zoom_the_focused_chart_about_the_crosshair_or_the_middle() {
    let mut a = app("tiny");
    let key = a.focused_key().unwrap().to_owned();
    // The middle of 0..49: in, then in again, narrower each time and centred.
    send(&mut a, [Msg::char('>')]);
    let (x0, x1) = a.charts.zoom[&key];
    assert!((x0 + x1 - 49.0).abs() < 1e-9 && x1 - x0 < 49.0, "{x0} {x1}");
    send(&mut a, [Msg::char('.')]);
    let (y0, y1) = a.charts.zoom[&key];
    assert!(y1 - y0 < x1 - x0, "{y0} {y1}");
    // Out to the whole range again: no zoom left.
    send(&mut a, [Msg::char('<'), Msg::char(','), Msg::char('<')]);
    assert!(!a.charts.zoom.contains_key(&key));
    // With the crosshair on, about its x.
    send(&mut a, [Msg::char('C')]);
    for _ in 0..5 {
        send(&mut a, [Msg::key(KeyCode::Right)]);
    }
    let x = a.charts.crosshair.as_ref().expect("crosshair on").x;
    send(&mut a, [Msg::char('>')]);
    let (z0, z1) = a.charts.zoom[&key];
    assert!((z0..=z1).contains(&x), "{z0} {z1} {x}");
    // Zoomed about x, not the middle: x keeps its place across the range.
    assert!(
        ((x - z0) / (z1 - z0) - x / 49.0).abs() < 1e-9,
        "{z0} {z1} {x}"
    );
}

#[test]
fn samples_feed_system_charts() {
    let mut a = App::live(Options::default(), 600.0);
    for i in 0..10 {
        a.update(Msg::Sample(Sample {
            timestamp: 1000.0 + f64::from(i),
            errors: Vec::new(),
            values: vec![
                ("cpu".into(), 10.0),
                ("gpu.0.gpu".into(), 50.0),
                ("gpu.1.gpu".into(), 60.0),
                ("network.recv".into(), f64::from(i) * 1000.0),
            ],
        }));
    }
    let titles: Vec<&str> = a.charts.sys.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, ["GPU Utilization", "Process CPU", "Network"]);
    assert_eq!(a.charts.sys[0].series.len(), 2);
    send(&mut a, [Msg::char('\\')]);
    send(&mut a, Msg::typed("gpu"));
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert_eq!(a.panes.system.shown.len(), 1);
}

#[test]
fn columns_and_rows_prefix_keys() {
    let mut a = app("many_metrics");
    send(
        &mut a,
        [
            Msg::char('c'),
            Msg::char('2'),
            Msg::char('r'),
            Msg::char('3'),
        ],
    );
    assert_eq!((a.charts.grid.cols, a.charts.grid.rows), (2, 3));
    send(&mut a, [Msg::char('n')]);
    assert_eq!(a.charts.grid.focus, 6);
    send(&mut a, [Msg::key(KeyCode::End)]);
    assert_eq!(
        a.charts.grid.page(),
        a.charts.grid.pages(a.charts.shown.len()) - 1
    );
    send(
        &mut a,
        [Msg::key(KeyCode::Home), Msg::char('c'), Msg::char('0')],
    );
    assert!(a.charts.grid.cols_setting.is_none());
    // Hidden metrics (define_metric hidden) are not charted.
    assert!(a
        .charts
        .metric_keys
        .iter()
        .all(|k| !a.shown.run.is_hidden(k)));
}

#[test]
fn a_restarted_file_starts_the_run_over() {
    let dir = common::runs_dir().join("tiny/wandb/latest-run");
    let (_, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut a = App::new(Options::default());
    a.update(Msg::Resize(120, 40));
    a.update(Msg::Run(batch.clone()));
    let rows = a.shown.run.history_rows;
    a.update(Msg::Run(RunBatch {
        restarted: true,
        ..batch
    }));
    assert_eq!(a.shown.run.history_rows, rows, "records were applied twice");
    assert_eq!(a.shown.run.counts.total, 180);
}

#[test]
fn sidebar_keys_always_act_and_empty_system_sidebar_gives_way() {
    // 80 columns: no room for both sidebars, so the system one starts hidden.
    let mut a = app("system");
    a.update(Msg::Resize(80, 24));
    assert!(a.screen.areas.left.is_some() && a.screen.areas.right.is_none());
    // `]` shows it; the overview gives way rather than the key doing nothing.
    send(&mut a, [Msg::char(']')]);
    assert!(a.screen.areas.right.is_some() && a.screen.areas.left.is_none());
    // `[` brings the overview back and the system sidebar gives way.
    send(&mut a, [Msg::char('[')]);
    assert!(a.screen.areas.left.is_some() && a.screen.areas.right.is_none());
    // Pressed on a visible sidebar, the key hides it.
    send(&mut a, [Msg::char('[')]);
    assert!(a.screen.areas.left.is_none());

    // A run without system metrics gets no empty right sidebar, and `]` does not
    // hide the overview for a sidebar that could show nothing.
    let mut t = app("tiny");
    assert!(t.charts.sys.is_empty());
    assert!(t.screen.areas.right.is_none() && t.screen.areas.left.is_some());
    send(&mut t, [Msg::char(']'), Msg::char(']')]);
    assert!(t.screen.areas.left.is_some());
}

#[test]
fn a_typed_filter_starts_from_the_first_page() {
    let mut a = app("many_metrics");
    send(&mut a, [Msg::char('n'), Msg::char('n'), Msg::char('n')]);
    assert!(a.charts.grid.page() > 0);
    send(&mut a, [Msg::char('/')]);
    send(&mut a, Msg::typed("eval"));
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert_eq!(a.charts.grid.focus, 0);
    assert_eq!(a.charts.grid.page(), 0);

    // The system filter goes back to the first system chart too.
    let mut s = app("system");
    s.panes.system.scroll = 3;
    send(&mut s, [Msg::char('\\')]);
    send(&mut s, Msg::typed("mem"));
    send(&mut s, [Msg::key(KeyCode::Enter)]);
    assert_eq!(s.panes.system.scroll, 0);
    assert!(s.panes.system.shown.len() >= 2);
}

#[test]
fn run_picker_opens_another_run_and_drops_the_old_readers_messages() {
    let multi = common::runs_dir().join("multi/wandb");
    let latest = common::wandb_file(&multi.join("latest-run"));
    let (file, batch) = leet::source::tail::read_batch(&latest).unwrap();
    let mut a = App::new(Options::default());
    a.update(Msg::Resize(160, 40));
    a.request_open(multi.clone());
    assert_eq!(
        readers(&mut a),
        [Cmd::StartReader {
            path: multi.clone(),
            tag: 0
        }]
    );
    let opened = |path: std::path::PathBuf| Msg::Opened {
        path,
        len: 1,
        modified: None,
    };
    send(&mut a, [Msg::Tagged(0, Box::new(opened(file.clone())))]);
    send(&mut a, [Msg::Tagged(0, Box::new(Msg::Run(batch.clone())))]);
    assert_eq!(a.shown.run.info.run_id, "multi005");
    assert_eq!(a.shown.source.runs_here, 5);

    send(&mut a, [Msg::char('R')]);
    assert!(matches!(a.overlay, Overlay::Runs));
    assert_eq!(a.runs.list.len(), 5);
    assert_eq!(a.runs.sel, 0, "the run shown is selected");
    // Enter on the run shown just closes the picker.
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert!(!matches!(a.overlay, Overlay::Runs));
    assert!(readers(&mut a).is_empty());

    send(
        &mut a,
        [
            Msg::char('R'),
            Msg::key(KeyCode::Down),
            Msg::key(KeyCode::Enter),
        ],
    );
    let cmds = readers(&mut a);
    let [Cmd::StopReader { tag: 0 }, Cmd::StartReader { path: dir, tag }] = cmds.as_slice() else {
        panic!("{cmds:?}");
    };
    assert!(
        dir.ends_with("offline-run-20261130_175139-multi004"),
        "{dir:?}"
    );
    let tag = *tag;
    assert!(a.charts.metric_keys.is_empty() && a.shown.run.info.run_id.is_empty());
    // What the old reader had queued is dropped; the new reader's messages apply.
    send(&mut a, [Msg::Tagged(0, Box::new(Msg::Run(batch)))]);
    assert!(a.shown.run.info.run_id.is_empty());
    let (file4, batch4) = leet::source::tail::read_batch(dir).unwrap();
    send(&mut a, [Msg::Tagged(tag, Box::new(opened(file4)))]);
    send(&mut a, [Msg::Tagged(tag, Box::new(Msg::Run(batch4)))]);
    assert_eq!(a.shown.run.info.run_id, "multi004");
    assert!(!a.charts.metric_keys.is_empty());
    // Esc closes the picker without opening anything.
    send(&mut a, [Msg::char('R'), Msg::key(KeyCode::Esc)]);
    assert!(!matches!(a.overlay, Overlay::Runs));
    assert!(readers(&mut a).is_empty());
}

#[test]
fn compared_runs_get_their_own_readers_and_lines() {
    let multi = common::runs_dir().join("multi/wandb");
    let latest = common::wandb_file(&multi.join("latest-run"));
    let (file, batch) = leet::source::tail::read_batch(&latest).unwrap();
    let mut a = App::new(Options::default());
    a.update(Msg::Resize(160, 40));
    send(
        &mut a,
        [Msg::Opened {
            path: file,
            len: 1,
            modified: None,
        }],
    );
    a.update(Msg::Run(batch));
    let keys = a.charts.metric_keys.clone();
    // Space on the second and third runs: two readers start, with new tags.
    send(
        &mut a,
        [
            Msg::char('R'),
            Msg::key(KeyCode::Down),
            Msg::char(' '),
            Msg::key(KeyCode::Down),
            Msg::char(' '),
        ],
    );
    let cmds = readers(&mut a);
    let starts: Vec<(std::path::PathBuf, u64)> = cmds
        .iter()
        .map(|c| match c {
            Cmd::StartReader { path, tag } => (path.clone(), *tag),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(starts.len(), 2);
    assert_ne!(starts[0].1, starts[1].1);
    assert_eq!(a.runs.compare.len(), 2);
    // Space on the run shown does nothing.
    send(&mut a, [Msg::key(KeyCode::Home), Msg::char(' ')]);
    assert_eq!(a.runs.compare.len(), 2);
    for (dir, tag) in &starts {
        let (_, b) = leet::source::tail::read_batch(dir).unwrap();
        send(&mut a, [Msg::Tagged(*tag, Box::new(Msg::Run(b)))]);
    }
    assert_eq!(a.runs.compare[0].label, "multi-3");
    assert_eq!(a.runs.compare[1].label, "multi-2");
    assert!(a
        .runs
        .compare
        .iter()
        .all(|c| c.run.metrics.get("loss").is_some()));
    assert_eq!(a.charts.metric_keys, keys, "same keys, more lines");
    // The main run is untouched by the compared runs' records.
    assert_eq!(a.shown.run.info.run_id, "multi005");
    // Space again stops the reader and removes the lines.
    send(&mut a, [Msg::key(KeyCode::Down), Msg::char(' ')]);
    assert_eq!(readers(&mut a), [Cmd::StopReader { tag: starts[0].1 }]);
    assert_eq!(a.runs.compare.len(), 1);
    // Opening a compared run makes it the main one and stops drawing it twice.
    send(&mut a, [Msg::key(KeyCode::Down), Msg::key(KeyCode::Enter)]);
    let cmds = readers(&mut a);
    assert!(
        cmds.contains(&Cmd::StopReader { tag: starts[1].1 }),
        "{cmds:?}"
    );
    assert!(a.runs.compare.is_empty());
}

#[test]
fn overview_keys_in_natural_order() {
    use leet::ui::Row;
    let a = many_metrics_with_edges();
    let bins: Vec<&str> = a
        .panes
        .overview
        .rows
        .iter()
        .filter_map(|r| match r {
            Row::Item(k, _) if k.starts_with("edges[") => Some(k.as_str()),
            _ => None,
        })
        .collect();
    assert!(bins.len() > 11, "{bins:?}");
    let want: Vec<String> = (0..bins.len()).map(|i| format!("edges[{i}]")).collect();
    assert_eq!(bins, want);
}

/// The overview's Environment section: header and keys.
fn environment_keys(a: &App) -> (String, Vec<String>) {
    use leet::ui::Row;
    let at = a
        .panes
        .overview
        .rows
        .iter()
        .position(|r| matches!(r, Row::Header(h) if h.starts_with("Environment")))
        .unwrap();
    let Row::Header(h) = &a.panes.overview.rows[at] else {
        unreachable!()
    };
    let keys = a.panes.overview.rows[at + 1..]
        .iter()
        .map_while(|r| match r {
            Row::Item(k, _)
            | Row::Bytes(k, _)
            | Row::Metric(k, _)
            | Row::Note(k, _)
            | Row::Time(k, _) => Some(k.clone()),
            Row::Header(_) => None,
        })
        .collect();
    (h.clone(), keys)
}

#[test]
fn environment_as_wandb_shows_it() {
    // `wandb leet` 0.31.0 on the same fixtures: protobuf-JSON names, every field of
    // both environment records (writerId too), sorted.
    let args: Vec<String> = (0..7).map(|i| format!("args[{i}]")).collect();
    let mut tiny = args.clone();
    tiny.extend(
        [
            "codePath",
            "codePathLocal",
            "executable",
            "host",
            "os",
            "program",
            "python",
            "root",
            "startedAt",
            "writerId",
        ]
        .map(String::from),
    );
    assert_eq!(
        environment_keys(&app("tiny")),
        ("Environment [17]".to_owned(), tiny)
    );
    let mut system = args;
    system.extend(
        [
            "codePath",
            "codePathLocal",
            "cpu.model",
            "cpu_count",
            "cpu_count_logical",
            "disk./.total",
            "disk./.used",
            "executable",
            "host",
            "memory.total",
            "os",
            "program",
            "python",
            "root",
            "startedAt",
            "writerId",
        ]
        .map(String::from),
    );
    assert_eq!(
        environment_keys(&app("system")),
        ("Environment [23]".to_owned(), system)
    );
    let a = app("tiny");
    let started = a.panes.overview.rows.iter().find_map(|r| match r {
        leet::ui::Row::Item(k, v) if k == "startedAt" => Some(v.as_str()),
        _ => None,
    });
    assert_eq!(started, Some("2026-11-30T17:48:29.120325Z"));
}

#[test]
fn a_copied_crashed_run_is_judged_by_its_records_not_the_copy_time() {
    let dir = common::runs_dir().join("crashed/wandb/latest-run");
    let (file, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut a = App::new(Options::default());
    a.update(Msg::Run(batch));
    let last = a.shown.run.last_time.unwrap();
    // The copy's mtime is "now"; its newest record is an hour older.
    let now = last + 3600.0;
    let len = a.shown.source.read_to;
    send(
        &mut a,
        [Msg::Opened {
            path: file,
            len,
            modified: Some(now),
        }],
    );
    a.update(Msg::Tick(now + 1.0));
    assert!(
        matches!(a.live_state(), LiveState::MaybeCrashed(q) if q > 3000.0),
        "{:?}",
        a.live_state()
    );
    // Once the file grows, growth is what counts.
    a.update(Msg::Run(RunBatch {
        grew_at: Some(now + 2.0),
        read_to: a.shown.source.read_to,
        file_len: a.shown.source.file_len,
        ..RunBatch::default()
    }));
    a.update(Msg::Tick(now + 3.0));
    assert_eq!(a.live_state(), LiveState::Live);
}

#[test]
fn overview_filter_keeps_matching_rows_under_their_sections() {
    use leet::ui::Row;
    let mut a = many_metrics_with_edges();
    let all = a.panes.overview.rows.len();
    send(&mut a, [Msg::char('o')]);
    send(&mut a, Msg::typed("edges\\[1"));
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    let items: Vec<&str> = a
        .panes
        .overview
        .rows
        .iter()
        .filter_map(|r| match r {
            Row::Item(k, _)
            | Row::Bytes(k, _)
            | Row::Metric(k, _)
            | Row::Note(k, _)
            | Row::Time(k, _) => Some(k.as_str()),
            Row::Header(_) => None,
        })
        .collect();
    assert!(
        !items.is_empty() && items.iter().all(|k| k.contains("edges[1")),
        "{items:?}"
    );
    let headers: Vec<&str> = a
        .panes
        .overview
        .rows
        .iter()
        .filter_map(|r| match r {
            Row::Header(h) => Some(h.as_str()),
            Row::Item(..) | Row::Bytes(..) | Row::Metric(..) | Row::Note(..) | Row::Time(..) => {
                None
            }
        })
        .collect();
    // Every section keeps its header, counting its matches: one without any
    // collapses to its title (issue 13: the sections show together).
    assert_eq!(
        headers,
        [
            "Config [0 of 2]",
            "Summary [11 of 244]",
            "Environment [0 of 17]"
        ]
    );
    // Values match too; ctrl+l clears every filter.
    send(&mut a, [Msg::char('o')]);
    send(&mut a, [Msg::ctrl('u')]);
    send(&mut a, Msg::typed("leet-fixtures"));
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert!(a
        .panes
        .overview
        .rows
        .iter()
        .any(|r| matches!(r, Row::Item(k, _) if k == "Project")));
    send(&mut a, [Msg::ctrl('l')]);
    assert_eq!(a.panes.overview.rows.len(), all);
}

#[test]
fn slash_in_the_focused_console_filters_its_lines() {
    let mut a = app("crashed");
    let total = a.console_view().len();
    let charts = a.charts.shown.len();
    send(&mut a, [Msg::char('4')]);
    assert_eq!(a.panels.focus, leet::ui::panels::Pane::Console);
    send(&mut a, [Msg::char('/')]);
    send(&mut a, Msg::typed("STEP 2[0-4]$"));
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    let v = a.console_view();
    let texts: Vec<String> = (0..v.len())
        .map(|i| v.get(i).unwrap().text.clone())
        .collect();
    assert_eq!(
        texts,
        [
            "@@STEP 20",
            "@@STEP 21",
            "@@STEP 22",
            "@@STEP 23",
            "@@STEP 24"
        ]
    );
    assert_eq!(v.total(), total);
    // The charts are not filtered.
    assert_eq!(a.charts.shown.len(), charts);
    send(&mut a, [Msg::ctrl('l')]);
    assert_eq!(a.console_view().len(), total);
}

/// The run in `dir` read whole at 120×40, the media pane opened (`3`).
fn media_pane_of(dir: &std::path::Path) -> App {
    let (file, batch) = leet::source::tail::read_batch(dir).unwrap();
    let mut a = App::new(Options::default());
    a.update(Msg::Resize(120, 40));
    send(
        &mut a,
        [Msg::Opened {
            path: file,
            len: 1,
            modified: None,
        }],
    );
    a.update(Msg::Run(batch));
    send(&mut a, [Msg::char('3')]);
    a
}

#[test]
fn media_viewer_steps_through_logged_images() {
    let mut a = media_pane_of(&common::runs_dir().join("many_metrics/wandb/latest-run"));
    // The media pane beside the charts, focused.
    assert!(matches!(a.overlay, Overlay::None));
    assert!(a.screen.areas.media.is_some());
    assert_eq!(a.panels.focus, leet::ui::panels::Pane::Media);
    let (key, item, n) = a.panes.media.selected(&a.shown.run).unwrap();
    assert_eq!(
        (key, item.step, n),
        ("img", 10.0, 2),
        "opens on the newest image"
    );
    let img = a.panes.media.image.as_ref().expect("decoded");
    assert_eq!((img.width, img.height), (16, 16));
    send(&mut a, [Msg::key(KeyCode::Left)]);
    assert_eq!(a.panes.media.selected(&a.shown.run).unwrap().1.step, 0.0);
    assert!(a.panes.media.image.is_some() && a.panes.media.error.is_none());
    // enter: full screen; the arrows step there too; esc back to the pane.
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert!(matches!(a.overlay, Overlay::Media));
    send(&mut a, [Msg::key(KeyCode::Right)]);
    assert_eq!(a.panes.media.selected(&a.shown.run).unwrap().1.step, 10.0);
    send(&mut a, [Msg::key(KeyCode::Esc)]);
    assert!(!matches!(a.overlay, Overlay::Media));
    assert!(a.screen.areas.media.is_some());
    // `3` again: the pane goes.
    send(&mut a, [Msg::char('3')]);
    assert!(a.screen.areas.media.is_none());

    // A path from the file that leaves the run directory is refused, not read.
    let mut evil = a.shown.run.media.get("img").unwrap().clone();
    evil[0].path = "../../../../etc/passwd".into();
    evil[1].path = "/etc/passwd".into();
    a.shown.run.media.insert("img".into(), evil);
    send(&mut a, [Msg::char('3')]);
    assert!(a.panes.media.image.is_none());
    assert!(a
        .panes
        .media
        .error
        .as_deref()
        .unwrap()
        .contains("leaves the run directory"));
    send(&mut a, [Msg::key(KeyCode::Left)]);
    assert!(a
        .panes
        .media
        .error
        .as_deref()
        .unwrap()
        .contains("leaves the run directory"));
}

/// `run`'s `files/media/images` directory, made, and a PNG of the fixtures to
/// copy into it.
fn media_dir(run: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let images = run.join("files/media/images");
    std::fs::create_dir_all(&images).unwrap();
    let fixture = common::runs_dir()
        .join("many_metrics/wandb/offline-run-20261130_174932-many0001/files/media/images");
    let png = std::fs::read_dir(fixture)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "png"))
        .unwrap();
    (images, png)
}

#[test]
fn media_pane_shows_each_image_of_a_logged_list() {
    // `run.log({"samples": [wandb.Image(..), wandb.Image(..)]})`, as the W&B
    // SDK writes it: the fields of one `images/separated` object, the list's files
    // among them.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("offline-run-20261207_000000-list0001");
    let (images, png) = media_dir(&run);
    for name in ["samples_0_a.png", "samples_0_b.png"] {
        std::fs::copy(&png, images.join(name)).unwrap();
    }
    let files = r#"["media/images/samples_0_a.png","media/images/samples_0_b.png"]"#;
    let mut w = leet_format::leveldb::Writer::new();
    w.append(&leet_format::synth::history_record(
        1,
        &[
            ("_step", "0"),
            ("loss", "0.5"),
            ("samples._type", r#""images/separated""#),
            ("samples.count", "2"),
            ("samples.filenames", files),
            ("samples.captions", r#"["sample 0","sample 1"]"#),
        ],
    ));
    std::fs::write(run.join("run-list0001.wandb"), w.into_bytes()).unwrap();

    let mut a = media_pane_of(&run);
    let (key, item, n) = a.panes.media.selected(&a.shown.run).unwrap();
    assert_eq!(
        (key, item.caption.as_str(), n),
        ("samples[0]", "sample 0", 1)
    );
    let img = a.panes.media.image.as_ref().expect("decoded");
    assert_eq!((img.width, img.height), (16, 16));
    send(&mut a, [Msg::key(KeyCode::Down)]);
    let (key, item, _) = a.panes.media.selected(&a.shown.run).unwrap();
    assert_eq!(
        (key, item.path.as_str()),
        ("samples[1]", "media/images/samples_0_b.png")
    );
    assert!(a.panes.media.image.is_some() && a.panes.media.error.is_none());
    let s = common::screen::screen(&a, 120, 40);
    assert!(s.contains("samples[1]"), "{s}");
    assert!(!s.contains("no images logged"), "{s}");
}

/// A live run's images: the media pane on the newest follows the newer ones as
/// they come; stepped back, it stays on the image chosen; `end` follows again.
#[test]
fn media_pane_follows_new_images_while_on_the_newest() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("offline-run-20261207_000000-live0001");
    let (images, png) = media_dir(&run);
    let record = |step: i64| {
        let name = format!("img_{step}.png");
        std::fs::copy(&png, images.join(&name)).unwrap();
        let path = format!("\"media/images/{name}\"");
        let s = step.to_string();
        leet_format::synth::history_record(
            step + 1,
            &[
                ("_step", s.as_str()),
                ("img._type", r#""image-file""#),
                ("img.path", path.as_str()),
            ],
        )
    };
    let mut w = leet_format::leveldb::Writer::new();
    for step in 0..2 {
        w.append(&record(step));
    }
    std::fs::write(run.join("run-live0001.wandb"), w.into_bytes()).unwrap();
    let mut a = media_pane_of(&run);
    let step = |a: &App| a.panes.media.selected(&a.shown.run).map(|(_, i, _)| i.step);
    assert_eq!(step(&a), Some(1.0));
    let mut offset = 1 << 20;
    let mut more = |a: &mut App, s: i64| {
        offset += 1000;
        let batch = leet::msg::RunBatch {
            records: vec![(offset, record(s))],
            ..Default::default()
        };
        send(a, [Msg::Run(batch)]);
    };
    more(&mut a, 2);
    assert_eq!(step(&a), Some(2.0), "on the newest: follows");
    assert_eq!(
        a.panes.media.loaded.as_deref(),
        Some(images.join("img_2.png").as_path())
    );
    send(&mut a, [Msg::key(KeyCode::Left)]);
    assert_eq!(step(&a), Some(1.0));
    more(&mut a, 3);
    assert_eq!(step(&a), Some(1.0), "stepped back: stays");
    send(&mut a, [Msg::key(KeyCode::End)]);
    assert_eq!(step(&a), Some(3.0));
    more(&mut a, 4);
    assert_eq!(step(&a), Some(4.0), "at the end again: follows");
}

#[test]
fn media_viewer_on_a_run_without_images_says_so() {
    let mut a = app("tiny");
    send(&mut a, [Msg::char('3')]);
    assert!(a.screen.areas.media.is_some() && a.panes.media.selected(&a.shown.run).is_none());
    let s = common::screen::screen(&a, 120, 40);
    assert!(s.contains("no images logged in this run"), "{s}");
    send(&mut a, [Msg::char('3')]);
    assert!(a.screen.areas.media.is_none());
    // Too small a screen for the pane beside or below the charts: full screen.
    a.update(Msg::Resize(60, 12));
    send(&mut a, [Msg::char('3')]);
    assert!(matches!(a.overlay, Overlay::Media));
}

#[test]
fn the_picker_works_while_waiting_and_lets_go_of_deleted_compared_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let src = common::runs_dir().join("multi/wandb");
    for name in [
        "offline-run-20261130_175139-multi004",
        "offline-run-20261130_175142-multi005",
    ] {
        let d = wandb.join(name);
        std::fs::create_dir_all(&d).unwrap();
        let f = common::wandb_file(&src.join(name));
        std::fs::copy(&f, d.join(f.file_name().unwrap())).unwrap();
    }
    let empty = wandb.join("offline-run-20261201_000000-empty001");
    std::fs::create_dir_all(&empty).unwrap();

    // Waiting on a run with no file yet: R still lists the directory's runs.
    let mut a = App::new(Options::default());
    a.update(Msg::Resize(160, 40));
    send(&mut a, [Msg::Waiting(empty.clone())]);
    assert_eq!(a.shown.source.runs_here, 3);
    send(&mut a, [Msg::char('R')]);
    assert!(matches!(a.overlay, Overlay::Runs));
    assert_eq!(a.runs.list.len(), 3);
    assert_eq!(
        a.runs.list[a.runs.sel].dir, empty,
        "the run waited on is selected"
    );

    // Compare one, then delete it: its reader's error drops it, with a word.
    send(
        &mut a,
        [
            Msg::key(KeyCode::Down),
            Msg::char(' '),
            Msg::key(KeyCode::Esc),
        ],
    );
    let cmds = readers(&mut a);
    let [Cmd::StartReader { path, tag }] = cmds.as_slice() else {
        panic!("{cmds:?}");
    };
    assert_eq!(a.runs.compare.len(), 1);
    std::fs::remove_dir_all(path).unwrap();
    send(
        &mut a,
        [Msg::Tagged(
            *tag,
            Box::new(Msg::SourceError("file deleted".into())),
        )],
    );
    assert!(a.runs.compare.is_empty());
    assert_eq!(readers(&mut a), [Cmd::StopReader { tag: *tag }]);
    assert!(a
        .shown
        .source
        .error
        .as_deref()
        .unwrap()
        .contains("directory is gone"));
    // Back and drawn again: the note of its removal goes.
    let path = path.clone();
    std::fs::create_dir_all(&path).unwrap();
    a.request_compare(path.clone(), path.clone());
    assert_eq!(a.runs.compare.len(), 1);
    assert_eq!(a.shown.source.error, None);
}

#[test]
fn compare_flag_draws_a_run_from_another_directory() {
    let mut a = app("tiny");
    let other = common::runs_dir().join("multi");
    let dir = common::wandb_file(&other.join("wandb/latest-run"))
        .parent()
        .unwrap()
        .to_path_buf();
    a.request_compare(other.clone(), dir.clone());
    a.request_compare(other.clone(), dir.clone()); // the same run twice: once
    let cmds = readers(&mut a);
    let [Cmd::StartReader { path, tag }] = cmds.as_slice() else {
        panic!("{cmds:?}");
    };
    assert_eq!(path, &other);
    let (_, b) = leet::source::tail::read_batch(&other).unwrap();
    send(&mut a, [Msg::Tagged(*tag, Box::new(Msg::Run(b)))]);
    assert_eq!(a.runs.compare[0].label, "multi-4");
    // tiny and multi share `loss` and `acc`: both runs have a line in those charts.
    for key in ["loss", "acc"] {
        assert!(
            a.shown.run.metrics.get(key).is_some()
                && a.runs.compare[0].run.metrics.get(key).is_some()
        );
    }
}

#[test]
fn live_host_sizes_are_numbers_in_the_model_and_units_on_screen() {
    use leet::ui::Row;
    use serde_json::json;
    let mut a = App::live(Options::default(), 60.0);
    a.update(Msg::Resize(160, 40));
    let mut env = serde_json::Map::new();
    env.insert("memory".into(), json!({"total": 17_179_869_184_u64}));
    env.insert(
        "gpu.0".into(),
        json!({"name": "NVIDIA H200", "memory": 150_754_820_096_u64}),
    );
    env.insert(
        "tpu.0".into(),
        json!({"name": "TPU v4", "memory": 34_359_738_368_u64}),
    );
    a.set_host("testhost", env, serde_json::Map::new());
    // The model keeps the number the sampler gave.
    assert_eq!(
        a.shown.run.environment["memory"]["total"],
        json!(17_179_869_184_u64)
    );
    let bytes: Vec<(&str, f64)> = a
        .panes
        .overview
        .rows
        .iter()
        .filter_map(|r| match r {
            Row::Bytes(k, b) => Some((k.as_str(), *b)),
            _ => None,
        })
        .collect();
    assert_eq!(
        bytes,
        [
            ("gpu.0.memory", 150_754_820_096.0),
            ("memory.total", 17_179_869_184.0),
            ("tpu.0.memory", 34_359_738_368.0)
        ]
    );
    // The view writes them in binary units.
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 40)).unwrap();
    t.draw(|f| leet::ui::render::render(f, &a)).unwrap();
    let screen: String = t
        .backend()
        .buffer()
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    for b in [17_179_869_184.0, 150_754_820_096.0, 34_359_738_368.0] {
        let shown = leet::ui::widget::format::bytes(b);
        assert!(screen.contains(&shown), "{shown} not in {screen}");
    }
    assert!(!screen.contains("17179869184"), "{screen}");
    // The overview filter still finds them by key.
    send(&mut a, [Msg::char('o')]);
    send(&mut a, Msg::typed("memory"));
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    let n = a
        .panes
        .overview
        .rows
        .iter()
        .filter(|r| matches!(r, Row::Bytes(..)))
        .count();
    assert_eq!(n, 3);
}

#[test]
fn the_wheel_zooms_a_full_screen_chart_about_the_pointer() {
    // Full screen, the chart covers the whole body (left of where the grid sits
    // with its sidebars): the zoom's anchor is where the pointer is on that chart.
    let mut a = app("tiny");
    assert!(a.screen.areas.left.is_some(), "the overview takes the left");
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert!(a.panels.fullscreen);
    let key = a.focused_key().unwrap().to_owned();
    let (fx0, fx1) = a.shown.run.metrics.get(&key).unwrap().x_bounds().unwrap();
    let body = a.screen.areas.body;
    assert_eq!((body.x, body.width, body.height), (0, 200, 49));
    let column = body.x + 20;
    assert!(
        column < a.screen.areas.grid.x,
        "a column left of the grid's area"
    );
    a.update(Msg::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column,
        row: body.height / 2,
        modifiers: KeyModifiers::NONE,
    }));
    let frac = f64::from(column - body.x - 1) / f64::from(body.width - 2);
    let at = fx0 + (fx1 - fx0) * frac;
    let want = (at - (at - fx0) * 0.7, at + (fx1 - at) * 0.7);
    let got = a.charts.zoom[&key];
    assert!(
        (got.0 - want.0).abs() < 1e-9 && (got.1 - want.1).abs() < 1e-9,
        "{got:?} != {want:?}"
    );
}

/// The run viewer's keys open nothing in the live monitor (before: `3` covered
/// the screen with an empty media pane, `4` opened an empty console), and its
/// help lists none of them.
#[test]
fn a_run_s_keys_open_nothing_in_the_live_monitor_and_its_help_leaves_them_out() {
    let mut a = live_with_procs();
    let before = a.panels.clone();
    for c in ['3', '4', 'T', 'i', 'H', 'x', 'R'] {
        a.update(Msg::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
        assert_eq!(a.panels, before, "{c}");
        assert!(
            matches!(a.overlay, Overlay::None),
            "{c}: {:?}",
            a.overlay.kind()
        );
    }
    let help = leet::ui::keymap::help_lines(&a.screen.keymap, true);
    let text: Vec<String> = help.iter().map(|(k, d)| format!("{k} {d}")).collect();
    for gone in [
        "Toggle console logs pane",
        "Zoom",
        "rosshair",
        "Media",
        "Statistics",
        "Record",
        "again from the start",
        "x of focused",
    ] {
        assert!(!text.iter().any(|l| l.contains(gone)), "{gone}: {text:#?}");
    }
    assert!(text.contains(&"f Filter the processes (regex)".to_owned()));
    let run = leet::ui::keymap::help_lines(&a.screen.keymap, false);
    assert!(run.iter().any(|(_, d)| d == "Toggle console logs pane"));
}

/// A sampler's error goes once the family stops saying it (before: an endpoint
/// that answered again stayed "timed out" in the status bar for good), and one
/// said again stays; a process monitored again ends the note of the one that
/// exited.
#[test]
fn live_errors_go_when_their_cause_has_gone() {
    let mut a = live_with_procs();
    let err = |a: &App| a.shown.source.error.clone();
    let mut now = 1000.0;
    let mut tick = |a: &mut App, n: u32| {
        for _ in 0..n {
            now += 1.0;
            a.update(Msg::Tick(now));
        }
    };
    a.update(Msg::SamplerError("openmetrics:ev: read timed out".into()));
    tick(&mut a, leet::msg::SAMPLER_ERROR_TICKS - 5);
    a.update(Msg::SamplerError("openmetrics:ev: read timed out".into()));
    tick(&mut a, leet::msg::SAMPLER_ERROR_TICKS - 5);
    assert_eq!(err(&a).as_deref(), Some("openmetrics:ev: read timed out"));
    tick(&mut a, 6);
    assert_eq!(err(&a), None);
    // An error of another kind stays until its cause is over.
    a.update(Msg::Monitoring(None));
    a.update(Msg::SourceError(
        "process 7 exited: no process monitored".into(),
    ));
    tick(&mut a, 2 * leet::msg::SAMPLER_ERROR_TICKS);
    assert!(err(&a).is_some());
    a.update(Msg::Monitoring(Some((101, "PROCB".into()))));
    assert_eq!(err(&a), None);
}

/// A live monitor at 120×40 with a scan of 30 processes: pid 100+i, user `user{i%5}`,
/// CPU, RSS and GPU memory in orders that differ from each other and from the pids.
fn live_with_procs() -> App {
    let mut a = App::live(Options::default(), 60.0);
    a.update(Msg::Resize(120, 40));
    a.set_host("testhost", serde_json::Map::new(), serde_json::Map::new());
    a.update(Msg::Monitoring(None));
    a.update(Msg::Procs(scan(30, 0)));
    a
}

fn scan(n: u32, shift: u32) -> leet::msg::ProcTable {
    leet::msg::ProcTable {
        timestamp: 1000.0,
        rows: (0..n)
            .map(|i| leet::msg::ProcRow {
                pid: 100 + i,
                ppid: 1,
                user: format!("user{}", i % 5),
                cpu: f64::from((i * 7 + shift) % 31),
                rss: u64::from((i * 13) % 29) << 20,
                gpu_memory: (i % 3 == 0).then_some(u64::from(i) << 20),
                threads: i + 1,
                command: format!("job-{i} --flag"),
                zombie: false,
            })
            .collect(),
    }
}

/// Focus the process table with tab, as a user does.
fn focus_procs(a: &mut App) {
    for _ in 0..5 {
        if a.panels.focus == leet::ui::panels::Pane::Procs {
            return;
        }
        send(a, [Msg::key(KeyCode::Tab)]);
    }
    panic!("tab never reached the process table");
}

#[test]
fn process_table_sorts_by_cpu_then_memory_then_gpu_memory() {
    use leet::ui::host::procs::ProcSort;
    let mut a = live_with_procs();
    assert_eq!(a.host.procs.sort, ProcSort::Cpu);
    let cpu: Vec<f64> = a.host.procs.rows.iter().map(|r| r.cpu).collect();
    assert!(cpu.windows(2).all(|w| w[0] >= w[1]), "{cpu:?}");
    assert_eq!(a.host.procs.rows.len(), 30);
    send(&mut a, [Msg::char('S')]);
    assert_eq!(a.host.procs.sort, ProcSort::Memory);
    let rss: Vec<u64> = a.host.procs.rows.iter().map(|r| r.rss).collect();
    assert!(rss.windows(2).all(|w| w[0] >= w[1]), "{rss:?}");
    send(&mut a, [Msg::char('S')]);
    assert_eq!(a.host.procs.sort, ProcSort::GpuMemory);
    let gpu: Vec<Option<u64>> = a.host.procs.rows.iter().map(|r| r.gpu_memory).collect();
    // Largest first, the processes without GPU memory last.
    assert_eq!(gpu[0], Some(27 << 20));
    assert!(gpu.windows(2).all(|w| w[0] >= w[1]), "{gpu:?}");
    assert_eq!(gpu.iter().filter(|g| g.is_some()).count(), 10);
    assert!(gpu[10..].iter().all(Option::is_none));
    send(&mut a, [Msg::char('S')]);
    assert_eq!(a.host.procs.sort, ProcSort::Cpu);
}

#[test]
fn process_filter_matches_command_user_or_pid() {
    let mut a = live_with_procs();
    // `f` from anywhere.
    send(&mut a, [Msg::char('f')]);
    send(&mut a, Msg::typed("user3"));
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert_eq!(a.host.procs.rows.len(), 6);
    assert!(a.host.procs.rows.iter().all(|r| r.user == "user3"));
    // `/` with the table focused filters the table, not the charts.
    focus_procs(&mut a);
    send(&mut a, [Msg::char('/'), Msg::ctrl('u')]);
    send(&mut a, Msg::typed("^job-1[0-2] "));
    assert_eq!(a.host.procs.rows.len(), 3, "live while typing");
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert!(!a.charts.filter.is_active());
    // By pid.
    send(&mut a, [Msg::char('/'), Msg::ctrl('u')]);
    send(&mut a, Msg::typed("^105$"));
    assert_eq!(a.host.procs.rows.len(), 1);
    assert_eq!(a.host.procs.rows[0].pid, 105);
    // An invalid pattern keeps the last valid match set; esc restores the old one.
    send(&mut a, Msg::typed("("));
    assert_eq!(a.host.procs.rows.len(), 1);
    send(&mut a, [Msg::key(KeyCode::Esc)]);
    assert_eq!(a.host.procs.rows.len(), 3);
    // ctrl+l clears it with the others.
    send(&mut a, [Msg::ctrl('l')]);
    assert_eq!(a.host.procs.rows.len(), 30);
}

#[test]
fn process_selection_scrolls_within_bounds() {
    let mut a = live_with_procs();
    focus_procs(&mut a);
    let area = a.screen.areas.procs.unwrap();
    let room = leet::ui::layout::procs_rows(area);
    assert!(
        room < 30,
        "the table must scroll at this size ({room} rows)"
    );
    let visible = |a: &App| {
        a.host.procs.scroll <= a.host.procs.sel && a.host.procs.sel < a.host.procs.scroll + room
    };
    for _ in 0..100 {
        send(&mut a, [Msg::key(KeyCode::Down)]);
        assert!(
            visible(&a),
            "sel {} scroll {}",
            a.host.procs.sel,
            a.host.procs.scroll
        );
    }
    assert_eq!(a.host.procs.sel, 29);
    assert_eq!(a.host.procs.scroll, 30 - room);
    for _ in 0..3 {
        send(&mut a, [Msg::key(KeyCode::PageUp)]);
        assert!(visible(&a));
    }
    send(&mut a, [Msg::key(KeyCode::Home)]);
    assert_eq!((a.host.procs.sel, a.host.procs.scroll), (0, 0));
    send(&mut a, [Msg::key(KeyCode::Up)]);
    assert_eq!((a.host.procs.sel, a.host.procs.scroll), (0, 0));
    send(&mut a, [Msg::key(KeyCode::End)]);
    assert_eq!((a.host.procs.sel, a.host.procs.scroll), (29, 30 - room));
    // A taller table scrolls back so that its last row is on its last line.
    send(&mut a, [Msg::Resize(120, 60)]);
    let room = leet::ui::layout::procs_rows(a.screen.areas.procs.unwrap());
    assert_eq!((a.host.procs.sel, a.host.procs.scroll), (29, 30 - room));
    // A smaller scan clamps both.
    send(&mut a, [Msg::Procs(scan(4, 0))]);
    assert!(a.host.procs.sel < 4 && a.host.procs.scroll == 0);
}

#[test]
fn the_selection_stays_on_its_process_across_scans() {
    let mut a = live_with_procs();
    focus_procs(&mut a);
    send(&mut a, [Msg::key(KeyCode::Down), Msg::key(KeyCode::Down)]);
    let pid = a.host.procs.selected().unwrap().pid;
    // The next scan reorders every row.
    send(&mut a, [Msg::Procs(scan(30, 11))]);
    assert_eq!(a.host.procs.selected().unwrap().pid, pid);
    assert_ne!(
        a.host.procs.sel, 2,
        "the row moved and the selection followed it"
    );
}

#[test]
fn enter_on_a_row_monitors_it_and_u_monitors_none() {
    let mut a = live_with_procs();
    // With the charts focused, enter is full screen as before: no command.
    assert!(a.update(Msg::key(KeyCode::Enter)).cmds.is_empty());
    send(&mut a, [Msg::key(KeyCode::Esc)]);
    focus_procs(&mut a);
    send(&mut a, [Msg::key(KeyCode::Down), Msg::key(KeyCode::Down)]);
    let pid = a.host.procs.rows[2].pid;
    let fx = a.update(Msg::key(KeyCode::Enter));
    assert_eq!(fx.cmds, [Cmd::Monitor { pid: Some(pid) }]);
    assert!(!a.panels.fullscreen);
    let fx = a.update(Msg::char('u'));
    assert_eq!(fx.cmds, [Cmd::Monitor { pid: None }]);
    // `m` monitors the selected row from any pane.
    send(&mut a, [Msg::key(KeyCode::Esc)]);
    assert_eq!(a.panels.focus, leet::ui::panels::Pane::Grid);
    let fx = a.update(Msg::char('m'));
    assert_eq!(fx.cmds, [Cmd::Monitor { pid: Some(pid) }]);
}

#[test]
fn a_click_on_a_row_selects_it() {
    let mut a = live_with_procs();
    let area = a.screen.areas.procs.unwrap();
    let y = area.y + leet::ui::layout::PROCS_HEAD + 3;
    send(
        &mut a,
        [Msg::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: area.x + 5,
            row: y,
            modifiers: KeyModifiers::NONE,
        })],
    );
    assert_eq!(a.panels.focus, leet::ui::panels::Pane::Procs);
    assert_eq!(a.host.procs.sel, 3);
    // Enter then monitors that row.
    let pid = a.host.procs.rows[3].pid;
    assert_eq!(
        a.update(Msg::key(KeyCode::Enter)).cmds,
        [Cmd::Monitor { pid: Some(pid) }]
    );
}

fn sample_with_process_keys(a: &mut App, t: f64) {
    a.update(Msg::Sample(Sample {
        timestamp: t,
        errors: Vec::new(),
        values: vec![
            ("cpu".into(), 10.0),
            ("proc.memory.rssMB".into(), 100.0),
            ("gpu.process.0.gpu".into(), 50.0),
            ("gpu.0.gpu".into(), 60.0),
            ("proc.memory.availableMB".into(), 4096.0),
        ],
    }));
}

#[test]
fn process_charts_follow_the_monitored_process() {
    let mut a = live_with_procs();
    // As the runtime's live monitor starts: the pid asked for in its config.
    a.shown.run.config.set_json("pid", "\"none\"");
    // One column of charts: room for the whole title.
    send(&mut a, [Msg::char('c'), Msg::char('1')]);
    a.update(Msg::Monitoring(Some((4242, "python train.py".into()))));
    for i in 0..5 {
        sample_with_process_keys(&mut a, 1000.0 + f64::from(i));
    }
    let titles =
        |a: &App| -> Vec<String> { a.charts.sys.iter().map(|c| c.title.clone()).collect() };
    let t = titles(&a);
    // Named by the script the interpreter runs.
    assert!(
        t.contains(&"Process CPU: train.py (4242)".to_owned()),
        "{t:?}"
    );
    assert!(t.iter().any(|t| t.starts_with("Process GPU gpu:")), "{t:?}");
    // availableMB is the host's, never a process chart.
    assert!(t.contains(&"Memory Available".to_owned()), "{t:?}");
    assert!(t.contains(&"GPU Utilization".to_owned()), "{t:?}");
    // The overview's config names the process monitored.
    assert_eq!(
        a.shown.run.config.to_json().get("pid"),
        Some(&serde_json::json!(4242))
    );
    // None: host charts only, and the status bar says how to pick one.
    a.update(Msg::Monitoring(None));
    assert_eq!(
        a.shown.run.config.to_json().get("pid"),
        Some(&serde_json::json!("none"))
    );
    let t = titles(&a);
    assert!(!t.iter().any(|t| t.starts_with("Process")), "{t:?}");
    assert_eq!(t, ["GPU Utilization", "Memory Available"]);
    assert!(
        a.shown.run.system.get("cpu").is_none(),
        "the old process's values are gone"
    );
    assert_eq!(
        a.shown.run.system.get("gpu.0.gpu").unwrap().count(),
        5,
        "host values stay"
    );
    // A process key that still arrives is neither charted nor listed.
    sample_with_process_keys(&mut a, 1006.0);
    assert_eq!(titles(&a), ["GPU Utilization", "Memory Available"]);
    let listed = |a: &App, key: &str| {
        a.panes
            .overview
            .rows
            .iter()
            .any(|r| matches!(r, leet::ui::Row::Metric(k, _) if k == key))
    };
    assert!(!listed(&a, "cpu") && listed(&a, "gpu.0.gpu"));
    // Another process: its charts start empty, never mixed with the first one's.
    a.update(Msg::Monitoring(Some((7, "sleep 100".into()))));
    sample_with_process_keys(&mut a, 1010.0);
    assert_eq!(a.shown.run.system.get("cpu").unwrap().count(), 1);
    assert!(titles(&a).contains(&"Process CPU: sleep (7)".to_owned()));
    assert!(listed(&a, "cpu"));
    // Switching straight from one process to another clears too.
    a.update(Msg::Monitoring(Some((8, "other".into()))));
    assert!(a.shown.run.system.get("cpu").is_none());
    // The same process again keeps its values.
    sample_with_process_keys(&mut a, 1011.0);
    a.update(Msg::Monitoring(Some((8, "other".into()))));
    assert_eq!(a.shown.run.system.get("cpu").unwrap().count(), 1);
}

#[test]
fn process_keys_are_remappable() {
    let mut km = leet::ui::keymap::Keymap::builtin();
    km.overlay(
        std::path::Path::new("keymap.toml"),
        "[normal]\n\"x\" = \"cycle_process_sort\"\n\"S\" = \"none\"\n\"F5\" = \"monitor_none\"\n",
    )
    .unwrap();
    let mut a = App::live(
        Options {
            keymap: km,
            ..Options::default()
        },
        60.0,
    );
    a.update(Msg::Resize(120, 40));
    a.update(Msg::Procs(scan(5, 0)));
    send(&mut a, [Msg::char('S')]);
    assert_eq!(a.host.procs.sort, leet::ui::host::procs::ProcSort::Cpu);
    send(&mut a, [Msg::char('x')]);
    assert_eq!(a.host.procs.sort, leet::ui::host::procs::ProcSort::Memory);
    assert_eq!(
        a.update(Msg::key(KeyCode::F(5))).cmds,
        [Cmd::Monitor { pid: None }]
    );
}

#[test]
fn the_viewer_ignores_process_messages_and_keys() {
    let mut a = app("tiny");
    let fx = a.update(Msg::Procs(scan(5, 0)));
    assert!(!fx.redraw);
    assert!(a.host.procs.rows.is_empty());
    assert!(!a.update(Msg::Monitoring(Some((1, "x".into())))).redraw);
    assert!(a.update(Msg::char('u')).cmds.is_empty());
    assert!(a.update(Msg::char('m')).cmds.is_empty());
    assert!(a.screen.areas.procs.is_none() && a.screen.areas.header.is_none());
}

#[test]
fn a_huge_scan_keeps_the_top_rows_only() {
    let mut a = live_with_procs();
    let n = u32::try_from(leet::ui::host::procs::MAX_ROWS).unwrap() * 2;
    a.update(Msg::Procs(scan(n, 0)));
    assert_eq!(a.host.procs.rows.len(), leet::ui::host::procs::MAX_ROWS);
    assert_eq!(a.host.procs.rows[0].cpu, 30.0);
}

/// In a cell too narrow for the title and the pid, the title is the chart's name
/// alone: never a cut pid (`(19…`), which would name another process.
#[test]
fn a_narrow_process_chart_drops_the_pid_rather_than_cut_it() {
    let mut a = live_with_procs();
    a.update(Msg::Monitoring(Some((1_234_567, "python train.py".into()))));
    for i in 0..5 {
        sample_with_process_keys(&mut a, 1000.0 + f64::from(i));
    }
    for cols in ['1', '4', '8'] {
        send(&mut a, [Msg::char('c'), Msg::char(cols)]);
        let cell = a.screen.areas.grid.width / a.charts.grid.cols.max(1);
        for c in a
            .charts
            .sys
            .iter()
            .filter(|c| c.title.starts_with("Process"))
        {
            let t = &c.title;
            // The title and the corner value fit the cell's top border.
            assert!(
                t.chars().count() + 13 <= usize::from(cell) || !t.contains('('),
                "{cols} columns, cell {cell}: {t:?}"
            );
            if let Some(i) = t.find('(') {
                assert_eq!(&t[i..], "(1234567)", "{cols} columns: {t:?}");
            }
        }
    }
}

/// Metrics hidden by `define_metric(hidden=True)` are not charted but counted in
/// the grid's title; `H` charts them, and again hides them.
#[test]
fn hidden_metrics_are_counted_and_h_shows_them() {
    let mut a = app("custom_step");
    assert_eq!(a.charts.hidden, 1);
    assert!(
        !a.charts.metric_keys.iter().any(|k| k == "hidden_metric"),
        "{:?}",
        a.charts.metric_keys
    );
    let n = a.charts.metric_keys.len();
    let title = |a: &App| {
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 50)).unwrap();
        t.draw(|f| leet::ui::render::render(f, a)).unwrap();
        let buf = t.backend().buffer().clone();
        (0..200u16)
            .map(|x| buf[(x, 0)].symbol().to_owned())
            .collect::<String>()
    };
    assert!(title(&a).contains("· 1 hidden (H shows)"), "{}", title(&a));
    a.update(Msg::char('H'));
    assert!(a.charts.metric_keys.iter().any(|k| k == "hidden_metric"));
    assert_eq!(a.charts.metric_keys.len(), n + 1);
    assert!(
        title(&a).contains("· 1 hidden shown (H hides)"),
        "{}",
        title(&a)
    );
    a.update(Msg::char('H'));
    assert_eq!(a.charts.metric_keys.len(), n);
    // A run with none: the key does nothing, the title says nothing.
    let mut t = app("tiny");
    assert_eq!(t.charts.hidden, 0);
    assert!(!t.update(Msg::char('H')).redraw);
    assert!(!title(&t).contains("hidden"));
}

/// `ctrl+o` clears the overview filter alone and `ctrl+\` (which terminals send as
/// the byte 0x1c, read as `ctrl+4`) the system filter alone, as in `wandb leet`;
/// `ctrl+l` still clears them all.
#[test]
fn ctrl_o_and_ctrl_backslash_clear_one_filter_each() {
    let mut a = app("system");
    let typed = |a: &mut App, start: char, text: &str| {
        a.update(Msg::char(start));
        for c in text.chars() {
            a.update(Msg::char(c));
        }
        a.update(Msg::key(KeyCode::Enter));
    };
    typed(&mut a, 'o', "cpu");
    typed(&mut a, '\\', "gpu");
    typed(&mut a, '/', "loss");
    assert!(a.panes.overview.filter.is_active() && a.panes.system.filter.is_active());
    a.update(Msg::ctrl('o'));
    assert!(!a.panes.overview.filter.is_active());
    assert!(a.panes.system.filter.is_active() && a.charts.filter.is_active());
    a.update(Msg::ctrl('4'));
    assert!(!a.panes.system.filter.is_active());
    assert!(a.charts.filter.is_active());
    typed(&mut a, '\\', "gpu");
    a.update(Msg::ctrl('\\'));
    assert!(!a.panes.system.filter.is_active());
}

// ---- settings (issue 13): `1`, `0`, pane borders dragged with the mouse ----

fn left_mouse(kind: MouseEventKind, x: u16, y: u16) -> Msg {
    Msg::Mouse(MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    })
}

fn drag(a: &mut App, from: (u16, u16), to: &[(u16, u16)]) {
    a.update(left_mouse(
        MouseEventKind::Down(MouseButton::Left),
        from.0,
        from.1,
    ));
    for &(x, y) in to {
        a.update(left_mouse(MouseEventKind::Drag(MouseButton::Left), x, y));
    }
    let last = to.last().copied().unwrap_or(from);
    a.update(left_mouse(
        MouseEventKind::Up(MouseButton::Left),
        last.0,
        last.1,
    ));
}

#[test]
fn one_hides_the_metrics_grid_and_the_other_panes_take_its_room() {
    use leet::ui::panels::Pane;
    let mut a = app("system");
    let (left, right) = (a.screen.areas.left.unwrap(), a.screen.areas.right.unwrap());
    assert!(!a.screen.areas.grid.is_empty());
    send(&mut a, [Msg::char('1')]);
    assert!(!a.panels.grid);
    assert!(a.screen.areas.grid.is_empty());
    // The overview takes the grid's columns; the system sidebar keeps its own.
    let wide = a.screen.areas.left.unwrap();
    assert_eq!(wide.width, 200 - right.width);
    assert_eq!(a.screen.areas.right, Some(right));
    // Focus leaves the hidden grid, and Tab never lands on it.
    assert_ne!(a.panels.focus, Pane::Grid);
    for _ in 0..4 {
        send(&mut a, [Msg::key(KeyCode::Tab)]);
        assert_ne!(a.panels.focus, Pane::Grid);
    }
    // With the console shown, the console takes it.
    send(&mut a, [Msg::char('4')]);
    let console = a.screen.areas.console.unwrap();
    assert_eq!(a.screen.areas.left, Some(left));
    assert_eq!(console.x, left.right());
    assert_eq!(console.width, 200 - left.width - right.width);
    assert_eq!(console.height, 49);
    // Without the overview, the right sidebar takes the room.
    send(&mut a, [Msg::char('4'), Msg::char('[')]);
    assert_eq!(a.screen.areas.left, None);
    assert_eq!(a.screen.areas.right.unwrap().width, 200);
    // With no other pane the grid shows anyway.
    send(&mut a, [Msg::char(']')]);
    assert!(!a.panels.grid && !a.screen.areas.grid.is_empty());
    assert_eq!(a.panels.focus, Pane::Grid);
    // `1` again: the grid is back, focused, at its size.
    send(&mut a, [Msg::char('['), Msg::char(']'), Msg::char('1')]);
    assert!(a.panels.grid);
    assert_eq!(
        (a.screen.areas.left, a.screen.areas.right),
        (Some(left), Some(right))
    );
    assert_eq!(a.panels.focus, Pane::Grid);
}

#[test]
fn pane_borders_drag_within_limits_and_zero_resets_them() {
    let mut a = app("system");
    let fresh = a.screen.areas;
    let (left, right) = (fresh.left.unwrap(), fresh.right.unwrap());
    // The overview's right edge, dragged 10 columns right, step by step.
    let edge = left.right() - 1;
    drag(&mut a, (edge, 20), &[(edge + 3, 21), (edge + 10, 22)]);
    assert_eq!(a.screen.areas.left.unwrap().width, left.width + 10);
    assert_eq!(a.panels.sizes.left, Some(left.width + 10));
    assert_eq!(a.screen.areas.grid.x, left.right() + 10);
    // Moving the mouse after the button is up drags nothing.
    a.update(left_mouse(MouseEventKind::Drag(MouseButton::Left), 100, 22));
    assert_eq!(a.screen.areas.left.unwrap().width, left.width + 10);
    // Far right: the charts keep 40 columns and the system sidebar stays.
    let edge = a.screen.areas.left.unwrap().right() - 1;
    drag(&mut a, (edge, 5), &[(199, 5)]);
    assert_eq!(a.screen.areas.grid.width, 40);
    assert_eq!(a.screen.areas.right, Some(right));
    // Far left: no narrower than its minimum (28).
    let edge = a.screen.areas.left.unwrap().right() - 1;
    drag(&mut a, (edge, 5), &[(0, 5)]);
    assert_eq!(a.screen.areas.left.unwrap().width, 28);
    // The system sidebar's left edge, dragged 6 columns left.
    drag(&mut a, (right.x, 30), &[(right.x - 6, 30)]);
    assert_eq!(a.screen.areas.right.unwrap().width, right.width + 6);
    assert_eq!(a.screen.areas.right.unwrap().right(), 200);
    // The console's top edge: up 5 lines, then as far up as it goes (the grid
    // keeps its header and a row of charts), then down to its minimum.
    send(&mut a, [Msg::char('4')]);
    let console = a.screen.areas.console.unwrap();
    drag(
        &mut a,
        (console.x + 5, console.y),
        &[(console.x + 5, console.y - 5)],
    );
    assert_eq!(a.screen.areas.console.unwrap().height, console.height + 5);
    assert_eq!(a.screen.areas.console.unwrap().bottom(), console.bottom());
    let top = a.screen.areas.console.unwrap().y;
    drag(&mut a, (console.x + 5, top), &[(console.x + 5, 0)]);
    assert_eq!(a.screen.areas.grid.height, 7);
    let top = a.screen.areas.console.unwrap().y;
    drag(&mut a, (console.x + 5, top), &[(console.x + 5, 49)]);
    assert_eq!(a.screen.areas.console.unwrap().height, 5);
    // `0`: every pane at its default size again.
    send(&mut a, [Msg::char('4'), Msg::char('0')]);
    assert_eq!(a.screen.areas, fresh);
    assert_eq!(a.panels.sizes, leet::ui::layout::PaneSizes::default());
}

#[test]
fn only_a_press_on_a_border_drags_and_it_is_a_click_too() {
    use leet::ui::panels::{Border, Pane};
    let mut a = app("system");
    let fresh = a.screen.areas;
    let left = fresh.left.unwrap();
    // Inside the overview, not on its edge: a click (focus), no drag.
    drag(&mut a, (left.x + 3, 10), &[(left.x + 20, 10)]);
    assert_eq!(a.screen.areas, fresh);
    assert_eq!(a.panels.focus, Pane::Left);
    // On a chart: focus, no drag.
    let g = a.screen.areas.grid;
    drag(&mut a, (g.x + 5, g.y + 3), &[(g.x + 30, g.y + 3)]);
    assert_eq!(a.screen.areas, fresh);
    assert_eq!(a.panels.focus, Pane::Grid);
    // On the edge: the pane is focused as by a click, and the drag is under way.
    a.update(left_mouse(
        MouseEventKind::Down(MouseButton::Left),
        left.right() - 1,
        10,
    ));
    assert_eq!(a.panels.focus, Pane::Left);
    assert_eq!(a.panels.drag, Some(Border::Left));
    a.update(left_mouse(MouseEventKind::Up(MouseButton::Left), 0, 0));
    assert_eq!(a.panels.drag, None);
    // With help in front, the borders do not move.
    send(&mut a, [Msg::char('?')]);
    drag(&mut a, (left.right() - 1, 10), &[(left.right() + 9, 10)]);
    assert_eq!(a.screen.areas, fresh);
}

#[test]
fn dragged_sizes_fit_a_smaller_screen_and_come_back_on_a_larger_one() {
    let mut a = app("system");
    let left = a.screen.areas.left.unwrap();
    let edge = left.right() - 1;
    drag(&mut a, (edge, 5), &[(edge + 30, 5)]);
    let wide = a.screen.areas.left.unwrap().width;
    assert_eq!(wide, left.width + 30);
    // 100 columns: the charts keep 40, the left sidebar gives way.
    a.update(Msg::Resize(100, 30));
    let l = a.screen.areas.left.map_or(0, |r| r.width);
    assert!(a.screen.areas.grid.width >= 40, "{:?}", a.screen.areas);
    assert!(l <= 60, "{l}");
    a.update(Msg::Resize(200, 50));
    assert_eq!(a.screen.areas.left.unwrap().width, wide);
}

#[test]
fn in_the_live_monitor_the_process_table_takes_the_hidden_grid_s_room() {
    for (w, beside) in [(160, false), (320, true)] {
        let mut a = App::live(Options::default(), 60.0);
        a.update(Msg::Resize(w, 50));
        let (grid, procs) = (a.screen.areas.grid, a.screen.areas.procs.unwrap());
        assert_eq!(procs.y > grid.y, !beside, "{w}: {:?}", a.screen.areas);
        send(&mut a, [Msg::char('1')]);
        assert!(a.screen.areas.grid.is_empty());
        let all = a.screen.areas.procs.unwrap();
        // The grid's cells and the table's, together.
        assert_eq!(
            (all.x, all.y, u32::from(all.width) * u32::from(all.height)),
            (
                grid.x,
                grid.y,
                u32::from(grid.width) * u32::from(grid.height)
                    + u32::from(procs.width) * u32::from(procs.height)
            ),
            "{w}"
        );
        send(&mut a, [Msg::char('1')]);
        assert_eq!(
            (a.screen.areas.grid, a.screen.areas.procs),
            (grid, Some(procs))
        );
    }
}

// ---- overview (issue 13) ----

/// `Tab` while typing toggles regex ↔ glob in every filter, not only the runs
/// filter: the metrics `/`, system `\`, overview `o` and console `/` filters.
#[test]
fn tab_toggles_glob_in_every_filter() {
    // Metrics: `eval*1` as a regex is "eva", any `l`s, then "1"; as W&B's glob it
    // is `eval`, anything, `1`.
    let mut a = app("many_metrics");
    send(&mut a, [Msg::char('/')]);
    send(&mut a, Msg::typed("eval*1"));
    assert!(!a.charts.filter.glob);
    let regex = a.charts.shown.len();
    send(&mut a, [Msg::key(KeyCode::Tab)]);
    assert!(a.charts.filter.glob);
    let keys: Vec<&str> = a
        .charts
        .shown
        .iter()
        .map(|&i| a.charts.metric_keys[i].as_str())
        .collect();
    assert!(!keys.is_empty() && regex != keys.len(), "{regex} {keys:?}");
    assert!(
        keys.iter()
            .all(|k| k.starts_with("eval") && k[4..].contains('1')),
        "{keys:?}"
    );
    send(&mut a, [Msg::key(KeyCode::Enter)]);
    assert!(a.charts.filter.glob && a.charts.filter.is_active());

    // System: `gpu.?.temp`-like one-character wildcard.
    let mut s = app("system");
    let all = s.panes.system.shown.len();
    send(&mut s, [Msg::char('\\')]);
    send(&mut s, [Msg::key(KeyCode::Tab)]);
    send(&mut s, Msg::typed("c?u"));
    assert!(s.panes.system.filter.glob);
    let shown = s.panes.system.shown.len();
    assert!(shown > 0 && shown < all, "{shown} of {all}");

    // Overview: `edges[1` is a regex error, a fine glob.
    let mut o = many_metrics_with_edges();
    send(&mut o, [Msg::char('o')]);
    send(&mut o, Msg::typed("edges[1"));
    assert!(o.panes.overview.filter.error.is_some());
    send(&mut o, [Msg::key(KeyCode::Tab)]);
    assert_eq!(o.panes.overview.filter.error, None);
    let summary = o
        .panes
        .overview
        .sections
        .iter()
        .find(|s| s.name == "Summary")
        .unwrap();
    // edges[1], edges[10] ... edges[19].
    assert_eq!(summary.len, 11, "{:?}", o.panes.overview.filter_counts());

    // Console: the same key in its filter.
    let mut c = app("crashed");
    send(&mut c, [Msg::char('4')]);
    send(&mut c, [Msg::char('/')]);
    send(&mut c, [Msg::key(KeyCode::Tab)]);
    assert!(c.panes.console.filter.glob);
}

/// `tab` in the focused overview visits its sections (Config, Summary,
/// Environment) before the focus moves on; `backtab` comes back to the last one.
#[test]
fn tab_visits_the_overview_sections_before_the_next_pane() {
    use leet::ui::panels::Pane;
    let mut a = app("many_metrics");
    let names = |a: &App| a.panes.overview.sections[a.panes.overview.active].name;
    while a.panels.focus != Pane::Left {
        send(&mut a, [Msg::key(KeyCode::Tab)]);
    }
    assert_eq!(names(&a), "Config");
    send(&mut a, [Msg::key(KeyCode::Tab)]);
    assert_eq!((a.panels.focus, names(&a)), (Pane::Left, "Summary"));
    // Paging moves the active section only.
    send(&mut a, [Msg::key(KeyCode::PageDown)]);
    assert!(a.panes.overview.sections[1].scroll > 0);
    assert_eq!(a.panes.overview.sections[2].scroll, 0);
    send(&mut a, [Msg::key(KeyCode::Tab)]);
    assert_eq!((a.panels.focus, names(&a)), (Pane::Left, "Environment"));
    send(&mut a, [Msg::key(KeyCode::Tab)]);
    assert_ne!(a.panels.focus, Pane::Left);
    send(&mut a, [Msg::key(KeyCode::BackTab)]);
    assert_eq!((a.panels.focus, names(&a)), (Pane::Left, "Environment"));
}

/// In the workspace's runs list the left pane is the list, not the overview: `tab`
/// there moves to the next pane at once (the hidden overview's sections are not
/// visited).
#[test]
fn tab_in_the_workspace_list_skips_the_hidden_overview_sections() {
    use leet::ui::panels::Pane;
    let mut a = app("many_metrics");
    let wandb = common::runs_dir().join("multi").join("wandb");
    a.open_workspace(wandb, None, None, false);
    assert!(a.runs.in_workspace_list());
    assert!(a.panes.overview.sections.iter().all(|s| s.len > 0));
    for _ in 0..6 {
        if a.panels.focus == Pane::Left {
            break;
        }
        send(&mut a, [Msg::key(KeyCode::Tab)]);
    }
    assert_eq!(a.panels.focus, Pane::Left);
    let active = a.panes.overview.active;
    send(&mut a, [Msg::key(KeyCode::Tab)]);
    assert_ne!(a.panels.focus, Pane::Left);
    assert_eq!(a.panes.overview.active, active);
}

/// The live monitor's process filter (`f`) toggles to a glob with `tab` too.
#[test]
fn tab_toggles_glob_in_the_process_filter() {
    let mut a = live_with_procs();
    let all = a.host.procs.rows.len();
    send(&mut a, [Msg::char('f'), Msg::key(KeyCode::Tab)]);
    assert!(a.host.procs.filter.glob);
    // `job-1?` is `job-1` and one more character, unanchored: job-1 (its space),
    // job-10 ... job-19; as a regex it is "job-" and an optional "1": every job.
    send(&mut a, Msg::typed("job-1?"));
    let shown = a.host.procs.rows.len();
    assert_eq!(shown, 11, "{shown} of {all}");
    send(&mut a, [Msg::key(KeyCode::Tab)]);
    assert_eq!(a.host.procs.rows.len(), all);
    assert!(!a.host.procs.filter.glob);
}

// ---- alt+r: restart (wandb leet's key) ----

/// `alt+r` reads the main run again from the first byte of the file it reads: the
/// old reader stops, a new one starts on the same file under a new tag, the old
/// reader's late messages are dropped, and the panes and guides stay as set.
#[test]
fn alt_r_reads_the_run_again_from_its_file_and_keeps_the_view() {
    let dir = common::runs_dir().join("many_metrics/wandb/latest-run");
    let file = common::wandb_file(&dir);
    let (_, batch) = leet::source::tail::read_batch(&file).unwrap();
    let mut a = App::new(Options::default());
    a.update(Msg::Resize(160, 40));
    a.request_open(file.clone());
    readers(&mut a);
    let opened = Msg::Opened {
        path: file.clone(),
        len: 1,
        modified: None,
    };
    send(&mut a, [Msg::Tagged(0, Box::new(opened.clone()))]);
    send(&mut a, [Msg::Tagged(0, Box::new(Msg::Run(batch.clone())))]);
    send(&mut a, [Msg::char('4'), Msg::char('g')]);
    let (console, guides) = (a.panels.console, a.charts.grid.guides);
    assert!(console && !a.charts.metric_keys.is_empty());
    readers(&mut a);

    let alt_r = Msg::Key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::ALT));
    send(&mut a, [alt_r]);
    let cmds = readers(&mut a);
    let [Cmd::StopReader { tag: 0 }, Cmd::StartReader { path, tag }] = cmds.as_slice() else {
        panic!("{cmds:?}");
    };
    assert_eq!(path, &file);
    let tag = *tag;
    assert!(
        a.shown.run.info.run_id.is_empty(),
        "the run is read again from nothing"
    );
    // The old reader's queued messages are dropped; the new reader's apply.
    send(&mut a, [Msg::Tagged(0, Box::new(Msg::Run(batch.clone())))]);
    assert!(a.shown.run.info.run_id.is_empty());
    send(&mut a, [Msg::Tagged(tag, Box::new(opened))]);
    send(&mut a, [Msg::Tagged(tag, Box::new(Msg::Run(batch)))]);
    assert_eq!(a.shown.run.info.run_id, "many0001");
    assert_eq!((a.panels.console, a.charts.grid.guides), (console, guides));
}

/// In the live monitor there is no run to read again: `alt+r` does nothing.
#[test]
fn alt_r_does_nothing_in_the_live_monitor() {
    let mut a = App::live(Options::default(), 60.0);
    a.update(Msg::Resize(120, 40));
    readers(&mut a);
    let fx = a.update(Msg::Key(KeyEvent::new(
        KeyCode::Char('r'),
        KeyModifiers::ALT,
    )));
    assert!(readers(&mut a).is_empty() && !fx.quit);
}

/// Why an image is not drawn is read whole, wrapped in the pane and full screen
/// at 80 columns (it was cut: `image too large: 6000×4000 (at most 6…`).
#[test]
fn why_an_image_is_not_drawn_is_wrapped_not_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("offline-run-20261207_000000-huge0001");
    let (images, _) = media_dir(&run);
    // A BMP header of 30000×30000 at 32 bits: refused from its header.
    let mut bmp = Vec::new();
    bmp.extend_from_slice(b"BM");
    for v in [54u32, 0, 54, 40] {
        bmp.extend_from_slice(&v.to_le_bytes());
    }
    bmp.extend_from_slice(&30_000i32.to_le_bytes());
    bmp.extend_from_slice(&30_000i32.to_le_bytes());
    bmp.extend_from_slice(&1u16.to_le_bytes());
    bmp.extend_from_slice(&32u16.to_le_bytes());
    bmp.extend_from_slice(&[0; 24]);
    std::fs::write(images.join("huge.bmp"), bmp).unwrap();
    let mut w = leet_format::leveldb::Writer::new();
    w.append(&leet_format::synth::history_record(
        1,
        &[
            ("_step", "0"),
            ("img._type", r#""image-file""#),
            ("img.path", r#""media/images/huge.bmp""#),
        ],
    ));
    std::fs::write(run.join("run-huge0001.wandb"), w.into_bytes()).unwrap();
    let mut a = media_pane_of(&run);
    send(&mut a, [Msg::Resize(80, 24), Msg::key(KeyCode::Enter)]);
    let s = common::screen::screen(&a, 80, 24);
    let text: String = (s.lines())
        .map(|l| l.trim_matches(|c: char| c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(text.contains("image too large: 30000×30000"), "{s}");
    assert!(text.contains("(at most 64 MiB decoded)"), "{s}");
}
