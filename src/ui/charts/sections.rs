//! Metric sections by name prefix (W&B's panel sections, nested at every `/`):
//! `train/loss` and `train/acc` are in `train`, `eval/val/top1/x` in `eval` →
//! `eval/val` → `eval/val/top1`. The structure comes from every charted key (so it
//! does not move while a filter is typed); the counts are of the charts the filter
//! lets through.
//!
//! Which prefixes are sections: a prefix of at least two keys, unless one longer
//! prefix holds the same keys (`a` with only `a/b/x`, `a/b/y` is `a/b` alone) or it
//! holds every key (a common prefix of all of them would only repeat the titles).
//! Keys in no section are the root section, `Charts` (W&B's name), listed first;
//! it has a header only where other sections exist. With no section at all the
//! grid is the flat grid of before, with no header line.
//!
//! Order: within a section its own charts first (in key order), then its
//! sub-sections (by name); the shown charts are kept in that order, so a section's
//! charts (and its sub-sections') are one run of positions in `Charts::shown`.
//!
//! Paging: a page is filled with header lines and rows of `cols` charts in that
//! order, at most `rows` chart rows; a page that starts inside a section repeats
//! its header (`(cont.)`). Headers never end a page alone when the charts after
//! them would not fit.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use ratatui::layout::Rect;

use crate::ui::layout;

/// The root section's path: no key prefix is empty.
pub const ROOT: &str = "";
/// The root section's header (W&B calls its default section "Charts").
pub const ROOT_LABEL: &str = "Charts";
/// Fewest lines of a chart row when headers share the page with it.
const MIN_ROW_H: usize = 6;

/// One section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The prefix (`eval/val`), [`ROOT`] for the root.
    pub path: String,
    /// Nesting: 0 for the root and the top sections.
    pub depth: u16,
    /// The section it is in (None: a top section, or the root).
    pub parent: Option<usize>,
    /// Shown charts in it and in its sub-sections.
    pub count: usize,
    /// Its own shown charts: positions in `Charts::shown`.
    pub charts: Range<usize>,
    /// Index of its last sub-section (itself when it has none): a section's
    /// sub-sections follow it in the list.
    pub last: usize,
}

impl Section {
    /// Its charts and its sub-sections' charts: positions in `shown`.
    #[must_use]
    pub fn all_charts(&self) -> Range<usize> {
        self.charts.start..self.charts.start + self.count
    }
}

/// The sections of the charted keys, in display order (the root first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    pub sections: Vec<Section>,
}

/// The deepest a section nests: the `/`s after the first [`MAX_DEPTH`] of a key
/// make no more sections (the tree's walk and the work per key stay bounded for
/// any key).
pub const MAX_DEPTH: usize = 8;

/// The prefixes of `key` at each `/` (not an empty one), shortest first, at most
/// [`MAX_DEPTH`].
fn prefixes(key: &str) -> impl Iterator<Item = &str> {
    key.match_indices('/')
        .filter(|&(i, _)| i > 0)
        .take(MAX_DEPTH)
        .map(move |(i, _)| &key[..i])
}

