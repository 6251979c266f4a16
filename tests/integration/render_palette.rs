//! Colour palettes on screen: the `tiny` run at 80×24 in each palette (picked
//! with `P`), shot with its colours: the text, then a map of each cell's
//! foreground and background (a letter per colour, named below the maps), since
//! a text snapshot alone shows none. Also: where the terminal has no 24-bit
//! colour, and the settings file's `palette` through the binary.

use crate::common;

use common::screen::app_from;

use leet::msg::Msg;
use leet::ui::palette::Palette;
use leet::ui::App;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::Color;

fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    leet::ui::render::render_buffer(&mut buf, area, app);
    buf
}

/// The `tiny` run in colour, in `palette` (reached by pressing `P`).
fn tiny_in(palette: Palette, w: u16, h: u16) -> App {
    let mut app = app_from("tiny", w, h);
    app.screen.color = true;
    let mut presses = 0;
    while app.screen.palette != palette {
        app.update(Msg::char('P'));
        presses += 1;
        assert!(presses < Palette::ALL.len(), "P never reaches {palette}");
    }
    app
}

/// Letters naming the colours of a shot, in order of first use.
const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

fn fg_of(c: &Cell) -> Color {
    c.fg
}

fn bg_of(c: &Cell) -> Color {
    c.bg
}

/// The screen's text, then its foreground and background maps: `.` the
/// terminal's own colour, a letter per colour, named at the end.
fn shot(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let row: String = (area.left()..area.right())
            .map(|x| buf[(x, y)].symbol())
            .collect();
        out.push_str(row.trim_end());
        out.push('\n');
    }
    let mut legend: Vec<Color> = Vec::new();
    for (title, pick) in [
        ("foreground", fg_of as fn(&Cell) -> Color),
        ("background", bg_of),
    ] {
        out.push_str(&format!("-- {title} --\n"));
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                let c = pick(&buf[(x, y)]);
                if c == Color::Reset {
                    out.push('.');
                    continue;
                }
                let i = legend.iter().position(|l| *l == c).unwrap_or_else(|| {
                    legend.push(c);
                    legend.len() - 1
                });
                out.push(char::from(LETTERS[i]));
            }
            out.push('\n');
        }
    }
    out.push_str("-- colours --\n");
    for (i, c) in legend.iter().enumerate() {
        out.push_str(&format!("{} = {c:?}\n", char::from(LETTERS[i])));
    }
    out
}

#[test]
fn snapshots_of_each_palette() {
    for p in Palette::ALL {
        let app = tiny_in(p, 80, 24);
        insta::assert_snapshot!(
            format!("tiny_80x24_palette_{}", p.name()),
            shot(&draw(&app, 80, 24))
        );
    }
}

#[test]
fn the_default_palette_on_a_256_colour_terminal() {
    // The 16 colours as they are; the status bar's RGB as its nearest index.
    let mut app = tiny_in(Palette::Default, 80, 24);
    app.screen.true_color = false;
    insta::assert_snapshot!("tiny_80x24_palette_default_256", shot(&draw(&app, 80, 24)));
    // Okabe–Ito: every colour an index, the run's line its orange's (178).
    let mut app = tiny_in(Palette::OkabeIto, 80, 24);
    app.screen.true_color = false;
    let buf = draw(&app, 80, 24);
    assert!(buf
        .content
        .iter()
        .all(|c| !matches!(c.fg, Color::Rgb(..)) && !matches!(c.bg, Color::Rgb(..))));
    let braille = |c: &Cell| {
        c.symbol()
            .chars()
            .next()
            .is_some_and(|ch| ('\u{2801}'..='\u{28FF}').contains(&ch))
    };
    let lines: Vec<Color> = buf
        .content
        .iter()
        .filter(|c| braille(c))
        .map(|c| c.fg)
        .collect();
    assert!(!lines.is_empty());
    assert!(lines.iter().all(|c| *c == Color::Indexed(178)), "{lines:?}");
}

#[test]
fn p_cycles_the_palette_in_the_grid_and_full_screen_and_help_lists_it() {
    let mut app = tiny_in(Palette::Default, 120, 40);
    let mut seen = vec![app.screen.palette];
    for _ in 1..Palette::ALL.len() {
        app.update(Msg::char('P'));
        seen.push(app.screen.palette);
    }
    assert_eq!(seen, Palette::ALL);
    app.update(Msg::char('P'));
    assert_eq!(app.screen.palette, Palette::Default);
    // Full screen: the same key.
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    assert!(app.panels.fullscreen);
    app.update(Msg::char('P'));
    assert_eq!(app.screen.palette, Palette::WandbVibe10);
    let help = leet::ui::keymap::help_lines(&app.screen.keymap, false);
    assert!(
        help.iter()
            .any(|(k, d)| k == "P" && d.starts_with("Cycle colour palette")),
        "{help:?}"
    );
}

/// `leet --print-config` (or a run) with `--config FILE`, `XDG_CONFIG_HOME` in a
/// temporary directory.
fn leet_with(config: &str, args: &[&str]) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("palette.toml");
    std::fs::write(&file, config).unwrap();
    let tiny = common::runs_dir().join("tiny");
    crate::common::isolated::leet()
        .arg("--config")
        .arg(&file)
        .args(args)
        .arg(tiny)
        .env("XDG_CONFIG_HOME", home.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn the_settings_file_names_the_palette_and_a_bad_one_exits_2() {
    let out = leet_with(
        "[viewer]\npalette = \"okabe-ito\"\n[live]\npalette = \"light\"\n",
        &["--print-config"],
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let viewer = text.split("\n[live]\n").next().unwrap();
    assert!(viewer.contains("\npalette = \"okabe-ito\"\n"), "{text}");
    assert!(text.contains("\n[live]\n") && text.contains("\npalette = \"light\"\n"));
    for args in [&["--print-config"][..], &[]] {
        let out = leet_with("[viewer]\npalette = \"neon\"\n", args);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(out.stdout.is_empty(), "the terminal was touched");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("leet: ")
                && err.contains(
                    "palette.toml:2:1: [viewer] key 'palette': unknown palette 'neon' \
                     (expected default, wandb-vibe-10, okabe-ito, tol-bright or light)"
                ),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
