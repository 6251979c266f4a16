//! What fits inside a pane: the rows of its scrolled list, the `↑`/`↓ N more`
//! marks, how far the console scrolls back, the system sidebar's cells. The
//! panes' own areas are `layout/mod.rs`'s.

use ratatui::layout::Rect;

use super::SYS_CHART_H;

/// How many system charts fit in the right sidebar (below its header).
#[must_use]
pub fn sys_per_page(right: Rect) -> usize {
    usize::from(right.height.saturating_sub(1) / SYS_CHART_H).max(1)
}

/// The sidebar's chart `i` on its page.
#[must_use]
pub fn sys_cell(right: Rect, i: usize) -> Rect {
    let i = u16::try_from(i).unwrap_or(u16::MAX);
    Rect::new(
        right.x + 1,
        right.y + 1 + i.saturating_mul(SYS_CHART_H),
        right.width.saturating_sub(1),
        SYS_CHART_H,
    )
}

/// Lines of the overview sidebar left for its scrolled list, below the title and
/// `fixed` pinned fact rows.
#[must_use]
pub fn overview_list_rows(left: Rect, fixed: usize) -> usize {
    usize::from(left.height).saturating_sub(1 + fixed)
}

/// The part of a scrolled list of rows that shows in a number of lines: a
/// `↑ N more` line on top when rows are hidden above, a `↓ N more` line at the
/// bottom when rows are hidden below (no such lines in under 3 lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListWindow {
    /// First row shown (also the number hidden above).
    pub first: usize,
    /// Rows shown.
    pub shown: usize,
    /// Rows hidden below.
    pub below: usize,
    /// Whether the `↑`/`↓` lines are drawn.
    pub marks: bool,
}

/// The largest useful scroll offset of `len` rows in `room` lines: the last row
/// sits on the last line.
#[must_use]
pub fn list_max_scroll(len: usize, room: usize) -> usize {
    if len <= room {
        0
    } else if room < 3 {
        len - room.max(1)
    } else {
        // The `↑` line takes one line, no `↓` line.
        len - (room - 1)
    }
}

/// What shows of `len` rows in `room` lines scrolled to `scroll` (clamped).
#[must_use]
pub fn list_window(len: usize, room: usize, scroll: usize) -> ListWindow {
    let first = scroll.min(list_max_scroll(len, room));
    let rest = len - first;
    if len <= room || room < 3 {
        let shown = rest.min(room);
        return ListWindow {
            first,
            shown,
            below: rest - shown,
            marks: false,
        };
    }
    let avail = room - usize::from(first > 0);
    let shown = if rest <= avail { rest } else { avail - 1 };
    ListWindow {
        first,
        shown,
        below: rest - shown,
        marks: true,
    }
}

/// Rows one page key moves a list shown in `room` lines.
#[must_use]
pub fn list_page(room: usize) -> usize {
    room.saturating_sub(2).max(1)
}

/// Columns of console text in the console pane (after the time column).
#[must_use]
pub fn console_text_width(console: Rect) -> usize {
    usize::from(console.width.saturating_sub(10))
}

/// Rows for console lines (below the pane's title line).
#[must_use]
pub fn console_rows(console: Rect) -> usize {
    usize::from(console.height.saturating_sub(1))
}

/// How far back (lines from the newest) the console scrolls: to where its oldest
/// line is on the top row and the lines after it fill the rows. `heights` gives
/// each line's wrapped height, oldest first. At this offset (and when everything
/// fits, at 0) the pane is drawn from its oldest line down.
#[must_use]
pub fn console_max_back(total: usize, rows: usize, heights: impl Iterator<Item = usize>) -> usize {
    let mut used = 0;
    let mut fit = 0;
    for h in heights.take(total) {
        if used + h > rows {
            break;
        }
        used += h;
        fit += 1;
    }
    total - fit.max(1).min(total)
}

/// Rows of the workspace's runs list in the left pane: below its title and its
/// column header, above the highlighted run's detail line.
#[must_use]
pub fn runs_list_rows(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_window_reaches_the_last_row() {
        // 20 rows in 8 lines.
        let w = list_window(20, 8, 0);
        assert_eq!((w.first, w.shown, w.below), (0, 7, 13));
        let max = list_max_scroll(20, 8);
        assert_eq!(max, 13);
        let w = list_window(20, 8, max);
        // `↑ 13 more` + 7 rows, the last row on the last line.
        assert_eq!((w.first, w.shown, w.below), (13, 7, 0));
        assert_eq!(list_window(20, 8, 1000), w);
        // In between: both marks, 6 rows.
        let w = list_window(20, 8, 5);
        assert_eq!((w.first, w.shown, w.below), (5, 6, 9));
        // Every offset fills the lines exactly, never past the end.
        for s in 0..=max {
            let w = list_window(20, 8, s);
            let lines = w.shown + usize::from(w.first > 0) + usize::from(w.below > 0);
            assert_eq!(lines, 8, "scroll {s}");
            assert_eq!(w.first + w.shown + w.below, 20);
        }
    }

    #[test]
    fn console_max_back_counts_wrapped_rows() {
        // Everything fits: no scrolling.
        assert_eq!(console_max_back(3, 5, [1, 2, 2].into_iter()), 0);
        // Lines 0 and 1 fill 4 of 5 rows, line 2 does not fit after them.
        assert_eq!(console_max_back(10, 5, [2, 2, 3, 1].into_iter()), 8);
        // A first line taller than the pane still scrolls to it.
        assert_eq!(console_max_back(4, 5, [9, 1, 1, 1].into_iter()), 3);
        assert_eq!(console_max_back(0, 5, std::iter::empty()), 0);
    }

    #[test]
    fn list_window_small_cases() {
        assert_eq!(list_max_scroll(5, 8), 0);
        let w = list_window(5, 8, 3);
        assert_eq!((w.first, w.shown, w.below, w.marks), (0, 5, 0, false));
        assert_eq!(list_max_scroll(5, 2), 3);
        let w = list_window(5, 2, 9);
        assert_eq!((w.first, w.shown, w.below, w.marks), (3, 2, 0, false));
        let w = list_window(5, 0, 9);
        assert_eq!(w.shown, 0);
        assert_eq!(list_window(0, 0, 0).shown, 0);
        assert_eq!(list_page(8), 6);
        assert_eq!(list_page(1), 1);
    }
}
