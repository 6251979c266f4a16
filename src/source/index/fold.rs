//! A small fold of summary/config [`TreeOp`]s into a nested JSON map, with the
//! store's tree semantics (`store::Tree`, which the source layer cannot import):
//! a set revives a key, a remove drops the key and everything below it, the
//! values are laid in the order of their latest change and the top-level keys end
//! in first-seen order. Values stay in their cheap form until [`Fold::to_json`].

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::decode::event::{Scalar, TreeOp, TreePath, PATH_SEP};

#[derive(Debug)]
struct Slot {
    parts: Vec<String>,
    value: Scalar,
    /// Order of creation, and of the latest change.
    first: u64,
    seq: u64,
    removed: bool,
}

/// Most keys (leaf paths) one tree keeps: the index holds every run's trees at
/// once, so a hostile file cannot make one entry huge. Keys past it are counted.
pub(super) const MAX_KEYS: usize = 10_000;

/// Summary or config folded so far.
#[derive(Debug, Default)]
pub(super) struct Fold {
    /// By joined path, ordered so that a remove finds a subtree by a range.
    slots: BTreeMap<String, Slot>,
    seq: u64,
    /// Changes to new keys dropped because [`MAX_KEYS`] were held.
    pub(super) dropped: u64,
}

impl Fold {
    fn slot(&mut self, p: &TreePath) -> Option<&mut Slot> {
        self.seq += 1;
        let seq = self.seq;
        if self.slots.len() >= MAX_KEYS && !self.slots.contains_key(&p.joined) {
            self.dropped += 1;
            return None;
        }
        Some(self.slots.entry(p.joined.clone()).or_insert_with(|| Slot {
            parts: p.parts.clone(),
            value: Scalar::Null,
            first: seq,
            seq,
            removed: false,
        }))
    }

    /// Fold one batch's changes (`paths` is the batch's path table).
    pub(super) fn apply(&mut self, paths: &[TreePath], ops: &[TreeOp]) {
        for op in ops {
            match op {
                TreeOp::Touch(id) => {
                    if let Some(p) = paths.get(*id as usize) {
                        self.slot(p);
                    }
                }
                TreeOp::Set(id, v) => {
                    if let Some(p) = paths.get(*id as usize) {
                        let seq = self.seq + 1;
                        if let Some(s) = self.slot(p) {
                            s.value = v.clone();
                            s.seq = seq;
                            s.removed = false;
                        }
                    }
                }
                TreeOp::Remove(id) => {
                    if let Some(p) = paths.get(*id as usize) {
                        self.remove(&p.joined);
                    }
                }
            }
        }
    }

    fn remove(&mut self, joined: &str) {
        if let Some(s) = self.slots.get_mut(joined) {
            s.removed = true;
        }
        let lo = format!("{joined}{PATH_SEP}");
        let hi = format!(
            "{joined}{}",
            char::from_u32(PATH_SEP as u32 + 1).unwrap_or(PATH_SEP)
        );
        for (_, s) in self.slots.range_mut(lo..hi) {
            s.removed = true;
        }
    }

    /// The nested map.
    pub(super) fn to_json(&self) -> Map<String, Value> {
        let mut live: Vec<&Slot> = self.slots.values().filter(|s| !s.removed).collect();
        live.sort_by_key(|s| s.seq);
        let mut root = Map::new();
        for s in &live {
            crate::decode::value::insert_path(&mut root, &s.parts, s.value.to_json());
        }
        live.sort_by_key(|s| s.first);
        let mut ordered = Map::new();
        for s in live {
            if let Some(k) = s.parts.first() {
                if let Some(v) = root.remove(k) {
                    ordered.insert(k.clone(), v);
                }
            }
        }
        ordered
    }
}
