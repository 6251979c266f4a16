use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;

/// Relative luminance (WCAG), of an sRGB colour.
fn luminance(c: Color) -> f64 {
    let Color::Rgb(r, g, b) = c else {
        panic!("not RGB: {c:?}")
    };
    let lin = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.040_45 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

fn contrast(a: Color, b: Color) -> f64 {
    let (x, y) = (luminance(a), luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

#[test]
fn the_default_palette_is_the_terminals_16_colours_as_before() {
    let t = Theme::new(true, Palette::Default);
    assert_eq!(t.series(0).fg, Some(Color::Cyan));
    assert_eq!(t.series(9).fg, Some(Color::Magenta));
    assert_eq!(t.heading().fg, Some(Color::LightYellow));
    assert_eq!(t.text(), Style::new());
    assert_eq!(t.status_bar().bg, Some(Color::Rgb(30, 30, 40)));
}

#[test]
fn the_light_palette_reads_on_white_and_the_others_on_black() {
    let white = Color::Rgb(255, 255, 255);
    let black = Color::Rgb(0, 0, 0);
    for p in [Palette::WandbVibe10, Palette::OkabeIto, Palette::TolBright] {
        let c = colors(p);
        for s in c.series.iter().chain([&c.heading, &c.key, &c.label]) {
            assert!(contrast(*s, black) >= 3.0, "{p}: {s:?}");
        }
    }
    let c = colors(Palette::Light);
    for s in c
        .series
        .iter()
        .chain([&c.heading, &c.key, &c.good, &c.bad, &c.warn])
    {
        assert!(contrast(*s, white) >= 4.5, "light: {s:?}");
    }
    for s in [c.text, Some(c.label), Some(c.input)].into_iter().flatten() {
        assert!(contrast(s, white) >= 7.0, "light: {s:?}");
    }
    // Axes and borders: quieter than text, still seen on white (and on the bar).
    assert!(contrast(c.dim, white) >= 3.0);
    assert!(contrast(c.dim, c.bar) >= 3.0);
    assert!(c.text.is_some_and(|t| contrast(t, c.bar) >= 7.0));
}

#[test]
fn without_colour_no_palette_gives_a_colour() {
    for p in Palette::ALL {
        let t = Theme::new(false, p);
        for s in [
            t.text(),
            t.dim(),
            t.label(),
            t.heading(),
            t.key(),
            t.border(true),
            t.title(true),
            t.series(3),
            t.good(),
            t.bad(),
            t.warn(),
            t.status_bar(),
            t.zebra(),
            t.input(),
        ] {
            assert_eq!((s.fg, s.bg), (None, None), "{p}");
        }
    }
}

/// The `tiny` fixture's run on a `w`×`h` screen in colour, with the first
/// `compared` runs of `multi` drawn beside it.
fn app(palette: Palette, true_color: bool, compared: usize, w: u16, h: u16) -> crate::ui::App {
    use crate::msg::Msg;
    let runs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let mut app = crate::ui::App::new(crate::ui::Options {
        true_color,
        ..crate::ui::Options::default()
    });
    app.update(Msg::Resize(w, h));
    let (file, batch) =
        crate::source::tail::read_batch(&runs.join("tiny/wandb/latest-run")).expect("tiny fixture");
    app.update(Msg::Opened {
        path: file,
        len: batch.file_len,
        modified: None,
    });
    app.update(Msg::Run(batch));
    let mut others: Vec<_> = std::fs::read_dir(runs.join("multi/wandb"))
        .expect("multi fixture")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    others.sort();
    for dir in others.into_iter().take(compared) {
        app.request_compare(dir.clone(), dir.clone());
        let (_, batch) = crate::source::tail::read_batch(&dir).expect("multi run");
        let tag = app.runs.compare.last().expect("compared").tag;
        app.update(Msg::Tagged(tag, Box::new(Msg::Run(batch))));
    }
    app.take_cmds();
    // Through the key, as a user picks it.
    while app.screen.palette != palette {
        app.update(Msg::char('P'));
    }
    app
}

fn draw(app: &crate::ui::App, w: u16, h: u16) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    crate::ui::render::render_buffer(&mut buf, area, app);
    buf
}

/// Every colour a palette gives.
fn all_colors(c: &Colors) -> Vec<Color> {
    let mut v = c.series.to_vec();
    v.extend(c.text);
    // Where it leaves text in the terminal's colour: the text over its fixed
    // backgrounds.
    v.extend(c.text.is_none().then_some(ON_DARK));
    v.extend([
        c.label, c.dim, c.heading, c.key, c.good, c.bad, c.warn, c.input, c.bar, c.zebra,
    ]);
    v
}

fn is_braille(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| ('\u{2801}'..='\u{28FF}').contains(&c))
}

#[test]
fn every_colour_on_screen_comes_from_the_palette() {
    for p in Palette::ALL {
        let c = colors(p);
        let mine = all_colors(c);
        for (w, h, compared) in [(80, 24, 0), (120, 40, 2)] {
            let buf = draw(&app(p, true, compared, w, h), w, h);
            let mut lines = Vec::new();
            for cell in &buf.content {
                for col in [cell.fg, cell.bg] {
                    if col != Color::Reset {
                        assert!(mine.contains(&col), "{p} {w}x{h}: {col:?} is not its own");
                    }
                    // No colour of another palette is left: the RGB palettes
                    // draw nothing in the terminal's own 16.
                    if p != Palette::Default && col != Color::Reset {
                        assert!(matches!(col, Color::Rgb(..)), "{p}: {col:?}");
                    }
                }
                if is_braille(cell.symbol()) && !lines.contains(&cell.fg) {
                    lines.push(cell.fg);
                }
            }
            // The lines: the run's in the first series colour, each compared
            // run's in the next ones (the multi runs log `loss`, as tiny does).
            lines.sort_by_key(|l| c.series.iter().position(|s| s == l));
            assert_eq!(lines, c.series[..=compared], "{p} {w}x{h}");
            // Accents too: the focused chart's border and the bar.
            assert!(buf.content.iter().any(|x| x.fg == c.heading), "{p}");
            assert!(buf.content.iter().any(|x| x.bg == c.bar), "{p}");
        }
    }
}

#[test]
fn without_true_colour_each_rgb_colour_is_drawn_as_its_nearest_index() {
    for p in Palette::ALL {
        let rgb = draw(&app(p, true, 2, 120, 40), 120, 40);
        let idx = draw(&app(p, false, 2, 120, 40), 120, 40);
        for (a, b) in rgb.content.iter().zip(&idx.content) {
            assert_eq!(a.symbol(), b.symbol());
            assert_eq!(b.fg, xterm256::indexed(a.fg), "{p}");
            assert_eq!(b.bg, xterm256::indexed(a.bg), "{p}");
            assert!(!matches!(b.fg, Color::Rgb(..)) && !matches!(b.bg, Color::Rgb(..)));
        }
    }
}

#[test]
fn no_color_draws_no_colour_in_any_palette() {
    for p in Palette::ALL {
        for true_color in [true, false] {
            let mut a = app(p, true_color, 2, 120, 40);
            a.screen.color = false;
            let buf = draw(&a, 120, 40);
            assert!(
                buf.content
                    .iter()
                    .all(|c| c.fg == Color::Reset && c.bg == Color::Reset),
                "{p}"
            );
        }
    }
}

/// A dark palette's fixed backgrounds (status bar, zebra rows) come with a light
/// foreground where it leaves text in the terminal's own colour, which a light
/// terminal theme makes dark: dark on dark otherwise. Without colour, nothing.
#[test]
fn text_over_a_fixed_dark_background_is_light() {
    for p in Palette::ALL {
        let t = Theme::new(true, p);
        for s in [t.status_bar(), t.zebra()] {
            let bg = s.bg.expect("a background");
            let fg =
                s.fg.or(t.text().fg)
                    .expect("a foreground over a fixed background");
            assert!(contrast(fg, bg) > 4.5, "{p:?}: {fg:?} on {bg:?}");
        }
        let plain = Theme::new(false, p);
        assert_eq!(plain.status_bar(), Style::new());
        assert_eq!(plain.zebra(), Style::new());
    }
}