impl Tree {
    /// The sections of `keys` (every charted key), with the charts of `shown`
    /// (indices into `keys`); and `shown` in display order.
    #[must_use]
    pub fn build(keys: &[String], shown: &[usize]) -> (Tree, Vec<usize>) {
        // Keys under each prefix.
        let mut under: BTreeMap<&str, usize> = BTreeMap::new();
        for k in keys {
            for p in prefixes(k) {
                *under.entry(p).or_default() += 1;
            }
        }
        // A prefix whose keys all share one longer prefix is that longer one.
        let mut same: BTreeSet<&str> = BTreeSet::new();
        for k in keys {
            let ps: Vec<&str> = prefixes(k).collect();
            for w in ps.windows(2) {
                if under.get(w[0]) == under.get(w[1]) {
                    same.insert(w[0]);
                }
            }
        }
        let paths: BTreeSet<&str> = under
            .iter()
            .filter(|&(p, &c)| c >= 2 && c < keys.len() && !same.contains(p))
            .map(|(p, _)| *p)
            .collect();
        // Each shown chart's section: its longest prefix that is one.
        let mut members: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &i in shown {
            let Some(k) = keys.get(i) else { continue };
            let home = prefixes(k)
                .filter(|p| paths.contains(p))
                .last()
                .unwrap_or(ROOT);
            members.entry(home).or_default().push(i);
        }
        // Sub-sections of each section (by name), the root's are the top ones.
        let mut subs: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for &p in &paths {
            let parent = prefixes(p).filter(|q| paths.contains(q)).last();
            subs.entry(parent.unwrap_or(ROOT)).or_default().push(p);
        }
        let mut tree = Tree::default();
        let mut order = Vec::with_capacity(shown.len());
        let root = Walk {
            members: &members,
            subs: &subs,
        };
        // The root (its own charts), then each top section and what is in it.
        tree.push(ROOT, None, 0, &mut order, &members);
        let tops = subs.get(ROOT).cloned().unwrap_or_default();
        for p in tops {
            root.walk(&mut tree, &mut order, p, None, 0);
        }
        // Counts: a section's own charts and its sub-sections'.
        for i in (0..tree.sections.len()).rev() {
            if let Some(p) = tree.sections[i].parent {
                tree.sections[p].count += tree.sections[i].count;
            }
        }
        (tree, order)
    }

    fn push(
        &mut self,
        path: &str,
        parent: Option<usize>,
        depth: u16,
        order: &mut Vec<usize>,
        members: &BTreeMap<&str, Vec<usize>>,
    ) -> usize {
        let own = members.get(path).map_or(&[][..], Vec::as_slice);
        let start = order.len();
        order.extend_from_slice(own);
        let at = self.sections.len();
        self.sections.push(Section {
            path: path.to_owned(),
            depth,
            parent,
            count: own.len(),
            charts: start..order.len(),
            last: at,
        });
        at
    }

    /// Whether there is a section besides the root (else the grid is flat).
    #[must_use]
    pub fn has_sections(&self) -> bool {
        self.sections.len() > 1
    }

    /// The innermost section holding the chart at `pos` in `shown`.
    #[must_use]
    pub fn section_of(&self, pos: usize) -> Option<usize> {
        self.sections.iter().position(|s| s.charts.contains(&pos))
    }

    /// Whether section `i` is out of sight: inside a collapsed one.
    fn buried(&self, i: usize, collapsed: &BTreeSet<String>) -> bool {
        let mut p = self.sections.get(i).and_then(|s| s.parent);
        while let Some(q) = p {
            if collapsed.contains(&self.sections[q].path) {
                return true;
            }
            p = self.sections[q].parent;
        }
        false
    }

    /// The outermost collapsed section above the chart at `pos` (None: in view).
    fn hiding(&self, pos: usize, collapsed: &BTreeSet<String>) -> Option<usize> {
        let mut p = self.section_of(pos);
        let mut out = None;
        while let Some(q) = p {
            if collapsed.contains(&self.sections[q].path) {
                out = Some(q);
            }
            p = self.sections[q].parent;
        }
        out
    }
}

/// The pre-order walk building the tree.
struct Walk<'a, 'k> {
    members: &'a BTreeMap<&'k str, Vec<usize>>,
    subs: &'a BTreeMap<&'k str, Vec<&'k str>>,
}

impl Walk<'_, '_> {
    fn walk(
        &self,
        tree: &mut Tree,
        order: &mut Vec<usize>,
        path: &str,
        parent: Option<usize>,
        depth: u16,
    ) {
        let at = tree.push(path, parent, depth, order, self.members);
        for &p in self.subs.get(path).map_or(&[][..], Vec::as_slice) {
            self.walk(tree, order, p, Some(at), depth.saturating_add(1));
        }
        tree.sections[at].last = tree.sections.len() - 1;
    }
}

/// One line or chart row of the grid, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    /// A section's header line.
    Header(usize),
    /// Up to `cols` charts of one section: positions in `shown`.
    Charts { sec: usize, charts: Range<usize> },
}

/// What a place on the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// A section's header; `cont`: repeated on top of a page that starts inside it.
    Header { sec: usize, cont: bool },
    /// The chart at this position in `shown`.
    Chart(usize),
}

/// What can have the focus: a header (to be toggled) or a chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Header(usize),
    Chart(usize),
}

