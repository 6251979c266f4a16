//! Runs next to the one shown: the run picker (`R`), switching the main run, and
//! runs compared with it (drawn in the same charts). Each run has its own reader on
//! the loop side; readers are numbered by tag, and a message from a reader the app no
//! longer follows is dropped.

pub(crate) mod view;

use std::path::{Path, PathBuf};

use crate::msg::{Msg, RunBatch, RunEntry};
use crate::store::metrics::{MetricStore, DEFAULT_BUDGET};
use crate::store::{stitch, Run};
use crate::ui::action::Action;
use crate::ui::{new_run, App, Cmd, Effect, Overlay, Seen, SourceState};

/// Most runs drawn beside the main one (one colour each).
pub const MAX_COMPARED: usize = 7;
/// Point budget of a compared run: they are extra lines, not the subject.
const COMPARED_BUDGET: usize = DEFAULT_BUDGET / 4;

/// A run drawn beside the main one.
#[derive(Debug, Clone)]
pub struct Compared {
    pub tag: u64,
    /// Its run directory.
    pub dir: PathBuf,
    /// Legend text: the run's name, else its directory's name.
    pub label: String,
    pub run: Run,
    /// Its point budget (the workspace shares one among the runs it draws).
    budget: usize,
    /// What the workspace says of it (None outside a workspace).
    pub ws: Option<WsTag>,
}

/// A drawn run as the workspace sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsTag {
    /// The workspace run (segments of a resumed run share it).
    pub key: String,
    /// Stable colour index.
    pub color: usize,
    /// Legend text (sanitized).
    pub label: String,
    /// Its group under `G` (None: not grouped).
    pub group: Option<String>,
    pub pinned: bool,
    /// Its run directories (more than one: a resumed run, its segments stitched).
    pub segments: usize,
}

/// Points shared by the compared runs of a workspace: each of N drawn runs keeps
/// at most this over N (and at most a compared run's usual budget), so 50 runs
/// take no more memory than a few.
const WORKSPACE_BUDGET: usize = DEFAULT_BUDGET;

impl App {
    /// Ask the runtime to start the main reader on a user path (see
    /// [`App::take_cmds`]).
    pub fn request_open(&mut self, path: PathBuf) {
        self.asks.cmd(Cmd::StartReader {
            path,
            tag: self.shown.tag,
        });
    }

    fn new_tag(&mut self) -> u64 {
        self.shown.last_tag = self.shown.last_tag.max(self.shown.tag) + 1;
        self.shown.last_tag
    }

    /// The main run's directory: its file's, or the one waited on.
    fn main_dir(&self) -> Option<&Path> {
        self.shown
            .source
            .file
            .as_deref()
            .and_then(Path::parent)
            .or(self.shown.source.waiting_dir.as_deref())
    }

    /// The run directory the main reader was started on (as the workspace spells
    /// it), else the main run's directory.
    pub(crate) fn main_run_dir(&self) -> Option<PathBuf> {
        self.shown
            .main_reading
            .clone()
            .or_else(|| self.main_dir().map(Path::to_path_buf))
    }

    /// `alt+r`: the main run read again from the first byte of the file it reads
    /// (or the directory it waits on), keeping panes and settings; false with no
    /// main run.
    pub(crate) fn restart_main(&mut self) -> bool {
        let Some(path) = self
            .shown
            .source
            .file
            .clone()
            .or_else(|| self.main_run_dir())
        else {
            return false;
        };
        // The run as the workspace spells it stays what it was.
        let reading = self.shown.main_reading.clone();
        self.open_run(path, true);
        self.shown.main_reading = reading;
        true
    }

    /// No main run: its reader stopped, an empty run shown (a workspace with no
    /// run selected).
    pub(crate) fn close_main(&mut self) {
        self.asks.cmd(Cmd::StopReader {
            tag: self.shown.tag,
        });
        self.shown.tag = self.new_tag();
        self.shown.main_reading = None;
        self.runs.main_tag = None;
        self.shown.run = new_run(self.shown.max_points);
        self.shown.source = SourceState::default();
        self.shown.seen = Seen::NEVER;
        self.refresh();
    }

