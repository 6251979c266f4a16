//! The highlighted run's overview, below the runs list in the left pane: what the
//! single-run overview shows (state, id, facts, config, summary, environment),
//! taken from the index as the cursor moves, so the run is not read (no reader, no
//! chart change). It is the app's overview pane while the list is shown: its
//! filter (`o`), its sections and their paging are the overview's own; `tab` from
//! the list visits its sections, `esc` goes back to the list.

use ratatui::layout::Rect;

use super::cx::WsCx;
use super::runs::Runs;
use super::{Workspace, WsRun, WsView};
use crate::ui::action::Action;
use crate::ui::layout;
use crate::ui::panels::Pane;
use crate::ui::{Effect, LiveState};

/// Lines the runs list keeps at least (title, column names, three rows, the
/// detail line), and the fewest the overview below it is drawn in (its title,
/// state, id, a section's title and a few rows).
const LIST_MIN_H: u16 = 6;
const OVERVIEW_MIN_H: u16 = 8;

/// The overview part of the runs pane.
#[derive(Debug, Clone, Default)]
pub struct WsOverview {
    /// The keys go to the overview (its sections scroll), not to the list.
    pub focus: bool,
    /// The run whose rows the app's overview holds (None: the run read).
    shows: Option<String>,
}

/// The rows pinned under the overview's title: State, ID, then Runtime and Step
/// when the index knows them (as the single-run overview pins them).
#[derive(Debug, Clone, PartialEq)]
pub struct Pinned {
    /// The index's state (`source::index::state_at`) in the viewer's terms, with
    /// how long a run without exit record has been quiet; None: no run record
    /// read (a file just created, or one that cannot be read: `error`).
    pub state: Option<LiveState>,
    pub error: Option<String>,
    /// Untrusted: sanitize before display.
    pub id: String,
    pub runtime: Option<f64>,
    pub step: Option<i64>,
}

impl Pinned {
    /// Lines it takes.
    #[must_use]
    pub fn lines(&self) -> usize {
        2 + usize::from(self.runtime.is_some()) + usize::from(self.step.is_some())
    }
}

impl WsRun {
    /// Seconds its run file has been quiet at `now` when the file is there but holds
    /// no run record yet and could be read (a run starting, or one killed before
    /// its first record); None otherwise.
    #[must_use]
    pub fn waiting_for_first_record(&self, now: f64) -> Option<f64> {
        let l = self.latest();
        (l.file.is_some() && !l.has_run_record && l.exit_code.is_none() && l.error.is_none())
            .then(|| crate::source::index::quiet_at(l.mtime_ns, l.last_time, now).max(0.0))
    }

    /// Its pinned rows at `now` (Unix s).
    #[must_use]
    pub fn pinned(&self, now: f64) -> Pinned {
        let l = self.latest();
        let quiet = crate::source::index::quiet_at(l.mtime_ns, l.last_time, now).max(0.0);
        let state = LiveState::of(self.state(), l.exit_code, Some(quiet));
        Pinned {
            state,
            error: l.error.clone(),
            id: self.id(),
            runtime: self.runtime(),
            step: l.last_step.filter(|_| l.history_rows > 0),
        }
    }
}

impl Workspace {
    /// The runs pane `left` split: the runs list on top, as tall as its rows need
    /// up to half the pane, and below it the highlighted run's overview (None when
    /// no run is highlighted or it would get under `OVERVIEW_MIN_H` lines).
    #[must_use]
    pub fn split(&self, left: Rect) -> (Rect, Option<Rect>) {
        let h = left.height;
        if !self.indexed || self.cursor_run().is_none() || h < LIST_MIN_H + OVERVIEW_MIN_H {
            return (left, None);
        }
        let rows = u16::try_from(self.shown.len()).unwrap_or(u16::MAX);
        let list_h = rows.saturating_add(3).clamp(LIST_MIN_H, h / 2);
        (
            Rect::new(left.x, left.y, left.width, list_h),
            Some(Rect::new(left.x, left.y + list_h, left.width, h - list_h)),
        )
    }
}

