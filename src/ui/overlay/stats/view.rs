//! The statistics table (`T`): a box over the whole screen, one row per metric and
//! one column group per drawn run (headed by the run's name in its colour), the
//! sort column marked ▲/▼, the selected row's full values on two lines under the
//! rows and the filter on the last line.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use unicode_width::UnicodeWidthStr;

use crate::store::series::Stats;
use crate::text::sanitize;
use crate::ui::action::Action;
use crate::ui::keymap::{hint_line, Mode};
use crate::ui::overlay::stats::{StatsRow, FIELDS};
use crate::ui::overlay::{self, Kind};
use crate::ui::theme::Theme;
use crate::ui::widget::fit::{self, fit, put};
use crate::ui::widget::format;
use crate::ui::App;

/// Widest a number column grows (6 significant digits, a sign, an exponent).
const MAX_CELL: usize = 11;

/// A y value: 6 significant digits.
fn num(v: f64) -> String {
    format::compact_digits(v, 6)
}

/// A step: the integer it almost always is, else 6 significant digits.
fn step(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        let i = x as i64;
        i.to_string()
    } else {
        num(x)
    }
}

/// The seven cells of one run's statistics (empty where it did not log the key).
/// A count with NaN or ±inf among its points is marked `*`.
fn cells(s: Option<&Stats>) -> [String; 7] {
    let Some(s) = s else {
        return Default::default();
    };
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let mark = if s.non_finite > 0 { "*" } else { "" };
    [
        opt(s.last.map(|p| num(p.1))),
        opt(s.min.map(|p| num(p.1))),
        opt(s.min.map(|p| step(p.0))),
        opt(s.max.map(|p| num(p.1))),
        opt(s.max.map(|p| step(p.0))),
        opt(s.mean.map(num)),
        format!("{}{mark}", s.count),
    ]
}

/// The selected row's full values in the sort column's run (the main run when
/// sorted by name), on two lines.
fn detail(row: &StatsRow, run: usize, label: &str) -> [String; 2] {
    let key = sanitize(&row.key);
    let Some(s) = row.cells.get(run).copied().flatten() else {
        return [format!("{key} · {label}: not logged"), String::new()];
    };
    let full = |v: Option<f64>| v.map_or_else(|| "-".into(), exact_or_near);
    // An integer past 2^53 as logged where the run kept it, else its double.
    let pt = |p: Option<(f64, f64)>, exact: Option<i128>| {
        p.map_or_else(
            || "-".into(),
            |p| {
                let v = exact.map_or_else(|| exact_or_near(p.1), |e| e.to_string());
                format!("{v} @ {}", p.0)
            },
        )
    };
    let mut first = format!(
        "{key} · {label}: last {} · mean {} · count {}",
        full(s.last.map(|p| p.1)),
        full(s.mean),
        s.count,
    );
    if s.non_finite > 0 {
        first.push_str(&format!(" ({} NaN/inf)", s.non_finite));
    }
    [
        first,
        format!(
            "  min {} · max {}",
            pt(s.min, s.min_exact),
            pt(s.max, s.max_exact)
        ),
    ]
}

/// A value written in full: past 2^53 a double no longer holds every integer, so
/// the digits written are the nearest double's, marked `≈` (a logged
/// 9007199254741011 is held as …012).
fn exact_or_near(v: f64) -> String {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if v.is_finite() && v != 0.0 && !(1e-5..1e17).contains(&v.abs()) {
        // The shortest digits that read back as this double, with an exponent:
        // `1.7976931348623157e308`, not 309 digits; `5e-324`, not 324 places.
        format!("{v:e}")
    } else if v.is_finite() && v.abs() > EXACT {
        format!("≈{v}")
    } else {
        v.to_string()
    }
}

/// Where the columns go: each field's width, the fields drawn, one run group's
/// width, the metric names', and the run groups drawn.
struct Grid {
    widths: [usize; 7],
    /// The fields drawn in each group, in order (all of them when the runs fit).
    fields: Vec<usize>,
    group_w: usize,
    key_w: usize,
    /// The groups that fit, from the one that keeps the sort column's run in view.
    shown: Range<usize>,
    /// Fields left out because one group does not fit (marked `▶`).
    cut: bool,
}

/// The fields of a run's group, from all of them to the fewest: when the runs do
/// not fit side by side, the steps of the extremes go first (the selected row's
/// line under the table still gives them), then the count, where that brings
/// more runs into view.
const FIELD_SETS: [&[usize]; 3] = [&[0, 1, 2, 3, 4, 5, 6], &[0, 1, 3, 5, 6], &[0, 1, 3, 5]];

