//! Pure area math: computed by `app` on resize and panel changes (stored in its
//! state for paging and mouse hits), read by `view` to draw. Here the panes'
//! areas and the grid's cells; what fits inside a pane (list rows, the console's
//! scroll back) in `rows.rs`.

mod rows;

use ratatui::layout::Rect;

pub use rows::{
    console_max_back, console_rows, console_text_width, list_max_scroll, list_page, list_window,
    overview_list_rows, runs_list_rows, sys_cell, sys_per_page, ListWindow,
};

/// Below this the screen says "terminal too small".
pub const MIN_W: u16 = 40;

/// The narrowest screen with the left sidebar beside the charts.
pub const MIN_WITH_LEFT: u16 = MIN_LEFT_W + MIN_CENTER_W;
pub const MIN_H: u16 = 10;
/// Overview sidebar width limits.
const MIN_LEFT_W: u16 = 28;
const MAX_LEFT_W: u16 = 44;
/// The workspace's runs list: up to this wide.
const MAX_RUNS_W: u16 = 66;
/// Centre narrower than this hides the right, then the left sidebar.
const MIN_CENTER_W: u16 = 40;
/// Auto grid: target chart size in cells.
const AUTO_CHART_W: u16 = 28;
const AUTO_CHART_H: u16 = 11;
const AUTO_MAX_COLS: u16 = 5;
const AUTO_MAX_ROWS: u16 = 4;
/// Smallest chart of the auto grid where the target size leaves one column or
/// row: two narrower (as wide as the system sidebar's charts are tall, as tall as
/// they are) still read, and page the charts half as often on a small terminal.
const AUTO_MIN_CHART_W: u16 = 24;
const AUTO_MIN_CHART_H: u16 = SYS_CHART_H;
/// Smallest chart a manual `c`/`r` setting may produce.
const MIN_CHART_W: u16 = 14;
const MIN_CHART_H: u16 = 6;
/// Height of one system chart in the right sidebar.
pub const SYS_CHART_H: u16 = 9;

/// Pane sizes the user dragged (None: the default for the screen). The layout
/// clamps them to the screen: the centre keeps [`MIN_CENTER_W`] columns and a
/// grid row, each sidebar its minimum width.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PaneSizes {
    /// Width of the left sidebar.
    pub left: Option<u16>,
    /// Width of the right sidebar.
    pub right: Option<u16>,
    /// Height of the console pane.
    pub console: Option<u16>,
}

/// Smallest system sidebar.
const MIN_RIGHT_W: u16 = 30;
/// The console leaves the grid this many lines (its header and one chart row).
const GRID_KEEP_H: u16 = MIN_CHART_H + 1;
/// Smallest console.
const MIN_CONSOLE_H: u16 = 5;

/// Which panels the user wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PanelFlags {
    pub left: bool,
    pub right: bool,
    pub console: bool,
    /// The metrics grid (`1` hides it: the console, else the left, else the right
    /// sidebar takes its room; with none of them it shows anyway).
    pub grid: bool,
    /// Sizes dragged with the mouse.
    pub sizes: PaneSizes,
    /// The live monitor: a header of this many lines on top, and the process table.
    pub live: Option<u16>,
    /// The live monitor's process table (not on a host read from Prometheus, which
    /// holds no processes: its room goes to the charts).
    pub procs: bool,
    /// The left pane is the workspace's runs list: wider (its columns: state, name,
    /// id, start, runtime, a summary value).
    pub wide_left: bool,
    /// The media pane (`3`): beside the charts, or below them on a narrow screen.
    pub media: bool,
}

impl Default for PanelFlags {
    fn default() -> Self {
        Self {
            left: true,
            right: true,
            console: false,
            grid: true,
            sizes: PaneSizes::default(),
            live: None,
            procs: true,
            wide_left: false,
            media: false,
        }
    }
}

/// Areas of one screen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Areas {
    pub status: Rect,
    /// Everything above the status line (where a chart goes full screen).
    pub body: Rect,
    pub left: Option<Rect>,
    pub right: Option<Rect>,
    /// Metrics grid, including its one-line header.
    pub grid: Rect,
    pub console: Option<Rect>,
    /// Live monitor: the host header (top) and the process table (below the grid,
    /// or beside it on a wide screen).
    pub header: Option<Rect>,
    pub procs: Option<Rect>,
    /// The media pane, taken from the grid's room.
    pub media: Option<Rect>,
}

/// The media pane's share of the grid's room: beside the charts from this width of
/// the grid (2/5 of it, at least [`MIN_MEDIA_W`]), else below them from this height.
const MEDIA_BESIDE_W: u16 = 2 * MIN_CENTER_W;
const MIN_MEDIA_W: u16 = 30;
const MEDIA_BELOW_H: u16 = 2 * GRID_KEEP_H + 2;

