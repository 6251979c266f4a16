//! Whole-screen snapshots of the workspace (TestBackend + insta) on real SDK runs
//! and generated sweeps, driven through key messages; every reader the app asks
//! for is carried out by reading the run directory, as the runtime's reader does.

use crate::common;

use common::screen::{NOW, SIZES};

use std::path::{Path, PathBuf};

use crossterm::event::KeyCode;
use leet::msg::Msg;
use leet::source::index::{scan_with, ScanOptions};
use leet::ui::{App, Cmd, Options, Row};

struct Ws {
    app: App,
    wandb: PathBuf,
    cache: tempfile::TempDir,
}

impl Ws {
    /// The workspace of `wandb` at `w`×`h`, its index read (at the fixed "now"),
    /// and the readers it starts carried out.
    fn open(wandb: &Path, label: &str, w: u16, h: u16) -> Self {
        let wandb = std::fs::canonicalize(wandb).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let mut app = App::new(Options {
            color: false,
            ..Options::default()
        });
        app.update(Msg::Resize(w, h));
        let latest = scan(&wandb, cache.path()).first().map(|e| e.dir.clone());
        app.open_workspace(wandb.clone(), None, latest, false);
        app.runs.workspace.as_mut().unwrap().label = label.to_owned();
        let mut ws = Self { app, wandb, cache };
        let cmds = ws.app.take_cmds();
        ws.run(cmds);
        ws.send([Msg::Tick(NOW)]);
        ws
    }

    /// Carry out commands: readers read their whole directory at once, the index
    /// is scanned at the fixed "now", saves are dropped.
    fn run(&mut self, cmds: Vec<Cmd>) {
        let mut queue: std::collections::VecDeque<Cmd> = cmds.into();
        while let Some(cmd) = queue.pop_front() {
            let msgs = match cmd {
                Cmd::StartReader { path, tag } => {
                    let (file, batch) = leet::source::tail::read_batch(&path).unwrap();
                    vec![
                        Msg::Tagged(
                            tag,
                            Box::new(Msg::Opened {
                                path: file,
                                len: batch.file_len,
                                modified: Some(NOW - 3600.0),
                            }),
                        ),
                        Msg::Tagged(tag, Box::new(Msg::Run(batch))),
                    ]
                }
                Cmd::ScanIndex { wandb_dir, .. } => vec![Msg::Indexed {
                    entries: scan(&wandb_dir, self.cache.path()),
                    wandb_dir,
                }],
                Cmd::StopReader { .. } | Cmd::SaveWorkspace { .. } => Vec::new(),
                cmd => leet::runtime::answer(cmd).into_iter().collect(),
            };
            for m in msgs {
                queue.extend(self.app.update(m).cmds);
            }
        }
    }

    fn send(&mut self, msgs: impl IntoIterator<Item = Msg>) {
        for m in msgs {
            let cmds = self.app.update(m).cmds;
            self.run(cmds);
        }
    }

    fn keys(&mut self, keys: &str) {
        for c in keys.chars() {
            self.send([Msg::char(c)]);
        }
    }

    fn key(&mut self, code: KeyCode, n: usize) {
        for _ in 0..n {
            self.send([Msg::key(code)]);
        }
    }

    fn screen(&self, w: u16, h: u16) -> String {
        common::screen::screen(&self.app, w, h)
    }
}

fn scan(wandb: &Path, cache: &Path) -> Vec<leet::msg::RunIndexEntry> {
    let opts = ScanOptions {
        now: Some(NOW),
        ..ScanOptions::default()
    };
    scan_with(wandb, cache, &opts).entries
}

fn fixture_wandb(name: &str) -> PathBuf {
    common::runs_dir().join(name).join("wandb")
}

fn snap(name: &str, wandb: &Path, label: &str, keys: &dyn Fn(&mut Ws)) {
    for (w, h) in SIZES {
        let mut ws = Ws::open(wandb, label, w, h);
        keys(&mut ws);
        let _ = &ws.wandb;
        insta::assert_snapshot!(format!("workspace_{name}_{w}x{h}"), ws.screen(w, h));
    }
}

/// `leet RUN-DIR` (and `leet FILE.wandb`): the first frame is the run alone, whether
/// the directory's index comes before the run's records or after them.
#[test]
fn a_run_opened_alone_is_shown_alone_whatever_comes_first() {
    let wandb = std::fs::canonicalize(fixture_wandb("multi")).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let entries = scan(&wandb, cache.path());
    let run_dir = entries[1].dir.clone();
    let file = entries[1].file.clone().unwrap();
    for spelling in [run_dir.clone(), file] {
        for index_first in [true, false] {
            let mut app = App::new(Options {
                color: false,
                ..Options::default()
            });
            app.update(Msg::Resize(120, 40));
            // As the runtime opens it.
            app.request_open(spelling.clone());
            app.open_workspace(wandb.clone(), None, Some(run_dir.clone()), true);
            let tag = app
                .take_cmds()
                .iter()
                .find_map(|c| match c {
                    Cmd::StartReader { tag, .. } => Some(*tag),
                    _ => None,
                })
                .unwrap();
            let (path, batch) = leet::source::tail::read_batch(&spelling).unwrap();
            let mut msgs = vec![
                Msg::Tagged(
                    tag,
                    Box::new(Msg::Opened {
                        path,
                        len: batch.file_len,
                        modified: Some(NOW - 3600.0),
                    }),
                ),
                Msg::Tagged(tag, Box::new(Msg::Run(batch))),
            ];
            let index = Msg::Indexed {
                wandb_dir: wandb.clone(),
                entries: entries.clone(),
            };
            if index_first {
                msgs.insert(0, index);
            } else {
                msgs.push(index);
            }
            for (i, m) in msgs.into_iter().enumerate() {
                app.update(m);
                let screen = common::screen::screen(&app, 120, 40);
                let at = format!("{spelling:?}, index first: {index_first}, message {i}");
                assert!(!app.runs.in_workspace_list(), "{at}\n{screen}");
                assert!(!screen.contains("Runs ["), "{at}\n{screen}");
                assert!(screen.contains("esc: all runs"), "{at}\n{screen}");
            }
            let screen = common::screen::screen(&app, 120, 40);
            let id = format!("({})", entries[1].run_id);
            assert!(screen.contains(&id), "{screen}");
        }
    }
}