    /// Share the workspace's point budget among the compared runs.
    pub(crate) fn share_budget(&mut self) {
        let n = self.runs.compare.len().max(1);
        let per = (WORKSPACE_BUDGET / n).min(COMPARED_BUDGET);
        for c in &mut self.runs.compare {
            if c.budget != per {
                c.budget = per;
                c.run.metrics.set_budget(per);
            }
        }
    }

    /// `R`: open the picker and ask for the runs next to the main one (read anew, so
    /// the list is current); the keys pressed before the list comes wait for it.
    /// Compared runs whose directory has gone are let go.
    pub(in crate::ui) fn open_picker(&mut self) -> Effect {
        let Some(dir) = self.main_dir().map(Path::to_path_buf) else {
            return Effect::NONE;
        };
        self.asks.cmd(Cmd::ListRuns { run_dir: dir });
        if !self.runs.compare.is_empty() {
            let dirs = self.runs.compare.iter().map(|c| c.dir.clone()).collect();
            self.asks.cmd(Cmd::CheckDirs { dirs });
        }
        self.runs.waiting = Some(Vec::new());
        self.overlay = Overlay::Runs;
        Effect::REDRAW
    }

    /// The picker's list came: shown with the main run selected, then the keys
    /// that waited for it are applied. A list of another run's neighbours (the
    /// user has opened another run since) is dropped.
    pub(in crate::ui) fn on_runs_listed(&mut self, run_dir: &Path, runs: Vec<RunEntry>) -> Effect {
        if self.main_dir() != Some(run_dir) {
            return Effect::NONE;
        }
        self.runs.list = runs;
        self.shown.source.runs_here = self.runs.list.len().max(1);
        let Some(waiting) = self.runs.waiting.take() else {
            // The picker was closed meanwhile: the count still holds.
            return Effect::REDRAW;
        };
        self.runs.sel = self
            .runs
            .list
            .iter()
            .position(|r| r.dir == run_dir)
            .unwrap_or(0);
        let mut fx = Effect::REDRAW;
        for a in waiting {
            let more = self.act(a);
            fx.quit |= more.quit;
        }
        fx
    }

    /// Compared runs whose directory is gone are let go.
    pub(in crate::ui) fn on_dirs_checked(&mut self, gone: &[PathBuf]) -> Effect {
        let drop: Vec<usize> = (0..self.runs.compare.len())
            .filter(|&i| gone.contains(&self.runs.compare[i].dir))
            .collect();
        if drop.is_empty() {
            return Effect::NONE;
        }
        for i in drop.into_iter().rev() {
            self.drop_compared(i, "its directory is gone");
        }
        Effect::REDRAW
    }

    /// Stop drawing compared run `i` (and stop its reader), saying why.
    fn drop_compared(&mut self, i: usize, why: &str) {
        let c = self.runs.compare.remove(i);
        self.asks.cmd(Cmd::StopReader { tag: c.tag });
        self.shown.source.error = Some(format!("compared run {} removed: {why}", c.label));
        self.refresh();
    }

