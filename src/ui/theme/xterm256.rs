//! RGB colours as their nearest of the xterm 256 (`Color::Indexed`), for
//! terminals without 24-bit colour. Only the 6×6×6 cube (16–231) and the grey
//! ramp (232–255) are candidates: the first 16 are whatever the terminal's theme
//! makes them.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

/// The cube's channel levels.
const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// The index of the cube level nearest `v` (the levels are 40 apart above 95).
fn level(v: u8) -> u8 {
    match v {
        0..48 => 0,
        48..115 => 1,
        _ => (v - 35) / 40,
    }
}

fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |p: u8, q: u8| u32::from(p.abs_diff(q)).pow(2);
    d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)
}

/// The xterm-256 index nearest (r, g, b) (squared RGB distance): the nearest
/// cube colour (each channel to its nearest level) or the nearest grey (the
/// ramp's step nearest the mean), whichever is closer; the cube on a tie.
#[must_use]
pub(crate) fn nearest(r: u8, g: u8, b: u8) -> u8 {
    let (qr, qg, qb) = (level(r), level(g), level(b));
    let cube = (
        LEVELS[usize::from(qr)],
        LEVELS[usize::from(qg)],
        LEVELS[usize::from(qb)],
    );
    let cube_index = 16 + 36 * qr + 6 * qg + qb;
    let mean = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    // The ramp is 8, 18, …, 238: step i is nearest the means 3 + 10i to 12 + 10i.
    let step = u8::try_from((mean.saturating_sub(3) / 10).min(23)).unwrap_or(23);
    let v = 8 + 10 * step;
    if distance((r, g, b), (v, v, v)) < distance((r, g, b), cube) {
        232 + step
    } else {
        cube_index
    }
}

/// `c` as the terminal can show it: RGB as its nearest index, others as they are.
#[must_use]
pub(crate) fn indexed(c: Color) -> Color {
    match c {
        Color::Rgb(r, g, b) => Color::Indexed(nearest(r, g, b)),
        other => other,
    }
}

/// Every RGB foreground and background in `area` as its nearest index.
pub(crate) fn downgrade(buf: &mut Buffer, area: Rect) {
    let area = area.intersection(buf.area);
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            if let Some(cell) = buf.cell_mut((x, y)) {
                cell.fg = indexed(cell.fg);
                cell.bg = indexed(cell.bg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RGB value xterm gives index `i` (16–255).
    fn xterm_rgb(i: u8) -> (u8, u8, u8) {
        if i >= 232 {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        } else {
            let c = i - 16;
            let l = |q: u8| LEVELS[usize::from(q)];
            (l(c / 36), l(c / 6 % 6), l(c % 6))
        }
    }

    #[test]
    fn known_colours_map_to_their_xterm_index() {
        for (rgb, want) in [
            ((0, 0, 0), 16),
            ((255, 255, 255), 231),
            ((255, 0, 0), 196),
            ((0, 255, 0), 46),
            ((0, 0, 255), 21),
            ((135, 175, 255), 111),
            ((128, 128, 128), 244),
            // The status bar's dark blue-grey: a grey, not the cube's black.
            ((30, 30, 40), 235),
            // Okabe–Ito orange and sky blue.
            ((0xE6, 0x9F, 0x00), 178),
            ((0x56, 0xB4, 0xE9), 74),
        ] {
            assert_eq!(nearest(rgb.0, rgb.1, rgb.2), want, "{rgb:?}");
        }
    }

    #[test]
    fn every_xterm_colour_maps_to_itself() {
        for i in 16..=255u8 {
            let (r, g, b) = xterm_rgb(i);
            assert_eq!(nearest(r, g, b), i, "{:?}", (r, g, b));
        }
    }

    #[test]
    fn the_index_is_the_nearest_of_all_240() {
        let table: Vec<(u8, u8, u8)> = (16..=255u8).map(xterm_rgb).collect();
        let samples = (0..=255u8).step_by(11).chain([1, 47, 48, 114, 115, 254]);
        let samples: Vec<u8> = samples.collect();
        for &r in &samples {
            for &g in &samples {
                for &b in &samples {
                    let got = distance((r, g, b), xterm_rgb(nearest(r, g, b)));
                    let best = table.iter().map(|&c| distance((r, g, b), c)).min();
                    assert_eq!(Some(got), best, "{:?}", (r, g, b));
                }
            }
        }
    }

    #[test]
    fn only_rgb_is_changed_and_only_inside_the_area() {
        assert_eq!(indexed(Color::Cyan), Color::Cyan);
        assert_eq!(indexed(Color::Indexed(7)), Color::Indexed(7));
        assert_eq!(indexed(Color::Reset), Color::Reset);
        assert_eq!(indexed(Color::Rgb(255, 0, 0)), Color::Indexed(196));
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 2));
        for x in 0..4 {
            for y in 0..2 {
                if let Some(c) = buf.cell_mut((x, y)) {
                    c.fg = Color::Rgb(255, 0, 0);
                    c.bg = Color::Rgb(0, 0, 255);
                }
            }
        }
        downgrade(&mut buf, Rect::new(1, 0, 2, 1));
        assert_eq!(buf[(1, 0)].fg, Color::Indexed(196));
        assert_eq!(buf[(2, 0)].bg, Color::Indexed(21));
        assert_eq!(buf[(0, 0)].fg, Color::Rgb(255, 0, 0));
        assert_eq!(buf[(1, 1)].bg, Color::Rgb(0, 0, 255));
        // An area past the buffer is clipped, not a panic.
        downgrade(&mut buf, Rect::new(3, 1, 10, 10));
        assert_eq!(buf[(3, 1)].fg, Color::Indexed(196));
    }
}
