//! The app asks the outside world for everything through `Cmd`s, which the runtime
//! carries out off the loop thread: `App::update` touches no file system, so it
//! answers every key even when the run's directory is gone, and the real executor
//! does each kind of command against real directories.

use crate::common;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use leet::msg::{Msg, RunEntry};
use leet::runtime::{answer, Executor};
use leet::ui::{App, Cmd, Effect, Options, Overlay};

const MANY: &str = "offline-run-20261130_174932-many0001";
const MULTI4: &str = "offline-run-20261130_175139-multi004";

/// A wandb directory in `tmp` holding a copy of the many_metrics run (with its
/// images) and of one multi run.
fn wandb_copy(tmp: &Path) -> PathBuf {
    let wandb = tmp.join("wandb");
    copy_dir(
        &common::runs_dir().join("many_metrics/wandb").join(MANY),
        &wandb.join(MANY),
    );
    copy_dir(
        &common::runs_dir().join("multi/wandb").join(MULTI4),
        &wandb.join(MULTI4),
    );
    wandb
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().unwrap().is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// A runtime for the test: it keeps every command the app returns, and answers
/// the ones that ask for something when told to, with the real executor's answer
/// or one the test makes up.
#[derive(Default)]
struct FakeRuntime {
    queue: VecDeque<Cmd>,
    /// Every command seen, in order.
    log: Vec<Cmd>,
}

impl FakeRuntime {
    /// One message through `update`, logging the commands it asks for.
    fn send(&mut self, app: &mut App, msg: Msg) -> Effect {
        let fx = app.update(msg);
        self.log.extend(fx.cmds.iter().cloned());
        self.queue.extend(fx.cmds.iter().cloned());
        fx
    }

    /// Answer the queued commands with the real executor's answers (readers are
    /// started by nobody), until none is left.
    fn settle(&mut self, app: &mut App) {
        while let Some(cmd) = self.queue.pop_front() {
            if let Some(msg) = answer(cmd) {
                self.send(app, msg);
            }
        }
    }
}

fn key(c: KeyCode) -> Msg {
    Msg::key(c)
}

#[test]
fn a_scripted_session_answers_every_key_after_its_run_directory_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = wandb_copy(tmp.path());
    let run_dir = wandb.join(MANY);
    let (file, batch) = leet::source::tail::read_batch(&run_dir).unwrap();
    let mut rt = FakeRuntime::default();
    let mut a = App::new(Options::default());
    a.request_open(run_dir.clone());
    assert_eq!(
        a.take_cmds(),
        [Cmd::StartReader {
            path: run_dir.clone(),
            tag: 0
        }]
    );
    rt.send(&mut a, Msg::Resize(160, 45));
    rt.send(
        &mut a,
        Msg::Tagged(
            0,
            Box::new(Msg::Opened {
                path: file,
                len: batch.file_len,
                modified: None,
            }),
        ),
    );
    rt.send(&mut a, Msg::Tagged(0, Box::new(Msg::Run(batch))));
    // Counting the runs next to it, and whether it is a segment of a resumed
    // run, were asked for, not done.
    assert_eq!(
        rt.log,
        [
            Cmd::CountRuns {
                wandb_dir: wandb.clone()
            },
            Cmd::FindSegments {
                file: run_dir.join("run-many0001.wandb")
            }
        ]
    );
    rt.settle(&mut a);
    assert_eq!(a.shown.source.runs_here, 2);
    let charts = a.charts.shown.len();
    assert!(charts > 4 && !a.shown.run.media.is_empty());

    // The whole wandb directory goes away after the start.
    std::fs::remove_dir_all(&wandb).unwrap();

    // R opens the picker at once; its list is asked for, and keys wait for it.
    assert!(rt.send(&mut a, Msg::char('R')).redraw);
    assert!(matches!(a.overlay, Overlay::Runs));
    assert_eq!(
        rt.queue.back(),
        Some(&Cmd::ListRuns {
            run_dir: run_dir.clone()
        })
    );
    rt.send(&mut a, key(KeyCode::Down));
    rt.settle(&mut a);
    // The directory is gone: the list is empty, and the waiting key applied to it.
    assert!(a.runs.list.is_empty() && a.runs.sel == 0);
    assert!(rt.send(&mut a, key(KeyCode::Esc)).redraw);
    assert!(matches!(a.overlay, Overlay::None));

    // The media pane opens and asks for its image; the answer is an error shown.
    assert!(rt.send(&mut a, Msg::char('3')).redraw);
    assert!(a.screen.areas.media.is_some());
    assert_eq!(a.panels.focus, leet::ui::panels::Pane::Media);
    assert!(a.panes.media.loading);
    let Some(Cmd::LoadImage { path }) = rt.queue.back().cloned() else {
        panic!("{:?}", rt.queue);
    };
    assert!(path.starts_with(run_dir.join("files")), "{path:?}");
    rt.settle(&mut a);
    assert!(!a.panes.media.loading && a.panes.media.image.is_none());
    assert!(a.panes.media.error.is_some());
    assert!(rt.send(&mut a, key(KeyCode::Left)).redraw);
    rt.settle(&mut a);
    assert!(rt.send(&mut a, key(KeyCode::Esc)).redraw);
    assert!(matches!(a.overlay, Overlay::None));
    assert!(rt.send(&mut a, Msg::char('3')).redraw);
    assert!(a.screen.areas.media.is_none());

    // Filter, page, log scale, help: all state, no file.
    for m in [Msg::char('/')]
        .into_iter()
        .chain(Msg::typed("loss"))
        .chain([key(KeyCode::Enter)])
    {
        assert!(rt.send(&mut a, m).redraw);
    }
    let filtered = a.charts.shown.len();
    assert!(filtered > 0 && filtered < charts, "{filtered} of {charts}");
    rt.send(&mut a, Msg::ctrl('l'));
    assert_eq!(a.charts.shown.len(), charts);
    let pages = a.charts.grid.pages(charts);
    assert!(pages > 1, "{pages} pages");
    rt.send(&mut a, key(KeyCode::End));
    assert_eq!(a.charts.grid.page(), pages - 1);
    rt.send(&mut a, Msg::char('y'));
    let log = leet::ui::charts::grid::YScale::Log;
    assert_eq!(a.charts.grid.scales.metric(a.focused_key().unwrap()), log);
    assert!(rt.send(&mut a, Msg::char('h')).redraw);
    assert!(matches!(a.overlay, Overlay::Help { .. }));
    rt.send(&mut a, key(KeyCode::Down));
    assert!(matches!(a.overlay, Overlay::Help { scroll: 1 }));
    rt.send(&mut a, key(KeyCode::Esc));
    assert!(matches!(a.overlay, Overlay::None));

    // Switch runs: the picker's list comes (made up: the other run, also gone);
    // Enter stops this run's reader and starts one on the other.
    rt.send(&mut a, Msg::char('R'));
    rt.queue.clear();
    let other = wandb.join(MULTI4);
    rt.send(&mut a, key(KeyCode::Down));
    rt.send(&mut a, key(KeyCode::Enter));
    assert!(matches!(a.overlay, Overlay::Runs), "keys wait for the list");
    let listed = |dir: &Path| RunEntry {
        dir: dir.to_path_buf(),
        ..RunEntry::default()
    };
    rt.send(
        &mut a,
        Msg::RunsListed {
            run_dir: run_dir.clone(),
            runs: vec![listed(&run_dir), listed(&other)],
        },
    );
    assert!(matches!(a.overlay, Overlay::None));
    let tail: Vec<Cmd> = rt.log.iter().rev().take(2).rev().cloned().collect();
    let [Cmd::StopReader { tag: 0 }, Cmd::StartReader { path, tag }] = tail.as_slice() else {
        panic!("{:?}", rt.log);
    };
    assert_eq!(path, &other);
    assert!(a.charts.metric_keys.is_empty(), "the new run starts empty");
    // Its reader finds nothing there; the app says so and goes on.
    rt.send(
        &mut a,
        Msg::Tagged(*tag, Box::new(Msg::SourceError("no such directory".into()))),
    );
    assert!(a.shown.source.error.is_some());
    rt.settle(&mut a);
    assert!(rt.send(&mut a, Msg::char('q')).quit);
}

