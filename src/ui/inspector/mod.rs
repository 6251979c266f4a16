//! The record inspector (`i` over a run; `leet inspect PATH` on a terminal): the
//! run's records listed (number, offset, type, a hint) beside the selected one's
//! body. The state and keys are here; the file is read by the runtime's records
//! worker (`source::records`), asked with `Cmd::ViewRecords` and answering with
//! `Msg::Records`, so an update never waits on the file.

pub(crate) mod view;

use std::path::PathBuf;

use ratatui::layout::Rect;

use super::action::Action;
use super::filter::FilterState;
use super::{App, Cmd, Effect, FilterTarget, Overlay};
use crate::msg::{RecordsPage, RecordsView};

/// Which pane the movement keys move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    #[default]
    List,
    Body,
}

/// The inspector's state.
#[derive(Debug, Clone, Default)]
pub struct Inspector {
    /// The `.wandb` file shown.
    pub path: PathBuf,
    /// Opened by `leet inspect`: going back quits.
    pub standalone: bool,
    /// Number of the last request sent.
    pub gen: u64,
    /// First row shown and the selected row (positions in the filtered list).
    pub from: u64,
    pub selected: u64,
    /// `end`: the last row stays selected as the file grows.
    pub follow: bool,
    /// Only this kind of row (`t`).
    pub kind: Option<u8>,
    /// The text filter (`/`).
    pub filter: FilterState,
    /// The last answer.
    pub page: RecordsPage,
    /// The selected record's body (from the last answer that carried one).
    pub body: Vec<String>,
    /// Lines of the body scrolled.
    pub body_scroll: usize,
    pub focus: Focus,
}

/// Where the inspector draws: a title line, the list and the body side by side
/// (the body under the list on a narrow screen), and a status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InspectorAreas {
    pub title: Rect,
    pub list: Rect,
    pub body: Rect,
    pub status: Rect,
}

/// The inspector's areas on a screen of `size`.
#[must_use]
pub fn areas(size: Rect) -> InspectorAreas {
    let h = size.height;
    let title = Rect::new(size.x, size.y, size.width, h.min(1));
    let status = Rect::new(
        size.x,
        size.y + h.saturating_sub(1),
        size.width,
        u16::from(h > 1),
    );
    let mid = Rect::new(size.x, size.y + 1, size.width, h.saturating_sub(2));
    let (list, body) = if size.width >= 60 {
        let lw = (size.width / 2).max(40).min(size.width - 20);
        (
            Rect::new(mid.x, mid.y, lw, mid.height),
            Rect::new(mid.x + lw, mid.y, size.width - lw, mid.height),
        )
    } else {
        let lh = mid.height / 2;
        (
            Rect::new(mid.x, mid.y, mid.width, lh),
            Rect::new(mid.x, mid.y + lh, mid.width, mid.height - lh),
        )
    };
    InspectorAreas {
        title,
        list,
        body,
        status,
    }
}

impl Inspector {
    /// Rows of the list that fit (inside its border).
    #[must_use]
    pub fn list_rows(size: Rect) -> usize {
        usize::from(areas(size).list.height.saturating_sub(2)).max(1)
    }

    /// Lines of the body that fit.
    #[must_use]
    pub fn body_rows(size: Rect) -> usize {
        usize::from(areas(size).body.height.saturating_sub(2)).max(1)
    }

    /// Whether a filter is checking rows still.
    #[must_use]
    pub fn filtering(&self) -> bool {
        (self.kind.is_some() || self.filter.is_active()) && self.page.checked < self.page.indexed
    }

    fn last(&self) -> u64 {
        self.page.total.saturating_sub(1)
    }

    /// Move the selection to `sel`, keeping it in the window of `rows`.
    fn select(&mut self, sel: u64, rows: u64) {
        self.follow = false;
        self.selected = sel.min(self.last());
        if self.selected < self.from {
            self.from = self.selected;
        } else if self.selected >= self.from + rows {
            self.from = self.selected + 1 - rows;
        }
    }

    /// The filter changed: what the last answer said no longer holds (the list
    /// reads as being filtered until the answer comes).
    fn refiltered(&mut self) {
        self.from = 0;
        self.selected = 0;
        self.follow = false;
        self.page.total = 0;
        self.page.checked = 0;
        self.page.rows.clear();
    }

    fn view(&self, rows: usize) -> RecordsView {
        RecordsView {
            gen: self.gen,
            kind: self.kind,
            text: self.filter.text.clone(),
            from: self.from,
            len: rows,
            selected: self.selected,
            follow: self.follow,
        }
    }
}

impl App {
    /// Open the inspector on `path` (`standalone`: `leet inspect`, where going back
    /// quits). The commands are handed out by the next update or `take_cmds`.
    pub fn open_inspector(&mut self, path: PathBuf, standalone: bool) {
        self.asks.cmd(Cmd::OpenRecords { path: path.clone() });
        self.overlay = Overlay::Inspector(Box::new(Inspector {
            path,
            standalone,
            ..Inspector::default()
        }));
        self.ask_records();
    }

    /// The record inspector, while open.
    #[must_use]
    pub fn inspector(&self) -> Option<&Inspector> {
        match &self.overlay {
            Overlay::Inspector(i) => Some(i),
            _ => None,
        }
    }