/// One page: the header it repeats on top, and its rows (indices into the rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub cont: Option<usize>,
    pub rows: Range<usize>,
}

/// The sections of the grid, which are collapsed, and a focused header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sections {
    pub tree: Tree,
    /// Collapsed sections by path (kept when the keys or the filter change).
    pub collapsed: BTreeSet<String>,
    /// The focused header (a section index); None: the chart at `GridState::focus`.
    pub header: Option<usize>,
}

impl Sections {
    /// The grid's rows: each section in view with charts passing the filter, its
    /// header (the root's only beside other sections) and, unless collapsed, its
    /// charts in rows of `cols`.
    #[must_use]
    pub fn rows(&self, cols: u16) -> Vec<Row> {
        let cols = usize::from(cols.max(1));
        let mut out = Vec::new();
        let s = &self.tree.sections;
        let mut i = 0;
        while i < s.len() {
            let sec = &s[i];
            if sec.count == 0 {
                i = sec.last + 1;
                continue;
            }
            let header = i > 0 || self.tree.has_sections();
            if header {
                out.push(Row::Header(i));
            }
            if header && self.collapsed.contains(&sec.path) {
                i = sec.last + 1;
                continue;
            }
            let mut at = sec.charts.start;
            while at < sec.charts.end {
                let end = (at + cols).min(sec.charts.end);
                out.push(Row::Charts {
                    sec: i,
                    charts: at..end,
                });
                at = end;
            }
            i += 1;
        }
        out
    }

    /// Whether section `i` is collapsed.
    #[must_use]
    pub fn is_collapsed(&self, i: usize) -> bool {
        self.tree
            .sections
            .get(i)
            .is_some_and(|s| self.collapsed.contains(&s.path))
    }

    /// Collapse section `i`, or expand it.
    pub fn toggle(&mut self, i: usize) {
        let Some(s) = self.tree.sections.get(i) else {
            return;
        };
        if !self.collapsed.remove(&s.path) {
            self.collapsed.insert(s.path.clone());
        }
    }

    /// The header line of section `i`: `▾ train (12)`, `▸ eval (30)`, indented by
    /// its depth; on top of a page inside it, `▾ train (cont.)`. Not sanitized.
    #[must_use]
    pub fn label(&self, i: usize, cont: bool) -> String {
        let Some(s) = self.tree.sections.get(i) else {
            return String::new();
        };
        let mark = if self.collapsed.contains(&s.path) {
            '▸'
        } else {
            '▾'
        };
        let name = if s.path.is_empty() {
            ROOT_LABEL
        } else {
            &s.path
        };
        let indent = "  ".repeat(usize::from(s.depth));
        if cont {
            format!("{indent}{mark} {name} (cont.)")
        } else {
            format!("{indent}{mark} {name} ({})", s.count)
        }
    }
}

/// The pages of `rows` in a body `h` lines high, at most `grid_rows` chart rows
/// each, except that no more charts than a page of the plain grid holds
/// (`per_page`) are one page wherever their rows fit in it at the shortest a row
/// gets beside headers: the sections' headers and short last rows would
/// otherwise push a chart or two onto a page of their own.
#[must_use]
pub fn pages(rows: &[Row], h: u16, grid_rows: u16, per_page: usize) -> Vec<Page> {
    let h = usize::from(h).max(1);
    let r = usize::from(grid_rows.max(1));
    let hmin = row_min(h, r);
    let (mut headers, mut chart_rows, mut charts) = (0, 0, 0);
    for row in rows {
        match row {
            Row::Header(_) => headers += 1,
            Row::Charts { charts: c, .. } => {
                chart_rows += 1;
                charts += c.len();
            }
        }
    }
    if chart_rows > r && charts <= per_page && headers + chart_rows * hmin <= h {
        return vec![Page {
            cont: None,
            rows: 0..rows.len(),
        }];
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let start = i;
        let cont = match rows[i] {
            Row::Charts { sec, .. } => Some(sec),
            Row::Header(_) => None,
        };
        // Header lines and chart rows on the page.
        let (mut k, mut m) = (usize::from(cont.is_some()), 0);
        while i < rows.len() {
            let fits = match rows[i] {
                Row::Header(_) => {
                    // The headers up to the next chart row, and that row, go
                    // together where they could fit on a page of their own.
                    let next = rows[i..]
                        .iter()
                        .position(|r| matches!(r, Row::Charts { .. }));
                    match next {
                        Some(run) if run + hmin <= h => m < r && k + run + (m + 1) * hmin <= h,
                        _ => k + 1 + m * hmin <= h,
                    }
                }
                Row::Charts { .. } => m < r && k + (m + 1) * hmin <= h,
            };
            if !fits && i > start {
                break;
            }
            if matches!(rows[i], Row::Header(_)) {
                k += 1;
            } else {
                m += 1;
            }
            i += 1;
        }
        out.push(Page {
            cont,
            rows: start..i,
        });
    }
    out
}

