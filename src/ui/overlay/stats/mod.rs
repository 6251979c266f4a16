//! The statistics table (`T`): every charted metric with its last value, minimum
//! and the step of it, maximum and the step of it, mean and count, exact over the
//! whole history (the store keeps them as points arrive, before any compaction),
//! one column group per drawn run (the main one, then those compared with it; the
//! segments of a resumed run are one run, their statistics joined).
//! `←`/`→` choose the sort column (the view scrolls sideways to keep it shown),
//! `tab`/`shift+→` and `backtab`/`shift+←` move it to the same column of the next
//! or previous run, `r` reverses it, `/` filters the metrics by name (regex, or
//! glob with tab), the arrows and page keys move the selection.

pub(crate) mod view;

use std::path::PathBuf;
use std::sync::Arc;

use crate::store::series::Stats;
use crate::store::{stitch, Run};
use crate::ui::action::Action;
use crate::ui::filter::FilterState;
use crate::ui::overlay::Outcome;
use crate::ui::workspace::runs::Runs;
use crate::ui::{Effect, FilterTarget};

/// Its keys' lines in the help.
pub(crate) const HELP: &[(&[Action], &str)] = &[
    (&[Action::FocusUp, Action::FocusDown], "Select a metric"),
    (
        &[Action::PrevPage, Action::NextPage],
        "Select a page up / down",
    ),
    (
        &[Action::FirstPage, Action::LastPage],
        "Select the first / last",
    ),
    (
        &[Action::FocusLeft, Action::FocusRight],
        "Sort by another column",
    ),
    (
        &[Action::CyclePaneFocus, Action::CyclePaneFocusBack],
        "Same column of the next / previous run",
    ),
    (&[Action::StartFilter], "Filter the metrics by name"),
    (&[Action::ClearFilters], "Clear the filter"),
    (&[Action::Back, Action::ToggleStats], "Close the table"),
];

/// The columns of one run's group, in order (after the metric name).
pub const FIELDS: [&str; 7] = ["last", "min", "@step", "max", "@step", "mean", "count"];

/// Lines of the table's box that are not rows: the border (2), the run names and
/// the column titles (2), the selected row's full values (2) and the filter (1).
pub const CHROME_ROWS: u16 = 7;

/// The table's choices, kept while it is closed.
#[derive(Debug, Clone, Default)]
pub struct StatsTable {
    /// Sort column: 0 the metric name, then `1 + run * FIELDS.len() + field`.
    pub sort: usize,
    /// Descending instead of ascending (rows without a value stay last).
    pub reverse: bool,
    /// Filter of the metric names (`/`).
    pub filter: FilterState,
    /// The rows last made and what they were made from: a key that moves the
    /// selection, and each frame, reuse them (a run of 100,000 metrics took a
    /// third of a second a key to make them again).
    cache: std::cell::RefCell<Option<(u64, Arc<StatsRows>)>>,
}

/// The table's rows, and their cells' text once drawn (kept with them).
#[derive(Debug, Default)]
pub struct StatsRows {
    rows: Vec<StatsRow>,
    text: std::sync::OnceLock<Vec<Vec<[String; 7]>>>,
}

impl std::ops::Deref for StatsRows {
    type Target = Vec<StatsRow>;
    fn deref(&self) -> &Vec<StatsRow> {
        &self.rows
    }
}

impl StatsRows {
    /// Every cell's text, made by `make` the first time.
    pub fn text(&self, make: impl FnOnce() -> Vec<Vec<[String; 7]>>) -> &[Vec<[String; 7]>] {
        self.text.get_or_init(make)
    }
}

/// What the rows are made of, as a hash: the metrics, each drawn run (by its
/// place in memory and the records it has read), the order and the filter.
fn signature(table: &StatsTable, groups: &[Group<'_>], keys: &[String]) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    keys.hash(&mut h);
    for g in groups {
        for (at, r) in &g.parts {
            (*at, std::ptr::from_ref::<Run>(r) as usize, r.counts.total).hash(&mut h);
            r.damage.bad_records.hash(&mut h);
            // A segment's cut, which decides which of its points count.
            r.stitch.cut.map(f64::to_bits).hash(&mut h);
        }
        h.write_u8(0xff);
    }
    (table.sort, table.reverse).hash(&mut h);
    format!("{:?}", table.filter.compiled).hash(&mut h);
    h.finish()
}

/// Where the open table is (`Overlay::Stats`); opening starts at the top.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsCursor {
    /// The selected row (of the filtered, sorted rows).
    pub sel: usize,
    /// The first row shown.
    pub top: usize,
}

