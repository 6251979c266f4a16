//! The workspace's side of the runs: opening it, the index as it comes, keeping
//! the runs read in step with the selection, and saving what the user chose (its
//! keys are `keys.rs`').

use std::path::{Path, PathBuf};

use super::cx::WsCx;
use super::runs::Runs;
use super::{Workspace, WsView};
use crate::msg::{RunIndexEntry, WorkspaceSaved};
use crate::ui::workspace::runs::WsTag;
use crate::ui::{Asks, Cmd, Effect};

impl Workspace {
    /// Ask for the index unless a scan is on its way.
    fn scan(&mut self, asks: &mut Asks) {
        if !self.scanning {
            self.scanning = true;
            asks.cmd(Cmd::ScanIndex {
                wandb_dir: self.dir.clone(),
                stale_after: self.stale_after,
            });
        }
    }

    /// Hand what changed to the state file's worker.
    fn save(&mut self, asks: &mut Asks) {
        if let Some(state) = self.take_save() {
            self.generation += 1;
            asks.cmd(Cmd::SaveWorkspace {
                wandb_dir: self.dir.clone(),
                base: self.on_disk.clone(),
                state,
                writer: self.writer,
                generation: self.generation,
            });
        }
    }
}

/// The workspace's side of the runs: what they may see and change besides is in
/// `cx` (see [`WsCx`]).
impl Runs {
    /// Open the workspace of `wandb_dir` with what was saved for it. `main`: the
    /// run directory to read first (the latest run, drawn while the index is
    /// read). `alone`: the single-run view of `main` (`leet RUN-DIR`), whose esc
    /// goes to the list; else the list (`leet` in a project or wandb directory).
    pub(crate) fn open_workspace(
        &mut self,
        cx: &mut WsCx,
        wandb_dir: PathBuf,
        saved: Option<WorkspaceSaved>,
        main: Option<PathBuf>,
        alone: bool,
    ) {
        let mut ws = Workspace::new(wandb_dir, saved);
        if let Ok(d) = std::time::Duration::try_from_secs_f64(cx.shown.stale_after) {
            ws.stale_after = d;
        }
        match (&main, alone) {
            (Some(dir), true) => {
                ws.view = WsView::Run(dir.clone());
                cx.shown.main_reading = Some(dir.clone());
            }
            _ => {
                ws.view = WsView::List;
                ws.focus_list = true;
                cx.panels.left = true;
            }
        }
        let list = ws.view == WsView::List;
        self.workspace = Some(Box::new(ws));
        if let Some(dir) = main {
            if !alone {
                self.open_run(cx, dir, true);
            }
        }
        if list {
            self.scan_index(cx.asks);
        }
        cx.asks.relayout();
    }

    /// Whether the workspace's runs list is what is shown (not one run alone).
    #[must_use]
    pub fn in_workspace_list(&self) -> bool {
        self.workspace
            .as_ref()
            .is_some_and(|w| w.view == WsView::List)
    }

    pub(super) fn scan_index(&mut self, asks: &mut Asks) {
        if let Some(ws) = &mut self.workspace {
            ws.scan(asks);
        }
    }

    /// About once a second (`Msg::Tick`): index the runs list again, so a run
    /// started (or deleted) while leet is open shows (or goes) within two seconds.
    pub(crate) fn workspace_tick(&mut self, cx: &mut WsCx) -> bool {
        if !self.in_workspace_list() {
            return false;
        }
        self.scan_index(cx.asks);
        let refiltered = self
            .workspace
            .as_deref_mut()
            .is_some_and(Workspace::refilter_if_due);
        if refiltered {
            cx.then.sync_overview(false);
        }
        // A run file with no record yet reads `starting` until it has been quiet
        // past the stale limit, then `empty`: the clock alone changes that, so
        // the list is drawn again when the number of starting runs changes.
        let turned = self.workspace.as_deref_mut().is_some_and(|ws| {
            let stale = ws.stale_after.as_secs_f64();
            let now = cx.shown.now;
            let starting = (ws.runs.iter())
                .filter(|r| r.waiting_for_first_record(now).is_some_and(|q| q < stale))
                .count();
            std::mem::replace(&mut ws.starting_drawn, starting) != starting
        });
        if turned {
            cx.then.sync_overview(true);
        }
        refiltered || turned
    }

    /// The index came: runs merged, the selection kept in step.
    pub(crate) fn on_indexed(
        &mut self,
        cx: &mut WsCx,
        wandb_dir: &Path,
        entries: Vec<RunIndexEntry>,
    ) -> Effect {
        let main = cx.shown.main_run_dir();
        let Some(ws) = self.workspace.as_mut().filter(|w| w.dir == wandb_dir) else {
            return Effect::NONE;
        };
        ws.scanning = false;
        ws.age_vanished();
        let changed = ws.set_index(entries, main.as_deref());
        let note = ws.note.take();
        if let Some(found) = ws.take_found() {
            if cx.shown.source.error.as_ref() == Some(&found) {
                cx.shown.source.error = None;
            }
        }
        if ws.view == WsView::List {
            self.reconcile(cx);
        } else {
            self.tag_drawn(cx);
        }
        // After the readers changed (closing the main run clears its error).
        if note.is_some() {
            cx.shown.source.error = note;
        }
        cx.then.sync_overview(true);
        if changed {
            self.save_workspace(cx.asks);
        }
        Effect::REDRAW
    }

