//! History records → rows: the fast reading of wandb-core's layout and the
//! general one, the key positions cache, the values of a row.

use super::keys::as_u32;
use super::{Decoder, Special};
use crate::event::{Event, Row};
use crate::value;
use crate::wire::{self, Field, Fields, ItemValue};

impl Decoder {
    /// What the history key at `pos` of a row means; None when it is new and not
    /// UTF-8.
    #[inline(always)]
    fn special_of(&mut self, pos: usize, key: &[u8]) -> Option<Special> {
        match self.row_keys.get(pos, key) {
            Some(s) => Some(s),
            None => self.special_of_new(pos, key),
        }
    }

    /// [`Decoder::special_of`] for a key not at its cached position.
    #[inline(never)]
    fn special_of_new(&mut self, pos: usize, key: &[u8]) -> Option<Special> {
        let s = if self.no_series {
            unkept_special(key)?
        } else {
            match key {
                b"_step" => Special::Step,
                b"_runtime" => Special::Runtime,
                b"_timestamp" => Special::Timestamp,
                _ => Special::Metric(self.key_id(key)?),
            }
        };
        self.row_keys.remember(pos, key, s);
        Some(s)
    }

    pub(super) fn history(&mut self, body: &[u8]) -> bool {
        let start = self.ev.values.len();
        if let Some((row, record_step)) = self.history_fast(body) {
            #[cfg(test)]
            {
                self.fast_rows += 1;
            }
            return self.finish_row(row, record_step, start);
        }
        // What the fast path read is read again, the general way.
        self.ev.values.truncate(start);
        let kept = self
            .ev
            .exact
            .partition_point(|&(i, _)| (i as usize) < start);
        self.ev.exact.truncate(kept);
        self.forget_exact_step();
        let mut row = Row {
            complete: true,
            ..Row::default()
        };
        let mut record_step: Option<i64> = None;
        let mut key = std::mem::take(&mut self.key);
        let mut f = Fields::new(body);
        let mut pos = 0;
        for field in f.by_ref() {
            let it = match field {
                Field::Bytes(1, b) => {
                    if let Some((k, v)) = wire::simple_item(b) {
                        if self.history_item(body, pos, k, v, &mut row).is_none() {
                            row.complete = false;
                            break;
                        }
                        pos += 1;
                        continue;
                    }
                    match wire::item(b) {
                        Some(it) => it,
                        None => {
                            row.complete = false;
                            break;
                        }
                    }
                }
                Field::Bytes(2, b) => {
                    record_step = record_step_of(b).or(record_step);
                    continue;
                }
                _ => continue,
            };
            it.flat_key_into(&mut key);
            let Some(special) = self.special_of(pos, key.as_bytes()) else {
                row.complete = false;
                break;
            };
            pos += 1;
            self.history_value(special, value::number(it.value), it.value, &mut row);
        }
        self.key = key;
        if f.error {
            row.complete = false;
        }
        self.finish_row(row, record_step, start)
    }

    /// A history record laid out as wandb-core writes it, read without the general
    /// field iterator: fields of one-byte tags and lengths, every item of the
    /// common shape ([`wire::sniff_item`]), the step field. The row and the
    /// record's step as [`Decoder::history`] reads them; None as soon as anything
    /// else comes (then the general reading reads the record again: what this one
    /// did is undone or done again the same way, its interned keys and cache
    /// entries being the same).
    #[inline]
    fn history_fast(&mut self, body: &[u8]) -> Option<(Row, Option<i64>)> {
        let mut row = Row {
            complete: true,
            ..Row::default()
        };
        let mut record_step = None;
        let mut pos = 0;
        let mut rest = body;
        while let [tag, len, tail @ ..] = rest {
            if *len >= 0x80 {
                return None;
            }
            let (b, after) = tail.split_at_checked(usize::from(*len))?;
            rest = after;
            match *tag {
                0x0A => {
                    let (k, v) = wire::sniff_item(b)?;
                    self.history_item(body, pos, k, wire::RawValue::Json(v), &mut row)?;
                    pos += 1;
                }
                0x12 => record_step = record_step_of(b).or(record_step),
                _ => return None,
            }
        }
        rest.is_empty().then_some((row, record_step))
    }

    /// Push the row whose values start at `start`; whether it is complete.
    fn finish_row(&mut self, mut row: Row, record_step: Option<i64>, start: usize) -> bool {
        if row.step.is_none() {
            row.step = record_step.map(|s| s as f64);
            if let Some(s) = record_step.filter(|s| s.unsigned_abs() >= EXACT_STEP) {
                self.keep_exact_step(s);
            }
        }
        row.values = as_u32(start)..as_u32(self.ev.values.len());
        let complete = row.complete;
        self.ev.list.push(Event::Row(row));
        complete
    }

    /// One history item of the common shape; None when its text is not UTF-8.
    /// Its value is a slice of `body`, the record's.
    #[inline(always)]
    fn history_item(
        &mut self,
        body: &[u8],
        pos: usize,
        k: &[u8],
        v: wire::RawValue<'_>,
        row: &mut Row,
    ) -> Option<()> {
        let special = if self.no_series {
            // Told by its bytes: no cache to look through.
            unkept_special(k)?
        } else {
            self.special_of(pos, k)?
        };
        if special == Special::Unkept {
            // Only the check the value gets below (a short decimal is ASCII,
            // so it passes too).
            return match v {
                wire::RawValue::Json(b) | wire::RawValue::Text(b) => wire::text(b).map(|_| ()),
                _ => Some(()),
            };
        }
        let (num, value) = match v {
            wire::RawValue::Json(b) => match value::short_decimal_in(body, b) {
                Some(n) => (Some(n), ItemValue::Null),
                None => {
                    let t = wire::text(b)?;
                    (value::json_number(t), ItemValue::Json(t))
                }
            },
            wire::RawValue::Text(b) => (None, ItemValue::Text(wire::text(b)?)),
            wire::RawValue::Null => (None, ItemValue::Null),
            wire::RawValue::Bool(x) => (None, ItemValue::Bool(x)),
            wire::RawValue::Int(i) => (Some(i as f64), ItemValue::Int(i)),
            wire::RawValue::Number(f) => (Some(f), ItemValue::Number(f)),
        };
        self.history_value(special, num, value, row);
        Some(())
    }

