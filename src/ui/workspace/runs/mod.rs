//! Runs next to the one shown: the run picker (`R`), switching the main run, and
//! runs compared with it (drawn in the same charts). Each run has its own reader on
//! the loop side; readers are numbered by tag, and a message from a reader the app no
//! longer follows is dropped.

mod colors;
mod main;
mod stitch;
pub(crate) mod view;

use std::path::{Path, PathBuf};

use crate::msg::{Msg, RunBatch, RunEntry};
use crate::store::metrics::{MetricStore, DEFAULT_BUDGET};
use crate::store::Run;
use crate::ui::action::Action;
use crate::ui::workspace::cx::WsCx;
use crate::ui::{Cmd, Effect, Shown};

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
    /// Its reader's last batch reached the end of the file as it then was.
    read_all: bool,
}

/// A drawn run as the workspace sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsTag {
    /// The workspace run (segments of a resumed run share it).
    pub key: String,
    /// Stable colour index: the colour it is drawn in where no other drawn run
    /// has it (what it is drawn in: `Runs::compared_color`, `Runs::main_color`).
    pub color: usize,
    /// Legend text (sanitized).
    pub label: String,
    /// Its group under `G` (None: not grouped).
    pub group: Option<String>,
    pub pinned: bool,
    /// Its run directories (more than one: a resumed run, its segments stitched).
    pub segments: usize,
}

/// The picker's rows: one per run, the directories of a resumed run (one run id)
/// folded into the row of its newest segment (or of the segment shown, `main`),
/// which counts them. Directories without an id are rows of their own.
fn one_per_run(runs: Vec<RunEntry>, main: &Path) -> Vec<RunEntry> {
    let mut out: Vec<RunEntry> = Vec::with_capacity(runs.len());
    let mut by_id: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for r in runs {
        let same = by_id.get(&r.id).copied().filter(|_| !r.id.is_empty());
        match same {
            Some(i) => {
                let o = &mut out[i];
                let n = o.segments.max(1) + 1;
                if r.dir == main {
                    *o = r;
                }
                o.segments = n;
            }
            None => {
                if !r.id.is_empty() {
                    by_id.insert(r.id.clone(), out.len());
                }
                out.push(r);
            }
        }
    }
    out
}

/// Outside a workspace the main run is known by its role: it is drawn in the
/// first colour, whichever run it is.
const MAIN: &str = "";

impl Runs {
    /// Give each drawn run its colour among the palette's `n` (kept while it
    /// stays drawn): in a workspace by the run's stable index, the main run
    /// first and then the runs in the order they were selected; outside one the
    /// main run the first colour and each compared run the first free after it.
    pub(crate) fn sync_colors(&mut self, n: usize) {
        let mut drawn: Vec<(String, usize)> = Vec::with_capacity(1 + self.compare.len());
        let mut add = |k: &str, pref: usize| {
            if !drawn.iter().any(|(d, _)| d == k) {
                drawn.push((k.to_owned(), pref));
            }
        };
        match self.workspace.as_deref() {
            Some(ws) => {
                if let Some(t) = &self.main_tag {
                    add(&t.key, t.color);
                }
                let tags: Vec<&WsTag> = self.compare.iter().filter_map(|c| c.ws.as_ref()).collect();
                for k in &ws.selected {
                    if let Some(t) = tags.iter().find(|t| t.key == *k) {
                        add(&t.key, t.color);
                    }
                }
                for t in tags {
                    add(&t.key, t.color);
                }
            }
            None => add(MAIN, 0),
        }
        for c in self.compare.iter().filter(|c| c.ws.is_none()) {
            add(&c.dir.to_string_lossy(), 1);
        }
        self.colors.sync(&drawn, n);
    }

    /// The colour of the main run.
    #[must_use]
    pub(crate) fn main_color(&self) -> usize {
        let key = match (&self.workspace, &self.main_tag) {
            (Some(_), Some(t)) => t.key.as_str(),
            _ => MAIN,
        };
        self.colors.get(key).unwrap_or(0)
    }

    /// The colour of compared run `c`.
    #[must_use]
    pub(crate) fn compared_color(&self, c: &Compared) -> usize {
        let (key, fallback) = match &c.ws {
            Some(t) => (std::borrow::Cow::Borrowed(t.key.as_str()), t.color),
            None => (c.dir.to_string_lossy(), 1),
        };
        self.colors.get(&key).unwrap_or(fallback)
    }

