//! Metrics grid paging: rows × cols from the terminal size (or the user's `c`/`r`
//! digit), focus as an index into the shown charts; the page follows the focus.
//! Also each chart's y scale (`y`: linear → log → heatmap), kept here in the app so
//! it survives paging, filtering and redraws.

mod keys;
pub(crate) mod view;

use std::collections::BTreeMap;

use ratatui::layout::Rect;

use crate::ui::layout;
use crate::ui::system::{SysChart, Unit};
pub use crate::ui::widget::guides::Guides;
pub use keys::Pending;
pub(crate) use keys::YTarget;

/// How a chart draws its values (`y` cycles through the ones a chart offers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum YScale {
    #[default]
    Linear,
    Log,
    /// One band per series, coloured by value: percentage charts of several series.
    Heatmap,
}

impl YScale {
    /// The next scale: linear → log → heatmap → linear, skipping heatmap where the
    /// chart does not offer it.
    #[must_use]
    pub fn next(self, heatmap: bool) -> YScale {
        match self {
            YScale::Linear => YScale::Log,
            YScale::Log if heatmap => YScale::Heatmap,
            YScale::Log | YScale::Heatmap => YScale::Linear,
        }
    }
}

/// Whether a system chart offers the heatmap: a percentage (0–100) of several
/// series (every core's CPU, every GPU's utilisation, ...).
#[must_use]
pub fn offers_heatmap(chart: &SysChart) -> bool {
    chart.unit == Unit::Percent && chart.series.len() >= 2
}

/// The y scale of each chart that is not linear: metric charts by key, system
/// charts by title and unit (the same chart in the live grid and the sidebar).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct YScales {
    metrics: BTreeMap<String, YScale>,
    system: BTreeMap<String, YScale>,
}

fn sys_id(chart: &SysChart) -> String {
    format!("{}\u{1f}{}", chart.title, chart.unit.suffix())
}

fn set(map: &mut BTreeMap<String, YScale>, id: String, s: YScale) {
    if s == YScale::Linear {
        map.remove(&id);
    } else {
        map.insert(id, s);
    }
}

impl YScales {
    /// The scale of the metric chart of `key` (linear or log).
    #[must_use]
    pub fn metric(&self, key: &str) -> YScale {
        self.metrics.get(key).copied().unwrap_or_default()
    }

    /// Step the metric chart of `key` to its next scale (metric charts offer no
    /// heatmap: their series are runs, not devices); the new scale.
    pub fn cycle_metric(&mut self, key: &str) -> YScale {
        let s = self.metric(key).next(false);
        set(&mut self.metrics, key.to_owned(), s);
        s
    }

    /// The scale a system chart is drawn with (a heatmap only where it is offered).
    #[must_use]
    pub fn system(&self, chart: &SysChart) -> YScale {
        match self.system.get(&sys_id(chart)).copied().unwrap_or_default() {
            YScale::Heatmap if !offers_heatmap(chart) => YScale::Linear,
            s => s,
        }
    }

    /// Step a system chart to its next scale; the new scale.
    pub fn cycle_system(&mut self, chart: &SysChart) -> YScale {
        let s = self.system(chart).next(offers_heatmap(chart));
        set(&mut self.system, sys_id(chart), s);
        s
    }

    /// Metric charts that are not linear, by key.
    #[must_use]
    pub fn metric_entries(&self) -> BTreeMap<String, YScale> {
        self.metrics.clone()
    }

    /// System charts that are not linear, by `"<title>|<unit>"` (the settings
    /// file's spelling).
    #[must_use]
    pub fn system_entries(&self) -> BTreeMap<String, YScale> {
        self.system
            .iter()
            .map(|(id, s)| (id.replacen('\u{1f}', "|", 1), *s))
            .collect()
    }

    /// Set the metric chart of `key` to `s`.
    pub fn set_metric(&mut self, key: &str, s: YScale) {
        set(&mut self.metrics, key.to_owned(), s);
    }

    /// Set the system chart named `"<title>|<unit>"` to `s` (a name without `|`
    /// names no chart and is ignored).
    pub fn set_system_named(&mut self, name: &str, s: YScale) {
        if let Some((title, unit)) = name.rsplit_once('|') {
            set(&mut self.system, format!("{title}\u{1f}{unit}"), s);
        }
    }