#[test]
fn with_no_run_drawn_nothing_says_it_is_opening() {
    let mut ws = Ws::open(&fixture_wandb("multi"), "wandb", 120, 40);
    // The latest run is drawn; space on it lets it go.
    ws.keys(" ");
    let s = ws.screen(120, 40);
    assert!(s.contains("none drawn"), "{s}");
    assert!(!s.contains("opening"), "{s}");
    assert!(s.contains("no run drawn"), "{s}");
}

#[test]
fn list_with_the_latest_run_drawn() {
    snap("list", &fixture_wandb("multi"), "runs/multi/wandb", &|_| {});
}

#[test]
fn filtered_list() {
    snap(
        "filtered",
        &fixture_wandb("multi"),
        "runs/multi/wandb",
        &|ws| {
            ws.keys("f");
            ws.keys("cfg.lr<=1e-3 state:fin");
            ws.key(KeyCode::Enter, 1);
        },
    );
}

#[test]
fn three_runs_overlaid_with_one_pinned() {
    snap(
        "pinned",
        &fixture_wandb("multi"),
        "runs/multi/wandb",
        &|ws| {
            // The latest is drawn; two more, the second of them pinned.
            ws.key(KeyCode::Down, 1);
            ws.keys(" ");
            ws.key(KeyCode::Down, 1);
            ws.keys("p");
            // The summary value column.
            ws.keys("v");
            ws.keys("loss");
            ws.key(KeyCode::Enter, 1);
        },
    );
}

/// The pinned run is drawn on top, last, but named first in the legend: a long
/// legend is cut at its end (`+N`), which hid it.
#[test]
fn the_pinned_run_is_named_first_in_the_legend() {
    let mut ws = Ws::open(&fixture_wandb("multi"), "runs/multi/wandb", 120, 40);
    for _ in 0..4 {
        ws.key(KeyCode::Down, 1);
        ws.keys(" ");
    }
    ws.keys("p");
    let screen = ws.screen(120, 40);
    let legends: Vec<&str> = (screen.lines())
        .filter(|l| l.contains("▲multi-0") && l.contains("multi-4"))
        .collect();
    assert!(!legends.is_empty(), "{screen}");
    for l in legends {
        assert!(l.find('▲') < l.find("multi-4"), "{l}");
    }
}

#[test]
fn a_resumed_run_is_one_entry_drawn_in_one_colour() {
    snap(
        "resumed",
        &fixture_wandb("resumed"),
        "runs/resumed/wandb",
        &|_| {},
    );
}

#[test]
fn a_bad_query_says_what_is_wrong_and_where_while_typing() {
    let mut ws = Ws::open(&fixture_wandb("multi"), "runs/multi/wandb", 120, 40);
    ws.keys("f");
    ws.keys("cfg.lr>= | name:\"x");
    let s = ws.screen(120, 40);
    let status = s.lines().nth(39).unwrap();
    assert!(status.contains("✗ unclosed quote at column 17"), "{status}");
    // Fixed, it applies as typed.
    ws.key(KeyCode::Backspace, 10);
    ws.keys("1e-3");
    let s = ws.screen(120, 40);
    assert!(s.contains("Runs [3 of 5]"), "{s}");
    assert!(s.lines().nth(39).unwrap().contains("[3 of 5 runs]"), "{s}");
}

#[test]
fn a_sweep_grouped_by_lr_draws_each_group_s_mean_and_band() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    common::runs::write_workspace_at(&wandb, 12, NOW);
    snap("grouped", &wandb, "sweep/wandb", &|ws| {
        // Every run drawn (the newest already is), grouped by lr: 4 groups of 3
        // seeds (the resumed run's segments count once).
        let n = ws.app.runs.workspace.as_ref().unwrap().runs.len();
        for _ in 1..n {
            ws.key(KeyCode::Down, 1);
            ws.keys(" ");
        }
        ws.keys("G");
        ws.keys("lr");
        ws.key(KeyCode::Enter, 1);
        ws.key(KeyCode::Home, 1);
    });
}

/// At 80 columns, typing a runs filter: the prompt and its help text (whole or not
/// at all, never cut) and the `h: help` hint.
#[test]
fn at_80_columns_the_filter_prompt_help_is_never_cut() {
    let mut ws = Ws::open(&fixture_wandb("multi"), "runs/multi/wandb", 80, 24);
    ws.keys("f");
    ws.keys("cfg.lr");
    let s = ws.screen(80, 24);
    let status = s.lines().nth(23).unwrap();
    assert!(status.contains("f cfg.lr▏"), "{status}");
    let help = "tab: regex → glob · enter keep · esc restore";
    // Any piece of the help text shown is the whole of it.
    if status.contains("tab:") || status.contains("esc") {
        assert!(status.contains(help), "{status}");
    }
    assert!(status.ends_with("h: help"), "{status}");
}

/// Write run `spec` into `wandb` (its directory named by its start and id).
fn write_run(wandb: &Path, spec: &leet::decode::synth::RunSpec) {
    use leet::decode::synth::{run_dir_name, run_file};
    let dir = wandb.join(run_dir_name(spec.start_time, &spec.run_id, false));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("run-{}.wandb", spec.run_id));
    std::fs::write(file, run_file(spec)).unwrap();
}