    /// The colour of workspace run `key` when drawn, else None.
    #[must_use]
    pub(crate) fn key_color(&self, key: &str) -> Option<usize> {
        self.colors.get(key)
    }
}

/// Points shared by the compared runs of a workspace: each of N drawn runs keeps
/// at most this over N (and at most a compared run's usual budget), so 50 runs
/// take no more memory than a few.
const WORKSPACE_BUDGET: usize = DEFAULT_BUDGET;

/// The picker's and the compared runs' keys and messages see the run shown and
/// the panes through `cx` (see [`WsCx`]).
impl Runs {
    /// Share the workspace's point budget among the compared runs.
    pub(crate) fn share_budget(&mut self) {
        let n = self.compare.len().max(1);
        let per = (WORKSPACE_BUDGET / n).min(COMPARED_BUDGET);
        for c in &mut self.compare {
            if c.budget != per {
                c.budget = per;
                c.run.metrics.set_budget(per);
            }
        }
    }

    /// `R`: open the picker and ask for the runs next to the main one (read anew, so
    /// the list is current); the keys pressed before the list comes wait for it.
    /// Compared runs whose directory has gone are let go.
    pub(crate) fn open_picker(&mut self, cx: &mut WsCx) -> Effect {
        let Some(dir) = cx.shown.main_dir().map(Path::to_path_buf) else {
            return Effect::NONE;
        };
        cx.asks.cmd(Cmd::ListRuns { run_dir: dir });
        if !self.compare.is_empty() {
            let dirs = self.compare.iter().map(|c| c.dir.clone()).collect();
            cx.asks.cmd(Cmd::CheckDirs { dirs });
        }
        self.waiting = Some(Vec::new());
        cx.then.picker = Some(true);
        Effect::REDRAW
    }

    /// The picker's list came: shown with the main run selected; returns the keys
    /// that waited for it, for the router to apply (None: nothing to redraw). A
    /// list of another run's neighbours (the user has opened another run since)
    /// is dropped.
    pub(crate) fn on_runs_listed(
        &mut self,
        shown: &mut Shown,
        run_dir: &Path,
        runs: Vec<RunEntry>,
    ) -> Option<Vec<Action>> {
        if shown.main_dir() != Some(run_dir) {
            return None;
        }
        self.list = one_per_run(runs, run_dir);
        shown.source.runs_here = self.list.len().max(1);
        let Some(waiting) = self.waiting.take() else {
            // The picker was closed meanwhile: the count still holds.
            return Some(Vec::new());
        };
        self.sel = self.list.iter().position(|r| r.dir == run_dir).unwrap_or(0);
        Some(waiting)
    }

    /// Compared runs whose directory is gone are let go.
    pub(crate) fn on_dirs_checked(&mut self, cx: &mut WsCx, gone: &[PathBuf]) -> Effect {
        let drop: Vec<usize> = (0..self.compare.len())
            .filter(|&i| gone.contains(&self.compare[i].dir))
            .collect();
        if drop.is_empty() {
            return Effect::NONE;
        }
        for i in drop.into_iter().rev() {
            self.drop_compared(cx, i, "its directory is gone");
        }
        Effect::REDRAW
    }

    /// A run let go is drawn again under another directory (the workspace found
    /// it renamed: the same run, the same label): the note of its removal is
    /// stale.
    pub(crate) fn forget_gone_if_drawn(&mut self, cx: &mut WsCx) {
        let Some(gone) = &self.gone else {
            return;
        };
        let drawn = (self.compare.iter()).any(|c| !c.label.is_empty() && c.label == gone.label);
        if drawn {
            if cx.shown.source.error.as_ref() == Some(&gone.note) {
                cx.shown.source.error = None;
            }
            self.gone = None;
        }
    }

    /// Stop drawing compared run `i` (and stop its reader), saying why.
    fn drop_compared(&mut self, cx: &mut WsCx, i: usize, why: &str) {
        let c = self.compare.remove(i);
        cx.asks.cmd(Cmd::StopReader { tag: c.tag });
        let note = format!("compared run {} removed: {why}", c.label);
        self.gone = Some(Gone {
            dir: c.dir,
            label: c.label,
            note: note.clone(),
        });
        cx.shown.source.error = Some(note);
        cx.asks.refresh();
    }