/// The overview part of the runs pane, as the runs see it: what it shows, where
/// it is drawn, and its keys (with the overview pane's state in `cx`).
impl Runs {
    /// The run whose overview is shown instead of the run read: the highlighted
    /// one while the runs list is shown.
    #[must_use]
    pub(crate) fn overview_subject(&self) -> Option<&WsRun> {
        self.workspace
            .as_deref()
            .filter(|w| w.view == WsView::List)
            .and_then(Workspace::cursor_run)
    }

    /// Keep the overview on its subject: Some(moved) when the router is to
    /// rebuild it, because that is another run (`moved`: each section from its top
    /// again, the filter kept) or, `fresh`, because the index may have changed
    /// it. Reads nothing: the index has it all.
    pub(crate) fn follow_overview(&mut self, fresh: bool) -> Option<bool> {
        let want = self.overview_subject().map(|r| r.key.clone());
        let ws = self.workspace.as_deref_mut()?;
        let moved = ws.overview.shows != want;
        if !(moved || fresh && want.is_some()) {
            return None;
        }
        ws.overview.shows = want;
        Some(moved)
    }

    /// The runs list's part of the left pane `left` (None: no left pane).
    #[must_use]
    pub(crate) fn list_area(&self, left: Option<Rect>) -> Option<Rect> {
        let ws = self.workspace.as_deref()?;
        left.map(|l| ws.split(l).0)
    }

    /// Lines the highlighted run's overview gives its facts and sections in the
    /// left pane `left` at `now` (None: the runs list is not shown; 0: no room for
    /// the overview).
    #[must_use]
    pub(crate) fn overview_room(&self, left: Option<Rect>, now: f64) -> Option<usize> {
        let ws = self
            .workspace
            .as_deref()
            .filter(|w| w.view == WsView::List)?;
        let room = left
            .and_then(|l| ws.split(l).1)
            .zip(ws.cursor_run())
            .map_or(0, |(r, run)| {
                layout::overview_list_rows(r, run.pinned(now).lines())
            });
        Some(room)
    }

    /// Keys of the runs pane's overview part (None: not its). `tab` from the list
    /// enters its sections and goes through them, then on to the next pane;
    /// `backtab` goes back through them to the list; `esc` goes to the list.
    /// Moving and paging keys fall through to the overview's own (they scroll its
    /// active section) while it has the focus.
    pub(crate) fn act_ws_overview(&mut self, cx: &mut WsCx, a: Action) -> Option<Effect> {
        let on_left = cx.panels.focus == Pane::Left && !cx.panels.fullscreen;
        let has_room = self
            .overview_room(cx.screen.areas.left, cx.shown.now)
            .is_some_and(|r| r > 0);
        let ws = self.workspace.as_deref_mut()?;
        if ws.view != WsView::List {
            return None;
        }
        if !has_room {
            // Not drawn (a short pane): the keys are the list's.
            ws.overview.focus = false;
        }
        let forward = a == Action::CyclePaneFocus;
        match a {
            Action::CyclePaneFocus | Action::CyclePaneFocusBack if !on_left => {
                // Into the pane by tab: its list first.
                ws.overview.focus = false;
                None
            }
            Action::CyclePaneFocus if !ws.overview.focus => {
                let any = cx.overview.sections.iter().any(|s| s.len > 0);
                if !(has_room && any) {
                    return None;
                }
                ws.overview.focus = true;
                cx.overview.enter(true);
                Some(Effect::REDRAW)
            }
            Action::CyclePaneFocus | Action::CyclePaneFocusBack if ws.overview.focus => {
                if cx.overview.step_section(forward) {
                    return Some(Effect::REDRAW);
                }
                ws.overview.focus = false;
                // Past its last section: on to the next pane; before its first: the list.
                if forward {
                    None
                } else {
                    Some(Effect::REDRAW)
                }
            }
            Action::Back if on_left && ws.overview.focus => {
                ws.overview.focus = false;
                Some(Effect::REDRAW)
            }
            _ => None,
        }
    }
}