/// A run resumed from its checkpoint at step 40 with a larger learning rate (its
/// first segment logged 0..59, the second 40..79), drawn beside another run: one
/// line in one colour, the first segment's 40..59 given way to the second's, and
/// the legend names the segments.
#[test]
fn a_run_resumed_from_a_checkpoint_reads_as_one_line_on_the_step_axis() {
    use leet::decode::synth::RunSpec;
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let run = |id: &str, name: &str, start: f64, lr: &str| RunSpec {
        run_id: id.into(),
        display_name: name.into(),
        start_time: start,
        config: vec![("lr".into(), lr.into())],
        metrics: vec!["loss".into()],
        ..RunSpec::default()
    };
    write_run(
        &wandb,
        &RunSpec {
            steps: 80,
            ..run("other001", "other", NOW - 3000.0, "0.0001")
        },
    );
    write_run(
        &wandb,
        &RunSpec {
            steps: 60,
            ..run("resum002", "rewound", NOW - 2000.0, "0.001")
        },
    );
    write_run(
        &wandb,
        &RunSpec {
            first_step: 40,
            steps: 40,
            resumed: true,
            ..run("resum002", "rewound", NOW - 1000.0, "0.01")
        },
    );
    snap("rewound", &wandb, "rewound/wandb", &|ws| {
        // The resumed run (the newest) is drawn; `other` beside it.
        ws.key(KeyCode::Down, 1);
        ws.keys(" ");
    });
}

/// The cursor on a run that is not drawn: its overview below the list (from the
/// index), the charts still the latest run's.
#[test]
fn the_highlighted_run_s_overview_below_the_list() {
    snap(
        "overview",
        &fixture_wandb("multi"),
        "runs/multi/wandb",
        &|ws| {
            ws.key(KeyCode::Down, 2);
            let w = ws.app.runs.workspace.as_deref().unwrap();
            assert_eq!(w.selected.len(), 1);
            assert!(!w.is_selected(&w.cursor_run().unwrap().key));
            assert!(ws.app.runs.compare.is_empty());
        },
    );
}

/// The overview of a highlighted run (from the index) lists what the run's own
/// overview lists once it is read (enter): facts, config, environment, and the
/// summary less W&B's `_wandb` bookkeeping (which the index leaves out).
#[test]
fn the_highlighted_overview_matches_the_run_s_own() {
    let mut ws = Ws::open(&fixture_wandb("multi"), "runs/multi/wandb", 200, 60);
    ws.key(KeyCode::Down, 2);
    let rows = |app: &App| {
        let mut r = app.panes.overview.rows.clone();
        r.retain(|r| !matches!(r, Row::Item(k, _) if k.starts_with("_wandb.")));
        // Titles without their counts (the run's Summary counts `_wandb.runtime`).
        for row in &mut r {
            if let Row::Header(h) = row {
                h.truncate(h.find(" [").unwrap_or(h.len()));
            }
        }
        r
    };
    let highlighted = rows(&ws.app);
    assert!(
        highlighted.contains(&Row::Item("Name".into(), "multi-2".into())),
        "{highlighted:?}"
    );
    ws.key(KeyCode::Enter, 1);
    assert!(!ws.app.runs.in_workspace_list());
    let own = rows(&ws.app);
    assert_eq!(highlighted, own);
    // Back on the list: the highlighted run's again.
    ws.key(KeyCode::Esc, 1);
    assert!(ws.app.runs.in_workspace_list());
    assert_eq!(rows(&ws.app), highlighted);
}

/// A highlighted run's untrusted text (names, config, summary, environment, a read
/// error) reaches the screen sanitized, at any size (the pane split included).
#[test]
fn a_hostile_highlighted_run_is_drawn_sanitized_at_any_size() {
    use leet::msg::{IndexState, RunIndexEntry};
    use serde_json::json;
    let evil = "x\u{1b}[2J\u{7}\r\ny\u{1b}]0;title\u{7}";
    let wandb = PathBuf::from("/w/wandb");
    let obj = |v: serde_json::Value| v.as_object().unwrap().clone();
    let entry = |id: &str, state| RunIndexEntry {
        dir: wandb.join(format!("run-20260101_00000{id}-{id}")),
        file: Some(wandb.join(format!("run-20260101_00000{id}-{id}/run-{id}.wandb"))),
        run_id: format!("{id}{evil}"),
        display_name: format!("n{id}{evil}"),
        notes: evil.to_owned(),
        tags: vec![evil.to_owned()],
        host: evil.to_owned(),
        git_commit: evil.to_owned(),
        has_run_record: state != IndexState::Unknown,
        state,
        config: obj(json!({ evil: evil, "nested": { evil: [evil] } })),
        summary: obj(json!({ evil: evil })),
        environment: obj(json!({ evil: evil, "args": [evil] })),
        error: Some(evil.to_owned()),
        ..RunIndexEntry::default()
    };
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(80, 24));
    app.open_workspace(wandb.clone(), None, None, false);
    let entries = vec![
        entry("2", IndexState::Crashed),
        entry("1", IndexState::Unknown),
    ];
    app.update(Msg::Indexed {
        wandb_dir: wandb,
        entries,
    });
    for cursor in 0..2 {
        for (w, h) in [(80, 24), (200, 60), (40, 10), (41, 14), (45, 13), (60, 15)] {
            app.update(Msg::Resize(w, h));
            let s = common::screen::screen(&app, w, h);
            assert!(
                !s.chars().any(|c| c.is_control() && c != '\n'),
                "{w}x{h} cursor {cursor}:\n{s}"
            );
            if (w, h) == (200, 60) {
                let id = ["2", "1"][cursor];
                // Its pinned rows and its facts (the overview's rows) are its own.
                let row = |k: &str, v: &str| s.lines().any(|l| l.starts_with(k) && l.contains(v));
                assert!(row(" ID ", &format!("{id}x⏎y")), "{s}");
                assert!(row(" Name ", &format!("n{id}x⏎y")), "{s}");
            }
        }
        // A small screen took the focus from the list: `R` gives it back.
        app.update(Msg::Resize(80, 24));
        app.update(Msg::char('R'));
        app.update(Msg::key(KeyCode::Down));
    }
}

