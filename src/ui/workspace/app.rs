//! The workspace's side of the app: opening it, the index as it comes, keeping the
//! runs read in step with the selection, the keys of the runs list and its prompts.

use std::path::{Path, PathBuf};

use super::{Prompt, Workspace, WsView, MAX_PROMPT_CHARS};
use crate::msg::{RunIndexEntry, WorkspaceSaved};
use crate::ui::action::Action;
use crate::ui::panels::Pane;
use crate::ui::workspace::runs::WsTag;
use crate::ui::{App, Cmd, Effect, FilterTarget};

impl App {
    /// Open the workspace of `wandb_dir` with what was saved for it. `main`: the
    /// run directory to read first (the latest run, drawn while the index is
    /// read). `alone`: the single-run view of `main` (`leet RUN-DIR`), whose esc
    /// goes to the list; else the list (`leet` in a project or wandb directory).
    pub fn open_workspace(
        &mut self,
        wandb_dir: PathBuf,
        saved: Option<WorkspaceSaved>,
        main: Option<PathBuf>,
        alone: bool,
    ) {
        let mut ws = Workspace::new(wandb_dir, saved);
        match (&main, alone) {
            (Some(dir), true) => {
                ws.view = WsView::Run(dir.clone());
                self.shown.main_reading = Some(dir.clone());
            }
            _ => {
                ws.view = WsView::List;
                ws.focus_list = true;
                self.panels.left = true;
            }
        }
        let list = ws.view == WsView::List;
        self.runs.workspace = Some(Box::new(ws));
        if let Some(dir) = main {
            if !alone {
                self.open_run(dir, true);
            }
        }
        if list {
            self.scan_index();
        }
        self.relayout();
    }

    /// Whether the workspace's runs list is what is shown (not one run alone).
    #[must_use]
    pub fn in_workspace_list(&self) -> bool {
        self.runs
            .workspace
            .as_ref()
            .is_some_and(|w| w.view == WsView::List)
    }

    fn scan_index(&mut self) {
        if let Some(ws) = &mut self.runs.workspace {
            if !ws.scanning {
                ws.scanning = true;
                self.asks.cmd(Cmd::ScanIndex {
                    wandb_dir: ws.dir.clone(),
                });
            }
        }
    }

    /// About once a second (`Msg::Tick`): index the runs list again, so a run
    /// started (or deleted) while leet is open shows (or goes) within two seconds.
    pub(crate) fn workspace_tick(&mut self) -> bool {
        if !self.in_workspace_list() {
            return false;
        }
        self.scan_index();
        let refiltered = self
            .runs
            .workspace
            .as_deref_mut()
            .is_some_and(Workspace::refilter_if_due);
        if refiltered {
            self.sync_overview(false);
        }
        refiltered
    }

    /// The index came: runs merged, the selection kept in step.
    pub(crate) fn on_indexed(&mut self, wandb_dir: &Path, entries: Vec<RunIndexEntry>) -> Effect {
        let main = self.main_run_dir();
        let Some(ws) = self.runs.workspace.as_mut().filter(|w| w.dir == wandb_dir) else {
            return Effect::NONE;
        };
        ws.scanning = false;
        ws.age_vanished();
        let changed = ws.set_index(entries, main.as_deref());
        let note = ws.note.take();
        if ws.view == WsView::List {
            self.reconcile();
        } else {
            self.tag_drawn();
        }
        // After the readers changed (closing the main run clears its error).
        if note.is_some() {
            self.shown.source.error = note;
        }
        self.sync_overview(true);
        if changed {
            self.save_workspace();
        }
        Effect::REDRAW
    }

    /// Part of the index, while the scan reads the rest: the list shows it (runs
    /// not read yet marked as reading); what is drawn waits for the whole index.
    pub(crate) fn on_index_progress(
        &mut self,
        wandb_dir: &Path,
        entries: Vec<RunIndexEntry>,
    ) -> Effect {
        let Some(ws) = self.runs.workspace.as_mut().filter(|w| w.dir == wandb_dir) else {
            return Effect::NONE;
        };
        ws.set_partial_index(entries);
        self.tag_drawn();
        self.sync_overview(false);
        Effect::REDRAW
    }