/// Size the columns by their contents (`text`: every row's cells per run) in `w`
/// columns, with the sort column's group among those shown and its field drawn.
fn grid(text: &[Vec<[String; 7]>], rows: &[StatsRow], w: usize, sort: usize, runs: usize) -> Grid {
    let widths: [usize; 7] = std::array::from_fn(|f| {
        text.iter()
            .flat_map(|r| r.iter().map(|c| c[f].width()))
            .chain([FIELDS[f].width() + 1])
            .max()
            .unwrap_or(5)
            .min(MAX_CELL)
    });
    let names_w = rows
        .iter()
        .map(|r| sanitize(&r.key).width())
        .chain(["metric".width()])
        .max()
        .unwrap_or(6)
        + 2;
    let sort_field = (sort > 0).then(|| (sort - 1) % FIELDS.len());
    let layout = |set: &[usize]| {
        let mut fields = set.to_vec();
        if let Some(f) = sort_field.filter(|f| !fields.contains(f)) {
            let at = fields.partition_point(|&x| x < f);
            fields.insert(at, f);
        }
        let group_w: usize = fields.iter().map(|&f| widths[f] + 1).sum::<usize>() + 1;
        let key_w = names_w
            .min((w * 2 / 5).max(12))
            .min(w.saturating_sub(group_w).max(8));
        let fit = (w.saturating_sub(key_w) / group_w).max(1);
        (fields, group_w, key_w, fit)
    };
    // The most fields with which the most runs are side by side: fields are
    // given up only for a run more in view, or for one run's group to fit whole.
    let layouts: Vec<_> = FIELD_SETS.iter().map(|set| layout(set)).collect();
    let most = layouts.iter().map(|l| l.3.min(runs)).max().unwrap_or(1);
    let mut best = layouts.into_iter().filter(|l| l.3.min(runs) == most);
    let first = best.next().unwrap_or_else(|| layout(FIELD_SETS[0]));
    let whole = |l: &(Vec<usize>, usize, usize, usize)| l.2 + l.1 <= w;
    let (fields, group_w, key_w, fit_groups) = if whole(&first) {
        first
    } else {
        let rest: Vec<_> = best.collect();
        let fits = rest.iter().position(whole);
        match fits {
            Some(i) => rest.into_iter().nth(i).unwrap_or(first),
            None => rest.into_iter().last().unwrap_or(first),
        }
    };
    // One run's group wider than the box (a narrow terminal, a split pane): the
    // last fields go, the sort column's kept, so that each cell drawn is whole (a
    // cut `1.7977e308` would read `1.7977e30`); sorting by one brings it back.
    let (mut fields, mut group_w, mut key_w) = (fields, group_w, key_w);
    let mut cut = false;
    while fields.len() > 1 && key_w + group_w > w {
        let Some(i) = fields.iter().rposition(|&f| Some(f) != sort_field) else {
            break;
        };
        group_w -= widths[fields.remove(i)] + 1;
        key_w = names_w
            .min((w * 2 / 5).max(12))
            .min(w.saturating_sub(group_w).max(8));
        cut = true;
    }
    let sort_run = sort.saturating_sub(1) / FIELDS.len();
    let first = (sort_run + 1).saturating_sub(fit_groups);
    Grid {
        widths,
        fields,
        group_w,
        key_w,
        shown: first..(first + fit_groups).min(runs),
        cut,
    }
}

/// The table's title: the metrics counted, and which runs are drawn when not all
/// fit (with the keys that bring the others into view).
fn title(shown: usize, total: usize, filtered: bool, runs: &Range<usize>, of: usize) -> String {
    let mut t = if filtered {
        format!(" Statistics · {shown} of {total} metrics ")
    } else {
        format!(" Statistics · {total} metrics ")
    };
    if runs.len() < of {
        let (a, b) = (runs.start + 1, runs.end);
        if a == b {
            t.push_str(&format!("· run {a} of {of} · shift+←/→ "));
        } else {
            t.push_str(&format!("· runs {a}–{b} of {of} · shift+←/→ "));
        }
    }
    t
}