    /// Part of the index, while the scan reads the rest: the list shows it (runs
    /// not read yet marked as reading); what is drawn waits for the whole index.
    pub(crate) fn on_index_progress(
        &mut self,
        cx: &mut WsCx,
        wandb_dir: &Path,
        entries: Vec<RunIndexEntry>,
    ) -> Effect {
        let Some(ws) = self.workspace.as_mut().filter(|w| w.dir == wandb_dir) else {
            return Effect::NONE;
        };
        ws.set_partial_index(entries);
        self.tag_drawn(cx);
        cx.then.sync_overview(false);
        Effect::REDRAW
    }

    /// The index has not changed since the last: only the next scan is due.
    pub(crate) fn on_index_unchanged(&mut self, wandb_dir: &Path) -> Effect {
        if let Some(ws) = self.workspace.as_mut().filter(|w| w.dir == wandb_dir) {
            ws.scanning = false;
            ws.age_vanished();
        }
        Effect::NONE
    }

    pub(super) fn save_workspace(&mut self, asks: &mut Asks) {
        if let Some(ws) = self.workspace.as_deref_mut() {
            ws.save(asks);
        }
    }

    /// A state save was carried out: when it is the newest, what it wrote is
    /// what the next changes are from. A failed one stays unsaved: the next save
    /// (the one on quit at the latest) carries its changes again. Failed
    /// (`error`): the note for the status bar at the first failure since the last
    /// success (the same failure is not told at every change; quitting says it
    /// again).
    pub(crate) fn on_workspace_written(
        &mut self,
        generation: u64,
        error: Option<&str>,
    ) -> Option<String> {
        let ws = self.workspace.as_deref_mut()?;
        match error {
            None => {
                if generation == ws.generation {
                    ws.on_disk = ws.stored.clone();
                }
                ws.save_failing = false;
                None
            }
            Some(_) if ws.save_failing => None,
            Some(e) => {
                ws.save_failing = true;
                Some(format!("workspace state not saved: {e}"))
            }
        }
    }

    /// The save to carry out on quit (a `Cmd::SaveWorkspace` numbered after the
    /// last one handed over), as [`Runs::workspace_to_save`] decides.
    #[must_use]
    pub fn workspace_save_on_quit(&self) -> Option<Cmd> {
        let (wandb_dir, state) = self.workspace_to_save()?;
        let ws = self.workspace.as_deref()?;
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
        let ws = self.workspace.as_deref()?;
        Some((ws.dir.clone(), ws.final_save()?))
    }

    /// Read the runs the workspace draws, and only those: the main run and the
    /// compared ones follow `Workspace::wanted`.
    pub(crate) fn reconcile(&mut self, cx: &mut WsCx) {
        // Until the index comes, what is read stays (the latest run, or the run
        // shown alone).
        let Some(ws) = self.workspace.as_deref().filter(|w| w.indexed) else {
            return;
        };
        let main = cx.shown.main_run_dir();
        let (dirs, primary) = ws.wanted(main.as_deref());
        let others: Vec<PathBuf> = dirs
            .into_iter()
            .filter(|d| primary.as_ref() != Some(d))
            .collect();
        match &primary {
            None if main.is_some() => self.close_main(cx),
            Some(p) if main.as_deref() != Some(p.as_path()) => {
                // The run shown until now drawn beside the new main one (a resumed
                // run's segment when a newer one came): kept as read, its reader
                // going on for it, not read again (its images, rows and console
                // went missing while it was).
                let kept =
                    (main.as_ref()).filter(|m| others.contains(m) && self.is_compared(m).is_none());
                match kept {
                    Some(old) => self.open_run_keeping(cx, p.clone(), old.clone()),
                    None => self.open_run(cx, p.clone(), false),
                }
            }
            _ => {}
        }
        let mut i = 0;
        while i < self.compare.len() {
            if others.contains(&self.compare[i].dir) {
                i += 1;
            } else {
                let c = self.compare.remove(i);
                cx.asks.cmd(Cmd::StopReader { tag: c.tag });
            }
        }
        for d in &others {
            if self.is_compared(d).is_none() {
                self.start_compare(cx, d.clone(), d.clone(), String::new());
            }
        }
        // Drawing order: the wanted order (the pinned run last, on top).
        self.compare.sort_by_key(|c| {
            others
                .iter()
                .position(|d| *d == c.dir)
                .unwrap_or(usize::MAX)
        });
        self.share_budget();
        self.tag_drawn(cx);
        self.forget_gone_if_drawn(cx);
        cx.asks.refresh();
    }

    /// Colour, legend text, group and pin of every run drawn, from the workspace.
    pub(crate) fn tag_drawn(&mut self, cx: &mut WsCx) {
        let Some(ws) = &self.workspace else {
            return;
        };
        let tag = |dir: &Path| {
            ws.run_of_dir(dir).map(|r| WsTag {
                key: r.key.clone(),
                color: r.color,
                label: r.legend_label(),
                group: ws.group_of(r),
                pinned: ws.pinned.as_deref() == Some(r.key.as_str()),
                segments: r.segments.len(),
            })
        };
        let main = cx.shown.main_run_dir();
        self.main_tag = main.as_deref().and_then(tag);
        for c in &mut self.compare {
            c.ws = tag(&c.dir);
            if let Some(t) = &c.ws {
                c.label.clone_from(&t.label);
            }
        }
        // The index may have told of a segment (or taken one away).
        self.restitch(cx, None);
    }
}
