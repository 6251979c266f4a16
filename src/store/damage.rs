//! The damage report of a run: what was skipped, and how the file ends.

use leet_format::leveldb::{Skip, SkipReason};

/// What was lost to damage, and how the file ends.
///
/// The counts and `skips` include the span a live reader still holds open at the end
/// of what it read (see [`DamageReport::set_open`]), so a report taken at any moment
/// is the damage of the bytes read so far, and never counts a byte twice.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DamageReport {
    /// Skipped spans, in file order (kept up to a limit; counts are exact).
    pub skips: Vec<Skip>,
    pub skipped_spans: u64,
    pub skipped_bytes: u64,
    /// Records whose framing was intact but whose protobuf did not decode.
    pub bad_records: u64,
    /// Bytes of records read before (a duplicated part of the file), dropped;
    /// counted in `skipped_bytes` too.
    pub duplicate_bytes: u64,
    /// Spans of a record too large to read ([`SkipReason::RecordTooLarge`]): each
    /// an intact record over the record cap, not damage; counted in the spans too.
    pub too_large: u64,
    /// Bytes at the end of the file that form an incomplete record.
    pub incomplete_tail: u64,
    /// Another run file joined on after this one's records
    /// ([`SkipReason::AppendedFile`]): where its header is and its bytes, none
    /// read (counted in the spans and `skipped_bytes` too).
    pub appended: Option<Skip>,
    /// The span still open at the end of what was read (counted above).
    open: Option<Skip>,
}

impl DamageReport {
    const KEEP: usize = 1000;

    /// A finished span. It replaces the open one, which it ends (a reader hands on
    /// the final form of a span it held open) or follows.
    pub fn add(&mut self, s: Skip) {
        self.retract_open();
        self.count(s);
    }

    /// The reader's open span, as it stands now (None once none is open): replaces
    /// the one set before.
    pub fn set_open(&mut self, s: Option<Skip>) {
        self.retract_open();
        if let Some(s) = s {
            self.count(s);
            self.open = Some(s);
        }
    }

    /// Another file's report added to this one (a run made of several files):
    /// its counts, and its spans while fewer than the limit are kept (their
    /// offsets are in its own file).
    pub fn absorb(&mut self, o: &DamageReport) {
        self.skipped_spans += o.skipped_spans;
        self.skipped_bytes += o.skipped_bytes;
        self.bad_records += o.bad_records;
        self.duplicate_bytes += o.duplicate_bytes;
        self.too_large += o.too_large;
        self.incomplete_tail += o.incomplete_tail;
        self.appended = self.appended.or(o.appended);
        let room = Self::KEEP.saturating_sub(self.skips.len());
        self.skips.extend(o.skips.iter().take(room).copied());
    }

    fn count(&mut self, s: Skip) {
        self.skipped_spans += 1;
        self.skipped_bytes += s.len;
        if s.reason == SkipReason::Duplicate {
            self.duplicate_bytes += s.len;
        }
        if s.reason == SkipReason::RecordTooLarge {
            self.too_large += 1;
        }
        if s.reason == SkipReason::AppendedFile {
            self.appended = Some(s);
        }
        if self.skips.len() < Self::KEEP {
            self.skips.push(s);
        }
    }

    fn retract_open(&mut self) {
        if let Some(o) = self.open.take() {
            self.skipped_spans -= 1;
            self.skipped_bytes -= o.len;
            if o.reason == SkipReason::Duplicate {
                self.duplicate_bytes -= o.len;
            }
            if o.reason == SkipReason::RecordTooLarge {
                self.too_large -= 1;
            }
            if o.reason == SkipReason::AppendedFile {
                self.appended = None;
            }
            // Spans never overlap, so only the open one itself can equal it.
            if let Some(i) = self.skips.iter().rposition(|k| *k == o) {
                self.skips.remove(i);
            }
        }
    }

    /// The spans and bytes skipped as damage: all of them but another run file
    /// joined on ([`DamageReport::appended`]), which is said apart.
    #[must_use]
    pub fn corrupt(&self) -> (u64, u64) {
        (
            self.skipped_spans - u64::from(self.appended.is_some()),
            self.skipped_bytes - self.appended.map_or(0, |a| a.len),
        )
    }

    /// Nothing was skipped (an incomplete tail is not damage).
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.skipped_spans == 0
    }
}

/// Where history steps were lost to damage: a break is the `_step` range between
/// the highest step read before a damaged span and the first one after it, when
/// the two are not consecutive, less the steps read later from further on in the
/// file (a file whose blocks were moved holds them after the damage). Charts draw
/// no line across a break and mark it on the x axis.
///
/// Fed only by damage, by the first complete row after it, and by rows whose step
/// falls below the end of the last break (never per point), so clean files pay a
/// test or two per row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Breaks {
    /// (last step before, first step after), by step, disjoint (kept up to a
    /// limit).
    spans: Vec<(f64, f64)>,
    /// Damage seen since the last complete row: the highest step read before it
    /// (None: no step had been read yet).
    armed: Option<Option<i64>>,
}

impl Breaks {
    const KEEP: usize = 1000;

    /// Damage arrived; `highest` is the highest step read before it. Later
    /// damage before the next row widens the same break.
    pub fn damage(&mut self, highest: Option<i64>) {
        if self.armed.is_none() {
            self.armed = Some(highest);
        }
    }