    /// Route a reader's message: the main run's, a compared run's, or a stale one.
    pub(in crate::ui) fn on_tagged(&mut self, tag: u64, m: Msg) -> Effect {
        if tag == self.shown.tag {
            let batch = matches!(m, Msg::Run(_));
            let fx = self.step(m);
            if batch {
                let key = self.runs.main_tag.as_ref().map(|t| t.key.clone());
                self.restitch(key.as_deref());
            }
            return fx;
        }
        let Some(i) = self.runs.compare.iter().position(|c| c.tag == tag) else {
            return Effect::NONE;
        };
        match m {
            Msg::Run(b) => {
                let budget = self.runs.compare[i].budget;
                apply_to(
                    &mut self.runs.compare[i].run,
                    b,
                    budget,
                    self.shown.max_points / 2,
                );
                let c = &mut self.runs.compare[i];
                if c.ws.is_none() && !c.run.info.display_name.is_empty() {
                    c.label = crate::text::sanitize(&c.run.info.display_name);
                }
                let key = c.ws.as_ref().map(|t| t.key.clone());
                self.restitch(key.as_deref());
                self.refresh();
                Effect::REDRAW
            }
            // Its file was deleted (or cannot be read): if its directory is gone
            // too, nothing more will come, and the picker can no longer list it.
            Msg::SourceError(_) => {
                let dirs = vec![self.runs.compare[i].dir.clone()];
                self.asks.cmd(Cmd::CheckDirs { dirs });
                Effect::NONE
            }
            _ => Effect::NONE,
        }
    }

    /// Make the run in `dir` the main one: an empty run with the same panels,
    /// filters, y scales and store limits, waiting for its new reader's messages. With
    /// `keep_view` (the workspace changing which drawn run is the main one) focus,
    /// zoom and scroll positions stay.
    pub(crate) fn open_run(&mut self, dir: PathBuf, keep_view: bool) {
        // A run already compared becomes the main run: stop drawing it twice.
        if let Some(i) = self.runs.compare.iter().position(|c| c.dir == dir) {
            let c = self.runs.compare.remove(i);
            self.asks.cmd(Cmd::StopReader { tag: c.tag });
        }
        self.asks.cmd(Cmd::StopReader {
            tag: self.shown.tag,
        });
        self.shown.tag = self.new_tag();
        self.asks.cmd(Cmd::StartReader {
            path: dir.clone(),
            tag: self.shown.tag,
        });
        self.shown.main_reading = Some(dir);
        self.shown.run = new_run(self.shown.max_points);
        self.shown.source = SourceState::default();
        self.shown.seen = Seen::NEVER;
        if keep_view {
            self.refresh();
            return;
        }
        // The y scales stay: they are settings by metric key (a `loss` drawn on a
        // log scale is drawn so in every run, and saved so).
        self.charts.zoom.clear();
        self.charts.grid.focus = 0;
        self.panels.fullscreen = false;
        self.panes.overview.home();
        self.panes.system.scroll = 0;
        self.panes.console.back = 0;
        self.refresh();
    }

    /// Draw the run at `path` (any run: `--compare`) beside the main one; `dir` is
    /// its run directory. Ignored past [`MAX_COMPARED`] or when already drawn.
    pub fn request_compare(&mut self, path: PathBuf, dir: PathBuf) {
        if self.runs.compare.len() >= MAX_COMPARED || self.is_compared(&dir).is_some() {
            return;
        }
        let label = dir
            .file_name()
            .map(|n| crate::text::sanitize(&n.to_string_lossy()))
            .unwrap_or_default();
        self.start_compare(path, dir, label);
    }

    pub(crate) fn start_compare(&mut self, path: PathBuf, dir: PathBuf, label: String) {
        let tag = self.new_tag();
        self.asks.cmd(Cmd::StartReader { path, tag });
        self.runs.compare.push(Compared {
            tag,
            dir,
            label,
            run: compared_run(COMPARED_BUDGET, self.shown.max_points / 2),
            budget: COMPARED_BUDGET,
            ws: None,
        });
        self.refresh();
    }