/// Draw the table over `area`.
pub(crate) fn render_stats(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width < 20 || area.height < 8 {
        return;
    }
    let t = &app.stats;
    let c = app.overlay.stats_cursor();
    let rows = app.stats_rows();
    let runs = app.stats_runs();
    let total = app.charts.metric_keys.len();
    // Every cell's text, to size the columns by their contents.
    let text = rows.text(|| {
        rows.iter()
            .map(|r| r.cells.iter().map(|c| cells(c.as_ref())).collect())
            .collect()
    });
    // The box's inside: the area less its border.
    let w = usize::from(area.width.saturating_sub(2));
    let grid = grid(text, &rows, w, t.sort, runs.len());
    let shown = grid.shown.clone();
    let sort_run = t.sort.saturating_sub(1) / FIELDS.len();
    let title = title(rows.len(), total, t.filter.is_active(), &shown, runs.len());
    let inner = overlay::open(buf, area, &title, theme);
    let (km, m) = (&app.screen.keymap, Mode::Overlay(Kind::Stats));
    let keys = hint_line([
        (
            km.hint_pair(m, (Action::FocusLeft, Action::FocusRight), "/"),
            "sort",
        ),
        (km.hint_key(m, &[Action::ReverseSort]), "reverse"),
        (km.hint_key(m, &[Action::StartFilter]), "filter"),
        (
            km.hint_key(m, &[Action::Back, Action::ToggleStats]),
            "close",
        ),
    ]);
    if !keys.is_empty() {
        overlay::hint(buf, area, &format!(" {keys} "), theme);
    }

    let (x0, y0) = (inner.x, inner.y);
    let right = inner.right();
    let room = |x: u16| right.saturating_sub(x);
    let cols = Cols { grid: &grid, x0 };
    draw_heads(buf, (inner, &cols), (t, &runs), theme);

    // The rows: the selection kept in view at this height.
    // As many as `ui::overlay::stats::body_rows` says for this screen.
    let sel = draw_rows(buf, (inner, &cols), (c, &rows, text), theme);
    if rows.is_empty() {
        let msg = if total == 0 {
            "no metrics logged"
        } else {
            "no metric matches the filter"
        };
        put(buf, x0 + 1, y0 + 2, msg, room(x0 + 1), theme.dim());
    }

    // The selected row's full values, and the filter.
    let yd = inner.bottom().saturating_sub(3);
    if let Some(r) = rows.get(sel) {
        let run = if t.sort == 0 { 0 } else { sort_run };
        let label = runs
            .get(run)
            .map_or_else(String::new, |r| sanitize(&r.label));
        for (dy, l) in (0..).zip(detail(r, run, &label)) {
            put(buf, x0, yd + dy, &fit(&l, w), inner.width, theme.text());
        }
    }
    draw_filter(buf, (inner, w), &t.filter, theme);
}

/// Where the columns go: the grid's sizes, from `x0`.
struct Cols<'g> {
    grid: &'g Grid,
    x0: u16,
}

impl Cols<'_> {
    /// The x of field `f` of run group `g` (the group's start when `f` is not
    /// drawn).
    fn x(&self, g: usize, f: usize) -> u16 {
        let Grid {
            widths,
            fields,
            group_w,
            key_w,
            shown,
            ..
        } = self.grid;
        let before: usize = fields
            .iter()
            .take_while(|&&x| x != f)
            .map(|&x| widths[x] + 1)
            .sum();
        let off = key_w + (g - shown.start) * group_w + 1 + before;
        self.x0
            .saturating_add(u16::try_from(off).unwrap_or(u16::MAX))
    }
}