    /// Route a reader's message: the main run's goes back to the router, a
    /// compared run's is applied here, a stale one dropped.
    pub(crate) fn on_tagged(&mut self, cx: &mut WsCx, tag: u64, m: Box<Msg>) -> Tagged {
        if tag == cx.shown.tag {
            return Tagged::Main(m);
        }
        let Some(i) = self.compare.iter().position(|c| c.tag == tag) else {
            return Tagged::Done(Effect::NONE);
        };
        Tagged::Done(match *m {
            Msg::Run(b) => {
                let budget = self.compare[i].budget;
                self.compare[i].read_all = b.read_to >= b.file_len;
                apply_to(&mut self.compare[i].run, b, budget, cx.shown.max_points / 2);
                let c = &mut self.compare[i];
                if c.ws.is_none() {
                    if let Some(name) = crate::text::visible_name(&c.run.info.display_name) {
                        c.label = name;
                    }
                }
                let key = c.ws.as_ref().map(|t| t.key.clone());
                self.restitch(cx, key.as_deref());
                cx.asks.refresh();
                Effect::REDRAW
            }
            // Its file was deleted (or cannot be read): if its directory is gone
            // too, nothing more will come, and the picker can no longer list it.
            // The workspace's list draws what its index says (renamed: drawn on
            // from its new directory; gone or unreadable: let go, and said).
            Msg::SourceError(_) | Msg::Unreadable(_)
                if (self.workspace.as_ref())
                    .is_some_and(|w| w.indexed && w.view == super::WsView::List) =>
            {
                Effect::NONE
            }
            Msg::SourceError(_) | Msg::Unreadable(_) => {
                let dirs = vec![self.compare[i].dir.clone()];
                cx.asks.cmd(Cmd::CheckDirs { dirs });
                Effect::NONE
            }
            _ => Effect::NONE,
        })
    }

    /// Draw the run at `path` (any run: `--compare`) beside the main one; `dir` is
    /// its run directory. Ignored past [`MAX_COMPARED`] or when already drawn.
    pub(crate) fn request_compare(&mut self, cx: &mut WsCx, path: PathBuf, dir: PathBuf) {
        if self.compare.len() >= MAX_COMPARED || self.is_compared(&dir).is_some() {
            return;
        }
        let label = dir
            .file_name()
            .map(|n| crate::text::sanitize(&n.to_string_lossy()))
            .unwrap_or_default();
        self.start_compare(cx, path, dir, label);
    }

    pub(crate) fn start_compare(
        &mut self,
        cx: &mut WsCx,
        path: PathBuf,
        dir: PathBuf,
        label: String,
    ) {
        // Drawn again (its directory came back): the note of its removal is stale.
        if self.gone.as_ref().is_some_and(|g| g.dir == dir) {
            let note = self.gone.take().map(|g| g.note);
            if cx.shown.source.error == note {
                cx.shown.source.error = None;
            }
        }
        let tag = cx.shown.new_tag();
        cx.asks.cmd(Cmd::StartReader { path, tag });
        self.compare.push(Compared {
            tag,
            dir,
            label,
            run: compared_run(COMPARED_BUDGET, cx.shown.max_points / 2),
            budget: COMPARED_BUDGET,
            ws: None,
            read_all: false,
        });
        cx.asks.refresh();
    }

    /// Draw `run`, read so far by the reader numbered `tag` from `dir`, beside
    /// the main one (the main run until now: see [`Runs::open_run_keeping`]).
    pub(crate) fn keep_compared(&mut self, tag: u64, dir: PathBuf, run: Run, read_all: bool) {
        self.compare.push(Compared {
            tag,
            dir,
            label: String::new(),
            run,
            budget: COMPARED_BUDGET,
            ws: None,
            read_all,
        });
    }

    /// Draw the selected run beside the main one, or stop drawing it.
    fn toggle_compare(&mut self, cx: &mut WsCx) {
        let Some(entry) = self.list.get(self.sel) else {
            return;
        };
        if cx.shown.main_dir() == Some(entry.dir.as_path()) {
            return;
        }
        if let Some(i) = self.compare.iter().position(|c| c.dir == entry.dir) {
            let c = self.compare.remove(i);
            cx.asks.cmd(Cmd::StopReader { tag: c.tag });
        } else if self.compare.len() >= MAX_COMPARED {
            cx.shown.source.error = Some(compare_cap_note());
        } else {
            let dir = entry.dir.clone();
            let label = if entry.name.is_empty() {
                dir.file_name()
                    .map(|n| crate::text::sanitize(&n.to_string_lossy()))
                    .unwrap_or_default()
            } else {
                crate::text::sanitize(&entry.name)
            };
            self.start_compare(cx, dir.clone(), dir, label);
            return;
        }
        cx.asks.refresh();
    }