/// A copy of the `multi` fixture's wandb directory with a newest run whose file
/// is not a `.wandb` log.
fn multi_with_unreadable_newest() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    for e in std::fs::read_dir(fixture_wandb("multi")).unwrap() {
        let e = e.unwrap();
        if !e.file_type().unwrap().is_dir() {
            continue;
        }
        let to = wandb.join(e.file_name());
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(e.path()).unwrap() {
            let f = f.unwrap();
            if f.file_type().unwrap().is_file() {
                std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
            }
        }
    }
    let junk = wandb.join("offline-run-20261201_000000-junk");
    std::fs::create_dir_all(&junk).unwrap();
    std::fs::write(junk.join("run-junk.wandb"), b"<html>not a run</html>").unwrap();
    tmp
}

/// Carry out `cmds` as the runtime would, a reader of a file that is not a run
/// saying so as the tail reader does.
fn drive(app: &mut App, cmds: Vec<Cmd>, cache: &Path) {
    let mut queue: std::collections::VecDeque<Cmd> = cmds.into();
    while let Some(cmd) = queue.pop_front() {
        let msgs = match cmd {
            Cmd::StartReader { path, tag } => match leet::source::tail::read_batch(&path) {
                Ok((file, batch)) => vec![
                    Msg::Tagged(
                        tag,
                        Box::new(Msg::Opened {
                            path: file,
                            len: batch.file_len,
                            modified: Some(NOW - 3600.0),
                        }),
                    ),
                    Msg::Tagged(tag, Box::new(Msg::Run(batch))),
                ],
                Err(e) => vec![Msg::Tagged(tag, Box::new(Msg::Unreadable(e.to_string())))],
            },
            Cmd::ScanIndex { wandb_dir, .. } => vec![Msg::Indexed {
                entries: scan(&wandb_dir, cache),
                wandb_dir,
            }],
            _ => Vec::new(),
        };
        for m in msgs {
            queue.extend(app.update(m).cmds);
        }
    }
}

/// An unreadable newest run is marked in the list (and says why on its detail
/// line) and is not the run drawn first: the latest readable one is. And while
/// the index is read in parts, a run not read yet shows as reading.
#[test]
fn an_unreadable_newest_run_is_marked_and_a_run_still_read_shows_reading() {
    let tmp = multi_with_unreadable_newest();
    let wandb = std::fs::canonicalize(tmp.path().join("wandb")).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(120, 30));
    // As the runtime opens it: the newest run directory read at once.
    let newest = wandb.join("offline-run-20261201_000000-junk");
    app.open_workspace(wandb.clone(), None, Some(newest), false);
    app.runs.workspace.as_mut().unwrap().label = "wandb".into();
    let cmds = app.take_cmds();
    drive(&mut app, cmds, cache.path());
    let cmds = app.update(Msg::Tick(NOW)).cmds;
    drive(&mut app, cmds, cache.path());
    let w = app.runs.workspace.as_deref().unwrap();
    assert_eq!(w.selected, ["multi005"]);
    let s = common::screen::screen(&app, 120, 30);
    assert!(s.contains("bad file"), "{s}");
    insta::assert_snapshot!("workspace_unreadable_newest_120x30", s);
    // The same directory listed while the newest readable run is still read.
    let mut entries = scan(&wandb, cache.path());
    let i = entries.iter().position(|e| e.run_id == "multi005").unwrap();
    entries[i] = leet::msg::RunIndexEntry {
        dir: entries[i].dir.clone(),
        file: entries[i].file.clone(),
        size: entries[i].size,
        run_id: "multi005".into(),
        reading: true,
        ..leet::msg::RunIndexEntry::default()
    };
    let cmds = app
        .update(Msg::IndexProgress {
            wandb_dir: wandb,
            entries,
        })
        .cmds;
    drive(&mut app, cmds, cache.path());
    let s = common::screen::screen(&app, 120, 30);
    assert!(s.contains("reading…"), "{s}");
    insta::assert_snapshot!("workspace_reading_while_indexed_120x30", s);
}

/// Grouped charts draw each group's mean and band, never smoothed: `e` and `E`
/// change nothing there and the status line says why; ungrouped, `e` smooths.
#[test]
fn smoothing_keys_on_grouped_charts_say_why_they_do_nothing() {
    use leet::store::smooth::Smoothing;
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    common::runs::write_workspace_at(&wandb, 4, NOW);
    let mut ws = Ws::open(&wandb, "sweep/wandb", 120, 40);
    let n = ws.app.runs.workspace.as_ref().unwrap().runs.len();
    for _ in 1..n {
        ws.key(KeyCode::Down, 1);
        ws.keys(" ");
    }
    ws.keys("G");
    ws.keys("lr");
    ws.key(KeyCode::Enter, 1);
    let key = ws.app.charts.focused_key().unwrap().to_owned();
    for k in ["e", "E"] {
        ws.keys(k);
        assert_eq!(ws.app.charts.smoothing.of(&key), Smoothing::None, "{k}");
        let s = ws.screen(120, 40);
        let status = s.lines().nth(39).unwrap();
        assert!(
            status.contains("smoothing is not drawn on grouped runs"),
            "{k}: {status}"
        );
        ws.app.shown.source.error = None;
    }
    // Ungrouped (an empty key), `e` smooths the focused chart.
    ws.keys("G");
    ws.key(KeyCode::Backspace, 2);
    ws.key(KeyCode::Enter, 1);
    ws.keys("e");
    assert_ne!(ws.app.charts.smoothing.of(&key), Smoothing::None);
    assert!(ws.app.shown.source.error.is_none());
}