    /// The index has not changed since the last: only the next scan is due.
    pub(crate) fn on_index_unchanged(&mut self, wandb_dir: &Path) -> Effect {
        if let Some(ws) = self.runs.workspace.as_mut().filter(|w| w.dir == wandb_dir) {
            ws.scanning = false;
            ws.age_vanished();
        }
        Effect::NONE
    }

    fn save_workspace(&mut self) {
        if let Some(ws) = self.runs.workspace.as_deref_mut() {
            if let Some(state) = ws.take_save() {
                ws.generation += 1;
                self.asks.cmd(Cmd::SaveWorkspace {
                    wandb_dir: ws.dir.clone(),
                    base: ws.on_disk.clone(),
                    state,
                    writer: ws.writer,
                    generation: ws.generation,
                });
            }
        }
    }

    /// A state save was carried out: when it is the newest, what it wrote is
    /// what the next changes are from. A failed one stays unsaved: the next save
    /// (the one on quit at the latest) carries its changes again.
    pub(crate) fn on_workspace_written(&mut self, generation: u64, written: bool) -> Effect {
        if let Some(ws) = self.runs.workspace.as_deref_mut() {
            if written && generation == ws.generation {
                ws.on_disk = ws.stored.clone();
            }
        }
        Effect::NONE
    }

    /// The save to carry out on quit (a `Cmd::SaveWorkspace` numbered after the
    /// last one handed over), as [`App::workspace_to_save`] decides.
    #[must_use]
    pub fn workspace_save_on_quit(&self) -> Option<Cmd> {
        let (wandb_dir, state) = self.workspace_to_save()?;
        let ws = self.runs.workspace.as_deref()?;
        Some(Cmd::SaveWorkspace {
            wandb_dir,
            base: ws.on_disk.clone(),
            state,
            writer: ws.writer,
            generation: ws.generation + 1,
        })
    }

    /// The wandb directory and the state to write for it on quit; None when the
    /// state file is to stay as it was (nothing changed, or the workspace was
    /// never listed: a run opened alone).
    #[must_use]
    pub fn workspace_to_save(&self) -> Option<(PathBuf, WorkspaceSaved)> {
        let ws = self.runs.workspace.as_deref()?;
        Some((ws.dir.clone(), ws.final_save()?))
    }

    /// Read the runs the workspace draws, and only those: the main run and the
    /// compared ones follow `Workspace::wanted`.
    pub(crate) fn reconcile(&mut self) {
        // Until the index comes, what is read stays (the latest run, or the run
        // shown alone).
        let Some(ws) = self.runs.workspace.as_deref().filter(|w| w.indexed) else {
            return;
        };
        let main = self.main_run_dir();
        let (dirs, primary) = ws.wanted(main.as_deref());
        match &primary {
            None if main.is_some() => self.close_main(),
            Some(p) if main.as_deref() != Some(p.as_path()) => self.open_run(p.clone(), false),
            _ => {}
        }
        let others: Vec<PathBuf> = dirs
            .into_iter()
            .filter(|d| primary.as_ref() != Some(d))
            .collect();
        let mut i = 0;
        while i < self.runs.compare.len() {
            if others.contains(&self.runs.compare[i].dir) {
                i += 1;
            } else {
                let c = self.runs.compare.remove(i);
                self.asks.cmd(Cmd::StopReader { tag: c.tag });
            }
        }
        for d in &others {
            if self.is_compared(d).is_none() {
                self.start_compare(d.clone(), d.clone(), String::new());
            }
        }
        // Drawing order: the wanted order (the pinned run last, on top).
        self.runs.compare.sort_by_key(|c| {
            others
                .iter()
                .position(|d| *d == c.dir)
                .unwrap_or(usize::MAX)
        });
        self.share_budget();
        self.tag_drawn();
        self.refresh();
    }