#[test]
fn keys_are_answered_while_no_command_is() {
    // A runtime that never answers (a hung network mount): the app still takes
    // every key, and closing or quitting never waits for an answer.
    let mut rt = FakeRuntime::default();
    let mut a = App::new(Options::default());
    let dir = common::runs_dir().join("many_metrics/wandb").join(MANY);
    let (file, batch) = leet::source::tail::read_batch(&dir).unwrap();
    rt.send(&mut a, Msg::Resize(120, 40));
    rt.send(
        &mut a,
        Msg::Opened {
            path: file,
            len: batch.file_len,
            modified: None,
        },
    );
    rt.send(&mut a, Msg::Run(batch));
    assert!(rt.send(&mut a, Msg::char('R')).redraw);
    assert!(matches!(a.overlay, Overlay::Runs));
    assert!(
        !rt.send(&mut a, key(KeyCode::Down)).redraw,
        "waits for the list"
    );
    assert!(rt.send(&mut a, key(KeyCode::Esc)).redraw);
    assert!(matches!(a.overlay, Overlay::None));
    assert!(rt.send(&mut a, Msg::char('3')).redraw);
    assert!(a.panes.media.loading && a.screen.areas.media.is_some());
    let s = screen(&a, 120, 40);
    assert!(s.contains("reading the image"), "{s}");
    assert!(rt.send(&mut a, key(KeyCode::Right)).redraw);
    assert!(rt.send(&mut a, key(KeyCode::Esc)).redraw);
    // A late answer for an image no longer selected is dropped.
    let first = rt
        .log
        .iter()
        .find_map(|c| match c {
            Cmd::LoadImage { path } => Some(path.clone()),
            _ => None,
        })
        .unwrap();
    if a.panes.media.loaded.as_deref() != Some(first.as_path()) {
        assert!(
            !rt.send(
                &mut a,
                Msg::ImageLoaded {
                    path: first,
                    image: Err("late".into()),
                },
            )
            .redraw
        );
        assert!(a.panes.media.error.is_none());
    }
    assert!(rt.send(&mut a, Msg::char('q')).quit);
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    t.draw(|f| leet::ui::render::render(f, app)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut s = String::new();
    for y in 0..h {
        for x in 0..w {
            s.push_str(buf[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

/// The next message from the worker (or its readers), within `secs`.
fn next(rx: &mpsc::Receiver<Msg>, secs: u64) -> Msg {
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|e| panic!("no message from the worker: {e}"))
}

/// Messages until one matches, within `secs` in all.
fn until(rx: &mpsc::Receiver<Msg>, secs: u64, mut f: impl FnMut(&Msg) -> bool) -> Msg {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let m = rx
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("no matching message: {e}"));
        if f(&m) {
            return m;
        }
    }
}

#[test]
fn every_command_kind_is_carried_out_by_the_worker() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = wandb_copy(tmp.path());
    let (tx, rx) = mpsc::sync_channel(64);
    let exec = Executor::spawn(tx);

    exec.run([Cmd::CountRuns {
        wandb_dir: wandb.clone(),
    }]);
    let Msg::RunsCounted { wandb_dir, count } = next(&rx, 10) else {
        panic!()
    };
    assert_eq!((wandb_dir, count), (wandb.clone(), 2));

    exec.run([Cmd::ListRuns {
        run_dir: wandb.join(MANY),
    }]);
    let Msg::RunsListed { run_dir, runs } = next(&rx, 10) else {
        panic!()
    };
    assert_eq!(run_dir, wandb.join(MANY));
    let dirs: Vec<&Path> = runs.iter().map(|r| r.dir.as_path()).collect();
    assert_eq!(dirs, [wandb.join(MULTI4), wandb.join(MANY)], "newest first");
    assert!(runs.iter().all(|r| r.file.is_some() && r.size > 0));
    assert_eq!(runs[1].id, "many0001", "peeked from its run record");

    let images = wandb.join(MANY).join("files/media/images");
    let png = std::fs::read_dir(&images)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "png"))
        .unwrap();
    exec.run([
        Cmd::LoadImage { path: png.clone() },
        Cmd::LoadImage {
            path: images.clone(),
        },
    ]);
    let Msg::ImageLoaded { path, image } = next(&rx, 10) else {
        panic!()
    };
    let img = image.unwrap();
    assert_eq!((path, img.width, img.height), (png, 16, 16));
    let Msg::ImageLoaded { image, .. } = next(&rx, 10) else {
        panic!()
    };
    assert_eq!(image, Err("not a regular file".to_owned()));

    let gone = tmp.path().join("gone");
    exec.run([Cmd::CheckDirs {
        dirs: vec![wandb.join(MANY), gone.clone()],
    }]);
    let Msg::DirsChecked { gone: g } = next(&rx, 10) else {
        panic!()
    };
    assert_eq!(g, [gone]);

    // Readers: two on run directories with no file yet; one is stopped. When the
    // files appear, only the other one says so.
    let (d7, d8) = (
        wandb.join("run-20261201_000007-r7"),
        wandb.join("run-20261201_000008-r8"),
    );
    std::fs::create_dir_all(&d7).unwrap();
    std::fs::create_dir_all(&d8).unwrap();
    exec.run([
        Cmd::StartReader {
            path: d7.clone(),
            tag: 7,
        },
        Cmd::StartReader {
            path: d8.clone(),
            tag: 8,
        },
    ]);
    let mut waiting = Vec::new();
    while waiting.len() < 2 {
        if let Msg::Tagged(tag, m) = next(&rx, 10) {
            if matches!(*m, Msg::Waiting(_)) {
                waiting.push(tag);
            }
        }
    }
    waiting.sort_unstable();
    assert_eq!(waiting, [7, 8]);
    exec.run([Cmd::StopReader { tag: 7 }]);
    // The stop is carried out in order, before anything asked for after it.
    exec.run([Cmd::CheckDirs { dirs: vec![] }]);
    until(&rx, 10, |m| matches!(m, Msg::DirsChecked { .. }));
    let src = common::wandb_file(&wandb.join(MULTI4));
    std::fs::copy(&src, d7.join("run-r7.wandb")).unwrap();
    std::fs::copy(&src, d8.join("run-r8.wandb")).unwrap();
    let m = until(
        &rx,
        20,
        |m| matches!(m, Msg::Tagged(_, inner) if matches!(**inner, Msg::Opened { .. })),
    );
    let Msg::Tagged(tag, _) = m else { panic!() };
    assert_eq!(tag, 8, "only the reader still running opens its file");
    // Well past a few poll intervals: nothing from the stopped reader.
    let end = Instant::now() + Duration::from_secs(2);
    while let Ok(m) = rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
        assert!(!matches!(m, Msg::Tagged(7, _)), "stopped reader sent {m:?}");
    }
}