/// `G` opens on the key in force, selected (drawn reversed): typing replaces it,
/// an arrow (or backspace) keeps it to edit.
#[test]
fn the_group_prompt_s_prefill_is_replaced_by_typing() {
    use ratatui::style::Modifier;
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    common::runs::write_workspace_at(&wandb, 4, NOW);
    let mut ws = Ws::open(&wandb, "sweep/wandb", 120, 40);
    ws.keys("G");
    ws.keys("lr");
    ws.key(KeyCode::Enter, 1);
    let group = |ws: &Ws| ws.app.runs.workspace.as_ref().unwrap().group_by.clone();
    assert_eq!(group(&ws).as_deref(), Some("lr"));
    // Reopened: "lr" is shown selected.
    ws.keys("G");
    let area = ratatui::layout::Rect::new(0, 0, 120, 40);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    leet::ui::render::render_buffer(&mut buf, area, &ws.app);
    let row: String = (0..120).map(|x| buf[(x, 39)].symbol().to_owned()).collect();
    let at = row.find("group by config key: lr").unwrap();
    let col = u16::try_from(row[..at].chars().count() + "group by config key: ".len()).unwrap();
    for x in [col, col + 1] {
        assert!(
            buf[(x, 39)].modifier.contains(Modifier::REVERSED),
            "{x}: {row}"
        );
    }
    assert!(
        !buf[(col + 2, 39)].modifier.contains(Modifier::REVERSED),
        "{row}"
    );
    ws.keys("seed");
    ws.key(KeyCode::Enter, 1);
    assert_eq!(group(&ws).as_deref(), Some("seed"));
    // An arrow first: the prefill is kept and typed onto.
    ws.keys("G");
    ws.key(KeyCode::End, 1);
    ws.keys("_x");
    ws.key(KeyCode::Enter, 1);
    // No run has `seed_x`: refused, the grouping kept, the error naming the key typed.
    assert_eq!(group(&ws).as_deref(), Some("seed"));
    assert_eq!(
        ws.app.shown.source.error.as_deref(),
        Some("no run has config key seed_x")
    );
}

/// A resumed run of two segments, each with its own system samples (`cpu`: 10 %
/// in the first, 90 % in the second) and console lines (`part 0 …`, `part 1 …`).
fn write_resumed_with_samples(wandb: &Path) {
    use leet::decode::leveldb::Writer;
    use leet::decode::pb::{self, record::RecordType as T};
    use leet::decode::synth::{run_dir_name, run_records, RunSpec};
    use prost::Message as _;
    for (i, (first, start)) in [(0u64, NOW - 600.0), (10, NOW - 300.0)]
        .into_iter()
        .enumerate()
    {
        let spec = RunSpec {
            run_id: "res7".into(),
            display_name: "resumed-sys".into(),
            start_time: start,
            steps: 10,
            first_step: first,
            metrics: vec!["loss".into()],
            // Its exit record after the samples (no writer writes after it).
            exit_code: None,
            resumed: i == 1,
            ..RunSpec::default()
        };
        let mut w = Writer::new();
        run_records(&spec, |p| w.append(p));
        let rec = |num: i64, r: T| {
            pb::Record {
                num,
                record_type: Some(r),
                ..Default::default()
            }
            .encode_to_vec()
        };
        for k in 0..10i64 {
            let at = start as i64 + 1 + k * 10;
            w.append(&rec(
                1000 + 2 * k,
                T::Stats(pb::StatsRecord {
                    timestamp: Some(prost_types::Timestamp {
                        seconds: at,
                        nanos: 0,
                    }),
                    item: vec![pb::StatsItem {
                        key: "cpu".into(),
                        value_json: if i == 0 { "10" } else { "90" }.into(),
                    }],
                    ..Default::default()
                }),
            ));
            w.append(&rec(
                1001 + 2 * k,
                T::OutputRaw(pb::OutputRawRecord {
                    line: format!("part {i} line {k}\n"),
                    timestamp: Some(prost_types::Timestamp {
                        seconds: at,
                        nanos: 0,
                    }),
                    ..Default::default()
                }),
            ));
        }
        w.append(&rec(2000, T::Exit(pb::RunExitRecord::default())));
        let dir = wandb.join(run_dir_name(start, "res7", true));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("run-res7.wandb"), w.into_bytes()).unwrap();
    }
}

/// A resumed run's system charts and console are of every segment, in order
/// (its history already was): not only the segment read as the main run.
#[test]
fn a_resumed_runs_system_charts_and_console_cover_every_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    write_resumed_with_samples(&wandb);
    let mut ws = Ws::open(&wandb, "resumed/wandb", 160, 48);
    ws.key(KeyCode::Enter, 1);
    let view = ws.app.console_view();
    let lines: Vec<&str> = (0..view.len())
        .map(|i| view.get(i).unwrap().text.as_str())
        .collect();
    let want: Vec<String> = (0..2)
        .flat_map(|p| (0..10).map(move |k| format!("part {p} line {k}")))
        .collect();
    assert_eq!(lines, want);
    // The CPU chart from the first segment's start (10 %) to the second's end
    // (90 %), the time between them a gap.
    let s = ws.screen(160, 48);
    let row = |at: &str| s.lines().find(|l| l.contains(at)).unwrap_or_default();
    assert!(s.contains("Process CPU (%)"), "{s}");
    assert!(row("│10%│").contains('⣀'), "{s}");
    assert!(row("│90%│").contains('⠉'), "{s}");
    assert!(row("└0:01").trim_end().ends_with("6:31│"), "{s}");
}

