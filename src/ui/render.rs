//! Pure rendering: `render(frame, &App)` reads the state and draws; it never
//! mutates anything, reads the clock or the environment.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::Frame;

use super::theme::{self, Theme};
use super::widget::fit;
use super::{charts, cluster, console, host, overlay, overview, status, workspace};
use super::{layout, App};

/// Draw the whole screen.
pub fn render(frame: &mut Frame<'_>, app: &App) {
    let area = frame.area();
    render_buffer(frame.buffer_mut(), area, app);
}

/// Draw the whole screen into a buffer area: in the palette chosen, its RGB
/// colours as their nearest of the xterm 256 where the terminal has no 24-bit
/// colour.
pub fn render_buffer(buf: &mut Buffer, area: Rect, app: &App) {
    draw(
        buf,
        area,
        app,
        Theme::new(app.screen.color, app.screen.palette),
    );
    if app.screen.color && !app.screen.true_color {
        theme::xterm256::downgrade(buf, area);
    }
}

/// "terminal too small", with the size and the minimum (on a second line where
/// there is one: the minimum is the point, and one line would cut it off).
fn render_too_small(buf: &mut Buffer, area: Rect, theme: Theme) {
    let lines = [
        format!("terminal too small: {}×{},", area.width, area.height),
        format!("needs at least {}×{}", layout::MIN_W, layout::MIN_H),
    ];
    let w = usize::from(area.width);
    let y = area.y + area.height / 2;
    if area.height < 2 {
        let one = format!("{} {}", lines[0], lines[1]);
        buf.set_stringn(area.x, y, fit::fit(&one, w), w, theme.warn());
        return;
    }
    for (i, l) in lines.iter().enumerate() {
        let y = y - 1 + u16::try_from(i).unwrap_or(0);
        buf.set_stringn(area.x, y, fit::fit(l, w), w, theme.warn());
    }
}

fn draw(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    if layout::too_small(area) {
        render_too_small(buf, area, theme);
        return;
    }
    // A full-screen overlay (the record inspector) has the whole screen.
    if app.overlay.full_screen() {
        app.overlay.render(buf, area, app, theme);
        return;
    }
    // The cluster screen stays beneath another overlay (the help) opened over it.
    if app
        .host
        .cluster
        .as_ref()
        .is_some_and(|c| c.opened.is_none())
    {
        cluster::view::render_cluster(buf, area, app, theme);
        app.overlay.render(buf, area, app, theme);
        return;
    }
    // The areas the app laid out for its size (and hit-tests the mouse against);
    // a frame of a size it has not been told of yet is laid out for itself.
    let areas = if area == app.screen.size {
        app.screen.areas
    } else {
        layout::areas(area, app.panel_flags())
    };
    let system_full = app
        .panels
        .system_full
        .then(|| {
            app.panes
                .system
                .chart(&app.charts.sys, app.panes.system.scroll)
        })
        .flatten();
    if let Some(chart) = system_full.filter(|_| app.panels.fullscreen) {
        crate::ui::system::view::render_sys_chart(buf, areas.body, app, &chart, true, theme);
    } else if app.panels.fullscreen {
        charts::grid::view::render_fullscreen(buf, areas.body, app, theme);
    } else {
        charts::grid::view::render_grid(buf, areas.grid, app, theme);
        if let Some(r) = areas.left {
            if app.runs.in_workspace_list() {
                workspace::view::render_runs_pane(buf, r, app, theme);
            } else {
                overview::view::render_left(buf, r, app, theme);
            }
        }
        if let Some(r) = areas.right {
            overview::view::render_right(buf, r, app, theme);
        }
        if let Some(r) = areas.console {
            console::view::render_console(buf, r, app, theme);
        }
        if let Some(r) = areas.media {
            overlay::media::view::render_media_pane(buf, r, app, theme);
        }
        if let Some(r) = areas.header {
            host::view::render_header(buf, r, app, theme);
        }
        if let Some(r) = areas.procs {
            host::procs::view::render_procs(buf, r, app, theme);
        }
    }
    status::render_status(buf, areas.status, app, theme);
    app.overlay.render(buf, area, app, theme);
}

/// The terminal as the app draws on it: its size, the panes' areas and scroll
/// limits for it, the colours and the keys.
#[derive(Debug, Clone)]
pub struct Screen {
    /// The screen, from the last `Msg::Resize`.
    pub size: Rect,
    /// The panes' areas for `size` and the panels shown (computed on resize and
    /// when panels toggle; drawn with and hit-tested against).
    pub areas: layout::Areas,
    /// How far each pane can scroll and how far a page key moves it, for `areas`.
    pub limits: crate::ui::Limits,
    pub color: bool,
    /// See [`crate::ui::Options::true_color`].
    pub true_color: bool,
    /// The colours drawn with (`P`, `palette` in the settings).
    pub palette: crate::ui::palette::Palette,
    pub keymap: crate::ui::keymap::Keymap,
    /// Why the last key did nothing on this screen (said in the status bar until
    /// the next key).
    pub note: Option<String>,
}
