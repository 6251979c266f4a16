//! How the overview's sections share the pane, and how the keys page them: each
//! section is paged on its own (`Config [1-12 of 40]`), `tab` moves to the next
//! section and, after the last, on to the next pane.

use super::OverviewPane;

/// Rows each section keeps, below its title, before the run facts give way: "its
/// title and a few rows".
pub(crate) const MIN_SECTION_ROWS: usize = 3;

/// How the overview's lines (below its title and pinned State/ID/Runtime/Step
/// rows) are shared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OverviewLayout {
    /// Run fact rows shown (the first ones; on a short pane the rest give way to
    /// the sections).
    pub facts: usize,
    /// Lines per section, its title included (0: not even its title fits).
    pub heights: Vec<usize>,
}

impl OverviewLayout {
    /// Rows section `i` shows below its title.
    #[must_use]
    pub fn rows(&self, i: usize) -> usize {
        self.heights.get(i).map_or(0, |h| h.saturating_sub(1))
    }
}

/// Lines per section (title included) for sections of `lens` rows in `room` lines.
/// Every section gets its title while they fit (the first ones first); the rows
/// left are shared evenly: a section that needs fewer than its share shows all
/// of its rows and leaves the rest to the others, and the remainder of an uneven
/// split goes to the first sections. A section without rows is its title alone.
#[must_use]
pub(crate) fn share(lens: &[usize], room: usize) -> Vec<usize> {
    let k = lens.len();
    if room < k {
        return (0..k).map(|i| usize::from(i < room)).collect();
    }
    let rows = room - k;
    let need: usize = lens.iter().sum();
    if need <= rows {
        return lens.iter().map(|n| n + 1).collect();
    }
    // The largest even share `level` with sum(min(len, level)) <= rows (it is below
    // the longest section, since not everything fits).
    let used = |level: usize| lens.iter().map(|&n| n.min(level)).sum::<usize>();
    let (mut lo, mut hi) = (0, lens.iter().copied().max().unwrap_or(0));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if used(mid) <= rows {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut extra = rows - used(lo);
    lens.iter()
        .map(|&n| {
            let mut h = 1 + n.min(lo);
            if n > lo && extra > 0 {
                h += 1;
                extra -= 1;
            }
            h
        })
        .collect()
}

impl OverviewPane {
    /// How `room` lines are shared between the facts and the sections: the sections
    /// first get their titles and up to [`MIN_SECTION_ROWS`] rows each, then the
    /// facts what they need of the rest, then the sections the remainder.
    #[must_use]
    pub fn layout(&self, room: usize) -> OverviewLayout {
        let lens: Vec<usize> = self.sections.iter().map(|s| s.len).collect();
        let need: usize = lens.iter().map(|&n| 1 + n.min(MIN_SECTION_ROWS)).sum();
        let facts = self.facts().len().min(room.saturating_sub(need));
        OverviewLayout {
            facts,
            heights: share(&lens, room - facts),
        }
    }

    /// The largest scroll offset of section `i`: its last row on its last line.
    #[must_use]
    pub fn max_scroll(&self, i: usize, lay: &OverviewLayout) -> usize {
        self.sections
            .get(i)
            .map_or(0, |s| s.len.saturating_sub(lay.rows(i)))
    }

    /// The rows of section `i` shown: (first, count).
    #[must_use]
    pub fn window(&self, i: usize, lay: &OverviewLayout) -> (usize, usize) {
        let Some(s) = self.sections.get(i) else {
            return (0, 0);
        };
        let first = s.scroll.min(self.max_scroll(i, lay));
        (first, lay.rows(i).min(s.len - first))
    }

    /// Section `i`'s title with what it shows: paged, `Config [1-12 of 40]` (under a
    /// filter that leaves rows out `Summary [1-5 of 12 from 276]`); whole (or no row
    /// shown), its count: `Config [40]` (`Config [3 of 40]` under a filter).
    #[must_use]
    pub fn title(&self, i: usize, lay: &OverviewLayout) -> String {
        let Some(s) = self.sections.get(i) else {
            return String::new();
        };
        let filtered = self.filter.is_active();
        let (first, shown) = self.window(i, lay);
        if shown == 0 || shown == s.len {
            return if filtered {
                format!("{} [{} of {}]", s.name, s.len, s.total)
            } else {
                format!("{} [{}]", s.name, s.len)
            };
        }
        let from = if filtered && s.len != s.total {
            format!(" from {}", s.total)
        } else {
            String::new()
        };
        format!(
            "{} [{}-{} of {}{from}]",
            s.name,
            first + 1,
            first + shown,
            s.len
        )
    }

    /// Scroll the active section by `delta` rows (clamped).
    pub(crate) fn scroll_by(&mut self, lay: &OverviewLayout, delta: isize) {
        let i = self.active;
        let max = self.max_scroll(i, lay);
        if let Some(s) = self.sections.get_mut(i) {
            s.scroll = s.scroll.min(max).saturating_add_signed(delta).min(max);
        }
    }

    /// Page the active section (`pgup`/`pgdown`: a page of the rows it shows).
    pub(crate) fn page_by(&mut self, lay: &OverviewLayout, pages: isize) {
        let step = isize::try_from(lay.rows(self.active).max(1)).unwrap_or(1);
        self.scroll_by(lay, pages.saturating_mul(step));
    }

    /// `home` / `end` in the active section.
    pub(crate) fn scroll_to(&mut self, lay: &OverviewLayout, end: bool) {
        let i = self.active;
        let max = self.max_scroll(i, lay);
        if let Some(s) = self.sections.get_mut(i) {
            s.scroll = if end { max } else { 0 };
        }
    }

    /// The sections `tab` visits: those with a row.
    fn visitable(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        (0..self.sections.len()).filter(|&i| self.sections[i].len > 0)
    }

    /// `tab` (`forward`) / `backtab` with the pane focused: the next (previous)
    /// section with rows becomes active. False at the last (first) one: the focus
    /// moves on to the next pane.
    pub(crate) fn step_section(&mut self, forward: bool) -> bool {
        let a = self.active;
        let next = if forward {
            self.visitable().find(|&i| i > a)
        } else {
            self.visitable().rev().find(|&i| i < a)
        };
        match next {
            Some(i) => {
                self.active = i;
                true
            }
            None => false,
        }
    }

    /// The focus arrives by `tab` (`forward`): the first section with rows becomes
    /// active; by `backtab`, the last.
    pub(crate) fn enter(&mut self, forward: bool) {
        let pick = if forward {
            self.visitable().next()
        } else {
            self.visitable().next_back()
        };
        if let Some(i) = pick {
            self.active = i;
        }
    }
}
