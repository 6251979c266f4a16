//! Gaps in a chart: the segments not drawn across a break, and the marks of the
//! skipped spans on the x axis row.

use ratatui::buffer::Buffer;

use super::Theme;

/// Whether the segment from x `a` to x `b` spans one of `breaks` (touching both
/// of its ends, or beyond).
pub(super) fn crosses(breaks: &[(f64, f64)], a: f64, b: f64) -> bool {
    let (lo, hi) = (a.min(b), a.max(b));
    breaks.iter().any(|&(s, e)| lo <= s && hi >= e)
}

/// The plot columns (from its left) a gap's mark covers, for each gap inside
/// `x`: (first, last, the column of its `╳`). The columns strictly between the
/// last point before and the first after; one column when they are adjacent.
pub(super) fn gap_columns(gaps: &[(f64, f64)], x: (f64, f64), width: u16) -> Vec<(u16, u16, u16)> {
    let (x0, x1) = x;
    if width == 0 || x1 <= x0 {
        return Vec::new();
    }
    let last = f64::from(width - 1);
    let col = |v: f64| ((v - x0) / (x1 - x0) * last).round().clamp(0.0, last) as u16;
    gaps.iter()
        .filter(|&&(a, b)| b > a && b >= x0 && a <= x1)
        .map(|&(a, b)| {
            let (ca, cb) = (col(a), col(b));
            let (from, to) = if cb > ca + 1 {
                (ca + 1, cb - 1)
            } else {
                let m = ca + (cb - ca) / 2;
                (m, m)
            };
            (from, to, from + (to - from) / 2)
        })
        .collect()
}

/// The gap marks on row `y` (plot columns from `left`), in the cells the labels
/// left blank.
pub(super) fn draw_gap_marks(
    buf: &mut Buffer,
    left: u16,
    y: u16,
    marks: &[(u16, u16, u16)],
    theme: Theme,
) {
    for &(a, b, mid) in marks {
        for c in a..=b {
            let ch = if c == mid { "╳" } else { "┄" };
            if let Some(cell) = buf.cell_mut((left + c, y)) {
                if cell.symbol() == " " {
                    cell.set_symbol(ch).set_style(theme.warn());
                }
            }
        }
    }
}