/// `grid` less the media pane's room, and that room (None: off, or no room).
fn split_media(grid: Rect, on: bool) -> (Rect, Option<Rect>) {
    if !on || grid.is_empty() {
        return (grid, None);
    }
    if grid.width >= MEDIA_BESIDE_W {
        let mw = (grid.width * 2 / 5).max(MIN_MEDIA_W);
        let g = Rect::new(grid.x, grid.y, grid.width - mw, grid.height);
        return (g, Some(Rect::new(g.right(), grid.y, mw, grid.height)));
    }
    if grid.height >= MEDIA_BELOW_H {
        let mh = grid.height / 2;
        let g = Rect::new(grid.x, grid.y, grid.width, grid.height - mh);
        return (g, Some(Rect::new(grid.x, g.bottom(), grid.width, mh)));
    }
    (grid, None)
}

/// Lines of the process table above its rows (its title, the column names).
pub const PROCS_HEAD: u16 = 2;
/// Width of one meter of the live header, and of one accelerator's row.
pub(crate) const HEADER_CELL_W: u16 = 40;
/// Live monitor: from this width the overview shows at start (below it the header
/// says what it would, and the charts and the process table need the room).
pub(crate) const LIVE_AUTO_LEFT_W: u16 = 120;
/// From this width the process table sits beside the charts (and gets 2/5 of it,
/// at least 76 columns: room for every column and a readable command).
const PROCS_BESIDE_W: u16 = 190;

/// Meters per line of the live header at width `w` (2 at 80 columns, 5 at 200).
#[must_use]
pub(crate) fn header_cols(w: u16) -> u16 {
    (w / HEADER_CELL_W).max(1)
}