/// The shortest a chart row gets beside headers: two thirds of its height in a
/// page of charts only, at least [`MIN_ROW_H`] lines (where the row has them).
fn row_min(h: usize, r: usize) -> usize {
    let nominal = (h / r).max(1);
    (nominal * 2 / 3).max(MIN_ROW_H).min(nominal)
}

/// Where each header and chart of `page` goes in `body`: headers one line, the
/// chart rows sharing the rest (as tall as in a page of `grid_rows` rows, taller
/// where fewer rows share it), `cols` charts a row (a shorter row's charts
/// sharing its width).
#[must_use]
pub fn place(
    page: &Page,
    rows: &[Row],
    body: Rect,
    cols: u16,
    grid_rows: u16,
) -> Vec<(Rect, Slot)> {
    let h = usize::from(body.height);
    let r = usize::from(grid_rows.max(1));
    // The only page: fewer chart rows than the grid has fill it, as fewer charts
    // than a page holds fill the plain grid (a later page of several keeps the
    // rows' height, so paging does not resize them).
    let only = page.rows.start == 0 && page.rows.end >= rows.len() && page.cont.is_none();
    let Some(rows) = rows.get(page.rows.clone()) else {
        return Vec::new();
    };
    let k = usize::from(page.cont.is_some())
        + rows.iter().filter(|r| matches!(r, Row::Header(_))).count();
    let m = rows.len() + usize::from(page.cont.is_some()) - k;
    let avail = h.saturating_sub(k);
    let share = if only && m < r {
        m.max(1)
    } else if m > r {
        // The only page, holding more rows than the grid ([`pages`]): they share it.
        m
    } else if avail / r >= row_min(h.max(1), r) {
        r
    } else {
        m.max(1)
    };
    let mut out = Vec::with_capacity(rows.len() * usize::from(cols.max(1)) + 1);
    let mut y = body.y;
    let line = |y: u16| {
        Rect::new(
            body.x,
            y,
            body.width,
            1.min(body.bottom().saturating_sub(y)),
        )
    };
    if let Some(sec) = page.cont {
        out.push((line(y), Slot::Header { sec, cont: true }));
        y = y.saturating_add(1);
    }
    let mut j = 0;
    for row in rows {
        match row {
            Row::Header(sec) => {
                out.push((
                    line(y),
                    Slot::Header {
                        sec: *sec,
                        cont: false,
                    },
                ));
                y = y.saturating_add(1);
            }
            Row::Charts { charts, .. } => {
                let rh = avail * (j + 1) / share - avail * j / share;
                let rh = u16::try_from(rh).unwrap_or(u16::MAX);
                let area = Rect::new(
                    body.x,
                    y,
                    body.width,
                    rh.min(body.bottom().saturating_sub(y)),
                );
                // A row short of `cols` charts (a small section, a section's last
                // row) has them share its width, as the plain grid's last row
                // does, rather than leave the rest of it blank.
                let n = u16::try_from(charts.len())
                    .unwrap_or(cols)
                    .clamp(1, cols.max(1));
                for (c, pos) in charts.clone().enumerate() {
                    out.push((layout::grid_cell(area, n, 1, c), Slot::Chart(pos)));
                }
                y = y.saturating_add(rh);
                j += 1;
            }
        }
    }
    out
}

mod glue;
mod nav;
pub use glue::View;
pub use nav::items;

#[cfg(test)]
mod tests;