    #[inline(always)]
    fn history_value(
        &mut self,
        special: Special,
        num: Option<f64>,
        v: ItemValue<'_>,
        row: &mut Row,
    ) {
        match special {
            // A non-finite step cannot place a point: the row falls back to the
            // record's step or its row number.
            Special::Step => {
                if let Some(n) = num.filter(|n| n.is_finite()) {
                    row.step = Some(n);
                    if n.abs() >= value::EXACT_INT {
                        self.exact_step(v);
                    }
                }
            }
            Special::Unkept => {}
            Special::Runtime => row.runtime = num.filter(|n| n.is_finite()),
            Special::Timestamp => {
                if let Some(t) = num {
                    row.time = Some(row.time.map_or(t, |l| l.max(t)));
                }
            }
            Special::Metric(id) => match num {
                Some(y) => {
                    if y.abs() >= value::EXACT_INT {
                        self.exact_int(v);
                    }
                    self.ev.values.push((id, y));
                }
                None => other_value(id, v, row),
            },
        }
    }
}

impl Decoder {
    /// The value about to be pushed was logged as an integer beyond 2^53: keep its
    /// decimal text, which its double does not hold exactly.
    #[cold]
    #[inline(never)]
    fn exact_int(&mut self, v: ItemValue<'_>) {
        let text = match v {
            ItemValue::Int(i) => i.to_string(),
            ItemValue::Json(t) if value::is_integer_literal(t.trim_ascii()) => {
                t.trim_ascii().to_owned()
            }
            _ => return,
        };
        self.ev.exact.push((as_u32(self.ev.values.len()), text));
    }

    /// The row about to be pushed has a `_step` of 2^53 or more: keep it exactly
    /// when it was logged as an integer an i64 holds (a `time.time_ns()` step),
    /// so that neighbouring steps stay apart.
    #[cold]
    #[inline(never)]
    fn exact_step(&mut self, v: ItemValue<'_>) {
        self.forget_exact_step();
        let step = match v {
            ItemValue::Int(i) => Some(i),
            ItemValue::Json(t) if value::is_integer_literal(t.trim_ascii()) => {
                t.trim_ascii().parse::<i64>().ok()
            }
            _ => None,
        };
        if let Some(s) = step {
            self.keep_exact_step(s);
        }
    }

    /// [`crate::event::Events::exact_steps`] of the row about to be pushed.
    #[cold]
    #[inline(never)]
    fn keep_exact_step(&mut self, step: i64) {
        self.forget_exact_step();
        let at = as_u32(self.ev.list.len());
        self.ev.exact_steps.push((at, step));
    }

    /// Drop what was kept of the step of the row about to be pushed (read again,
    /// or given again by a later `_step` of the row).
    fn forget_exact_step(&mut self) {
        let at = as_u32(self.ev.list.len());
        if self.ev.exact_steps.last().is_some_and(|&(i, _)| i >= at) {
            self.ev.exact_steps.pop();
        }
    }
}

/// A step of at least this magnitude (2^53) may not be held exactly by a double.
const EXACT_STEP: u64 = 1 << 53;

/// What a history key means to a decoder without series: only the step and the
/// time matter; every other key (`_runtime` too, which only the timeline's series
/// would show) is checked as `key_id` checks a new key and its value left unread.
/// None when it is not UTF-8.
#[inline(always)]
fn unkept_special(key: &[u8]) -> Option<Special> {
    match key {
        b"_step" => Some(Special::Step),
        b"_timestamp" => Some(Special::Timestamp),
        _ => wire::text(key).map(|_| Special::Unkept),
    }
}

/// The `num` of a history record's `step` field (the last one given), if any.
#[inline]
pub(super) fn record_step_of(b: &[u8]) -> Option<i64> {
    // wandb-core's layout: the one field, a varint of at most nine bytes.
    if let [0x08, rest @ ..] = b {
        if let Some((&last, init)) = rest.split_last() {
            if last < 0x80 && init.len() < 9 && init.iter().all(|&x| x >= 0x80) {
                let v = rest
                    .iter()
                    .rev()
                    .fold(0u64, |acc, &x| acc << 7 | u64::from(x & 0x7f));
                return Some(v as i64);
            }
        }
    }
    record_step_general(b)
}

pub(super) fn record_step_general(b: &[u8]) -> Option<i64> {
    let mut step = None;
    for g in Fields::new(b) {
        if let Field::Varint(1, v) = g {
            {
                step = Some(v as i64);
            }
        }
    }
    step
}

/// A history value that is not a number, kept as its JSON text.
#[cold]
#[inline(never)]
fn other_value(id: u32, v: ItemValue<'_>, row: &mut Row) {
    let text = match v {
        ItemValue::Json(s) => s.to_owned(),
        // As JSON too, so that a string reads the same however it was stored.
        ItemValue::Text(s) => serde_json::Value::from(s).to_string(),
        other => value::to_json(other).to_string(),
    };
    row.others.push((id, text));
}