    /// Whether a complete row at `step` may change the breaks (the hook's cheap
    /// test): damage waits for it, or it falls inside a break.
    #[must_use]
    #[inline]
    pub fn wants(&self, step: Option<i64>) -> bool {
        self.armed.is_some()
            || self
                .spans
                .last()
                .is_some_and(|&(_, end)| step.is_some_and(|s| (s as f64) < end))
    }

    /// A complete row at `step`. After damage, the steps strictly between the
    /// highest one before and this one were lost; a step inside a break was not.
    pub fn row(&mut self, step: Option<i64>) {
        let before = self.armed.take();
        let Some(s) = step else {
            return;
        };
        self.read(s);
        if let Some((Some(a), b)) = before.map(|a| (a, s)) {
            if b > a.saturating_add(1) && self.spans.len() < Self::KEEP {
                // Every break so far ends at or below `a` (a step read): in order.
                self.spans.push((a as f64, b as f64));
            }
        }
    }

    /// Step `s` was read: the break holding it (if any) is split around it.
    fn read(&mut self, s: i64) {
        let x = s as f64;
        let i = self.spans.partition_point(|&(_, end)| end <= x);
        let Some(&(a, b)) = self.spans.get(i).filter(|&&(a, _)| a < x) else {
            return;
        };
        let left = (x > a + 1.0).then_some((a, x));
        let right = (b > x + 1.0).then_some((x, b));
        match (left, right) {
            (Some(l), Some(r)) => {
                self.spans[i] = l;
                if self.spans.len() < Self::KEEP {
                    self.spans.insert(i + 1, r);
                }
            }
            (Some(one), None) | (None, Some(one)) => self.spans[i] = one,
            (None, None) => {
                self.spans.remove(i);
            }
        }
    }

    /// The breaks, by step.
    #[must_use]
    pub fn spans(&self) -> &[(f64, f64)] {
        &self.spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_break_spans_the_steps_lost_between_two_rows() {
        let mut b = Breaks::default();
        // Damage before any step: nothing to bridge from.
        b.damage(None);
        b.row(Some(0));
        // Damage whose next row is the next step lost no step.
        b.damage(Some(10));
        b.row(Some(11));
        // Two spans before the next row are one break.
        b.damage(Some(20));
        b.damage(Some(20));
        assert!(b.wants(Some(0)));
        b.row(Some(57));
        assert!(!b.wants(Some(100)));
        // A row without damage before it is no break.
        b.row(Some(90));
        // A step that goes back is not a span of lost steps (and one read in
        // a break was not lost).
        b.damage(Some(100));
        b.row(Some(40));
        assert_eq!(b.spans(), [(20.0, 40.0), (40.0, 57.0)]);
    }

    /// Blocks moved within a file: the rows after the damage hold steps of the
    /// break. Lost are only the steps read nowhere.
    #[test]
    fn steps_read_later_in_the_file_are_not_lost() {
        let mut b = Breaks::default();
        let mut highest = None;
        let mut fold = |b: &mut Breaks, steps: std::ops::RangeInclusive<i64>| {
            for s in steps {
                highest = highest.max(Some(s));
                if b.wants(Some(s)) {
                    b.row(Some(s));
                }
            }
            highest
        };
        // 0..=67, damage, 92..=113, damage, 69..=90, damage, 115..=200.
        let h = fold(&mut b, 0..=67);
        b.damage(h);
        let h = fold(&mut b, 92..=113);
        b.damage(h);
        let h = fold(&mut b, 69..=90);
        b.damage(h);
        fold(&mut b, 115..=200);
        assert_eq!(b.spans(), [(67.0, 69.0), (90.0, 92.0), (113.0, 115.0)]);
        assert!(!b.wants(Some(201)), "past the breaks: no more work per row");
        // A step read in the middle of a break splits it; one at its edge
        // shrinks it; the last one in it ends it.
        let mut b = Breaks::default();
        b.damage(Some(10));
        b.row(Some(20));
        b.row(Some(15));
        assert_eq!(b.spans(), [(10.0, 15.0), (15.0, 20.0)]);
        b.row(Some(11));
        b.row(Some(19));
        assert_eq!(b.spans(), [(11.0, 15.0), (15.0, 19.0)]);
        for s in [12, 13, 14, 16, 17, 18] {
            b.row(Some(s));
        }
        assert_eq!(b.spans(), []);
    }
    fn span(offset: u64, len: u64) -> Skip {
        Skip {
            offset,
            len,
            reason: SkipReason::Checksum,
        }
    }

    #[test]
    fn the_open_span_is_counted_once_however_often_it_grows() {
        let mut d = DamageReport::default();
        d.add(span(10, 5));
        d.set_open(Some(span(100, 20)));
        d.set_open(Some(span(100, 50)));
        assert_eq!((d.skipped_spans, d.skipped_bytes), (2, 55));
        assert_eq!(d.skips, [span(10, 5), span(100, 50)]);
        // The reader hands on its final form, then a bad record after it.
        d.add(span(100, 60));
        d.add(Skip {
            offset: 200,
            len: 3,
            reason: SkipReason::BadRecord,
        });
        d.set_open(None);
        assert_eq!((d.skipped_spans, d.skipped_bytes), (3, 68));
        assert_eq!(d.skips[..2], [span(10, 5), span(100, 60)]);
        d.set_open(Some(span(300, 1)));
        d.set_open(None);
        assert_eq!(
            (d.skipped_spans, d.skipped_bytes, d.skips.len()),
            (3, 68, 3)
        );
    }
}
