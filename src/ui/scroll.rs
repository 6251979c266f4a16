//! Scroll limits of the scrollable panes, from the same layout math the view draws
//! with, kept in state (`Screen::limits`) so a key never scrolls past what the screen
//! can show.

use ratatui::layout::Rect;

use super::filter::FilterState;
use super::layout::{self, Areas};
use super::workspace::Workspace;
use crate::store::console::{Console, Line};
use crate::store::Run;
use crate::text;

/// The console lines the pane shows: of each console in turn (a resumed run's
/// segments), its finished lines, then its unfinished ones, through the console
/// filter when one is set. Built per use; each console keeps at most its cap of
/// lines, so this is bounded.
pub struct ConsoleView<'a> {
    /// Each console's finished lines and unfinished ones.
    parts: Vec<(&'a std::collections::VecDeque<Line>, Vec<Line>)>,
    /// Indices (over every part's lines in turn) that pass the filter; None = all.
    shown: Option<Vec<usize>>,
    /// Of the lines shown, those that go on the one before (a line longer than
    /// the console keeps, wrapped).
    conts: usize,
    /// Of all the lines, filtered or not, those that go on the one before.
    all_conts: usize,
}

impl ConsoleView<'_> {
    /// Lines shown.
    #[must_use]
    pub fn len(&self) -> usize {
        self.shown.as_ref().map_or_else(|| self.total(), Vec::len)
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lines shown as they were written: a wrapped long line counts once (as
    /// `inspect` counts it).
    #[must_use]
    pub fn written(&self) -> usize {
        self.len() - self.conts
    }

    /// Lines before filtering.
    #[must_use]
    pub fn total(&self) -> usize {
        self.parts.iter().map(|(f, u)| f.len() + u.len()).sum()
    }

    /// Lines before filtering as they were written (see [`ConsoleView::written`]).
    #[must_use]
    pub fn total_written(&self) -> usize {
        self.total() - self.all_conts
    }

    /// The `i`-th line shown.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<&Line> {
        let mut j = match &self.shown {
            Some(v) => *v.get(i)?,
            None => i,
        };
        for (finished, unfinished) in &self.parts {
            if j < finished.len() {
                return finished.get(j);
            }
            j -= finished.len();
            if j < unfinished.len() {
                return unfinished.get(j);
            }
            j -= unfinished.len();
        }
        None
    }
}

/// How far each pane scrolls, and how far a page key moves it, for the current
/// areas and contents (recomputed after every update that may change them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Lines of the overview below its title and pinned rows, which its facts and
    /// sections share (`App::overview_layout`).
    pub overview_room: usize,
    /// System charts on one page of the sidebar.
    pub system_page: usize,
    /// How many lines back the console can scroll (its oldest line on top).
    pub console_max: usize,
    /// Console lines one page key moves.
    pub console_page: usize,
    /// Rows of the workspace's runs list (what a page key moves).
    pub runs_page: usize,
    /// The help overlay's largest scroll offset (its last line on its last row);
    /// 0 while it is closed.
    pub help_max: usize,
}

/// What the limits are worked out from besides the areas.
pub(crate) struct Contents<'a> {
    pub run: &'a Run,
    /// The console lines shown (None: the console is not).
    pub console: Option<ConsoleView<'a>>,
    /// The workspace's highlighted run's overview room (see
    /// [`Limits::overview_room`]) while its list is shown.
    pub ws_overview_room: Option<usize>,
    /// The workspace's runs list, where it is shown.
    pub runs_list: Option<Rect>,
    /// The help overlay's lines (None: it is closed).
    pub help_lines: Option<usize>,
}

