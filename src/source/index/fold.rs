//! A small fold of summary/config [`TreeOp`]s into a nested JSON map, with the
//! store's tree semantics (`store::Tree`, which the source layer cannot import):
//! a set revives a key, a remove drops the key and everything below it, the
//! values are laid in the order of their latest change and the top-level keys end
//! in first-seen order. Values stay in their cheap form until [`Fold::to_json`].

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use leet_format::event::{Scalar, TreeOp, TreePath, PATH_SEP};

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
                        // A change under a value set whole replaces it (see
                        // `store::tree`).
                        if p.parts.len() > 1 {
                            for above in leet_format::event::ancestors(&p.joined) {
                                if let Some(s) = self.slots.get_mut(above) {
                                    s.removed = true;
                                }
                            }
                        }
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
            let mut v = s.value.to_json();
            cut_strings(&mut v);
            leet_format::value::insert_path(&mut root, &s.parts, v);
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

/// Most environment keys an entry keeps, and about the most bytes of each value:
/// W&B's metadata is a few dozen keys of a few hundred bytes (8 GPUs' facts about
/// 1.5 KiB), and every run's entry is held at once and cached.
pub(super) const MAX_ENV_KEYS: usize = 64;
pub(super) const MAX_ENV_VALUE_BYTES: usize = 2048;
/// Longest run record text the index adds (a host name, a commit).
pub(super) const MAX_FACT_BYTES: usize = 256;

/// Fold one environment record into `into`: its keys win; new keys past
/// [`MAX_ENV_KEYS`] are counted in `dropped`; each value is cut to about
/// [`MAX_ENV_VALUE_BYTES`].
pub(super) fn fold_env(
    into: &mut Map<String, Value>,
    from: &Map<String, Value>,
    dropped: &mut u64,
) {
    for (k, v) in from {
        if into.len() >= MAX_ENV_KEYS && !into.contains_key(k) {
            *dropped += 1;
            continue;
        }
        let mut budget = MAX_ENV_VALUE_BYTES;
        into.insert(cut(k, MAX_FACT_BYTES), cap(v, &mut budget));
    }
}

/// Most bytes of a text the index keeps of a summary or config value: every
/// run's entry is held at once (the runs list, its filter, the overview) and
/// cached, and a row shows a line of it; a run that logged megabytes of text (a
/// prompt, a file's contents) would be held whole several times over. The run's
/// own store, which its overview, `inspect` and `export` read, keeps it whole.
pub(super) const MAX_TEXT_VALUE_BYTES: usize = 4096;

/// The strings in `v` (at any depth) cut to [`MAX_TEXT_VALUE_BYTES`].
fn cut_strings(v: &mut Value) {
    match v {
        Value::String(s) if s.len() > MAX_TEXT_VALUE_BYTES => *s = cut(s, MAX_TEXT_VALUE_BYTES),
        Value::Array(a) => a.iter_mut().for_each(cut_strings),
        Value::Object(o) => o.values_mut().for_each(cut_strings),
        _ => {}
    }
}

/// `s` within `max` bytes, cut at a character with `…` when longer.
pub(super) fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let end = s
        .char_indices()
        .map(|(i, _)| i)
        .take_while(|&i| i <= max.saturating_sub('…'.len_utf8()))
        .last()
        .unwrap_or(0);
    format!("{}…", &s[..end])
}

/// `v` within about `budget` bytes (what is left is written back): strings cut,
/// arrays and objects keep their first items while the budget lasts, and end
/// with a `…` item when some were left out.
fn cap(v: &Value, budget: &mut usize) -> Value {
    match v {
        Value::String(s) => {
            let t = cut(s, (*budget).max(1));
            *budget = budget.saturating_sub(t.len());
            Value::String(t)
        }
        Value::Array(a) => {
            let mut out = Vec::new();
            for x in a {
                if *budget == 0 {
                    out.push(Value::String("…".into()));
                    break;
                }
                out.push(cap(x, budget));
            }
            Value::Array(out)
        }
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                if *budget == 0 {
                    out.insert("…".into(), Value::String("…".into()));
                    break;
                }
                let k = cut(k, (*budget).max(1));
                *budget = budget.saturating_sub(k.len());
                out.insert(k, cap(x, budget));
            }
            Value::Object(out)
        }
        // A number, a bool, null: a few bytes.
        other => {
            *budget = budget.saturating_sub(8);
            other.clone()
        }
    }
}