/// Run names over their groups, and the column titles (the sort column's
/// marked).
fn draw_heads(
    buf: &mut Buffer,
    (inner, cols): (Rect, &Cols<'_>),
    (t, runs): (
        &crate::ui::overlay::stats::StatsTable,
        &[crate::ui::overlay::stats::StatsRun],
    ),
    theme: Theme,
) {
    let &Grid {
        widths,
        group_w,
        ref shown,
        ..
    } = cols.grid;
    let (x0, y0) = (inner.x, inner.y);
    let right = inner.right();
    let first = shown.start;
    let col_x = |g: usize, f: usize| cols.x(g, f);
    let room = |x: u16| right.saturating_sub(x);
    // Run names over their groups, and the column titles.
    if first > 0 {
        put(
            buf,
            x0,
            y0,
            &format!("◀ {first} more"),
            room(x0),
            theme.dim(),
        );
    }
    for g in shown.clone() {
        let x = col_x(g, 0);
        let label = fit(&sanitize(&runs[g].label), group_w.saturating_sub(2));
        put(
            buf,
            x,
            y0,
            &label,
            room(x),
            theme.series(runs[g].color).add_modifier(Modifier::BOLD),
        );
    }
    if shown.end < runs.len() {
        let more = format!("{} more ▶", runs.len() - shown.end);
        let x = right.saturating_sub(u16::try_from(more.width()).unwrap_or(0));
        put(buf, x, y0, &more, room(x), theme.dim());
    }
    if cols.grid.cut {
        // Fields left out for want of room: the sort keys bring each into view.
        put(buf, right.saturating_sub(1), y0 + 1, "▶", 1, theme.dim());
    }
    let arrow = if t.reverse { "▼" } else { "▲" };
    let head = |sorted: bool, s: &str| {
        if sorted {
            format!("{s}{arrow}")
        } else {
            s.to_owned()
        }
    };
    let hstyle = |sorted: bool| {
        if sorted {
            theme.heading()
        } else {
            theme.label()
        }
    };
    put(
        buf,
        x0,
        y0 + 1,
        &head(t.sort == 0, " metric"),
        room(x0),
        hstyle(t.sort == 0),
    );
    for g in shown.clone() {
        for &f in &cols.grid.fields {
            let name = FIELDS[f];
            let sorted = t.sort == 1 + g * FIELDS.len() + f;
            let s = head(sorted, name);
            let x = col_x(g, f) + u16::try_from(widths[f].saturating_sub(s.width())).unwrap_or(0);
            put(buf, x, y0 + 1, &s, room(x), hstyle(sorted));
        }
    }
}

/// The rows: the selection kept in view at this height. As many as
/// `ui::overlay::stats::body_rows` says for this screen. The row selected.
fn draw_rows(
    buf: &mut Buffer,
    (inner, cols): (Rect, &Cols<'_>),
    (c, rows, text): (
        crate::ui::overlay::stats::StatsCursor,
        &[StatsRow],
        &[Vec<[String; 7]>],
    ),
    theme: Theme,
) -> usize {
    let &Grid {
        widths,
        key_w,
        ref shown,
        ..
    } = cols.grid;
    let (x0, y0) = (inner.x, inner.y);
    let right = inner.right();
    let room = |x: u16| right.saturating_sub(x);
    let col_x = |g: usize, f: usize| cols.x(g, f);
    let body = usize::from(inner.height.saturating_sub(5));
    let sel = c.sel.min(rows.len().saturating_sub(1));
    let mut top = c.top.min(sel);
    if sel >= top + body {
        top = sel + 1 - body;
    }
    for (line, i) in (top..rows.len()).take(body).enumerate() {
        let y = y0 + 2 + u16::try_from(line).unwrap_or(0);
        let picked = i == sel;
        let base = if picked {
            theme.text().add_modifier(Modifier::REVERSED)
        } else if i % 2 == 1 {
            theme.zebra()
        } else {
            Style::new()
        };
        buf.set_style(Rect::new(x0, y, inner.width, 1), base);
        let mark = if picked { "›" } else { " " };
        let key = fit(&sanitize(&rows[i].key), key_w.saturating_sub(2));
        put(
            buf,
            x0,
            y,
            &format!("{mark}{key}"),
            room(x0).min(u16::try_from(key_w).unwrap_or(0)),
            base,
        );
        for g in shown.clone() {
            for &f in &cols.grid.fields {
                let s = fit(&text[i][g][f], widths[f]);
                let x =
                    col_x(g, f) + u16::try_from(widths[f].saturating_sub(s.width())).unwrap_or(0);
                // A number is drawn whole or not at all: cut, it reads as another.
                if usize::from(room(x)) >= s.width() {
                    put(buf, x, y, &s, room(x), base);
                }
            }
        }
    }
    sel
}

/// The filter, on the last line of `inner`.
fn draw_filter(
    buf: &mut Buffer,
    (inner, w): (Rect, usize),
    f: &crate::ui::filter::FilterState,
    theme: Theme,
) {
    let x0 = inner.x;
    let yf = inner.bottom().saturating_sub(1);
    let mode = if f.glob { "glob" } else { "regex" };
    let line = if f.editing {
        match &f.error {
            Some(e) => format!("/{}▌  ({mode}) {}", sanitize(&f.draft), sanitize(e)),
            None => format!("/{}▌  ({mode}, tab toggles)", sanitize(&f.draft)),
        }
    } else if f.is_active() {
        format!("filter: {} ({mode}) · ctrl+l clears", sanitize(&f.text))
    } else {
        "/ filters the metrics by name".to_owned()
    };
    let style = if f.editing {
        theme.input()
    } else {
        theme.dim()
    };
    let n = put(buf, x0, yf, &fit(&line, w), inner.width, style);
    if f.editing && f.selected {
        let sel = fit::width(&sanitize(&f.draft));
        fit::reverse(buf, (x0 + 1, yf), sel, x0 + n);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_value_past_what_a_double_holds_exactly_is_marked_near() {
        use super::exact_or_near;
        assert_eq!(exact_or_near(0.25), "0.25");
        assert_eq!(exact_or_near(-3.0), "-3");
        assert_eq!(exact_or_near(9_007_199_254_740_992.0), "9007199254740992");
        // A logged 9007199254741011 is held as the nearest double, …012.
        assert_eq!(exact_or_near(9_007_199_254_741_011.0), "≈9007199254741012");
        assert_eq!(exact_or_near(f64::NAN), "NaN");
        // Far from one: the shortest digits with an exponent, never hundreds of
        // digits that the line cuts.
        assert_eq!(exact_or_near(f64::MAX), "1.7976931348623157e308");
        assert_eq!(exact_or_near(-f64::MAX), "-1.7976931348623157e308");
        assert_eq!(exact_or_near(5e-324), "5e-324");
        assert_eq!(exact_or_near(1e-6), "1e-6");
        assert_eq!(exact_or_near(0.0), "0");
        assert_eq!(exact_or_near(1e17), "1e17");
    }

    /// A run's group wider than the box: only whole fields are drawn (the last
    /// ones go, the sort column's kept), and the cut is marked.
    #[test]
    fn a_group_wider_than_the_box_draws_whole_fields_only() {
        use super::{grid, StatsRow, FIELDS};
        let big = "1.7977e308".to_owned();
        let cells = [
            big.clone(),
            big.clone(),
            "0".into(),
            big.clone(),
            "0".into(),
            big,
            "6".into(),
        ];
        let text = vec![vec![cells]];
        let rows = vec![StatsRow {
            key: "huge".into(),
            cells: vec![None],
        }];
        for w in [30, 40, 48, 60, 70, 90] {
            for sort in 0..=FIELDS.len() {
                let g = grid(&text, &rows, w, sort, 1);
                let used: usize = g.fields.iter().map(|&f| g.widths[f] + 1).sum::<usize>() + 1;
                assert_eq!(used, g.group_w);
                assert!(
                    g.key_w + g.group_w <= w || g.fields.len() == 1,
                    "w {w} sort {sort}: {} + {} over",
                    g.key_w,
                    g.group_w
                );
                if sort > 0 {
                    assert!(g.fields.contains(&(sort - 1)), "w {w}: sort field gone");
                }
                // Cut only where the fewest fields of a group (and the sort
                // column) do not fit whole.
                let fewest = 4 + usize::from(sort > 0 && ![0, 1, 3, 5].contains(&(sort - 1)));
                assert_eq!(
                    g.cut,
                    g.fields.len() < fewest,
                    "w {w} sort {sort}: {:?}",
                    g.fields
                );
            }
        }
        // Room for every field: none cut.
        let g = grid(&text, &rows, 120, 0, 1);
        assert_eq!(g.fields, vec![0, 1, 2, 3, 4, 5, 6]);
        assert!(!g.cut);
    }

    /// The selected row's line: an extreme the run kept exact is written as
    /// logged, at its own step; one it did not, as its double, marked near.
    #[test]
    fn an_exact_extreme_is_written_as_logged() {
        use super::{detail, StatsRow};
        use crate::store::series::Stats;
        let max = 9_007_199_254_741_020.0;
        let s = Stats {
            count: 30,
            min: Some((0.0, 9_007_199_254_740_992.0)),
            max: Some((29.0, max)),
            max_exact: Some(9_007_199_254_741_021),
            ..Stats::default()
        };
        let row = StatsRow {
            key: "bigint".into(),
            cells: vec![Some(s)],
        };
        let [_, second] = detail(&row, 0, "run");
        assert_eq!(
            second,
            "  min 9007199254740992 @ 0 · max 9007199254741021 @ 29"
        );
        let row = StatsRow {
            key: "bigint".into(),
            cells: vec![Some(Stats {
                max_exact: None,
                ..s
            })],
        };
        assert!(detail(&row, 0, "run")[1].ends_with("max ≈9007199254741020 @ 29"));
    }
}
