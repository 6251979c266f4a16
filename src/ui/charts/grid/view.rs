//! The metrics grid: its header line and the focused page of charts (metric
//! charts, or the live monitor's grouped system charts), or one chart full screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::text::sanitize;
use crate::ui::charts::model::ChartModel;
use crate::ui::layout;
use crate::ui::system::view::render_sys_chart;
use crate::ui::theme::Theme;
use crate::ui::widget::chart::render_chart_over;
use crate::ui::widget::fit::{put, word_wrap};
use crate::ui::App;

/// The metric chart of `key` in `area`: its model, drawn.
pub(crate) fn render_metric_chart(
    buf: &mut Buffer,
    area: Rect,
    app: &App,
    key: &str,
    focused: bool,
    theme: Theme,
) {
    let Some(model) = ChartModel::build(app, key, area.width, focused, theme) else {
        return;
    };
    let fmt_x = |v: f64| model.x_label(v);
    render_chart_over(buf, area, &model.spec(&fmt_x), model.y, theme);
    if focused {
        crate::ui::charts::xaxis::view::render_picker(buf, area, app, key, theme);
    }
}

/// The metrics grid (header line + the focused page), or the focused chart full
/// screen.
pub(crate) fn render_grid(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let n = app.charts.shown.len();
    let total = app.charts.metric_keys.len();
    let (cols, rows) = if app.charts.grid.cols == 0 {
        layout::grid_dims(
            layout::grid_body(area),
            app.charts.grid.cols_setting,
            app.charts.grid.rows_setting,
        )
    } else {
        (app.charts.grid.cols, app.charts.grid.rows)
    };
    let per_page = usize::from(cols) * usize::from(rows);
    let start = app.charts.grid.focus / per_page * per_page;
    let end = (start + per_page).min(n);
    // The page of a sectioned grid, and what it shows.
    let paged = (app.charts.grid.cols > 0)
        .then(|| app.charts.grid.section_view(layout::grid_body(area)))
        .flatten();
    let (start, end, page, pages) = match &paged {
        Some(v) => {
            let (a, b) = v.charts.map_or((n, n), |(a, b)| (a, b + 1));
            (a, b, v.page, v.pages)
        }
        None => (start, end, start / per_page, n.div_ceil(per_page)),
    };
    let focused_pane = app.panels.focus == crate::ui::panels::Pane::Grid;
    let width = usize::from(area.width.saturating_sub(1));
    let header = grid_header(app, (start, end), (page, pages), width);
    put(
        buf,
        area.x + 1,
        area.y,
        &header,
        area.width.saturating_sub(1),
        theme.heading(),
    );
    let body = layout::grid_body(area);
    if n == 0 {
        render_no_charts(buf, body, app, total, theme);
        return;
    }
    if let Some(v) = &paged {
        sections::render_page(buf, app, v, focused_pane, theme);
        return;
    }
    for i in start..end {
        let cell = if app.charts.grid.cols == 0 {
            layout::grid_cell(body, cols, rows, i - start)
        } else {
            app.charts.grid.cell(body, n, i - start)
        };
        render_grid_item(
            buf,
            cell,
            app,
            app.charts.shown[i],
            focused_pane && i == app.charts.grid.focus,
            theme,
        );
    }
}