    /// Every chart back to linear.
    pub fn clear(&mut self) {
        self.metrics.clear();
        self.system.clear();
    }
}

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
    /// Each chart's y scale.
    pub scales: YScales,
    /// Guides at the y ticks of every chart.
    pub guides: Guides,
    /// The chart area below the grid's header line (from the last layout).
    pub body: Rect,
    /// The charts' sections by name prefix, which are collapsed, a focused header.
    pub sections: crate::ui::charts::sections::Sections,
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
        self.body = layout::grid_body(grid_area);
    }

    /// Columns and rows drawn for `n` shown charts: with fewer charts than a page
    /// holds, the shape that fills the grid (rows as the columns need with the
    /// columns set by `c`, as the page has with the rows set by `r`).
    #[must_use]
    pub fn shape(&self, n: usize) -> (u16, u16) {
        let (c, r) = (self.cols.max(1), self.rows.max(1));
        if n >= self.per_page() || self.rows_setting.is_some() {
            return (c, r);
        }
        let n = u16::try_from(n).unwrap_or(u16::MAX).max(1);
        if self.cols_setting.is_some() {
            return (c, n.div_ceil(c).min(r));
        }
        let fallback = (c.min(n), n.div_ceil(c.min(n)).min(r));
        layout::fill_dims(self.body, n).unwrap_or(fallback)
    }

    /// The cell of chart `i` of the page (of `n` shown) in the grid's `body`: in
    /// the [`GridState::shape`] for `n`, where the charts of a last row that has
    /// fewer of them than auto columns share its whole width.
    #[must_use]
    pub fn cell(&self, body: Rect, n: usize, i: usize) -> Rect {
        let (c, r) = self.shape(n);
        let full = usize::from(c) * usize::from(r - 1);
        let last_row = n.min(self.per_page()).saturating_sub(full);
        if self.cols_setting.is_none() && i >= full && last_row < usize::from(c) {
            let row = layout::grid_cell(body, 1, r, usize::from(r - 1));
            let k = u16::try_from(last_row).unwrap_or(c);
            return layout::grid_cell(row, k, 1, i - full);
        }
        layout::grid_cell(body, c, r, i)
    }

    #[must_use]
    pub fn per_page(&self) -> usize {
        usize::from(self.cols.max(1)) * usize::from(self.rows.max(1))
    }

    /// The focused page (of a sectioned grid: the page showing the focused item).
    #[must_use]
    pub fn page(&self) -> usize {
        if self.sectioned() {
            let rows = self.section_rows();
            return self.section_page(&rows, &self.section_pages(&rows));
        }
        self.focus / self.per_page()
    }

    /// Pages of `n` shown charts (of a sectioned grid: of its headers and rows).
    #[must_use]
    pub fn pages(&self, n: usize) -> usize {
        if self.sectioned() {
            return self.section_pages(&self.section_rows()).len().max(1);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::system::{group, SysChart};

    fn chart(keys: &[&str]) -> SysChart {
        let mut charts = group(keys.iter().copied());
        assert_eq!(charts.len(), 1, "{keys:?}");
        charts.remove(0)
    }

    /// The grid of a `w`×`h` chart area (below its header line).
    fn grid(w: u16, h: u16, cols: Option<u16>, rows: Option<u16>) -> GridState {
        let mut g = GridState {
            cols_setting: cols,
            rows_setting: rows,
            ..GridState::default()
        };
        g.relayout(Rect::new(0, 0, w, h + 1));
        g
    }

    #[test]
    fn a_few_charts_fill_the_grid() {
        // The grid areas of 80×24 to 200×60 screens, a tall and a low one.
        for (w, h) in [
            (52, 22),
            (78, 37),
            (108, 57),
            (160, 43),
            (60, 80),
            (160, 20),
        ] {
            for n in 1..=4 {
                let g = grid(w, h, None, None);
                if n >= g.per_page() {
                    continue;
                }
                let cells: Vec<Rect> = (0..n).map(|i| g.cell(g.body, n, i)).collect();
                // The cells tile the whole area: none overlap, none is left blank.
                let area: u32 = cells.iter().map(|c| c.area()).sum();
                assert_eq!(area, g.body.area(), "{w}x{h}, {n}: {cells:?}");
                for (i, a) in cells.iter().enumerate() {
                    assert!(cells[i + 1..].iter().all(|b| !a.intersects(*b)));
                }
            }
        }
        // Three charts: one column on a tall area, one row on a low one, else the
        // shape closest to a chart's usual proportions.
        assert_eq!(grid(60, 80, None, None).shape(3), (1, 3));
        assert_eq!(grid(160, 20, None, None).shape(3), (3, 1));
        assert_eq!(grid(78, 37, None, None).shape(3), (2, 2));
        // Two rows of two, the last chart alone in its row taking all of it.
        let g = grid(78, 37, None, None);
        assert_eq!(g.cell(g.body, 3, 2), Rect::new(0, 19, 78, 19));
    }

    #[test]
    fn a_small_terminal_pages_more_than_one_chart_at_a_time() {
        // 80×24: the grid's 52×22 is two charts of 26×11 across and down.
        let g = grid(52, 22, None, None);
        assert_eq!((g.cols, g.rows), (2, 2));
        // With the console: 52×14 holds one row of 9, two columns of 24.
        let g = grid(52, 14, None, None);
        assert_eq!((g.cols, g.rows), (2, 1));
        // 100×30 with the console: 68×19 is two rows of at least 9.
        let g = grid(68, 19, None, None);
        assert_eq!((g.cols, g.rows), (2, 2));
        // Narrower or lower than two such charts: one.
        let g = grid(47, 17, None, None);
        assert_eq!((g.cols, g.rows), (1, 1));
        // Where the target size gives more, the target size rules.
        let g = grid(108, 57, None, None);
        assert_eq!((g.cols, g.rows), (3, 4));
    }

    #[test]
    fn a_columns_or_rows_setting_still_wins() {
        // `c2`: two columns, rows as the charts need, the last row not stretched.
        let g = grid(108, 57, Some(2), None);
        assert_eq!(g.shape(3), (2, 2));
        assert_eq!(g.cell(g.body, 3, 2).width, 54);
        // `r2`: two rows of the page's columns.
        let g = grid(108, 57, None, Some(2));
        assert_eq!(g.shape(3), (g.cols, 2));
        // Both: as set.
        let g = grid(108, 57, Some(1), Some(3));
        assert_eq!(g.shape(2), (1, 3));
    }

    #[test]
    fn heatmap_only_for_percentages_of_several_series() {
        assert!(offers_heatmap(&chart(&[
            "cpu.0.cpu_percent",
            "cpu.1.cpu_percent"
        ])));
        assert!(offers_heatmap(&chart(&["gpu.0.gpu", "gpu.1.gpu"])));
        assert!(offers_heatmap(&chart(&[
            "gpu.0.memoryAllocated",
            "gpu.1.memoryAllocated"
        ])));
        // one series, or not a percentage
        assert!(!offers_heatmap(&chart(&["gpu.0.gpu"])));
        assert!(!offers_heatmap(&chart(&["gpu.0.temp", "gpu.1.temp"])));
    }

    #[test]
    fn y_cycles_through_the_scales_a_chart_offers() {
        let mut s = YScales::default();
        let cores = chart(&["cpu.0.cpu_percent", "cpu.1.cpu_percent"]);
        let temps = chart(&["gpu.0.temp", "gpu.1.temp"]);
        let seen: Vec<YScale> = (0..4).map(|_| s.cycle_system(&cores)).collect();
        assert_eq!(
            seen,
            [YScale::Log, YScale::Heatmap, YScale::Linear, YScale::Log]
        );
        let seen: Vec<YScale> = (0..3).map(|_| s.cycle_system(&temps)).collect();
        assert_eq!(seen, [YScale::Log, YScale::Linear, YScale::Log]);
        // each chart keeps its own
        assert_eq!(s.system(&cores), YScale::Log);
        assert_eq!(s.system(&temps), YScale::Log);
        // metric charts: linear ↔ log, by key
        assert_eq!(s.cycle_metric("loss"), YScale::Log);
        assert_eq!(s.cycle_metric("loss"), YScale::Linear);
        assert_eq!(s.metric("acc"), YScale::Linear);
        s.clear();
        assert_eq!(s.system(&cores), YScale::Linear);
        assert_eq!(s, YScales::default());
    }

    #[test]
    fn g_cycles_the_guides_off_dots_lines() {
        let mut g = GridState::default().guides;
        assert_eq!(g, Guides::Off);
        let seen: Vec<Guides> = (0..4)
            .map(|_| {
                g = g.next();
                g
            })
            .collect();
        assert_eq!(
            seen,
            [Guides::Dots, Guides::Lines, Guides::Off, Guides::Dots]
        );
    }

    #[test]
    fn a_stored_heatmap_the_chart_no_longer_offers_draws_linear() {
        let mut s = YScales::default();
        let cores = chart(&["cpu.0.cpu_percent", "cpu.1.cpu_percent"]);
        s.cycle_system(&cores);
        s.cycle_system(&cores);
        assert_eq!(s.system(&cores), YScale::Heatmap);
        // The same chart (title and unit) with one series left (a filtered rebuild).
        let mut one = cores.clone();
        one.series.truncate(1);
        assert_eq!(s.system(&one), YScale::Linear);
        assert_eq!(s.cycle_system(&one), YScale::Log);
    }
}
