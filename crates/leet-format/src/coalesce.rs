//! Summary and config changes of one batch, coalesced so the store applies a
//! handful of changes per key and batch instead of one per record; and the
//! `define_metric` record as the event the store folds.

use super::event::{MetricDef, Scalar, TreeOp};
use super::pb;
use super::wire::ItemValue;

/// Summary or config changes of one batch, folded as they come: a key's latest
/// value, the order keys were first seen and the order of their latest change.
#[derive(Debug, Clone, Default)]
pub(crate) struct Coalescer {
    /// By path index: the latest value and when it was set (0: not since the flush).
    slots: Vec<(Held, u64)>,
    /// Paths set since the last flush, in first-seen order.
    order: Vec<u32>,
    tick: u64,
}

/// Bytes of JSON text a slot holds inline.
const SHORT: usize = 22;

/// A slot's value: short JSON text (nearly every summary value: a number) inline,
/// copied without a call; anything else as its [`Scalar`].
#[derive(Debug, Clone)]
enum Held {
    Short(u8, [u8; SHORT]),
    Other(Scalar),
}

impl Default for Held {
    fn default() -> Self {
        Held::Other(Scalar::Null)
    }
}

impl Held {
    #[inline(always)]
    fn set(&mut self, v: ItemValue<'_>) {
        if let ItemValue::Json(t) = v {
            if let Held::Short(n, bytes) = self {
                if copy_short(bytes, t.as_bytes()) {
                    // `t` has at most SHORT bytes.
                    *n = t.len() as u8;
                    return;
                }
            } else {
                let mut bytes = [0; SHORT];
                if copy_short(&mut bytes, t.as_bytes()) {
                    *self = Held::Short(t.len() as u8, bytes);
                    return;
                }
            }
        }
        match self {
            Held::Other(s) => s.set(v),
            Held::Short(..) => *self = Held::Other(Scalar::from(v)),
        }
    }

    fn take(&mut self) -> Scalar {
        match std::mem::take(self) {
            Held::Short(n, bytes) => Scalar::Json(
                // Copied from a `&str` whole, so it is UTF-8.
                String::from_utf8_lossy(&bytes[..usize::from(n)]).into_owned(),
            ),
            Held::Other(s) => s,
        }
    }
}

/// Copy `src` (at most [`SHORT`] bytes) to the start of `dst` as a few overlapping
/// fixed-size copies; false (nothing copied) when it is longer.
#[inline(always)]
fn copy_short(dst: &mut [u8; SHORT], src: &[u8]) -> bool {
    let n = src.len();
    match n {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            copy_at::<4>(dst, src, 0);
            copy_at::<4>(dst, src, n - 4);
        }
        8..=16 => {
            copy_at::<8>(dst, src, 0);
            copy_at::<8>(dst, src, n - 8);
        }
        17..=SHORT => {
            copy_at::<16>(dst, src, 0);
            copy_at::<8>(dst, src, n - 8);
        }
        _ => return false,
    }
    true
}

#[inline(always)]
fn copy_at<const W: usize>(dst: &mut [u8; SHORT], src: &[u8], at: usize) {
    if let (Some(d), Some(s)) = (dst.get_mut(at..at + W), src.get(at..at + W)) {
        d.copy_from_slice(s);
    }
}

impl Coalescer {
    #[inline]
    pub(crate) fn set(&mut self, id: u32, v: ItemValue<'_>) {
        let i = id as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, (Held::default(), 0));
        }
        self.tick += 1;
        let slot = &mut self.slots[i];
        if slot.1 == 0 {
            self.order.push(id);
        }
        slot.0.set(v);
        slot.1 = self.tick;
    }

    pub(crate) fn remove(&mut self, id: u32, ops: &mut Vec<TreeOp>) {
        self.flush(ops);
        ops.push(TreeOp::Remove(id));
    }

    /// Forget the values (a new batch has new ids; call after [`Coalescer::flush`]).
    pub(crate) fn clear(&mut self) {
        self.slots.clear();
    }

    /// Hand on the changes since the last flush: first the keys in first-seen order
    /// (when that differs from the order of their latest change), then each key's
    /// latest value in the order of those changes.
    pub(crate) fn flush(&mut self, ops: &mut Vec<TreeOp>) {
        if self.order.is_empty() {
            return;
        }
        let mut by_last = self.order.clone();
        by_last.sort_by_key(|&id| self.slots[id as usize].1);
        if by_last != self.order {
            ops.extend(self.order.iter().map(|&id| TreeOp::Touch(id)));
        }
        for id in by_last {
            let slot = &mut self.slots[id as usize];
            slot.1 = 0;
            ops.push(TreeOp::Set(id, slot.0.take()));
        }
        self.order.clear();
    }
}

pub(crate) fn metric_def(m: pb::MetricRecord) -> MetricDef {
    let mut def = MetricDef {
        name: m.name,
        glob: m.glob_name,
        step_metric: m.step_metric,
        hidden: m.options.as_ref().is_some_and(|o| o.hidden),
        summary: Vec::new(),
        goal: m.goal,
    };
    if let Some(s) = m.summary {
        for (on, name) in [
            (s.min, "min"),
            (s.max, "max"),
            (s.mean, "mean"),
            (s.best, "best"),
            (s.last, "last"),
            (s.none, "none"),
            (s.copy, "copy"),
            (s.first, "first"),
        ] {
            if on {
                def.summary.push(name);
            }
        }
    }
    def
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// Values of every kind and length set in random order: each key's value
    /// handed on is the last one set, whole, whichever way it was held.
    #[test]
    fn the_latest_value_is_handed_on_whole() {
        let texts: Vec<String> = (0..40)
            .map(|n| (0..n).map(|i| char::from(b'0' + (i % 10) as u8)).collect())
            .chain(["é".into(), "0.5é1".into(), "ééééééééééé".into()])
            .collect();
        let mut r = Rng(0x5151_7A7A_0101_FFFF);
        let mut c = Coalescer::default();
        for _ in 0..500 {
            let mut want = std::collections::BTreeMap::new();
            for _ in 0..=r.below(30) {
                let id = r.below(8) as u32;
                let t = &texts[r.below(texts.len() as u64) as usize];
                let v = match r.below(5) {
                    0 => ItemValue::Text(t),
                    1 => ItemValue::Int(t.len() as i64),
                    _ => ItemValue::Json(t),
                };
                c.set(id, v);
                want.insert(id, Scalar::from(v));
            }
            let mut ops = Vec::new();
            c.flush(&mut ops);
            let mut got = std::collections::BTreeMap::new();
            for op in ops {
                if let TreeOp::Set(id, v) = op {
                    assert!(got.insert(id, v).is_none(), "one Set per key");
                }
            }
            assert_eq!(format!("{got:?}"), format!("{want:?}"));
            if r.below(3) == 0 {
                c.clear();
            }
        }
    }
}