#[test]
fn app_sources_name_no_file_system_call() {
    // `update` and everything it calls live in src/ui; the one file there that
    // reads (the user's key map, once at startup from lib.rs) is left out, and so
    // are test modules (`tests.rs`, `*_tests.rs`: they write their fixtures).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui");
    let allowed = root.join("keymap/file.rs");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && p != allowed
                && !p
                    .file_stem()
                    .is_some_and(|s| s == "tests" || s.to_string_lossy().ends_with("_tests"))
            {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 10, "{files:?}");
    let mut hits = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        hits.extend(
            fs_calls(&text)
                .into_iter()
                .map(|h| format!("{}: {h}", f.display())),
        );
    }
    assert!(
        hits.is_empty(),
        "file system calls in src/ui:\n{}",
        hits.join("\n")
    );
    // The scan finds what it looks for.
    let before = "let m = std::fs::metadata(p)?; if !dir.is_dir() {} png::Decoder::new(f);";
    assert_eq!(fs_calls(before).len(), 4, "{:?}", fs_calls(before));
}

/// Lines naming a file-system call or image decoding.
fn fs_calls(text: &str) -> Vec<String> {
    const WORDS: [&str; 13] = [
        "std::fs",
        "File::",
        "OpenOptions",
        ".exists()",
        ".is_dir()",
        ".is_file()",
        "metadata(",
        "read_dir",
        "canonicalize",
        "png::",
        "run_dirs(",
        "runs_next_to",
        "wandb_in_dir",
    ];
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(|l| {
            WORDS
                .iter()
                .filter(move |w| l.contains(**w))
                .map(move |w| format!("{w} in {l:?}"))
        })
        .collect()
}

