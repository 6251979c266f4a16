//! The focus in a sectioned grid: over headers and charts in order, row by row,
//! page by page; kept in view when sections collapse or the filter changes.

use super::{pages, Item, Page, Row, ROOT_LABEL};
use crate::ui::charts::grid::GridState;

impl GridState {
    /// Whether the grid is drawn in sections (some key has a section).
    #[must_use]
    pub fn sectioned(&self) -> bool {
        self.sections.tree.has_sections()
    }

    /// The rows of the grid at the current columns.
    #[must_use]
    pub fn section_rows(&self) -> Vec<Row> {
        self.sections.rows(self.cols)
    }

    /// The pages of the grid's rows in its body.
    #[must_use]
    pub fn section_pages(&self, rows: &[Row]) -> Vec<Page> {
        pages(rows, self.body.height, self.rows, self.per_page())
    }

    /// The focused item.
    #[must_use]
    pub fn item(&self) -> Item {
        self.sections
            .header
            .map_or(Item::Chart(self.focus), Item::Header)
    }

    /// Focus `item`.
    pub fn set_item(&mut self, item: Item) {
        match item {
            Item::Header(i) => {
                self.sections.header = Some(i);
                if let Some(s) = self.sections.tree.sections.get(i) {
                    // The chart the header stands for (for what follows a chart).
                    self.focus = s.all_charts().start;
                }
            }
            Item::Chart(p) => {
                self.sections.header = None;
                self.focus = p;
            }
        }
    }

    /// The row (index into `rows`) holding the focused item.
    #[must_use]
    pub fn focused_row(&self, rows: &[Row]) -> Option<usize> {
        let item = self.item();
        rows.iter().position(|r| match (r, item) {
            (Row::Header(s), Item::Header(h)) => *s == h,
            (Row::Charts { charts, .. }, Item::Chart(p)) => charts.contains(&p),
            _ => false,
        })
    }

    /// The page showing the focused item (0 when none does).
    #[must_use]
    pub fn section_page(&self, rows: &[Row], pages: &[Page]) -> usize {
        let row = self.focused_row(rows).unwrap_or(0);
        pages
            .iter()
            .position(|p| p.rows.contains(&row))
            .unwrap_or(0)
    }

    /// Bring the focus into view after a collapse, a filter or new keys: a chart
    /// inside a collapsed section gives it to that section's header; a header
    /// gone gives it to the first item.
    pub fn settle_sections(&mut self, n: usize) {
        if !self.sectioned() {
            self.sections.header = None;
            return;
        }
        let s = &self.sections;
        let item = match self.item() {
            Item::Header(h) if h >= s.tree.sections.len() || s.tree.sections[h].count == 0 => None,
            Item::Header(h) if s.tree.buried(h, &s.collapsed) => {
                let first = s.tree.sections[h].all_charts().start;
                s.tree.hiding(first, &s.collapsed).map(Item::Header)
            }
            Item::Header(h) => Some(Item::Header(h)),
            Item::Chart(p) if p >= n => None,
            Item::Chart(p) => Some(
                s.tree
                    .hiding(p, &s.collapsed)
                    .map_or(Item::Chart(p), Item::Header),
            ),
        };
        match item {
            Some(i) => self.set_item(i),
            None => {
                let rows = self.section_rows();
                let first = rows.first().map_or(Item::Chart(0), first_item);
                self.set_item(first);
            }
        }
    }

    /// Move the focus by `d` items (headers and charts, in order).
    pub fn section_step(&mut self, d: isize, charts_only: bool) {
        let items: Vec<Item> = items(&self.section_rows())
            .into_iter()
            .filter(|i| !charts_only || matches!(i, Item::Chart(_)))
            .collect();
        let Some(at) = items.iter().position(|&i| i == self.item()) else {
            return;
        };
        let to = at
            .saturating_add_signed(d)
            .min(items.len().saturating_sub(1));
        self.set_item(items[to]);
    }

    /// Move the focus `d` rows up or down, keeping its column where it can.
    pub fn section_vertical(&mut self, d: isize) {
        let rows = self.section_rows();
        let Some(at) = self.focused_row(&rows) else {
            return;
        };
        let col = match (&rows[at], self.item()) {
            (Row::Charts { charts, .. }, Item::Chart(p)) => p - charts.start,
            _ => 0,
        };
        let to = at
            .saturating_add_signed(d)
            .min(rows.len().saturating_sub(1));
        let item = match &rows[to] {
            Row::Header(s) => Item::Header(*s),
            Row::Charts { charts, .. } => Item::Chart((charts.start + col).min(charts.end - 1)),
        };
        self.set_item(item);
    }

    /// Focus the first item of page `p` (clamped to the last page).
    pub fn section_goto_page(&mut self, p: usize) {
        let rows = self.section_rows();
        let pages = self.section_pages(&rows);
        let Some(page) = pages.get(p.min(pages.len().saturating_sub(1))) else {
            return;
        };
        if let Some(r) = rows.get(page.rows.start) {
            self.set_item(first_item(r));
        }
    }

    /// The name of the section whose header has the focus (the root's is
    /// [`ROOT_LABEL`]); not sanitized.
    #[must_use]
    pub fn focused_header_name(&self) -> Option<&str> {
        let s = self.sections.tree.sections.get(self.sections.header?)?;
        Some(if s.path.is_empty() {
            ROOT_LABEL
        } else {
            &s.path
        })
    }

    /// The focused section: the focused header's, else the focused chart's.
    #[must_use]
    pub fn focused_section(&self) -> Option<usize> {
        match self.item() {
            Item::Header(h) => Some(h),
            Item::Chart(p) => self.sections.tree.section_of(p),
        }
    }

    /// Collapse or expand the focused section (a chart's own section collapses
    /// and its header takes the focus).
    pub fn toggle_focused_section(&mut self, n: usize) {
        let Some(s) = self.focused_section() else {
            return;
        };
        self.sections.toggle(s);
        if self.sections.is_collapsed(s) {
            self.set_item(Item::Header(s));
        }
        self.settle_sections(n);
    }

    /// Collapse every section (`collapse`) or expand every one.
    pub fn collapse_all(&mut self, collapse: bool, n: usize) {
        if collapse {
            let paths = self.sections.tree.sections.iter().map(|s| s.path.clone());
            self.sections.collapsed.extend(paths);
        } else {
            self.sections.collapsed.clear();
        }
        self.settle_sections(n);
    }
}

/// The first item of a row.
fn first_item(r: &Row) -> Item {
    match r {
        Row::Header(s) => Item::Header(*s),
        Row::Charts { charts, .. } => Item::Chart(charts.start),
    }
}

/// Every focusable item of `rows`, in order.
#[must_use]
pub fn items(rows: &[Row]) -> Vec<Item> {
    let mut out = Vec::new();
    for r in rows {
        match r {
            Row::Header(s) => out.push(Item::Header(*s)),
            Row::Charts { charts, .. } => out.extend(charts.clone().map(Item::Chart)),
        }
    }
    out
}
