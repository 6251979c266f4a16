//! The record inspector (`i` over a run; `leet inspect PATH` on a terminal): the
//! run's records listed (number, offset, type, a hint) beside the selected one's
//! body. The state and keys are here; the file is read by the runtime's records
//! worker (`source::records`), asked with `Cmd::ViewRecords` and answering with
//! `Msg::Records`, so an update never waits on the file.

pub(crate) mod view;
pub(crate) mod wrap;

use std::path::PathBuf;

use ratatui::layout::Rect;

use super::action::Action;
use super::filter::FilterState;
use super::overlay::Outcome;
use super::{Asks, Cmd, Effect, FilterTarget};
use crate::msg::{RecordsPage, RecordsView};

/// Its keys' lines in the help.
pub(crate) const HELP: &[(&[Action], &str)] = &[
    (
        &[Action::FocusUp, Action::PrevPage, Action::FirstPage],
        "Earlier record (body pane: scroll up)",
    ),
    (
        &[Action::FocusDown, Action::NextPage],
        "Later record (body pane: scroll down)",
    ),
    (&[Action::LastPage], "Last record, following the file"),
    (
        &[Action::CyclePaneFocus, Action::CyclePaneFocusBack],
        "Switch between the list and the body",
    ),
    (
        &[Action::StartFilter],
        "Filter records by regex (JSON text)",
    ),
    (&[Action::ClearFilters], "Clear the type and text filters"),
    (
        &[Action::Back, Action::InspectRecords],
        "Close the inspector (a running filter: stop it)",
    ),
];

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
    /// Rows of the wrapped body scrolled.
    pub body_scroll: usize,
    /// The body wrapped to its pane's width (kept with the body and the size).
    pub wrap: wrap::BodyWrap,
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

    /// Columns of a body row (inside its border).
    #[must_use]
    pub fn body_width(size: Rect) -> usize {
        usize::from(areas(size).body.width.saturating_sub(2)).max(1)
    }

    /// Wrap the body again for a screen of `size` (when its width changed), the
    /// scroll kept within it.
    fn rewrap(&mut self, size: Rect) {
        let w = Inspector::body_width(size);
        if w != self.wrap.width() {
            self.wrap = wrap::BodyWrap::new(&self.body, w);
        }
        let max = self.wrap.total().saturating_sub(Inspector::body_rows(size));
        self.body_scroll = self.body_scroll.min(max);
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

impl Inspector {
    /// The inspector on `path` (`standalone`: `leet inspect`, where going back
    /// quits), its file opened and its first rows asked for (on a screen of
    /// `size`).
    pub(crate) fn open(path: PathBuf, standalone: bool, size: Rect, asks: &mut Asks) -> Self {
        asks.cmd(Cmd::OpenRecords { path: path.clone() });
        let mut i = Inspector {
            path,
            standalone,
            ..Inspector::default()
        };
        i.ask(size, asks);
        i
    }

    /// Going back: closed (the file let go), or quit when standalone.
    pub(crate) fn close(&self, asks: &mut Asks) -> Outcome {
        if self.standalone {
            return Outcome::Stay(Effect::QUIT);
        }
        asks.cmd(Cmd::CloseRecords);
        Outcome::Close
    }

    /// Ask for the view in force, on a screen of `size`.
    pub(crate) fn ask(&mut self, size: Rect, asks: &mut Asks) {
        self.rewrap(size);
        let rows = Inspector::list_rows(size);
        self.gen += 1;
        asks.cmd(Cmd::ViewRecords(self.view(rows)));
    }

    /// An answer of the records worker.
    pub(crate) fn on_records(&mut self, page: RecordsPage) -> Effect {
        // Positions are the answer's only when it answers the last request (keys
        // pressed since moved them on) or the file is followed.
        if page.gen == self.gen {
            self.from = page.from;
            self.selected = page.selected;
        }
        if let Some(body) = page.body.clone() {
            self.body = body;
            self.body_scroll = 0;
            self.wrap = wrap::BodyWrap::new(&self.body, self.wrap.width().max(1));
        }
        self.page = RecordsPage { body: None, ..page };
        Effect::REDRAW
    }

    /// Movement in the body pane (when it has the focus): scrolled, or None for
    /// any other action.
    fn scroll_body(&mut self, a: Action, body_rows: usize) -> Option<Outcome> {
        let body_max = self.wrap.total().saturating_sub(body_rows);
        self.body_scroll = match a {
            Action::FocusUp | Action::FocusDown | Action::PrevPage | Action::NextPage => {
                let step = if matches!(a, Action::FocusUp | Action::FocusDown) {
                    1
                } else {
                    body_rows.saturating_sub(1).max(1)
                };
                if matches!(a, Action::FocusUp | Action::PrevPage) {
                    self.body_scroll.saturating_sub(step)
                } else {
                    (self.body_scroll + step).min(body_max)
                }
            }
            Action::FirstPage => 0,
            Action::LastPage => body_max,
            _ => return None,
        };
        Some(Outcome::Stay(Effect::REDRAW))
    }

    /// A key action while the inspector is in front (on a screen of `size`; `/`
    /// sets `filter_target` to its text filter).
    pub(crate) fn act(
        &mut self,
        a: Action,
        size: Rect,
        filter_target: &mut Option<FilterTarget>,
        asks: &mut Asks,
    ) -> Outcome {
        let rows = Inspector::list_rows(size) as u64;
        self.rewrap(size);
        if self.focus == Focus::Body {
            if let Some(out) = self.scroll_body(a, Inspector::body_rows(size)) {
                return out;
            }
        }
        match a {
            Action::Quit => return Outcome::Stay(Effect::QUIT),
            Action::Back | Action::InspectRecords => {
                // A text filter still reading the file: esc stops it (drops it).
                if a == Action::Back && self.filter.is_active() && self.filtering() {
                    self.filter.clear();
                    self.refiltered();
                } else {
                    return self.close(asks);
                }
            }
            Action::CyclePaneFocus | Action::CyclePaneFocusBack => {
                self.focus = match self.focus {
                    Focus::Body => Focus::List,
                    Focus::List => Focus::Body,
                };
                return Outcome::Stay(Effect::REDRAW);
            }
            Action::FocusUp => self.select(self.selected.saturating_sub(1), rows),
            Action::FocusDown => self.select(self.selected + 1, rows),
            Action::PrevPage => self.select(self.selected.saturating_sub(rows), rows),
            Action::NextPage => self.select(self.selected + rows, rows),
            Action::FirstPage => self.select(0, rows),
            Action::LastPage => {
                self.follow = true;
                self.selected = self.last();
                self.from = self.page.total.saturating_sub(rows);
            }
            Action::CycleRecordType => {
                let kinds: Vec<u8> = self.page.kinds.iter().map(|k| k.0).collect();
                self.kind = match self.kind {
                    None => kinds.first().copied(),
                    Some(k) => kinds.iter().copied().find(|&n| n > k),
                };
                self.refiltered();
            }
            Action::ClearFilters => {
                self.kind = None;
                self.filter.clear();
                self.refiltered();
            }
            Action::StartFilter => {
                self.filter.start();
                *filter_target = Some(FilterTarget::Records);
                return Outcome::Stay(Effect::REDRAW);
            }
            _ => return Outcome::Stay(Effect::NONE),
        }
        self.ask(size, asks);
        Outcome::Stay(Effect::REDRAW)
    }

    /// Typing into the text filter: the rows asked for again if it changed.
    pub(crate) fn with_filter<R>(
        &mut self,
        f: impl FnOnce(&mut FilterState) -> R,
        size: Rect,
        asks: &mut Asks,
    ) -> R {
        let before = self.filter.text.clone();
        let out = f(&mut self.filter);
        if self.filter.text != before {
            self.refiltered();
            self.ask(size, asks);
        }
        out
    }
}