    /// Keep the segments of the drawn resumed runs (of the run `only` when given)
    /// from overlapping on the step axis: each is cut at the smallest first step
    /// of the segments after it (see [`crate::store::stitch`]). Known before a
    /// segment is read, the cut applies as its rows are folded; a segment that has
    /// already charted rows its new cut drops (its reader came first) is read again.
    pub(crate) fn restitch(&mut self, only: Option<&str>) {
        let Some(ws) = self.runs.workspace.as_deref() else {
            return;
        };
        let mut keys: Vec<&str> = Vec::new();
        let tags = self
            .runs
            .main_tag
            .iter()
            .chain(self.runs.compare.iter().filter_map(|c| c.ws.as_ref()));
        for t in tags.filter(|t| t.segments > 1) {
            if only.is_none_or(|k| k == t.key) && !keys.contains(&t.key.as_str()) {
                keys.push(&t.key);
            }
        }
        let main = self.main_run_dir();
        let mut moves: Vec<(PathBuf, Option<f64>)> = Vec::new();
        for r in keys.iter().filter_map(|k| ws.run(k)) {
            let runs: Vec<Option<&Run>> = r
                .segments
                .iter()
                .map(|s| self.segment_run(&s.dir, main.as_deref()))
                .collect();
            let firsts: Vec<Option<f64>> = runs
                .iter()
                .map(|run| run.and_then(|run| run.stitch.first))
                .collect();
            for ((s, run), cut) in r.segments.iter().zip(&runs).zip(stitch::cuts(&firsts)) {
                if run.is_some_and(|run| run.stitch.cut != cut) {
                    moves.push((s.dir.clone(), cut));
                }
            }
        }
        for (dir, cut) in moves {
            // The main run (None), or compared run i.
            let at = if main.as_deref() == Some(dir.as_path()) {
                None
            } else if let Some(i) = self.is_compared(&dir) {
                Some(i)
            } else {
                continue;
            };
            let was = self.segment_mut(at).stitch;
            if was.rereads_for(cut) {
                match at {
                    None => {
                        self.restart_main();
                    }
                    Some(i) => self.reread_compared(i),
                }
                // Its first row is the same: the segments before it keep their cut
                // while it is read again.
                self.segment_mut(at).stitch.first = was.first;
            }
            self.segment_mut(at).stitch.cut = cut;
        }
    }

    /// The run read from segment directory `dir`: the main run or a compared one.
    fn segment_run(&self, dir: &Path, main: Option<&Path>) -> Option<&Run> {
        if main == Some(dir) {
            return Some(&self.shown.run);
        }
        self.is_compared(dir).map(|i| &self.runs.compare[i].run)
    }

    /// The main run (None), or compared run `i`.
    fn segment_mut(&mut self, at: Option<usize>) -> &mut Run {
        match at.and_then(|i| self.runs.compare.get_mut(i)) {
            Some(c) => &mut c.run,
            None => &mut self.shown.run,
        }
    }

    /// Read compared run `i` again from its first byte, into an empty run.
    fn reread_compared(&mut self, i: usize) {
        let tag = self.new_tag();
        let cap = self.shown.max_points / 2;
        let c = &mut self.runs.compare[i];
        self.asks.cmd(Cmd::StopReader { tag: c.tag });
        c.tag = tag;
        c.run = compared_run(c.budget, cap);
        self.asks.cmd(Cmd::StartReader {
            path: c.dir.clone(),
            tag,
        });
        self.refresh();
    }

    /// Draw the selected run beside the main one, or stop drawing it.
    fn toggle_compare(&mut self) {
        let Some(entry) = self.runs.list.get(self.runs.sel) else {
            return;
        };
        if self.main_dir() == Some(entry.dir.as_path()) {
            return;
        }
        if let Some(i) = self.runs.compare.iter().position(|c| c.dir == entry.dir) {
            let c = self.runs.compare.remove(i);
            self.asks.cmd(Cmd::StopReader { tag: c.tag });
        } else if self.runs.compare.len() >= MAX_COMPARED {
            self.shown.source.error = Some(format!(
                "at most {MAX_COMPARED} runs are compared at once: space on one to drop it"
            ));
        } else {
            let dir = entry.dir.clone();
            let label = if entry.name.is_empty() {
                dir.file_name()
                    .map(|n| crate::text::sanitize(&n.to_string_lossy()))
                    .unwrap_or_default()
            } else {
                crate::text::sanitize(&entry.name)
            };
            self.start_compare(dir.clone(), dir, label);
            return;
        }
        self.refresh();
    }

