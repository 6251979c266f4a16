//! The record body wrapped to its pane's width: a long line (a 200-character
//! console line, a long string value) reads whole over several rows. The rows of
//! each line are counted once per body and width, so a frame walks the line
//! counts (at most the body's 100,000 lines) and splits only the lines it draws.

use unicode_segmentation::UnicodeSegmentation as _;
use unicode_width::UnicodeWidthStr as _;

/// Each body line's number of rows at one width.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BodyWrap {
    /// Columns a row holds (0: not yet known).
    width: usize,
    rows: Vec<u32>,
    total: usize,
}

impl BodyWrap {
    /// `body`'s lines wrapped at `width` columns.
    #[must_use]
    pub fn new(body: &[String], width: usize) -> Self {
        let rows: Vec<u32> = body
            .iter()
            .map(|l| u32::try_from(split(l, width).count()).unwrap_or(u32::MAX))
            .collect();
        let total = rows.iter().map(|&r| r as usize).sum();
        Self { width, rows, total }
    }

    #[must_use]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows of the whole body.
    #[must_use]
    pub fn total(&self) -> usize {
        self.total
    }

    /// The line that row `top` falls in, and its row within that line.
    #[must_use]
    pub fn locate(&self, top: usize) -> (usize, usize) {
        let mut seen = 0;
        for (i, &r) in self.rows.iter().enumerate() {
            let r = r as usize;
            if top < seen + r {
                return (i, top - seen);
            }
            seen += r;
        }
        (self.rows.len(), 0)
    }
}

/// The rows of one line at `width` columns: as many characters (graphemes) as fit
/// in each (one wider than the row has one to itself); an empty line is one
/// empty row.
pub fn split(line: &str, width: usize) -> impl Iterator<Item = &str> {
    let width = width.max(1);
    let mut rest = Some(line);
    std::iter::from_fn(move || {
        let s = rest?;
        let mut used = 0;
        let mut end = s.len();
        // By grapheme, as the terminal draws them (a joined emoji is one).
        for (i, g) in s.grapheme_indices(true) {
            let cw = g.width();
            if used + cw > width && used > 0 {
                end = i;
                break;
            }
            used += cw;
        }
        let (row, tail) = s.split_at(end);
        rest = (!tail.is_empty()).then_some(tail);
        Some(row)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_wraps_into_rows_of_the_width_and_loses_nothing() {
        let line = format!("  \"line\": \"{}\"", "A".repeat(200));
        let rows: Vec<&str> = split(&line, 40).collect();
        assert_eq!(rows.len(), line.len().div_ceil(40));
        assert!(rows.iter().all(|r| r.chars().count() <= 40));
        assert_eq!(rows.concat(), line);
        assert_eq!(split("", 40).collect::<Vec<_>>(), [""]);
        // Wide characters never straddle a row, and a row of one column still
        // holds one.
        let wide: Vec<&str> = split("ab漢字", 3).collect();
        assert_eq!(wide, ["ab", "漢", "字"]);
        assert_eq!(split("漢", 1).collect::<Vec<_>>(), ["漢"]);
        assert_eq!(split("abc", 0).count(), 3);
    }

    #[test]
    fn rows_are_counted_per_line_and_located() {
        let body = vec![
            "{".to_owned(),
            "x".repeat(25),
            String::new(),
            "}".to_owned(),
        ];
        let w = BodyWrap::new(&body, 10);
        assert_eq!(w.total(), 1 + 3 + 1 + 1);
        assert_eq!(w.locate(0), (0, 0));
        assert_eq!(w.locate(1), (1, 0));
        assert_eq!(w.locate(3), (1, 2));
        assert_eq!(w.locate(4), (2, 0));
        assert_eq!(w.locate(5), (3, 0));
        assert_eq!(w.locate(6), (4, 0));
    }
}