    /// Colour, legend text, group and pin of every run drawn, from the workspace.
    pub(crate) fn tag_drawn(&mut self) {
        let Some(ws) = &self.runs.workspace else {
            return;
        };
        let tag = |dir: &Path| {
            ws.run_of_dir(dir).map(|r| WsTag {
                key: r.key.clone(),
                color: r.color,
                label: if r.resumed() {
                    format!("{} ({} segments)", r.label(), r.segments.len())
                } else {
                    r.label()
                },
                group: ws.group_of(r),
                pinned: ws.pinned.as_deref() == Some(r.key.as_str()),
                segments: r.segments.len(),
            })
        };
        let main = self.main_run_dir();
        self.runs.main_tag = main.as_deref().and_then(tag);
        for c in &mut self.runs.compare {
            c.ws = tag(&c.dir);
            if let Some(t) = &c.ws {
                c.label.clone_from(&t.label);
            }
        }
        // The index may have told of a segment (or taken one away).
        self.restitch(None);
    }

    /// Keys the workspace takes before the rest of the app (None: not one of its).
    pub(crate) fn act_workspace(&mut self, a: Action) -> Option<Effect> {
        if let Some(fx) = self.act_ws_overview(a) {
            return Some(fx);
        }
        let fx = self.act_runs_list(a);
        // The cursor may have moved, or the view changed.
        self.sync_overview(false);
        fx
    }

    fn act_runs_list(&mut self, a: Action) -> Option<Effect> {
        let ws = self.runs.workspace.as_mut()?;
        let list = ws.view == WsView::List;
        let on_pane = list && self.panels.focus == Pane::Left && !self.panels.fullscreen;
        // The overview part below the list has the moving keys while focused.
        let on_list = on_pane && !ws.overview.focus;
        let err = |app: &mut App, r: Result<(), String>| {
            if let Err(e) = r {
                app.shown.source.error = Some(e);
            }
        };
        match a {
            Action::ToggleSelect if list => {
                let r = ws.toggle_cursor();
                err(self, r);
            }
            Action::PinRun if list => {
                let r = ws.pin_cursor();
                err(self, r);
            }
            Action::FilterList if list => {
                ws.filter.start();
                self.filter_target = Some(FilterTarget::Runs);
                self.show_runs_pane();
                return Some(Effect::REDRAW);
            }
            Action::GroupRuns if list => {
                let text = ws.group_by.clone().unwrap_or_default();
                ws.prompt = Some((Prompt::Group, text));
                self.filter_target = Some(FilterTarget::Group);
                return Some(Effect::REDRAW);
            }
            Action::ChooseColumn if list => {
                let text = ws.summary_column.clone().unwrap_or_default();
                ws.prompt = Some((Prompt::Column, text));
                self.filter_target = Some(FilterTarget::Column);
                return Some(Effect::REDRAW);
            }
            Action::PickRun if list => {
                self.show_runs_pane();
                return Some(Effect::REDRAW);
            }
            Action::Fullscreen if on_pane => {
                let dir = ws.cursor_run()?.latest().dir.clone();
                ws.view = WsView::Run(dir);
                self.panels.focus = Pane::Grid;
                self.reconcile();
                self.relayout();
                return Some(Effect::REDRAW);
            }
            Action::FocusUp | Action::FocusDown if on_list => {
                let d: isize = if a == Action::FocusUp { -1 } else { 1 };
                ws.cursor = ws
                    .cursor
                    .saturating_add_signed(d)
                    .min(ws.shown.len().saturating_sub(1));
                return Some(Effect::REDRAW);
            }
            Action::NextPage | Action::PrevPage | Action::FirstPage | Action::LastPage
                if on_list =>
            {
                let page = self.screen.limits.runs_page.max(1);
                let last = ws.shown.len().saturating_sub(1);
                ws.cursor = match a {
                    Action::NextPage => (ws.cursor + page).min(last),
                    Action::PrevPage => ws.cursor.saturating_sub(page),
                    Action::FirstPage => 0,
                    _ => last,
                };
                return Some(Effect::REDRAW);
            }
            Action::Back
                if !list
                    && self.charts.crosshair.is_none()
                    && !self.panels.fullscreen
                    && self.panels.focus == Pane::Grid
                    && matches!(self.overlay, crate::ui::Overlay::None) =>
            {
                return self.back_to_list();
            }
            _ => return None,
        }
        self.reconcile();
        self.save_workspace();
        Some(Effect::REDRAW)
    }