impl Limits {
    /// The limits for a screen of `size` laid out in `areas`, with `c`.
    pub(crate) fn of(size: Rect, areas: &Areas, c: &Contents<'_>) -> Limits {
        Limits {
            overview_room: c
                .ws_overview_room
                .unwrap_or_else(|| overview_room(c.run, areas)),
            system_page: areas.right.map_or(1, layout::sys_per_page),
            console_max: match (areas.console, &c.console) {
                (Some(area), Some(view)) => console_max_back(view, area),
                _ => 0,
            },
            console_page: areas
                .console
                .map_or(1, layout::console_rows)
                .saturating_sub(1)
                .max(1),
            runs_page: c.runs_list.map_or(1, layout::runs_list_rows).max(1),
            help_max: c.help_lines.map_or(0, |lines| help_max(lines, size)),
        }
    }
}

/// Lines the overview's facts and sections get (below its title and pinned
/// rows: state, id, runtime when known, step when there is history).
fn overview_room(run: &Run, areas: &Areas) -> usize {
    let fixed = 2 + usize::from(run.runtime().is_some()) + usize::from(run.history_rows > 0);
    areas
        .left
        .map_or(0, |r| layout::overview_list_rows(r, fixed))
}

/// The help overlay's largest scroll offset: its `lines` less the rows its box
/// gets (as the view places it: above the status line, centred with a cell of
/// margin, its border and a line of padding each side).
fn help_max(lines: usize, size: Rect) -> usize {
    let screen = usize::from(size.height.saturating_sub(1).saturating_sub(2));
    let rows = (lines + 4).min(screen).saturating_sub(2);
    lines.saturating_sub(rows)
}

/// How many lines back the console shown in `area` can scroll.
fn console_max_back(view: &ConsoleView<'_>, area: Rect) -> usize {
    let tw = layout::console_text_width(area);
    let heights = (0..view.len()).map(|i| {
        view.get(i).map_or(1, |l| {
            text::wrapped_rows(
                &text::sanitize_tabs(&l.text, &mut 0, crate::store::console::TAB_STOP),
                tw,
            )
        })
    });
    layout::console_max_back(view.len(), layout::console_rows(area), heights)
}

impl<'a> ConsoleView<'a> {
    /// The lines of `consoles`, one after another, that pass `filter`.
    pub(crate) fn new(consoles: &[&'a Console], filter: &FilterState) -> Self {
        let parts: Vec<_> = consoles
            .iter()
            .map(|c| (c.lines(), c.unfinished().collect::<Vec<Line>>()))
            .collect();
        let mut conts = 0;
        let shown = filter.is_active().then(|| {
            // A line longer than the console keeps in one is kept as pieces (each
            // after the first `cont`): the filter reads the line whole, as written,
            // and shows all of its pieces or none.
            let mut shown = Vec::new();
            let mut at = 0;
            for (f, u) in &parts {
                let lines: Vec<&Line> = f.iter().chain(u).collect();
                let mut i = 0;
                while i < lines.len() {
                    let end = (i + 1..lines.len())
                        .find(|&j| !lines[j].cont)
                        .unwrap_or(lines.len());
                    let hit = if end == i + 1 {
                        filter.matches(&text::sanitize(&lines[i].text))
                    } else {
                        let whole: String = lines[i..end].iter().map(|l| l.text.as_str()).collect();
                        filter.matches(&text::sanitize(&whole))
                    };
                    if hit {
                        shown.extend(at + i..at + end);
                        conts += lines[i..end].iter().filter(|l| l.cont).count();
                    }
                    i = end;
                }
                at += lines.len();
            }
            shown
        });
        // Kept count per console (no walk over its lines), the few unfinished.
        let all_conts = (consoles.iter().zip(&parts))
            .map(|(c, (_, u))| c.kept_conts() + u.iter().filter(|l| l.cont).count())
            .sum();
        if shown.is_none() {
            conts = all_conts;
        }
        ConsoleView {
            parts,
            shown,
            conts,
            all_conts,
        }
    }
}

impl Workspace {
    /// The runs list keeps its highlighted row in view in `rows` rows.
    pub(crate) fn follow_cursor(&mut self, rows: usize) {
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + rows {
            self.scroll = self.cursor + 1 - rows;
        }
        self.scroll = self.scroll.min(self.shown.len().saturating_sub(rows));
    }
}