/// One row: a metric and its statistics in each drawn run (None: not logged there).
#[derive(Debug, Clone, PartialEq)]
pub struct StatsRow {
    pub key: String,
    pub cells: Vec<Option<Stats>>,
}

/// A column group's run: its legend text and colour index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsRun {
    pub label: String,
    pub color: usize,
}

/// The value a field column sorts by (None or NaN: sorted last).
#[must_use]
pub fn field_value(s: &Stats, field: usize) -> Option<f64> {
    match field {
        0 => s.last.map(|p| p.1),
        1 => s.min.map(|p| p.1),
        2 => s.min.map(|p| p.0),
        3 => s.max.map(|p| p.1),
        4 => s.max.map(|p| p.0),
        5 => s.mean,
        _ => Some(s.count as f64),
    }
    .filter(|v| !v.is_nan())
}

/// The sort column moved to the same field of the next run (`forward`) or the
/// previous one, of `runs` drawn. The name column counts as the first run's: from
/// it, forward is the second run's `last`, and back from the first run is the name.
#[must_use]
pub fn sort_by_other_run(sort: usize, runs: usize, forward: bool) -> usize {
    let n = FIELDS.len();
    if sort == 0 {
        return if forward && runs > 1 { 1 + n } else { 0 };
    }
    let (run, field) = ((sort - 1) / n, (sort - 1) % n);
    match (forward, run) {
        (true, r) if r + 1 < runs => 1 + (r + 1) * n + field,
        (true, _) => sort,
        (false, 0) => 0,
        (false, r) => 1 + (r - 1) * n + field,
    }
}

/// Rows shown at a screen of `height` lines (the status line is under the box).
#[must_use]
pub fn body_rows(height: u16) -> usize {
    usize::from(height.saturating_sub(1 + CHROME_ROWS))
}

/// One column group: its run, and the runs read for it (a resumed run's segments,
/// in start order).
struct Group<'a> {
    run: StatsRun,
    key: Option<&'a str>,
    parts: Vec<(usize, &'a Run)>,
}

/// What the table sees: the runs drawn (the main one, then the compared ones).
pub struct Drawn<'a> {
    pub main: &'a Run,
    /// The main run's name, outside a workspace.
    pub label: String,
    /// The main run's directory.
    pub dir: Option<PathBuf>,
    pub runs: &'a Runs,
}

impl Drawn<'_> {
    /// The column groups: the main run, then the compared ones (in a workspace with
    /// their own colours, as the charts draw them); the segments of a resumed run
    /// join the group of the first one drawn.
    fn groups(&self) -> Vec<Group<'_>> {
        let ws = self.runs.workspace.as_deref();
        let main = self.runs.main_tag.as_ref().filter(|_| ws.is_some());
        let drawn = std::iter::once((
            main,
            self.dir.as_deref(),
            self.main,
            StatsRun {
                label: main.map_or_else(|| self.label.clone(), |t| t.label.clone()),
                color: self.runs.main_color(),
            },
        ))
        .chain(self.runs.compare.iter().map(|c| {
            let t = c.ws.as_ref().filter(|_| ws.is_some());
            let run = StatsRun {
                label: c.label.clone(),
                color: self.runs.compared_color(c),
            };
            (t, Some(c.dir.as_path()), &c.run, run)
        }));
        let mut groups: Vec<Group<'_>> = Vec::new();
        for (tag, dir, run, sr) in drawn {
            let key = tag.filter(|t| t.segments > 1).map(|t| t.key.as_str());
            // Its place among its run's segments (start order).
            let at = key
                .and_then(|k| ws?.run(k))
                .and_then(|r| r.segments.iter().position(|s| Some(s.dir.as_path()) == dir))
                .unwrap_or(0);
            match groups.iter_mut().find(|g| key.is_some() && g.key == key) {
                Some(g) => g.parts.push((at, run)),
                None => groups.push(Group {
                    run: sr,
                    key,
                    parts: vec![(at, run)],
                }),
            }
        }
        for g in &mut groups {
            g.parts.sort_by_key(|p| p.0);
        }
        groups
    }

    /// The drawn runs, one column group each (see [`Drawn::groups`]).
    #[must_use]
    pub fn runs(&self) -> Vec<StatsRun> {
        self.groups().into_iter().map(|g| g.run).collect()
    }
}

/// What the table's keys see and change beyond its cursor.
pub(crate) struct StatsCx<'a> {
    pub table: &'a mut StatsTable,
    /// Rows passing the filter, and column groups (runs).
    pub rows: usize,
    pub runs: usize,
    /// The screen's height.
    pub height: u16,
    /// Set to the table's filter when `/` starts typing into it.
    pub filter_target: &'a mut Option<FilterTarget>,
}