/// The same script run three times: the runs share a display name, so where the
/// id column does not fit the list names each with its id, and the legend (and
/// the crosshair's readout) too; the run with a name of its own keeps it.
#[test]
fn runs_that_share_a_name_are_told_apart_by_their_ids() {
    use leet::decode::synth::RunSpec;
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    for (i, (id, name)) in [
        ("solo0001", "solo"),
        ("ab12cd34", "twin"),
        ("ab12zz99", "twin"),
        ("xy77qq00", "twin"),
    ]
    .into_iter()
    .enumerate()
    {
        write_run(
            &wandb,
            &RunSpec {
                run_id: id.into(),
                display_name: name.into(),
                start_time: NOW - 3000.0 + 60.0 * i as f64,
                metrics: vec!["loss".into()],
                steps: 20,
                ..RunSpec::default()
            },
        );
    }
    let mut ws = Ws::open(&wandb, "twins/wandb", 100, 30);
    ws.key(KeyCode::Down, 1);
    ws.keys(" ");
    let screen = ws.screen(100, 30);
    // The fewest first characters of the ids that tell them apart: four, and
    // five where two ids begin alike.
    for id in ["ab12c", "ab12z", "xy77q"] {
        assert!(screen.contains(&format!("twin ({id})")), "{id}:\n{screen}");
    }
    assert!(!screen.contains("solo ("), "{screen}");
    // Drawn: the newest two, whose ids four characters tell apart.
    let legend = screen.lines().find(|l| l.contains("A twin (xy77)"));
    assert!(
        legend.is_some_and(|l| l.contains("B twin (ab12)")),
        "{screen}"
    );
}

/// A resumed run drawn while its new segment comes: the run is then read with
/// the new segment as its main run, as when it is opened, so the chart's corner
/// gives the run's last value (the new segment's), and with the crosshair on, its
/// value there (its segments are one run's series).
#[test]
fn a_resumed_runs_new_segment_leads_it_when_it_comes_while_drawn() {
    use leet::decode::synth::RunSpec;
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let seg = |first: u64, start: f64, resumed: bool| RunSpec {
        run_id: "resum003".into(),
        display_name: "resumed".into(),
        start_time: start,
        first_step: first,
        steps: 30,
        resumed,
        metrics: vec!["loss".into()],
        ..RunSpec::default()
    };
    write_run(&wandb, &seg(0, NOW - 2000.0, false));
    let mut ws = Ws::open(&wandb, "live/wandb", 120, 36);
    let corner = |ws: &Ws| {
        let s = ws.screen(120, 36);
        let line = s
            .lines()
            .find(|l| l.contains("╭loss"))
            .unwrap_or_else(|| panic!("{s}"))
            .to_owned();
        line.split('─')
            .filter(|p| !p.is_empty() && !p.contains("loss"))
            .map(|p| p.trim_end_matches(['╮', '│', ' ']).to_owned())
            .find(|p| !p.is_empty())
            .unwrap_or_default()
    };
    let last_of = |ws: &Ws| {
        let run = &ws.app.shown.run;
        let p = run.metrics.get("loss").unwrap().last().unwrap();
        leet::ui::widget::format::value(p.1)
    };
    let first_last = last_of(&ws);
    assert_eq!(corner(&ws), first_last);

    write_run(&wandb, &seg(30, NOW - 1000.0, true));
    ws.send([Msg::Tick(NOW + 1.0)]);
    let main = ws.app.shown.source.file.clone().unwrap();
    let newest = leet::decode::synth::run_dir_name(NOW - 1000.0, "resum003", false);
    assert!(
        main.parent().unwrap().ends_with(newest),
        "{}",
        main.display()
    );
    let new_last = last_of(&ws);
    assert_ne!(new_last, first_last);
    assert_eq!(corner(&ws), new_last);
    // The crosshair's readout names the run's value, whichever segment has it.
    // (On every chart: the runs list has the focus.)
    ws.keys("CC");
    let c = corner(&ws);
    assert!(
        c.starts_with("x=") && c.contains(" · ") && !c.ends_with('–'),
        "{c}"
    );
}

/// A run file that holds no run record yet (the SDK writes its header first; an
/// offline run's first records may follow seconds later) is `starting` in the
/// list while fresh and `empty` once quiet past the stale limit (killed before it
/// wrote), its overview saying what the viewer's header says of it; `unknown` is
/// left for a run directory without a run file.
#[test]
fn a_run_file_with_no_record_yet_is_starting_then_empty_not_unknown() {
    use leet::msg::{IndexState, RunIndexEntry};
    let wandb = PathBuf::from("/w/wandb");
    let entry = |id: &str, file: bool, quiet_s: f64| RunIndexEntry {
        dir: wandb.join(format!("offline-run-20260101_00000{id}-{id}")),
        file: file.then(|| {
            wandb.join(format!(
                "offline-run-20260101_00000{id}-{id}/run-{id}.wandb"
            ))
        }),
        size: if file { 7 } else { 0 },
        mtime_ns: ((NOW - quiet_s) * 1e9) as u64,
        // No run record: no id but its directory's name.
        state: IndexState::Unknown,
        ..RunIndexEntry::default()
    };
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(120, 30));
    app.open_workspace(wandb.clone(), None, None, false);
    let entries = vec![
        entry("3", true, 2.0),
        entry("2", true, 3.0 * 3600.0),
        entry("1", false, 10.0),
    ];
    app.update(Msg::Indexed {
        wandb_dir: wandb,
        entries,
    });
    app.update(Msg::Tick(NOW));
    let s = common::screen::screen(&app, 120, 30);
    let listed = |word: &str| s.lines().filter(|l| l.contains(word)).count();
    assert_eq!(listed("starting 3"), 1, "{s}");
    assert_eq!(listed("empty "), 1, "{s}");
    assert_eq!(listed("unknown"), 1, "{s}");
    // The highlighted (newest) run's overview says it waits for its first record,
    // and gives the id its directory's name ends in.
    assert!(
        s.lines().any(|l| l.starts_with(" ID") && l.contains(" 3")),
        "{s}"
    );
    assert!(
        s.lines()
            .any(|l| l.contains("State") && l.contains("empty: waiting for the first")),
        "{s}"
    );
    // The stale one's says how long nothing came.
    app.update(Msg::key(KeyCode::Down));
    let s = common::screen::screen(&app, 120, 30);
    assert!(
        s.lines()
            .any(|l| l.contains("State") && l.contains("empty: nothing written")),
        "{s}"
    );
    // The clock alone turns the fresh one `empty`: a tick past the stale limit
    // draws the list again (it stayed `starting` until a key).
    assert!(!app.update(Msg::Tick(NOW + 1.0)).redraw);
    assert!(app.update(Msg::Tick(NOW + 3600.0)).redraw);
    let s = common::screen::screen(&app, 120, 30);
    let listed = |word: &str| s.lines().filter(|l| l.contains(word)).count();
    assert_eq!((listed("starting"), listed("empty ")), (0, 2), "{s}");
}