/// The picker (`R`) beside one segment of a resumed run lists the run once,
/// on the row of the segment shown, with its segments counted.
#[test]
fn the_picker_lists_a_resumed_run_once() {
    let wandb = common::runs_dir().join("resumed/wandb");
    let run_dir = wandb.join("offline-run-20261130_175125-resum001");
    let (file, batch) = leet::source::tail::read_batch(&run_dir).unwrap();
    let mut rt = FakeRuntime::default();
    let mut a = App::new(Options::default());
    a.request_open(run_dir.clone());
    a.take_cmds();
    rt.send(&mut a, Msg::Resize(120, 30));
    let opened = Msg::Opened {
        path: file,
        len: batch.file_len,
        modified: None,
    };
    rt.send(&mut a, Msg::Tagged(0, Box::new(opened)));
    rt.send(&mut a, Msg::Tagged(0, Box::new(Msg::Run(batch))));
    rt.queue.clear();
    rt.send(&mut a, Msg::char('R'));
    rt.settle(&mut a);
    assert_eq!(a.runs.list.len(), 1, "{:?}", a.runs.list);
    assert_eq!(a.runs.list[0].dir, run_dir);
    assert_eq!(a.runs.list[0].segments, 2);
    let text = screen(&a, 120, 30);
    assert!(!text.contains("175128-resum001"), "{text}");
    assert_eq!(text.matches("175125-resum001").count(), 1, "{text}");
    assert!(text.contains("↻2"), "{text}");
}