    /// Whether every run drawn beside the main one has read its whole file.
    #[must_use]
    pub fn compared_read(&self) -> bool {
        self.compare.iter().all(|c| c.read_all)
    }

    /// How many of the workspace's drawn runs (the main one among them when the
    /// workspace draws it) have read their whole file: `LEET_DEBUG_TIMES` notes
    /// when a frame first shows each more of them.
    #[must_use]
    pub fn drawn_read(&self, main: &crate::ui::source::SourceState) -> usize {
        let main_read = self.main_tag.is_some() && main.read_to > 0 && !main.loading();
        usize::from(main_read) + self.compare.iter().filter(|c| c.read_all).count()
    }

    /// Whether the run in `dir` is drawn beside the main one.
    #[must_use]
    pub fn is_compared(&self, dir: &Path) -> Option<usize> {
        self.compare.iter().position(|c| c.dir == dir)
    }

    /// Keys while the run picker is open. The cap on compared runs is the
    /// picker's: its note goes with the picker (the workspace has no such cap).
    pub(crate) fn act_picker(&mut self, cx: &mut WsCx, a: Action) -> Effect {
        let fx = self.picker_key(cx, a);
        if cx.then.picker == Some(false)
            && cx.shown.source.error.as_deref() == Some(compare_cap_note().as_str())
        {
            cx.shown.source.error = None;
        }
        fx
    }

    /// [`Runs::act_picker`]'s key itself.
    fn picker_key(&mut self, cx: &mut WsCx, a: Action) -> Effect {
        if let Some(waiting) = &mut self.waiting {
            // Until the list comes, keys wait for it; quitting or closing the picker
            // does not.
            match a {
                Action::Quit => return Effect::QUIT,
                Action::Back | Action::PickRun => {
                    self.waiting = None;
                    cx.then.picker = Some(false);
                    return Effect::REDRAW;
                }
                _ => {
                    waiting.push(a);
                    return Effect::NONE;
                }
            }
        }
        let n = self.list.len();
        let page = 10;
        match a {
            Action::Quit => return Effect::QUIT,
            Action::Back | Action::PickRun => cx.then.picker = Some(false),
            Action::FocusUp => self.sel = self.sel.saturating_sub(1),
            Action::FocusDown => self.sel = (self.sel + 1).min(n.saturating_sub(1)),
            Action::PrevPage => self.sel = self.sel.saturating_sub(page),
            Action::NextPage => self.sel = (self.sel + page).min(n.saturating_sub(1)),
            Action::FirstPage => self.sel = 0,
            Action::LastPage => self.sel = n.saturating_sub(1),
            Action::ToggleCompare => self.toggle_compare(cx),
            Action::OpenRun => {
                let Some(entry) = self.list.get(self.sel) else {
                    return Effect::NONE;
                };
                cx.then.picker = Some(false);
                if cx.shown.main_dir() != Some(entry.dir.as_path()) {
                    let dir = entry.dir.clone();
                    self.open_run(cx, dir, false);
                    if let Some(ws) = &mut self.workspace {
                        // The run view's esc goes back to the workspace from this run.
                        ws.view = crate::ui::workspace::WsView::Run(
                            cx.shown.main_reading.clone().unwrap_or_default(),
                        );
                        // The runs drawn are this run's now (a resumed run's
                        // segments, no longer the run shown before), and tagged as
                        // its: they kept the other run's, drawn as this one's.
                        self.reconcile(cx);
                    }
                }
            }
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }
}

/// What space says on one more run than the picker compares.
fn compare_cap_note() -> String {
    format!("at most {MAX_COMPARED} runs are compared at once: space on one to drop it")
}

/// A reader's message as the runs route it.
#[derive(Debug)]
pub(crate) enum Tagged {
    /// The main run's: the router applies it as its own.
    Main(Box<Msg>),
    /// Applied (or dropped): what the loop is to do.
    Done(Effect),
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

/// A compared run let go because its directory went ([`Runs::on_dirs_checked`]).
#[derive(Debug, Clone)]
struct Gone {
    dir: PathBuf,
    /// Its legend label: a run drawn again under another directory (renamed)
    /// has the same.
    label: String,
    /// What the status bar was told.
    note: String,
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
    /// The last compared run dropped for want of its directory, and the note
    /// that said so: cleared should that run be drawn again.
    gone: Option<Gone>,
    /// The colour each drawn run is given (see `colors::Colors`).
    colors: colors::Colors,
}