    /// From one run alone back to the workspace's list, on that run.
    fn back_to_list(&mut self) -> Option<Effect> {
        let ws = self.runs.workspace.as_mut()?;
        let back = match &ws.view {
            WsView::Run(d) => ws.run_of_dir(d).map(|r| r.key.clone()),
            WsView::List => None,
        };
        ws.view = WsView::List;
        if let Some(k) = back {
            if let Some(i) = ws.shown.iter().position(|&i| ws.runs[i].key == k) {
                ws.cursor = i;
            }
        }
        self.panels.left = true;
        ws.focus_list = true;
        self.reconcile();
        self.scan_index();
        self.relayout();
        Some(Effect::REDRAW)
    }

    fn show_runs_pane(&mut self) {
        if let Some(ws) = self.runs.workspace.as_mut() {
            // The list itself, not the overview below it.
            ws.overview.focus = false;
        }
        if self.screen.areas.left.is_none() {
            self.toggle_sidebar(false);
        }
        if self.screen.areas.left.is_some() {
            self.panels.focus = Pane::Left;
        }
    }

    /// Typing into a workspace prompt (the runs filter, `G`, `v`). None: the
    /// filter being typed is not the workspace's.
    pub(crate) fn type_workspace(&mut self, a: Option<Action>, c: Option<char>) -> Option<Effect> {
        let target = self.filter_target?;
        let ws = self.runs.workspace.as_mut()?;
        match target {
            FilterTarget::Runs => {
                let f = &mut ws.filter;
                // Typing parses the draft (at most `MAX_PATTERN_CHARS`); the list
                // is filtered only when the query in force changed.
                let (changed, shown) = match (a, c) {
                    (_, Some(c)) => f.push(c),
                    (Some(Action::FilterBackspace), _) => (f.backspace(), true),
                    (Some(Action::FilterClearInput), _) => (f.set_draft(String::new()), true),
                    (Some(Action::FilterToggleGlob), _) => (f.toggle_glob(), true),
                    (Some(Action::FilterApply), _) => {
                        f.apply();
                        self.filter_target = None;
                        ws.refilter_if_due();
                        (false, true)
                    }
                    (Some(Action::FilterCancel), _) => {
                        f.cancel();
                        self.filter_target = None;
                        (true, true)
                    }
                    _ => return Some(Effect::NONE),
                };
                if changed {
                    ws.filter_changed();
                }
                if self.filter_target.is_none() {
                    if changed {
                        ws.refilter_if_due();
                    }
                    self.save_workspace();
                }
                if !shown {
                    return Some(Effect::NONE);
                }
                self.sync_overview(false);
            }
            FilterTarget::Group | FilterTarget::Column => {
                let (kind, text) = ws.prompt.as_mut()?;
                let kind = *kind;
                match (a, c) {
                    (_, Some(c)) => {
                        if text.chars().count() < MAX_PROMPT_CHARS {
                            text.push(c);
                        }
                    }
                    (Some(Action::FilterBackspace), _) => {
                        text.pop();
                    }
                    (Some(Action::FilterClearInput), _) => text.clear(),
                    (Some(Action::FilterApply), _) => {
                        let v = Some(text.trim().to_owned()).filter(|t| !t.is_empty());
                        match kind {
                            Prompt::Group => ws.group_by = v,
                            Prompt::Column => ws.summary_column = v,
                        }
                        ws.prompt = None;
                        self.filter_target = None;
                        self.tag_drawn();
                        self.save_workspace();
                    }
                    (Some(Action::FilterCancel), _) => {
                        ws.prompt = None;
                        self.filter_target = None;
                    }
                    _ => return Some(Effect::NONE),
                }
            }
            _ => return None,
        }
        Some(Effect::REDRAW)
    }
}
