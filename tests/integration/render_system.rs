//! The viewer's system sidebar: focused, its title says so (marked, in the
//! focused title's style, as the console's); it scrolls no further than where its
//! last chart is at the bottom, as the grid's last page is full.

use crate::common;

use common::screen::{app_from, screen};

use crossterm::event::KeyCode;
use leet::msg::Msg;
use leet::ui::panels::Pane;
use leet::ui::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

/// The `system` fixture at `w`×`h` with its system sidebar focused (`tab`).
fn focused_sidebar(w: u16, h: u16) -> App {
    let mut app = app_from("system", w, h);
    for _ in 0..8 {
        if app.panels.focus == Pane::Right {
            return app;
        }
        app.update(Msg::key(KeyCode::Tab));
    }
    panic!("tab never focused the system sidebar");
}

fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    leet::ui::render::render_buffer(&mut buf, area, app);
    buf
}

/// The sidebar's title line and the modifiers of its first letter.
fn title(app: &App, w: u16, h: u16) -> (String, Modifier) {
    let right = app.screen.areas.right.expect("the system sidebar is shown");
    let buf = draw(app, w, h);
    let line: String = (right.left()..right.right())
        .map(|x| buf[(x, right.y)].symbol())
        .collect();
    let at = line.find("System").expect("a System Metrics title");
    let x = right.x + u16::try_from(line[..at].chars().count()).unwrap();
    (line.trim().to_owned(), buf[(x, right.y)].modifier)
}

#[test]
fn the_focused_system_sidebar_shows_its_focus_in_its_title() {
    let (w, h) = (250, 70);
    let app = app_from("system", w, h);
    let (text, m) = title(&app, w, h);
    assert!(
        text.contains("System Metrics [") && !text.contains('▸'),
        "{text}"
    );
    assert!(!m.contains(Modifier::REVERSED), "{text}: {m:?}");
    let app = focused_sidebar(w, h);
    let (text, m) = title(&app, w, h);
    assert!(text.contains("▸ System Metrics ["), "{text}");
    // Without colour, the focused title is reversed (as the console's).
    assert!(m.contains(Modifier::REVERSED), "{text}: {m:?}");
}

#[test]
fn the_system_sidebar_stops_where_its_last_chart_is_at_the_bottom() {
    let (w, h) = (250, 70);
    let mut app = focused_sidebar(w, h);
    let page = app.screen.limits.system_page;
    let n = app.panes.system.shown.len();
    assert!(n > page, "{n} charts, {page} on a page: nothing to scroll");
    let last = format!("[{}-{n} of {n}]", n - page + 1);
    let header = |app: &App| {
        let s = screen(app, w, h);
        s.lines().next().unwrap().to_owned()
    };
    for keys in [
        vec![Msg::key(KeyCode::Down), Msg::key(KeyCode::PageDown)],
        vec![Msg::char('n'), Msg::char('n')],
        vec![Msg::key(KeyCode::End), Msg::char('s')],
        vec![Msg::key(KeyCode::Down)],
    ] {
        for k in keys {
            app.update(k);
        }
        assert!(header(&app).contains(&last), "{}", header(&app));
    }
    // One step up shows the chart before the last page's.
    app.update(Msg::key(KeyCode::Up));
    let before = format!("[{}-{} of {n}]", n - page, n - 1);
    assert!(header(&app).contains(&before), "{}", header(&app));
    insta::assert_snapshot!(
        "system_sidebar_focused_up_from_the_end_250x70",
        screen(&app, w, h)
    );
}