/// `leet RUN-DIR` of one segment of a resumed run reads that segment alone: the
/// overview says which segment it is and how to see the run whole; drawn
/// stitched from the list (esc, enter), it says nothing of the kind.
#[test]
fn a_segment_of_a_resumed_run_opened_alone_says_so_and_the_way_to_the_whole_run() {
    let wandb = std::fs::canonicalize(fixture_wandb("resumed")).unwrap();
    let first = wandb.join("offline-run-20261130_175125-resum001");
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(200, 40));
    // As the runtime opens it.
    app.request_open(first.clone());
    app.open_workspace(wandb.clone(), None, Some(first.clone()), true);
    let mut ws = Ws {
        app,
        wandb,
        cache: tempfile::tempdir().unwrap(),
    };
    let cmds = ws.app.take_cmds();
    ws.run(cmds);
    ws.send([Msg::Tick(NOW)]);
    let s = ws.screen(200, 40);
    let row = s
        .lines()
        .find(|l| l.contains("Segment "))
        .unwrap_or_default();
    assert!(row.contains("1 of 2 · esc: all"), "{s}");
    // The list, then the run: both segments, stitched, and no such row.
    ws.key(KeyCode::Esc, 1);
    ws.key(KeyCode::Enter, 1);
    let s = ws.screen(200, 40);
    assert!(!ws.app.runs.in_workspace_list(), "{s}");
    assert!(!s.contains("Segment "), "{s}");
}

/// A resumed run drawn whole lists every segment's images in the media pane, in
/// step order, each read from its own segment's directory (an image's path is
/// relative to it); an earlier segment's image at a step the next segment logged
/// again gives way, as its rows do (it listed the newest segment's only).
#[test]
fn a_resumed_runs_media_pane_lists_every_segments_images() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    // Segment one logs steps 0..30 and images at 5 and 35 (35: past where the
    // second takes over, at 30); segment two logs 30..60 and an image at 45.
    let dirs = write_resumed_with_images(
        &wandb,
        "resum004",
        &[(0, NOW - 2000.0, vec![5, 35]), (30, NOW - 1000.0, vec![45])],
    );
    let mut ws = Ws::open(&wandb, "wandb", 160, 40);
    ws.keys("3");
    let loaded = |ws: &Ws| ws.app.panes.media.loaded.clone().unwrap_or_default();
    // Opened on the newest: the second segment's, from its directory.
    assert!(loaded(&ws).starts_with(&dirs[1]), "{:?}", loaded(&ws));
    let s = ws.screen(160, 40);
    assert!(s.contains("img · _step 45 (2/2)"), "{s}");
    ws.key(KeyCode::Left, 1);
    assert_eq!(
        loaded(&ws),
        dirs[0].join("files/media/images/img_5.png"),
        "the first segment's, under its own directory"
    );
    let s = ws.screen(160, 40);
    assert!(s.contains("img · _step 5 (1/2)"), "{s}");
}

/// A resumed run `id` under `wandb`: per segment its first step (30 steps each),
/// start time and the steps it logs an image `img` at (a copy of a fixture PNG
/// named `img_<step>.png`); the segments' directories, canonical.
fn write_resumed_with_images(
    wandb: &Path,
    id: &str,
    segments: &[(u64, f64, Vec<i64>)],
) -> Vec<PathBuf> {
    use leet::decode::synth::{run_dir_name, run_records, RunSpec};
    let png = common::runs_dir()
        .join("many_metrics/wandb/offline-run-20261130_174932-many0001/files/media/images");
    let png = std::fs::read_dir(png)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "png"))
        .unwrap();
    let mut dirs = Vec::new();
    for (i, (first, start, steps)) in segments.iter().enumerate() {
        let spec = RunSpec {
            run_id: id.into(),
            display_name: format!("run-{id}"),
            start_time: *start,
            first_step: *first,
            steps: 30,
            resumed: i > 0,
            metrics: vec!["loss".into()],
            // Its exit record after the image rows (no writer logs after it).
            exit_code: None,
            ..RunSpec::default()
        };
        let dir = wandb.join(run_dir_name(*start, id, false));
        let images = dir.join("files/media/images");
        std::fs::create_dir_all(&images).unwrap();
        let mut w = leet_format::leveldb::Writer::new();
        let mut n = 0;
        run_records(&spec, |p| {
            w.append(p);
            n += 1;
        });
        for step in steps {
            let name = format!("img_{step}.png");
            std::fs::copy(&png, images.join(&name)).unwrap();
            let path = format!("\"media/images/{name}\"");
            let s = step.to_string();
            n += 1;
            w.append(&leet_format::synth::history_record(
                n,
                &[
                    ("_step", s.as_str()),
                    ("img._type", r#""image-file""#),
                    ("img.path", path.as_str()),
                ],
            ));
        }
        {
            use prost::Message as _;
            let exit = leet::decode::pb::Record {
                num: n + 1,
                record_type: Some(leet::decode::pb::record::RecordType::Exit(
                    leet::decode::pb::RunExitRecord::default(),
                )),
                ..Default::default()
            };
            w.append(&exit.encode_to_vec());
        }
        std::fs::write(dir.join(format!("run-{id}.wandb")), w.into_bytes()).unwrap();
        dirs.push(std::fs::canonicalize(dir).unwrap());
    }
    dirs
}