/// The grid's header line, at most `width` columns: which charts of how many it
/// shows, the filter, the hidden charts and the key that shows or hides them,
/// the page. Where a page count does not fit, the key, then the filter's words,
/// then the hidden count, then the filter give way, so it is never cut.
fn grid_header(
    app: &App,
    (start, end): (usize, usize),
    (page, pages): (usize, usize),
    width: usize,
) -> String {
    use unicode_width::UnicodeWidthStr;
    let n = app.charts.shown.len();
    let total = app.charts.metric_keys.len();
    let head = if n == 0 {
        "Metrics [0]".to_owned()
    } else if start >= end {
        format!("Metrics [{n}]")
    } else {
        format!("Metrics [{}-{end} of {n}]", start + 1)
    };
    let text = app
        .charts
        .filter
        .is_active()
        .then(|| sanitize(&app.charts.filter.text));
    let filter = text
        .as_ref()
        .map(|t| format!(" filtered from {total} by /{t}"));
    let short = text.as_ref().map(|t| format!(" /{t}"));
    let mut hidden = None;
    let mut hint = None;
    if app.charts.hidden > 0 {
        let key = app
            .screen
            .keymap
            .keys_for(
                crate::ui::keymap::Mode::Normal,
                crate::ui::action::Action::ToggleHidden,
            )
            .next()
            .map(|k| k.to_string());
        let (what, verb) = if app.charts.show_hidden {
            ("hidden shown", "hides")
        } else {
            ("hidden", "shows")
        };
        hidden = Some(format!(" · {} {what}", app.charts.hidden));
        hint = key.map(|k| format!(" ({k} {verb})"));
    }
    let page = if pages > 1 {
        format!("  page {}/{pages}", page + 1)
    } else {
        String::new()
    };
    let join = |parts: &[&Option<String>]| {
        let mut h = head.clone();
        for p in parts.iter().filter_map(|p| p.as_deref()) {
            h.push_str(p);
        }
        h.push_str(&page);
        h
    };
    let full = join(&[&filter, &hidden, &hint]);
    if page.is_empty() {
        return full;
    }
    let tries = [
        full,
        join(&[&filter, &hidden]),
        join(&[&short, &hidden]),
        join(&[&short]),
    ];
    let last = join(&[]);
    tries
        .into_iter()
        .find(|h| h.width() <= width)
        .unwrap_or(last)
}

/// What the body says when no chart is shown: why the run cannot be read, or
/// what is awaited.
fn render_no_charts(buf: &mut Buffer, body: Rect, app: &App, total: usize, theme: Theme) {
    if total == 0 {
        if let Some(why) = app.unreadable() {
            // Already sanitized; wrapped so the cause is never cut off.
            let w = usize::from(body.width.saturating_sub(4)).max(1);
            let rows = word_wrap(&why, w);
            let n = u16::try_from(rows.len()).unwrap_or(u16::MAX);
            let top = body.y + body.height.saturating_sub(n) / 2;
            for (y, row) in (top..body.bottom()).zip(&rows) {
                put(
                    buf,
                    body.x + 2,
                    y,
                    row,
                    body.width.saturating_sub(2),
                    theme.bad(),
                );
            }
            return;
        }
    }
    let why = app.unreadable();
    let msg = if total > 0 {
        "no chart matches the filter"
    } else if let Some(why) = why.as_deref() {
        why
    } else if app.is_host() {
        "waiting for the first sample…"
    } else if app.shown.source.waiting.is_some() {
        "waiting for the run to start…"
    } else if app.runs.in_workspace_list() && app.shown.main_reading.is_none() {
        // No reader runs: nothing is being opened.
        if app
            .runs
            .workspace
            .as_ref()
            .is_some_and(|w| w.indexed && w.runs.is_empty())
        {
            "no runs yet: the first to start is drawn here"
        } else {
            "no run drawn: space on a run in the list draws it"
        }
    } else if app.shown.source.path.is_none() {
        "opening…"
    } else {
        "no history metrics yet"
    };
    put(
        buf,
        body.x + 2,
        body.y + body.height / 2,
        msg,
        body.width.saturating_sub(2),
        theme.dim(),
    );
}

/// Grid item `i` (an index into `metric_keys`): a metric chart, or in the live
/// monitor a grouped system chart.
fn render_grid_item(
    buf: &mut Buffer,
    area: Rect,
    app: &App,
    i: usize,
    focused: bool,
    theme: Theme,
) {
    if app.is_host() {
        if let Some(chart) = app.charts.sys.get(i) {
            render_sys_chart(buf, area, app, chart, focused, theme);
        }
    } else if let Some(key) = app.charts.metric_keys.get(i) {
        render_metric_chart(buf, area, app, key, focused, theme);
    }
}

/// The focused grid item full screen.
pub(crate) fn render_fullscreen(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if let Some(&i) = app.charts.shown.get(app.charts.grid.focus) {
        render_grid_item(buf, area, app, i, true, theme);
    }
}

mod sections;
