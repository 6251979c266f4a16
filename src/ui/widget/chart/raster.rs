//! The chart's braille dot raster: 2×4 dots per cell, one colour index per cell.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// A braille dot raster with one colour index per cell (last writer wins).
pub(super) struct Raster {
    w: usize,
    h: usize,
    bits: Vec<u8>,
    color: Vec<u16>,
    /// The cell's dots are a band's shading: the first line dot there clears them,
    /// so a line keeps its shape (not a full ⣿ in its colour) inside a band.
    shade: Vec<bool>,
}

const DOTS: [[u8; 4]; 2] = [[0x01, 0x02, 0x04, 0x40], [0x08, 0x10, 0x20, 0x80]];

impl Raster {
    pub(super) fn new(w: usize, h: usize) -> Self {
        Self {
            w,
            h,
            bits: vec![0; w * h],
            color: vec![0; w * h],
            shade: vec![false; w * h],
        }
    }

    /// Dots across.
    pub(super) fn dot_columns(&self) -> usize {
        self.w * 2
    }

    /// Whether cell (`cx`, `cy`) has dots (off the raster: no).
    pub(super) fn filled(&self, cx: usize, cy: usize) -> bool {
        cx < self.w && cy < self.h && self.bits[cy * self.w + cx] != 0
    }

    /// The cell index and dot bit of a dot, if it is on the raster.
    fn at(&self, px: i64, py: i64) -> Option<(usize, u8)> {
        let (Ok(px), Ok(py)) = (usize::try_from(px), usize::try_from(py)) else {
            return None;
        };
        let (cx, cy) = (px / 2, py / 4);
        if cx >= self.w || cy >= self.h {
            return None;
        }
        Some((cy * self.w + cx, DOTS[px % 2][py % 4]))
    }

    pub(super) fn dot(&mut self, px: i64, py: i64, c: u16) {
        let Some((i, bit)) = self.at(px, py) else {
            return;
        };
        if self.shade[i] {
            self.shade[i] = false;
            self.bits[i] = 0;
        }
        self.bits[i] |= bit;
        self.color[i] = c;
    }

    /// A band's dot: never into a cell a line has drawn in.
    fn shade_dot(&mut self, px: i64, py: i64, c: u16) {
        let Some((i, bit)) = self.at(px, py) else {
            return;
        };
        if self.bits[i] != 0 && !self.shade[i] {
            return;
        }
        self.shade[i] = true;
        self.bits[i] |= bit;
        self.color[i] = c;
    }

    /// Shade dot column `px` from dot row `top` down to `bottom` (clamped).
    pub(super) fn shade_column(&mut self, px: i64, top: i64, bottom: i64, c: u16) {
        let last = i64::try_from(self.h * 4).unwrap_or(i64::MAX) - 1;
        let (top, bottom) = (top.min(bottom).max(0), bottom.max(top).min(last));
        for py in top..=bottom {
            self.shade_dot(px, py, c);
        }
    }

    pub(super) fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: u16) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        // Segments are clipped to the raster before this, so this is bounded.
        for _ in 0..=(dx.max(-dy) + 1) {
            self.dot(x, y, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    pub(super) fn draw(&self, buf: &mut Buffer, area: Rect, styles: &[Style]) {
        for cy in 0..self.h.min(usize::from(area.height)) {
            for cx in 0..self.w.min(usize::from(area.width)) {
                let i = cy * self.w + cx;
                if self.bits[i] == 0 {
                    continue;
                }
                let ch = char::from_u32(0x2800 + u32::from(self.bits[i])).unwrap_or(' ');
                let pos = (area.x + cx as u16, area.y + cy as u16);
                if let Some(cell) = buf.cell_mut(pos) {
                    cell.set_char(ch);
                    cell.set_style(
                        styles
                            .get(usize::from(self.color[i]))
                            .copied()
                            .unwrap_or_default(),
                    );
                }
            }
        }
    }
}
