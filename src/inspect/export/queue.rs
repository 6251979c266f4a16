//! The rows of an export waiting for their smoothed values, written in order as
//! those become known.

use std::collections::VecDeque;
use std::io;

use super::table::{Cell, Other, Table};
use crate::store::smooth::stream::{Prep, Stream};
use crate::store::smooth::Smoothing;

/// Each selected series' streaming smoother and the values it gave that no row has
/// taken yet: `ready[c][i]` is the value of series `c`'s point `base[c] + i`.
pub(super) struct Smoothed {
    streams: Vec<Stream>,
    ready: Vec<VecDeque<f64>>,
    base: Vec<u64>,
    pushed: Vec<u64>,
}

impl Smoothed {
    /// A smoother per series, each told what the first pass saw of its series.
    pub(super) fn new(smoothing: Smoothing, preps: &[Prep]) -> Self {
        Self {
            streams: preps.iter().map(|p| Stream::new(smoothing, p)).collect(),
            ready: vec![VecDeque::new(); preps.len()],
            base: vec![0; preps.len()],
            pushed: vec![0; preps.len()],
        }
    }

    /// Push a point of series `col`; its number in the series.
    pub(super) fn push(&mut self, col: usize, x: f64, y: f64) -> u64 {
        let seq = self.pushed[col];
        self.pushed[col] += 1;
        self.streams[col].push(x, y);
        while let Some(v) = self.streams[col].pop() {
            self.ready[col].push_back(v);
        }
        seq
    }

    pub(super) fn advance(&mut self, x: f64) {
        for (st, ready) in self.streams.iter_mut().zip(&mut self.ready) {
            st.advance(x);
            while let Some(v) = st.pop() {
                ready.push_back(v);
            }
        }
    }

    pub(super) fn finish(&mut self) {
        for (st, ready) in self.streams.iter_mut().zip(&mut self.ready) {
            st.finish();
            while let Some(v) = st.pop() {
                ready.push_back(v);
            }
        }
    }

    /// Point `seq` of series `col`'s value, when known.
    fn get(&self, col: usize, seq: u64) -> Option<f64> {
        let i = usize::try_from(seq.checked_sub(self.base[col])?).ok()?;
        self.ready[col].get(i).copied()
    }

    /// Forget the values up to point `seq` of series `col` (rows take them in order).
    fn taken(&mut self, col: usize, seq: u64) {
        while self.base[col] <= seq && self.ready[col].pop_front().is_some() {
            self.base[col] += 1;
        }
    }
}

/// A row to write: its numbers, the key's column (long form), the smoothed
/// cells still waiting: (cell, series, point), and the cells whose value is not
/// a plain double (a string, a boolean, an integer beyond 2^53), which win over
/// `nums` (where a number's nearest double stays, for smoothing).
pub(super) struct Waiting {
    pub(super) nums: Vec<Option<f64>>,
    pub(super) key: Option<usize>,
    pub(super) waits: Vec<(usize, usize, u64)>,
    pub(super) others: Vec<(usize, Other)>,
}

impl Waiting {
    pub(super) fn new(cells: usize) -> Self {
        Self {
            nums: vec![None; cells],
            key: None,
            waits: Vec::new(),
            others: Vec::new(),
        }
    }

    /// Set cell `c` (a later value of the same cell replaces an earlier one).
    #[inline]
    pub(super) fn set(&mut self, c: usize, num: Option<f64>, other: Option<Other>) {
        if !self.others.is_empty() {
            self.others.retain(|o| o.0 != c);
        }
        self.nums[c] = num;
        if let Some(o) = other {
            self.others.push((c, o));
        }
    }
}

/// The rows not written yet, in order.
#[derive(Default)]
pub(super) struct Queue {
    pub(super) rows: VecDeque<Waiting>,
}

impl Queue {
    /// Move the rows from the front whose smoothed values are all known to `out`,
    /// in order; how many cells they hold.
    pub(super) fn ready(&mut self, smoothed: &mut Smoothed, out: &mut Vec<Waiting>) -> usize {
        let mut cells = 0;
        while let Some(front) = self.rows.front_mut() {
            for w in &front.waits {
                match smoothed.get(w.1, w.2) {
                    Some(v) => front.nums[w.0] = Some(v),
                    None => return cells,
                }
            }
            let Some(r) = self.rows.pop_front() else {
                break;
            };
            for w in &r.waits {
                smoothed.taken(w.1, w.2);
            }
            cells += r.nums.len();
            out.push(r);
        }
        cells
    }
}

/// Write one row whose values are all known: a long row's key (at `key_at`) by its
/// name.
pub(super) fn write_row(
    table: &mut Table<'_>,
    r: &Waiting,
    names: &[String],
    key_at: usize,
    cells: &mut Vec<Cell<'static>>,
) -> io::Result<()> {
    let text = |k: usize| names.get(k).map_or("", String::as_str);
    match r.key {
        Some(k) => {
            let mut row: Vec<Cell<'_>> = r.nums[..key_at].iter().map(|v| Cell::Num(*v)).collect();
            row.push(Cell::Text(text(k)));
            row.extend(r.nums[key_at + 1..].iter().map(|v| Cell::Num(*v)));
            for (c, o) in &r.others {
                row[*c] = Cell::Other(o);
            }
            table.row(&row)
        }
        None if r.others.is_empty() => {
            cells.clear();
            cells.extend(r.nums.iter().map(|v| Cell::Num(*v)));
            table.row(cells)
        }
        None => {
            let mut row: Vec<Cell<'_>> = r.nums.iter().map(|v| Cell::Num(*v)).collect();
            for (c, o) in &r.others {
                row[*c] = Cell::Other(o);
            }
            table.row(&row)
        }
    }
}