    /// The main run's legend text: its name, else its id.
    #[must_use]
    pub fn run_label(&self) -> String {
        let i = &self.shown.run.info;
        let name = if i.display_name.is_empty() {
            &i.run_id
        } else {
            &i.display_name
        };
        crate::text::sanitize(name)
    }

    /// Whether the run in `dir` is drawn beside the main one.
    #[must_use]
    pub fn is_compared(&self, dir: &Path) -> Option<usize> {
        self.runs.compare.iter().position(|c| c.dir == dir)
    }

    /// Keys while the run picker is open.
    pub(in crate::ui) fn act_runs(&mut self, a: Action) -> Effect {
        if let Some(waiting) = &mut self.runs.waiting {
            // Until the list comes, keys wait for it; quitting or closing the picker
            // does not.
            match a {
                Action::Quit => return Effect::QUIT,
                Action::Back | Action::PickRun => {
                    self.runs.waiting = None;
                    self.overlay = Overlay::None;
                    return Effect::REDRAW;
                }
                _ => {
                    waiting.push(a);
                    return Effect::NONE;
                }
            }
        }
        let n = self.runs.list.len();
        let page = 10;
        match a {
            Action::Quit => return Effect::QUIT,
            Action::Back | Action::PickRun => self.overlay = Overlay::None,
            Action::FocusUp => self.runs.sel = self.runs.sel.saturating_sub(1),
            Action::FocusDown => self.runs.sel = (self.runs.sel + 1).min(n.saturating_sub(1)),
            Action::PrevPage => self.runs.sel = self.runs.sel.saturating_sub(page),
            Action::NextPage => self.runs.sel = (self.runs.sel + page).min(n.saturating_sub(1)),
            Action::FirstPage => self.runs.sel = 0,
            Action::LastPage => self.runs.sel = n.saturating_sub(1),
            Action::ToggleCompare => self.toggle_compare(),
            Action::OpenRun => {
                let Some(entry) = self.runs.list.get(self.runs.sel) else {
                    return Effect::NONE;
                };
                self.overlay = Overlay::None;
                if self.main_dir() != Some(entry.dir.as_path()) {
                    let dir = entry.dir.clone();
                    self.open_run(dir, false);
                    if let Some(ws) = &mut self.runs.workspace {
                        // The run view's esc goes back to the workspace from this run.
                        ws.view = crate::ui::workspace::WsView::Run(
                            self.shown.main_reading.clone().unwrap_or_default(),
                        );
                    }
                }
            }
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }
}

/// An empty compared run: a store of `budget` points, at most `series_cap` a series.
fn compared_run(budget: usize, series_cap: usize) -> Run {
    let mut run = Run::new();
    run.metrics = MetricStore::new(budget, series_cap.max(1));
    run
}

/// Fold a reader's batch into a compared run (a restarted file starts it over, its
/// cut kept).
fn apply_to(run: &mut Run, b: RunBatch, budget: usize, max_points: usize) {
    if b.restarted {
        let cut = run.stitch.cut;
        *run = compared_run(budget, max_points);
        run.stitch.cut = cut;
    }
    run.fold_batch(&b);
    run.damage.set_open(b.open);
}

/// The runs next to the one shown: the picker's list, the workspace, the runs
/// compared with it.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    /// The run picker's list and selection.
    pub list: Vec<RunEntry>,
    pub sel: usize,
    /// The picker's list is being read: its keys wait for it (in order).
    pub(in crate::ui) waiting: Option<Vec<Action>>,
    /// Runs drawn beside the main one in every chart (picked with space in `R`).
    pub compare: Vec<Compared>,
    /// The workspace of the wandb directory (None: a run outside one, the live
    /// monitor).
    pub workspace: Option<Box<crate::ui::workspace::Workspace>>,
    /// The main run as the workspace sees it.
    pub main_tag: Option<WsTag>,
}
