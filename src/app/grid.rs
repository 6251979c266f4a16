//! Metrics grid paging: rows × cols from the terminal size (or the user's `c`/`r`
//! digit), focus as an index into the shown charts; the page follows the focus.

use ratatui::layout::Rect;

use crate::app::layout;

/// Grid state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GridState {
    /// User settings from `c<digit>` / `r<digit>` (None = auto).
    pub cols_setting: Option<u16>,
    pub rows_setting: Option<u16>,
    /// Current columns and rows (from the last layout).
    pub cols: u16,
    pub rows: u16,
    /// Focused chart: index into the shown (filtered) charts.
    pub focus: usize,
}

impl GridState {
    /// Recompute rows × cols for the grid area.
    pub fn relayout(&mut self, grid_area: Rect) {
        let (c, r) = layout::grid_dims(
            layout::grid_body(grid_area),
            self.cols_setting,
            self.rows_setting,
        );
        self.cols = c;
        self.rows = r;
    }

    /// Columns and rows drawn for `n` shown charts: with fewer charts than a page
    /// holds, rows grow taller (up to twice), and fewer charts than a row holds share
    /// its whole width.
    #[must_use]
    pub fn shape(&self, n: usize) -> (u16, u16) {
        let (c, r) = (self.cols.max(1), self.rows.max(1));
        if n >= self.per_page() || self.rows_setting.is_some() {
            return (c, r);
        }
        let c = if self.cols_setting.is_none() {
            c.min(u16::try_from(n).unwrap_or(c)).max(1)
        } else {
            c
        };
        let need = u16::try_from(n.div_ceil(usize::from(c))).unwrap_or(r);
        (c, need.max(r.div_ceil(2)).min(r))
    }

    #[must_use]
    pub fn per_page(&self) -> usize {
        usize::from(self.cols.max(1)) * usize::from(self.rows.max(1))
    }

    #[must_use]
    pub fn page(&self) -> usize {
        self.focus / self.per_page()
    }

    #[must_use]
    pub fn pages(&self, n: usize) -> usize {
        n.div_ceil(self.per_page()).max(1)
    }

    /// First shown index on the focused page.
    #[must_use]
    pub fn page_start(&self) -> usize {
        self.page() * self.per_page()
    }

    pub fn clamp(&mut self, n: usize) {
        self.focus = self.focus.min(n.saturating_sub(1));
    }

    /// Move focus by `d` charts (clamped).
    pub fn step(&mut self, d: isize, n: usize) {
        let f = self.focus.saturating_add_signed(d);
        self.focus = if d < 0 && self.focus < d.unsigned_abs() {
            0
        } else {
            f.min(n.saturating_sub(1))
        };
    }

    /// Move to the same slot of page `p` (clamped to the last chart).
    pub fn goto_page(&mut self, p: usize, n: usize) {
        let p = p.min(self.pages(n) - 1);
        let slot = self.focus % self.per_page();
        self.focus = (p * self.per_page() + slot).min(n.saturating_sub(1));
    }
}