/// Lines of the live header: the facts line, the meters and the accelerator rows
/// (`bars` meters and `devices` rows at width `w`).
#[must_use]
pub(crate) fn header_lines(w: u16, bars: usize, devices: usize) -> u16 {
    let per = usize::from(header_cols(w));
    let n = 1 + bars.div_ceil(per) + devices.div_ceil(per);
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// Rows of processes the table shows (below its column names).
#[must_use]
pub fn procs_rows(procs: Rect) -> usize {
    usize::from(procs.height.saturating_sub(PROCS_HEAD))
}

/// Whether `size` is too small to lay out.
#[must_use]
pub fn too_small(size: Rect) -> bool {
    size.width < MIN_W || size.height < MIN_H
}

/// Split the screen.
#[must_use]
pub fn areas(size: Rect, p: PanelFlags) -> Areas {
    if too_small(size) {
        return Areas {
            status: size,
            ..Areas::default()
        };
    }
    let body_h = size.height - 1;
    let status = Rect::new(size.x, size.y + body_h, size.width, 1);
    let body = Rect::new(size.x, size.y, size.width, body_h);
    let w = size.width;
    // The live header takes the top (at most half the body), the rest below it.
    let head_h = p.live.map_or(0, |h| live_header_h(h, body_h, p.grid));
    let header = p
        .live
        .map(|_| Rect::new(size.x, size.y, size.width, head_h));
    let size = Rect::new(size.x, size.y + head_h, size.width, size.height - head_h);
    let body_h = body_h - head_h;
    let (lw2, rw) = side_widths(w, p);
    let center = Rect::new(size.x + lw2, size.y, w - lw2 - rw, body_h);
    let mut left = (lw2 > 0).then(|| Rect::new(size.x, size.y, lw2, body_h));
    let mut right = (rw > 0).then(|| Rect::new(size.x + w - rw, size.y, rw, body_h));
    if !p.grid && p.live.is_none() && !p.console {
        // The grid's room goes to a sidebar: the left one, else the right one.
        if let Some(l) = left.as_mut() {
            l.width += center.width;
            return Areas {
                status,
                body,
                left,
                right,
                grid: Rect::new(center.right(), center.y, 0, 0),
                console: None,
                header,
                procs: None,
                media: None,
            };
        }
        if let Some(r) = right.as_mut() {
            *r = Rect::new(center.x, r.y, r.width + center.width, r.height);
            return Areas {
                status,
                body,
                left,
                right,
                grid: Rect::new(center.x, center.y, 0, 0),
                console: None,
                header,
                procs: None,
                media: None,
            };
        }
    }
    let (center, mut procs) = split_procs(center, p);
    let (grid, console) = split_console(center, procs.as_mut(), p);
    let (grid, media) = split_media(grid, p.media && p.live.is_none());
    Areas {
        status,
        body,
        left,
        right,
        grid,
        console,
        header,
        procs,
        media,
    }
}

/// Lines of the live header (`want` of them) in a body `body_h` high: at most
/// half of it, and on a short screen fewer still (down to its facts line), so that
/// a shown grid keeps room for one chart with a plot rather than an empty box.
fn live_header_h(want: u16, body_h: u16, grid: bool) -> u16 {
    let h = want.min(body_h / 2);
    if grid && body_h.saturating_sub(h) < GRID_KEEP_H {
        return body_h.saturating_sub(GRID_KEEP_H).max(1).min(h);
    }
    h
}

/// The widths of the left and right sidebars in a screen `w` wide (0: not shown).
/// The overview gets about a third of the width (its key column and values both
/// need room), the system sidebar about a quarter.
/// Dragged sizes leave the centre its minimum, and the right sidebar room for
/// the left one's minimum (the left one narrows first).
fn side_widths(w: u16, p: PanelFlags) -> (u16, u16) {
    let lw = match (p.left, p.sizes.left) {
        (false, _) => 0,
        (true, Some(u)) => u.clamp(MIN_LEFT_W, w.saturating_sub(MIN_CENTER_W).max(MIN_LEFT_W)),
        (true, None) => {
            let max = if p.wide_left { MAX_RUNS_W } else { MAX_LEFT_W };
            (w / 3).clamp(MIN_LEFT_W, max)
        }
    };
    let mut rw = match (p.right, p.sizes.right) {
        (false, _) => 0,
        (true, Some(u)) => {
            let room = w.saturating_sub(MIN_CENTER_W + if p.left { MIN_LEFT_W } else { 0 });
            u.clamp(MIN_RIGHT_W, room.max(MIN_RIGHT_W))
        }
        (true, None) => (w * 24 / 100).clamp(MIN_RIGHT_W, 50),
    };
    let mut lw2 = lw;
    if lw2 > 0 && w.saturating_sub(lw2 + rw) < MIN_CENTER_W {
        // Narrow the overview towards its minimum before giving up the system sidebar.
        lw2 = w.saturating_sub(rw + MIN_CENTER_W).clamp(MIN_LEFT_W, lw2);
    }
    if w.saturating_sub(lw2 + rw) < MIN_CENTER_W {
        rw = 0;
        lw2 = lw;
    }
    if w.saturating_sub(lw2 + rw) < MIN_CENTER_W {
        lw2 = 0;
    }
    (lw2, rw)
}

/// The live monitor's process table, beside the centre when it is wide enough,
/// else below it; the centre's rest.
fn split_procs(center: Rect, p: PanelFlags) -> (Rect, Option<Rect>) {
    match p.live {
        None => (center, None),
        Some(_) if !p.procs => (center, None),
        Some(_) if center.width >= PROCS_BESIDE_W => {
            let pw = (center.width * 2 / 5).min(100);
            (
                Rect::new(center.x, center.y, center.width - pw, center.height),
                Some(Rect::new(
                    center.x + center.width - pw,
                    center.y,
                    pw,
                    center.height,
                )),
            )
        }
        // Below the charts only where a chart keeps room for its plot: on a short
        // screen the charts say more than two rows of processes (`tab` still
        // reaches the table once the screen grows).
        Some(_) if p.grid && center.height.saturating_sub(procs_below_h(center)) < GRID_KEEP_H => {
            (center, None)
        }
        Some(_) => {
            let ph = procs_below_h(center);
            (
                Rect::new(center.x, center.y, center.width, center.height - ph),
                Some(Rect::new(
                    center.x,
                    center.y + center.height - ph,
                    center.width,
                    ph,
                )),
            )
        }
    }
}

/// Height of the process table below the charts in `center`.
fn procs_below_h(center: Rect) -> u16 {
    (center.height * 2 / 5).max(4).min(center.height / 2)
}

/// The centre split between the grid and the console (or the process table,
/// when the grid is hidden).
fn split_console(center: Rect, procs: Option<&mut Rect>, p: PanelFlags) -> (Rect, Option<Rect>) {
    if !p.grid && (p.console || procs.is_some()) && center.height > 0 {
        // The grid's room goes to the console, or to the process table beside or
        // below it.
        match procs {
            Some(pr) if !p.console => {
                *pr = Rect::new(
                    pr.x.min(center.x),
                    pr.y.min(center.y),
                    if pr.y == center.y {
                        pr.width + center.width
                    } else {
                        pr.width
                    },
                    if pr.x == center.x {
                        pr.height + center.height
                    } else {
                        pr.height
                    },
                );
                (Rect::new(center.x, center.y, 0, 0), None)
            }
            _ => (Rect::new(center.x, center.y, 0, 0), Some(center)),
        }
    } else if p.console && center.height >= 12 {
        let ch = p
            .sizes
            .console
            .map_or((center.height / 3).max(MIN_CONSOLE_H), |u| {
                u.clamp(MIN_CONSOLE_H, center.height - GRID_KEEP_H)
            });
        (
            Rect::new(center.x, center.y, center.width, center.height - ch),
            Some(Rect::new(
                center.x,
                center.y + center.height - ch,
                center.width,
                ch,
            )),
        )
    } else {
        (center, None)
    }
}

/// The grid's chart area (below its header line).
#[must_use]
pub fn grid_body(grid: Rect) -> Rect {
    Rect::new(
        grid.x,
        grid.y.saturating_add(1).min(grid.bottom()),
        grid.width,
        grid.height.saturating_sub(1),
    )
}

/// Columns and rows of the grid for a body area, with optional user settings.
#[must_use]
pub fn grid_dims(body: Rect, cols: Option<u16>, rows: Option<u16>) -> (u16, u16) {
    let c = match cols {
        Some(c) => c.min(body.width / MIN_CHART_W).max(1),
        None => auto_count(body.width, AUTO_CHART_W, AUTO_MIN_CHART_W).min(AUTO_MAX_COLS),
    };
    let r = match rows {
        Some(r) => r.min(body.height / MIN_CHART_H).max(1),
        None => auto_count(body.height, AUTO_CHART_H, AUTO_MIN_CHART_H).min(AUTO_MAX_ROWS),
    };
    (c, r)
}

/// Auto columns (rows) in `room` cells: as many as fit at the `target` size; where
/// that is one, two that keep `least` each (a small terminal's grid: 2×2 at 80×24,
/// not one chart a page).
fn auto_count(room: u16, target: u16, least: u16) -> u16 {
    match room / target {
        0 | 1 if room / least >= 2 => 2,
        n => n.max(1),
    }
}

/// Columns and rows for `n` charts, fewer than a page of the auto grid holds, that
/// fill `body`: of the shapes without an empty row or column, the one whose cells
/// come closest to the auto grid's chart shape (wide or tall screens get one
/// column or one row), none below a manual setting's smallest chart. None where
/// no shape has room.
#[must_use]
pub fn fill_dims(body: Rect, n: u16) -> Option<(u16, u16)> {
    let target = f64::from(AUTO_CHART_W) / f64::from(AUTO_CHART_H);
    let mut best: Option<((u16, u16), f64)> = None;
    for cols in 1..=n {
        let rows = n.div_ceil(cols);
        let (w, h) = (body.width / cols, body.height / rows);
        // `cols` columns where fewer hold the rows: an empty column.
        if n.div_ceil(rows) < cols || w < MIN_CHART_W || h < MIN_CHART_H {
            continue;
        }
        let off = (f64::from(w) / f64::from(h) / target).ln().abs();
        if best.is_none_or(|(_, b)| off < b) {
            best = Some(((cols, rows), off));
        }
    }
    best.map(|(shape, _)| shape)
}

/// The cell of chart `i` (0-based on the page) in a `cols × rows` grid.
#[must_use]
pub fn grid_cell(body: Rect, cols: u16, rows: u16, i: usize) -> Rect {
    let cols = cols.max(1);
    let rows = rows.max(1);
    let i = u16::try_from(i).unwrap_or(u16::MAX);
    let (c, r) = (i % cols, i / cols);
    let x0 = body.x + body.width * c / cols;
    let x1 = body.x + body.width * (c + 1) / cols;
    let y0 = body.y + body.height * r / rows;
    let y1 = body.y + body.height * (r + 1) / rows;
    Rect::new(x0, y0, x1 - x0, y1.saturating_sub(y0))
}

/// Centred overlay of at most `w × h`.
#[must_use]
pub fn centered(size: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(size.width);
    let h = h.min(size.height);
    Rect::new(
        size.x + (size.width - w) / 2,
        size.y + (size.height - h) / 2,
        w,
        h,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidebar_widths() {
        let both = PanelFlags::default();
        let widths = |w: u16| {
            let a = areas(Rect::new(0, 0, w, 40), both);
            (
                a.left.map_or(0, |r| r.width),
                a.grid.width,
                a.right.map_or(0, |r| r.width),
            )
        };
        // 80 columns: the charts keep most of the width, no system sidebar.
        assert_eq!(widths(80), (28, 52, 0));
        // The overview narrows before the system sidebar is given up.
        assert_eq!(widths(100), (30, 40, 30));
        // About a third at 120, capped from 132 columns on.
        assert_eq!(widths(120), (40, 50, 30));
        assert_eq!(widths(160), (44, 78, 38));
        assert_eq!(widths(200), (44, 108, 48));
        let left_only = PanelFlags {
            right: false,
            ..both
        };
        assert_eq!(areas(Rect::new(0, 0, 120, 40), left_only).grid.width, 80);
        // The workspace's runs list may be wider, for its columns.
        let runs = PanelFlags {
            wide_left: true,
            ..both
        };
        let lw = |w| {
            areas(Rect::new(0, 0, w, 40), runs)
                .left
                .map_or(0, |r| r.width)
        };
        assert_eq!((lw(80), lw(120), lw(200), lw(300)), (28, 40, 66, 66));
    }
}
