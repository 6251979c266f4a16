//! Screens of a smoothed chart (issue 14): the smoothed line in the series'
//! colour over the raw line drawn faint, the kind and parameter in the title,
//! `smoothing…` while it is computed.

use crate::common;

use common::screen::{app_from, screen, NOW, SIZES};
use crossterm::event::KeyCode;
use leet::msg::Msg;
use leet::runtime::answer;
use leet::ui::{App, Cmd, Effect, Options};
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;

/// Focus chart `key`.
fn focus(app: &mut App, key: &str) {
    app.charts.grid.focus = app
        .charts
        .shown
        .iter()
        .position(|&i| app.charts.metric_keys[i] == key)
        .unwrap();
}

/// The smoothing jobs of `fx` answered by the real executor.
fn settle(app: &mut App, fx: Effect) {
    let mut queue = fx.cmds;
    while let Some(cmd) = queue.pop() {
        if matches!(cmd, Cmd::Smooth(_)) {
            queue.extend(app.update(answer(cmd).unwrap()).cmds);
        }
    }
}

/// `keys` pressed, every smoothing asked for answered.
fn press(app: &mut App, keys: &[Msg]) {
    for k in keys {
        let fx = app.update(k.clone());
        settle(app, fx);
    }
}

#[test]
fn one_smoothed_chart_full_screen_at_three_sizes() {
    for (w, h) in SIZES {
        let mut app = app_from("tiny", w, h);
        focus(&mut app, "loss");
        // EMA 0.7 (e: TWEMA, e: EMA 0.6, +: 0.7), full screen.
        press(
            &mut app,
            &[
                Msg::char('e'),
                Msg::char('e'),
                Msg::char('+'),
                Msg::key(KeyCode::Enter),
            ],
        );
        let shot = screen(&app, w, h);
        assert!(shot.contains("loss · ema 0.7"), "{shot}");
        insta::assert_snapshot!(format!("smooth_ema_loss_{w}x{h}"), shot);
    }
}

#[test]
fn the_title_says_smoothing_until_the_answer_comes() {
    let (w, h) = (120, 40);
    let mut app = app_from("tiny", w, h);
    focus(&mut app, "loss");
    let fx = app.update(Msg::char('e'));
    assert!(screen(&app, w, h).contains("loss · twema 0.6 smoothing…"));
    settle(&mut app, fx);
    let shot = screen(&app, w, h);
    assert!(shot.contains("loss · twema 0.6"), "{shot}");
    assert!(!shot.contains("smoothing…"), "{shot}");
}

/// A fixture's run in colour (the snapshots have none).
fn colour_app(w: u16, h: u16) -> App {
    let dir = common::runs_dir().join("tiny/wandb/latest-run");
    let (_, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: "tiny.wandb".into(),
        len: batch.file_len,
        modified: Some(NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(NOW));
    app
}

/// The braille cells drawn in `colour`: (plain, dim) counts.
fn braille(app: &App, w: u16, h: u16, colour: Color) -> (usize, usize) {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| leet::ui::render::render(f, app)).unwrap();
    let buf = t.backend().buffer();
    let (mut plain, mut dim) = (0, 0);
    for y in 0..h {
        for x in 0..w {
            let c = &buf[(x, y)];
            let ch = c.symbol().chars().next().unwrap_or(' ');
            if !('\u{2801}'..='\u{28FF}').contains(&ch) || c.fg != colour {
                continue;
            }
            if c.modifier.contains(Modifier::DIM) {
                dim += 1;
            } else {
                plain += 1;
            }
        }
    }
    (plain, dim)
}

#[test]
fn the_raw_line_is_faint_under_the_smoothed_line_in_the_series_colour() {
    let (w, h) = (120, 40);
    let mut app = colour_app(w, h);
    focus(&mut app, "loss");
    press(&mut app, &[Msg::key(KeyCode::Enter)]);
    // Unsmoothed: the line in the first series colour, nothing dim.
    let (plain, dim) = braille(&app, w, h, Color::Cyan);
    assert!(plain > 20 && dim == 0, "{plain} {dim}");
    // Gaussian σ 5 over 50 noisy points: both lines, the raw one dim.
    press(&mut app, &vec![Msg::char('e'); 4]);
    assert!(matches!(
        app.charts.smoothing.of("loss"),
        leet::store::smooth::Smoothing::Gaussian(_)
    ));
    let (plain, dim) = braille(&app, w, h, Color::Cyan);
    assert!(plain > 20, "smoothed line: {plain}");
    assert!(dim > 10, "raw line: {dim}");
    // `e` once more: none; the raw line is plain again.
    press(&mut app, &[Msg::char('e')]);
    let (_, dim) = braille(&app, w, h, Color::Cyan);
    assert_eq!(dim, 0);
}

/// The columns holding a plain (not dim) braille cell in `colour`.
fn plain_columns(app: &App, w: u16, h: u16, colour: Color) -> usize {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| leet::ui::render::render(f, app)).unwrap();
    let buf = t.backend().buffer();
    (0..w)
        .filter(|&x| {
            (0..h).any(|y| {
                let c = &buf[(x, y)];
                let ch = c.symbol().chars().next().unwrap_or(' ');
                ('\u{2801}'..='\u{28FF}').contains(&ch)
                    && c.fg == colour
                    && !c.modifier.contains(Modifier::DIM)
            })
        })
        .count()
}

/// A smoothed chart drawn against another x (relative time, then log x) draws
/// its smoothed line in that x too, over the faint raw one: mapped as the raw
/// points are, not left in step units outside the axis.
#[test]
fn the_smoothed_line_follows_the_chosen_x_axis() {
    let (w, h) = (120, 40);
    let mut app = colour_app(w, h);
    focus(&mut app, "loss");
    press(&mut app, &[Msg::char('x'), Msg::key(KeyCode::Enter)]);
    press(&mut app, &vec![Msg::char('e'); 4]);
    let shot = screen(&app, w, h);
    assert!(shot.contains("loss · x=rel · gauss 5"), "{shot}");
    let (plain, dim) = braille(&app, w, h, Color::Cyan);
    assert!(plain > 20, "smoothed line: {plain}\n{shot}");
    assert!(dim > 10, "raw line: {dim}");
    // Across the chart, not a stroke at its edge.
    let cols = plain_columns(&app, w, h, Color::Cyan);
    assert!(cols > 60, "smoothed line in {cols} columns\n{shot}");
    press(
        &mut app,
        &[
            Msg::key(KeyCode::Esc),
            Msg::char('L'),
            Msg::key(KeyCode::Enter),
        ],
    );
    let shot = screen(&app, w, h);
    assert!(shot.contains("logx"), "{shot}");
    let (plain, dim) = braille(&app, w, h, Color::Cyan);
    assert!(plain > 20, "smoothed line on log x: {plain}\n{shot}");
    assert!(dim > 10, "raw line on log x: {dim}");
    let cols = plain_columns(&app, w, h, Color::Cyan);
    assert!(
        cols > 60,
        "smoothed line on log x in {cols} columns\n{shot}"
    );
}