    fn inspector_mut(&mut self) -> Option<&mut Inspector> {
        match &mut self.overlay {
            Overlay::Inspector(i) => Some(i),
            _ => None,
        }
    }

    fn close_inspector(&mut self) -> Effect {
        if self.inspector().is_some_and(|i| i.standalone) {
            return Effect::QUIT;
        }
        self.overlay = Overlay::None;
        self.asks.cmd(Cmd::CloseRecords);
        Effect::REDRAW
    }

    /// Send the view in force.
    pub(super) fn ask_records(&mut self) {
        let rows = Inspector::list_rows(self.screen.size);
        if let Some(i) = self.inspector_mut() {
            i.gen += 1;
            let v = i.view(rows);
            self.asks.cmd(Cmd::ViewRecords(v));
        }
    }

    /// `i` in the viewer: the inspector on the run's file.
    pub(super) fn toggle_inspector(&mut self) -> Effect {
        if self.inspector().is_some() {
            return self.close_inspector();
        }
        let Some(file) = self.shown.source.file.clone() else {
            return Effect::NONE;
        };
        self.open_inspector(file, false);
        Effect::REDRAW
    }

    /// An answer of the records worker.
    pub(super) fn on_records(&mut self, page: RecordsPage) -> Effect {
        let Some(i) = self.inspector_mut() else {
            return Effect::NONE;
        };
        // Positions are the answer's only when it answers the last request (keys
        // pressed since moved them on) or the file is followed.
        if page.gen == i.gen {
            i.from = page.from;
            i.selected = page.selected;
        }
        if let Some(body) = page.body.clone() {
            i.body = body;
            i.body_scroll = 0;
        }
        i.page = RecordsPage { body: None, ..page };
        Effect::REDRAW
    }

    /// A key action while the inspector is in front.
    pub(super) fn act_inspector(&mut self, a: Action) -> Effect {
        let rows = Inspector::list_rows(self.screen.size) as u64;
        let body_rows = Inspector::body_rows(self.screen.size);
        let Some(i) = self.inspector_mut() else {
            self.overlay = Overlay::None;
            return Effect::REDRAW;
        };
        let body_max = i.body.len().saturating_sub(body_rows);
        let in_body = i.focus == Focus::Body;
        match a {
            Action::Quit => return Effect::QUIT,
            Action::Back | Action::InspectRecords => {
                // A text filter still reading the file: esc stops it (drops it).
                if a == Action::Back && i.filter.is_active() && i.filtering() {
                    i.filter.clear();
                    i.refiltered();
                } else {
                    return self.close_inspector();
                }
            }
            Action::CyclePaneFocus | Action::CyclePaneFocusBack => {
                i.focus = if in_body { Focus::List } else { Focus::Body };
                return Effect::REDRAW;
            }
            Action::FocusUp | Action::FocusDown | Action::PrevPage | Action::NextPage
                if in_body =>
            {
                let step = if matches!(a, Action::FocusUp | Action::FocusDown) {
                    1
                } else {
                    body_rows.saturating_sub(1).max(1)
                };
                i.body_scroll = if matches!(a, Action::FocusUp | Action::PrevPage) {
                    i.body_scroll.saturating_sub(step)
                } else {
                    (i.body_scroll + step).min(body_max)
                };
                return Effect::REDRAW;
            }
            Action::FirstPage if in_body => {
                i.body_scroll = 0;
                return Effect::REDRAW;
            }
            Action::LastPage if in_body => {
                i.body_scroll = body_max;
                return Effect::REDRAW;
            }
            Action::FocusUp => i.select(i.selected.saturating_sub(1), rows),
            Action::FocusDown => i.select(i.selected + 1, rows),
            Action::PrevPage => i.select(i.selected.saturating_sub(rows), rows),
            Action::NextPage => i.select(i.selected + rows, rows),
            Action::FirstPage => i.select(0, rows),
            Action::LastPage => {
                i.follow = true;
                i.selected = i.last();
                i.from = i.page.total.saturating_sub(rows);
            }
            Action::CycleRecordType => {
                let kinds: Vec<u8> = i.page.kinds.iter().map(|k| k.0).collect();
                i.kind = match i.kind {
                    None => kinds.first().copied(),
                    Some(k) => kinds.iter().copied().find(|&n| n > k),
                };
                i.refiltered();
            }
            Action::ClearFilters => {
                i.kind = None;
                i.filter.clear();
                i.refiltered();
            }
            Action::StartFilter => {
                i.filter.start();
                self.filter_target = Some(FilterTarget::Records);
                return Effect::REDRAW;
            }
            _ => return Effect::NONE,
        }
        self.ask_records();
        Effect::REDRAW
    }

    /// Typing into the text filter: the filter changed (or not).
    pub(super) fn with_records_filter<R>(&mut self, f: impl FnOnce(&mut FilterState) -> R) {
        let Some(i) = self.inspector_mut() else {
            return;
        };
        let before = i.filter.text.clone();
        f(&mut i.filter);
        if i.filter.text != before {
            i.refiltered();
            self.ask_records();
        }
    }
}