/// The app beside the run file of `run_dir`, its commands answered, at 120×30.
fn beside(run_dir: &Path) -> (App, FakeRuntime) {
    let (file, batch) = leet::source::tail::read_batch(run_dir).unwrap();
    let mut rt = FakeRuntime::default();
    let mut a = App::new(Options::default());
    rt.send(&mut a, Msg::Resize(120, 30));
    rt.send(
        &mut a,
        Msg::Opened {
            path: file,
            len: batch.file_len,
            modified: None,
        },
    );
    rt.send(&mut a, Msg::Run(batch));
    rt.settle(&mut a);
    (a, rt)
}

/// The status bar counts runs as the picker lists them: a resumed run's
/// segments are one run, so beside it alone there are no others to name.
#[test]
fn the_status_bar_counts_a_resumed_run_once() {
    let wandb = common::runs_dir().join("resumed/wandb");
    assert_eq!(leet::source::file::run_count(&wandb), 1);
    let (mut a, mut rt) = beside(&wandb.join("offline-run-20261130_175125-resum001"));
    let text = screen(&a, 120, 30);
    assert!(!text.contains("runs ·"), "{text}");
    rt.send(&mut a, Msg::char('R'));
    rt.settle(&mut a);
    assert_eq!(a.runs.list.len(), 1, "{:?}", a.runs.list);
    // Two runs, each its own.
    let multi = common::runs_dir().join("multi/wandb");
    assert_eq!(leet::source::file::run_count(&multi), 5);
}

/// A distributed run's node directories (one run id, written at the same time)
/// are one run in the picker, named as the workspace names it, not as a resumed
/// run's segments; the status bar names no others.
#[test]
fn the_picker_lists_a_distributed_runs_nodes_as_one_run_of_nodes() {
    let wandb = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/multinode-sdk/wandb");
    assert_eq!(leet::source::file::run_count(&wandb), 1);
    let (mut a, mut rt) = beside(&wandb.join("offline-run-20261206_151017-nodes001"));
    let text = screen(&a, 120, 30);
    assert!(!text.contains("runs ·"), "{text}");
    rt.send(&mut a, Msg::char('R'));
    rt.settle(&mut a);
    assert_eq!(a.runs.list.len(), 1, "{:?}", a.runs.list);
    assert!(a.runs.list[0].nodes, "{:?}", a.runs.list);
    let text = screen(&a, 120, 30);
    assert!(text.contains("ddp-nodes (3 nodes)"), "{text}");
    assert!(!text.contains('↻'), "{text}");
}
