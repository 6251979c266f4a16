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
    pub(crate) slots: Vec<(Scalar, u64)>,
    /// Paths set since the last flush, in first-seen order.
    order: Vec<u32>,
    tick: u64,
}

impl Coalescer {
    pub(crate) fn set(&mut self, id: u32, v: ItemValue<'_>) {
        let i = id as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, (Scalar::Null, 0));
        }
        self.tick += 1;
        let slot = &mut self.slots[i];
        if slot.1 == 0 {
            self.order.push(id);
            slot.0 = Scalar::from(v);
        } else {
            slot.0.set(v);
        }
        slot.1 = self.tick;
    }

    pub(crate) fn remove(&mut self, id: u32, ops: &mut Vec<TreeOp>) {
        self.flush(ops);
        ops.push(TreeOp::Remove(id));
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
            ops.push(TreeOp::Set(
                id,
                std::mem::replace(&mut slot.0, Scalar::Null),
            ));
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
