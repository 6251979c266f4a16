//! A nested key → value map (summary, config) folded from updates and removes,
//! stored flat so that an update of an existing key costs a lookup and no allocation.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use leet_format::decoder::capped_path;
use leet_format::event::{join_path, Scalar, TreeOp, TreePath, PATH_SEP};
use leet_format::wire;

#[derive(Debug, Clone)]
struct Entry {
    path: Vec<String>,
    raw: Scalar,
    seq: u64,
    removed: bool,
}

/// A nested key → value map folded from updates and removes.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    index: FxHashMap<String, usize>,
    /// The same keys, ordered: a remove finds a subtree with a range query.
    ordered: BTreeSet<String>,
    entries: Vec<Entry>,
    seq: u64,
    joined: String,
    /// Entry of each path of the batch being folded (`usize::MAX`: not looked up).
    batch: Vec<usize>,
}

impl Tree {
    /// The entry for a path, created (in first-seen order) when new.
    fn entry(&mut self, joined: &str, parts: impl FnOnce() -> Vec<String>) -> usize {
        if let Some(&i) = self.index.get(joined) {
            return i;
        }
        let i = self.entries.len();
        self.index.insert(joined.to_owned(), i);
        self.ordered.insert(joined.to_owned());
        self.seq += 1;
        self.entries.push(Entry {
            path: parts(),
            raw: Scalar::Null,
            seq: self.seq,
            removed: false,
        });
        i
    }

    fn set_at(&mut self, i: usize, v: Scalar) {
        self.seq += 1;
        let e = &mut self.entries[i];
        e.raw = v;
        e.seq = self.seq;
        e.removed = false;
    }

    /// Set `item`'s path to its value.
    pub fn update(&mut self, item: &wire::Item<'_>) {
        let parts = capped_path(item);
        let mut joined = std::mem::take(&mut self.joined);
        join_path(&mut joined, parts.iter().map(String::as_str));
        if parts.len() > 1 {
            self.replace_ancestors(&joined);
        }
        let i = self.entry(&joined, || parts);
        self.joined = joined;
        self.seq += 1;
        let e = &mut self.entries[i];
        e.raw.set(item.value);
        e.seq = self.seq;
        e.removed = false;
    }

    /// Set the top-level `key` to a number (the live monitor's latest readings).
    pub fn set_number(&mut self, key: &str, v: f64) {
        self.update(&wire::Item {
            key,
            nested: wire::smallvec_lite::Path::default(),
            value: wire::ItemValue::Number(v),
        });
    }

    /// Set the top-level `key` to a JSON text (the live monitor's sampler options).
    pub fn set_json(&mut self, key: &str, json: &str) {
        self.update(&wire::Item {
            key,
            nested: wire::smallvec_lite::Path::default(),
            value: wire::ItemValue::Json(json),
        });
    }

    /// Remove `item`'s path and everything below it.
    pub fn remove(&mut self, item: &wire::Item<'_>) {
        let parts = capped_path(item);
        let mut joined = String::new();
        join_path(&mut joined, parts.iter().map(String::as_str));
        self.remove_joined(&joined);
    }

    fn remove_joined(&mut self, joined: &str) {
        if let Some(&i) = self.index.get(joined) {
            self.entries[i].removed = true;
        }

        // Descendants: keys that continue with the separator (the next char is the end).
        let lo = format!("{joined}{PATH_SEP}");
        let hi = format!(
            "{joined}{}",
            char::from_u32(PATH_SEP as u32 + 1).unwrap_or(PATH_SEP)
        );
        for k in self.ordered.range(lo..hi) {
            if let Some(&i) = self.index.get(k.as_str()) {
                self.entries[i].removed = true;
            }
        }
    }

    /// A change at a path under a value set whole (`summary["nest"] = {...}`, then
    /// `summary["nest"]["a"] = 7`, which the SDK writes as an update of `nest.a`)
    /// replaces that value, as W&B's summary does (the SDK then reads `{"a": 7}`):
    /// the whole value goes, the changes at paths under it make the new one. A
    /// removal under a whole value changes nothing, as there.
    fn replace_ancestors(&mut self, joined: &str) {
        for above in leet_format::event::ancestors(joined) {
            if let Some(&i) = self.index.get(above) {
                self.entries[i].removed = true;
            }
        }
    }

    /// Fold a batch's changes (`paths` are the batch's path table).
    pub fn apply(&mut self, paths: &[TreePath], ops: &[TreeOp]) {
        if ops.is_empty() {
            return;
        }
        self.batch.clear();
        self.batch.resize(paths.len(), usize::MAX);
        for op in ops {
            match op {
                TreeOp::Touch(id) => {
                    self.batch_entry(paths, *id);
                }
                TreeOp::Set(id, v) => {
                    if let Some(p) = paths.get(*id as usize).filter(|p| p.parts.len() > 1) {
                        self.replace_ancestors(&p.joined);
                    }
                    if let Some(i) = self.batch_entry(paths, *id) {
                        self.set_at(i, v.clone());
                    }
                }
                TreeOp::Remove(id) => {
                    if let Some(p) = paths.get(*id as usize) {
                        self.remove_joined(&p.joined);
                    }
                }
            }
        }
    }

    fn batch_entry(&mut self, paths: &[TreePath], id: u32) -> Option<usize> {
        let slot = *self.batch.get(id as usize)?;
        if slot != usize::MAX {
            return Some(slot);
        }
        let p = paths.get(id as usize)?;
        let i = self.entry(&p.joined, || p.parts.clone());
        self.batch[id as usize] = i;
        Some(i)
    }

    /// No live entry.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.iter().all(|e| e.removed)
    }

    /// The nested map, keys in first-seen order (later updates win).
    #[must_use]
    pub fn to_json(&self) -> Map<String, Value> {
        let mut order: Vec<&Entry> = self.entries.iter().filter(|e| !e.removed).collect();
        order.sort_by_key(|e| e.seq);
        let mut root = Map::new();
        for e in order {
            leet_format::value::insert_path(&mut root, &e.path, e.raw.to_json());
        }
        // Restore first-seen key order at the top level for stable output.
        let mut ordered = Map::new();
        for e in &self.entries {
            if let Some(k) = e.path.first() {
                if let Some(v) = root.remove(k) {
                    ordered.insert(k.clone(), v);
                }
            }
        }
        ordered
    }

    /// Number of live leaf entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.iter().filter(|e| !e.removed).count()
    }

    /// A numeric leaf, if present (e.g. summary `_step`).
    #[must_use]
    pub fn number(&self, key: &str) -> Option<f64> {
        let &i = self.index.get(key)?;
        let e = &self.entries[i];
        if e.removed {
            return None;
        }
        e.raw.number()
    }
}