/// Two resumed runs opened alone one after the other, the second from the run
/// picker (`R`, a row, enter) while the first is shown alone with its media pane
/// focused: the runs drawn are the second's segments, tagged as its (the first
/// run's first segment stayed drawn as the second's, its images listed before
/// the second's own), and the media pane opens on the new run's newest image (it
/// kept the position it had in the first run).
#[test]
fn a_resumed_run_opened_after_another_draws_and_lists_its_own_segments_only() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let a = write_resumed_with_images(
        &wandb,
        "resa0001",
        &[(0, NOW - 4000.0, vec![0, 10]), (30, NOW - 3500.0, vec![40])],
    );
    let b = write_resumed_with_images(
        &wandb,
        "resb0001",
        &[
            (0, NOW - 2000.0, vec![5, 15]),
            (30, NOW - 1500.0, vec![45, 50]),
        ],
    );
    let mut ws = Ws::open(&wandb, "wandb", 160, 40);
    // The list: resb0001 first (newest), resa0001 below it; resa0001 alone.
    ws.keys("R");
    ws.key(KeyCode::Down, 1);
    ws.key(KeyCode::Enter, 1);
    ws.keys("3");
    let s = ws.screen(160, 40);
    assert!(s.contains("img · _step 40 (3/3)"), "{s}");
    ws.key(KeyCode::Left, 1);
    // esc leaves the media pane's focus; `R` is the run picker in a run alone.
    ws.key(KeyCode::Esc, 1);
    ws.keys("R");
    ws.key(KeyCode::Up, 1);
    ws.key(KeyCode::Enter, 1);
    let runs = &ws.app.runs;
    assert_eq!(
        runs.main_tag.as_ref().map(|t| t.key.as_str()),
        Some("resb0001")
    );
    let drawn: Vec<&PathBuf> = runs.compare.iter().map(|c| &c.dir).collect();
    assert_eq!(drawn, [&b[0]], "{a:?}");
    let s = ws.screen(160, 40);
    assert!(s.contains("img · _step 50 (4/4)"), "{s}");
    // Drawn whole, it started when its first segment did (as the list says).
    let first = leet::text::rfc3339((NOW - 2000.0) as i64, 0).unwrap();
    let started = s
        .lines()
        .find(|l| l.starts_with(" Started"))
        .unwrap_or_default();
    assert!(started.contains(&first), "{first}\n{s}");
}

/// A resumed run shown alone whose earlier segment is read after its newest (as
/// the runtime's readers may finish): the overview's `Started` becomes the first
/// segment's when that segment comes (it kept the newest's, built before).
#[test]
fn the_started_of_a_resumed_run_is_its_first_segments_whichever_is_read_first() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let dirs = write_resumed_with_images(
        &wandb,
        "resd0001",
        &[(0, NOW - 3000.0, vec![]), (30, NOW - 1000.0, vec![])],
    );
    // A newer run, drawn first.
    write_resumed_with_images(&wandb, "newe0001", &[(0, NOW - 500.0, vec![])]);
    let mut ws = Ws::open(&wandb, "wandb", 160, 40);
    ws.keys("R");
    ws.key(KeyCode::Down, 1);
    // Enter on the run, its readers' batches held back: the newest segment's
    // (the main run's) first, then the earlier one's.
    let cmds = ws.app.update(Msg::key(KeyCode::Enter)).cmds;
    let mut held = Vec::new();
    let mut queue: std::collections::VecDeque<Cmd> = cmds.into();
    while let Some(cmd) = queue.pop_front() {
        match cmd {
            Cmd::StartReader { path, tag } if tag != ws.app.shown.tag => held.push((path, tag)),
            cmd => ws.run(vec![cmd]),
        }
    }
    let started = |ws: &Ws| {
        let s = ws.screen(160, 40);
        s.lines()
            .find(|l| l.starts_with(" Started"))
            .unwrap_or_default()
            .to_owned()
    };
    let first = leet::text::rfc3339((NOW - 3000.0) as i64, 0).unwrap();
    assert!(!held.is_empty(), "the earlier segment is read apart");
    for (path, tag) in held {
        assert_eq!(path, dirs[0]);
        let (file, batch) = leet::source::tail::read_batch(&path).unwrap();
        ws.send([
            Msg::Tagged(
                tag,
                Box::new(Msg::Opened {
                    path: file,
                    len: batch.file_len,
                    modified: Some(NOW - 3600.0),
                }),
            ),
            Msg::Tagged(tag, Box::new(Msg::Run(batch))),
        ]);
    }
    assert!(started(&ws).contains(&first), "{first}: {}", started(&ws));
}

/// A resumed run's new segment coming while the run is drawn: the segment shown
/// until then stays drawn as it was read, its reader going on for it, and is not
/// read again (its images went missing from the media pane while it was).
#[test]
fn a_new_segment_keeps_the_segment_shown_before_as_read() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let first = write_resumed_with_images(&wandb, "resk0001", &[(0, NOW - 2000.0, vec![5, 15])]);
    let mut ws = Ws::open(&wandb, "wandb", 160, 40);
    ws.keys("3");
    let s = ws.screen(160, 40);
    assert!(s.contains("img · _step 15 (2/2)"), "{s}");
    let old_tag = ws.app.shown.tag;
    // The run resumed: its second segment's directory appears.
    let second = write_resumed_with_images(&wandb, "resk0001", &[(30, NOW - 1000.0, vec![45])]);
    ws.send([Msg::Tick(NOW + 1.0)]);
    let main = ws.app.shown.source.file.clone().unwrap();
    assert!(main.starts_with(&second[0]), "{main:?}");
    // Drawn beside under its reader's tag: the same reader, not a new one.
    let kept = ws
        .app
        .runs
        .compare
        .iter()
        .find(|c| c.dir == first[0])
        .expect("drawn beside");
    assert_eq!(kept.tag, old_tag);
    let s = ws.screen(160, 40);
    assert!(s.contains("img · _step 45 (3/3)"), "{s}");
}
