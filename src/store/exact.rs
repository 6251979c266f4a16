//! History integers past what a double holds (2^53 and beyond), kept exact
//! where they are a series' extremes: their doubles tie (2^53 + 27, + 28 and + 29
//! are all held as 2^53 + 28), so the double's first extreme can name the wrong
//! step. Only rows with such integers come here (the decoder lists them apart),
//! so the common row pays nothing.

use std::collections::BTreeMap;

use crate::store::series::Stats;

/// The exact extremes of one metric's integers past 2^53: (x, value) of the
/// first smallest and the first largest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extremes {
    pub min: Option<(u64, i128)>,
    pub max: Option<(u64, i128)>,
}

/// x kept as its bits, so that `Extremes` compares whole.
fn x_of(bits: u64) -> f64 {
    f64::from_bits(bits)
}

impl Extremes {
    /// A value `v` at `x`: the extremes' first occurrence is kept, as a series
    /// keeps its own.
    pub fn add(&mut self, x: f64, v: i128) {
        if self.min.is_none_or(|(_, m)| v < m) {
            self.min = Some((x.to_bits(), v));
        }
        if self.max.is_none_or(|(_, m)| v > m) {
            self.max = Some((x.to_bits(), v));
        }
    }

    /// `s` with the x and exact value of each extreme these hold whose double is
    /// the one `s` found (a float logged above them leaves `s`'s own).
    #[must_use]
    pub fn apply(&self, mut s: Stats) -> Stats {
        #[allow(clippy::cast_precision_loss, reason = "compared as the double held")]
        let fix = |p: &mut Option<(f64, f64)>, e: Option<(u64, i128)>, exact: &mut Option<i128>| {
            if let (Some((x, y)), Some((ex, ev))) = (p.as_mut(), e) {
                if ev as f64 == *y {
                    *x = x_of(ex);
                    *exact = Some(ev);
                }
            }
        };
        fix(&mut s.min, self.min, &mut s.min_exact);
        fix(&mut s.max, self.max, &mut s.max_exact);
        s
    }
}

/// Per metric, the extremes of its integers past 2^53.
pub type ExactExtremes = BTreeMap<String, Extremes>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_in_the_double_take_the_exact_extremes_step() {
        const BASE: i128 = 1 << 53;
        let mut e = Extremes::default();
        let mut ys = Vec::new();
        for i in 0..30 {
            e.add(f64::from(i), BASE + i128::from(i));
            #[allow(clippy::cast_precision_loss)]
            ys.push((BASE + i128::from(i)) as f64);
        }
        // The double's first max is at step 27 (…+28, as +27..=+29 are held).
        let first_max = ys.iter().position(|&y| y == ys[29]).unwrap();
        assert_eq!(first_max, 27);
        let s = Stats {
            count: 30,
            min: Some((0.0, ys[0])),
            max: Some((27.0, ys[29])),
            ..Stats::default()
        };
        let fixed = e.apply(s);
        assert_eq!(fixed.max, Some((29.0, ys[29])));
        assert_eq!(fixed.max_exact, Some(BASE + 29));
        assert_eq!(fixed.min, Some((0.0, ys[0])));
        assert_eq!(fixed.min_exact, Some(BASE));
        // A larger float logged beside them keeps the series' own extreme.
        let above = Stats {
            max: Some((3.0, 1e300)),
            ..s
        };
        assert_eq!(e.apply(above).max, Some((3.0, 1e300)));
        assert_eq!(e.apply(above).max_exact, None);
    }
}