impl StatsTable {
    /// The table's rows: the charted metrics (`keys`) passing the filter, sorted;
    /// made again only when what they are made of changed.
    #[must_use]
    pub fn rows(&self, drawn: &Drawn<'_>, keys: &[String]) -> Arc<StatsRows> {
        let groups = drawn.groups();
        let sig = signature(self, &groups, keys);
        if let Some((s, rows)) = self.cache.borrow().as_ref() {
            if *s == sig {
                return Arc::clone(rows);
            }
        }
        let rows = Arc::new(StatsRows {
            rows: self.make_rows(&groups, keys),
            text: std::sync::OnceLock::new(),
        });
        *self.cache.borrow_mut() = Some((sig, Arc::clone(&rows)));
        rows
    }

    /// How many metrics pass the filter (the rows' count, without making them).
    #[must_use]
    pub fn row_count(&self, keys: &[String]) -> usize {
        keys.iter().filter(|k| self.filter.matches(k)).count()
    }

    fn make_rows(&self, groups: &[Group<'_>], keys: &[String]) -> Vec<StatsRow> {
        let mut rows: Vec<StatsRow> = keys
            .iter()
            .filter(|k| self.filter.matches(k))
            .map(|k| StatsRow {
                key: k.clone(),
                cells: groups
                    .iter()
                    .map(|g| stitch::stats(g.parts.iter().filter_map(|(_, r)| r.stats_of(k))))
                    .collect(),
            })
            .collect();
        if self.sort == 0 {
            if self.reverse {
                rows.reverse();
            }
            return rows;
        }
        let (run, field) = (
            (self.sort - 1) / FIELDS.len(),
            (self.sort - 1) % FIELDS.len(),
        );
        let val = |r: &StatsRow| {
            r.cells
                .get(run)
                .copied()
                .flatten()
                .and_then(|s| field_value(&s, field))
        };
        // Stable: equal values keep the names' order.
        rows.sort_by(|a, b| match (val(a), val(b)) {
            (Some(x), Some(y)) if self.reverse => y.total_cmp(&x),
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        rows
    }

    /// `[shown/all]` metrics of the table (the status line's filter count).
    #[must_use]
    pub fn count(&self, keys: &[String]) -> String {
        format!("[{}/{}]", self.row_count(keys), keys.len())
    }
}

impl StatsCursor {
    /// A key while the table is open.
    pub(crate) fn act(&mut self, a: Action, cx: StatsCx<'_>) -> Outcome {
        let page = body_rows(cx.height).max(1);
        let last = cx.rows.saturating_sub(1);
        let sel = self.sel.min(last);
        let columns = 1 + FIELDS.len() * cx.runs;
        let t = cx.table;
        match a {
            Action::Quit => return Outcome::Stay(Effect::QUIT),
            Action::Back | Action::ToggleStats => return Outcome::Close,
            Action::FocusUp => self.sel = sel.saturating_sub(1),
            Action::FocusDown => self.sel = (sel + 1).min(last),
            Action::PrevPage => self.sel = sel.saturating_sub(page),
            Action::NextPage => self.sel = (sel + page).min(last),
            Action::FirstPage => self.sel = 0,
            Action::LastPage => self.sel = last,
            // A new order shows its top (the largest first, sorted descending).
            Action::FocusLeft => {
                t.sort = t.sort.saturating_sub(1);
                self.refiltered();
            }
            Action::FocusRight => {
                t.sort = (t.sort + 1).min(columns - 1);
                self.refiltered();
            }
            Action::CyclePaneFocus | Action::CyclePaneFocusBack => {
                let forward = a == Action::CyclePaneFocus;
                let sort = sort_by_other_run(t.sort, cx.runs, forward);
                if sort == t.sort {
                    return Outcome::Stay(Effect::NONE);
                }
                t.sort = sort;
                self.refiltered();
            }
            Action::ReverseSort => {
                t.reverse = !t.reverse;
                self.refiltered();
            }
            Action::StartFilter => {
                t.filter.start();
                *cx.filter_target = Some(FilterTarget::Stats);
            }
            Action::ClearFilters => {
                t.filter.clear();
                self.sel = 0;
            }
            _ => return Outcome::Stay(Effect::NONE),
        }
        self.follow(page);
        Outcome::Stay(Effect::REDRAW)
    }

    /// Scroll so the selected row is among the `page` rows shown.
    pub fn follow(&mut self, page: usize) {
        let page = page.max(1);
        if self.sel < self.top {
            self.top = self.sel;
        } else if self.sel >= self.top + page {
            self.top = self.sel + 1 - page;
        }
    }

    /// A changed filter or order starts again from the first row.
    pub(in crate::ui) fn refiltered(&mut self) {
        self.sel = 0;
        self.top = 0;
    }
}
