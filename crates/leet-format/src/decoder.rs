//! Record payloads → [`Events`]: the work a reader thread does so the store only
//! folds. Hot record kinds (history, summary, config, stats, console) are read with
//! the zero-copy wire reader; the rest through prost.

use prost::Message as _;
use rustc_hash::FxHashMap;

use super::coalesce::{metric_def, Coalescer};
use super::event::{join_path, Event, Events, RunInfo, TreePath, MAX_DEPTH};
use super::leveldb::Skip;
use super::pb;
use super::record::{record_kind, RecordType};
use super::value;
use super::wire::{self, Field, Fields, Item, ItemValue};

mod history;
mod keys;
#[cfg(test)]
mod tests;
pub use keys::capped_path;
use keys::{as_u32, is_null_json, KeyCache};

/// What a history key means to a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    Step,
    Runtime,
    Timestamp,
    Metric(u32),
    /// A metric whose value the decoder does not keep ([`Decoder::without_series`]).
    Unkept,
}

/// Decodes records into one batch of events at a time.
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    ev: Events,
    /// Keys and joined paths by their bytes, so a known key is found without a
    /// UTF-8 check (only a new one is checked, once).
    key_ids: FxHashMap<Box<[u8]>, u32>,
    path_ids: FxHashMap<Box<[u8]>, u32>,
    summary: Coalescer,
    config: Coalescer,
    /// The keys of the last history row, by position: rows written in a fixed
    /// order repeat their keys, so a key is usually found by one comparison. (Rows
    /// whose keys come in a new order each time, as wandb-core writes them, fall
    /// back to the byte-keyed map; the entry is overwritten in place, without an
    /// allocation once it has grown.)
    row_keys: KeyCache<Special>,
    /// The same for summary and config records.
    summary_keys: KeyCache<u32>,
    config_keys: KeyCache<u32>,
    /// Path ids of items with a key path of other shapes, by the bytes of their key
    /// fields ([`wire::sniff_path_item`]), so they are not parsed and joined again.
    summary_paths: KeyCache<u32>,
    config_paths: KeyCache<u32>,
    key: String,
    /// Rows and stats samples keep no metric values ([`Decoder::without_series`]).
    no_series: bool,
    /// History records the fast path read (the tests check it is taken).
    #[cfg(test)]
    fast_rows: usize,
    /// Tree items found in the path caches, and whether those are used (the
    /// tests compare with and without).
    #[cfg(test)]
    path_hits: usize,
    #[cfg(test)]
    no_path_cache: bool,
}

impl Decoder {
    /// A decoder that keeps every value.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for a run that is only summarised: history rows keep their step,
    /// time and completeness but no metric values, stats samples their time but no
    /// values. Every record is checked exactly as [`Decoder::new`]'s decoder checks
    /// it, so the same records are bad and the same rows are complete; only the
    /// series are left out.
    #[must_use]
    pub fn without_series() -> Self {
        Self {
            no_series: true,
            ..Self::default()
        }
    }

    /// Whether it leaves the series out ([`Decoder::without_series`]).
    #[must_use]
    pub fn keeps_series(&self) -> bool {
        !self.no_series
    }

    /// Take the batch decoded so far; the next one starts with empty tables.
    pub fn take(&mut self) -> Events {
        self.summary.flush(&mut self.ev.summary);
        self.config.flush(&mut self.ev.config);
        self.key_ids.clear();
        self.path_ids.clear();
        self.row_keys.clear();
        self.summary_keys.clear();
        self.config_keys.clear();
        self.summary_paths.clear();
        self.config_paths.clear();
        self.summary.clear();
        self.config.clear();
        // The next batch is likely the size of this one: allocate it once.
        let next = Events {
            list: Vec::with_capacity(self.ev.list.len()),
            values: Vec::with_capacity(self.ev.values.len()),
            ..Events::default()
        };
        std::mem::replace(&mut self.ev, next)
    }

    /// Values and events held (a measure of the batch's size).
    #[must_use]
    pub fn held(&self) -> usize {
        self.ev.values.len() + self.ev.list.len()
    }

    /// A damaged span.
    pub fn skip(&mut self, s: Skip) {
        self.ev.list.push(Event::Skip(s));
    }

    /// Decode one record payload found at `offset`. A payload that does not decode
    /// is a [`Event::Bad`], never a panic.
    pub fn record(&mut self, offset: u64, payload: &[u8]) {
        let Some((num, field, body)) = record_kind(payload) else {
            return self.bad(offset, payload.len());
        };
        let kind = RecordType::from_field(field);
        let ok = match kind {
            RecordType::History => self.history(body),
            RecordType::Summary => self.tree(body, false),
            RecordType::Config => self.tree(body, true),
            RecordType::Stats => self.stats(body),
            RecordType::OutputRaw | RecordType::Output => {
                self.output(body, kind == RecordType::Output)
            }
            _ => self.other(payload),
        };
        if ok {
            self.ev.tally.count(kind, num);
        } else {
            self.bad(offset, payload.len());
        }
    }

    fn bad(&mut self, offset: u64, len: usize) {
        self.ev.list.push(Event::Bad {
            offset,
            len: len as u64,
        });
    }

    /// The batch's id of a history key; None when it is new and not UTF-8.
    fn key_id(&mut self, key: &[u8]) -> Option<u32> {
        if let Some(&id) = self.key_ids.get(key) {
            return Some(id);
        }
        let text = wire::text(key)?;
        let id = u32::try_from(self.ev.keys.len()).unwrap_or(u32::MAX);
        self.ev.keys.push(text.to_owned());
        self.key_ids.insert(key.into(), id);
        Some(id)
    }

    fn path_id(&mut self, it: &Item<'_>) -> u32 {
        let mut joined = std::mem::take(&mut self.key);
        let deep = it.path().nth(MAX_DEPTH).is_some();
        if !deep {
            join_path(&mut joined, it.path());
            if let Some(&id) = self.path_ids.get(joined.as_bytes()) {
                self.key = joined;
                return id;
            }
        }
        let parts = capped_path(it);
        if deep {
            join_path(&mut joined, parts.iter().map(String::as_str));
            if let Some(&id) = self.path_ids.get(joined.as_bytes()) {
                self.key = joined;
                return id;
            }
        }
        let id = u32::try_from(self.ev.paths.len()).unwrap_or(u32::MAX);
        self.path_ids.insert(joined.as_bytes().into(), id);
        self.ev.paths.push(TreePath {
            joined: joined.clone(),
            parts,
        });
        self.key = joined;
        id
    }

    /// A summary/config record. One that breaks off keeps the items before the break.
    fn tree(&mut self, body: &[u8], config: bool) -> bool {
        let mut pos = 0;
        let mut rest = body;
        // Fields of one-byte tags and lengths (as wandb-core writes them) are taken
        // here; from the first other one on, the general field reader goes on.
        while let [tag @ (0x0A | 0x12), len @ 0..0x80, tail @ ..] = rest {
            let Some((b, after)) = tail.split_at_checked(usize::from(*len)) else {
                break;
            };
            if !self.tree_field(pos, *tag == 0x0A, config, b) {
                return false;
            }
            pos += 1;
            rest = after;
        }
        let mut f = Fields::new(rest);
        for field in f.by_ref() {
            if let Field::Bytes(n @ (1 | 2), b) = field {
                if !self.tree_field(pos, n == 1, config, b) {
                    return false;
                }
                pos += 1;
            }
        }
        !f.error
    }

    /// One item of a summary/config record (an update or, `!update`, a removal)
    /// at position `pos`; false when it does not decode.
    #[inline(always)]
    fn tree_field(&mut self, pos: usize, update: bool, config: bool, b: &[u8]) -> bool {
        if let Some((k, v)) = wire::sniff_item(b) {
            return self
                .tree_item(pos, update, config, k, wire::RawValue::Json(v))
                .is_some();
        }
        self.tree_field_other(pos, update, config, b)
    }

    /// [`Decoder::tree_field`] of an item not of the common layout.
    #[inline(never)]
    fn tree_field_other(&mut self, pos: usize, update: bool, config: bool, b: &[u8]) -> bool {
        let sniffed = wire::sniff_path_item(b).filter(|_| self.path_cache_on());
        if let Some((keys, v)) = sniffed {
            if let Some(id) = self.tree_caches(config).1.get(pos, keys) {
                // What `wire::item` checks of this layout beyond its keys.
                let Some(v) = wire::text(v) else {
                    return false;
                };
                self.tree_set(id, update, config, ItemValue::Json(v));
                #[cfg(test)]
                {
                    self.path_hits += 1;
                }
                return true;
            }
        } else if let Some((k, v)) = wire::simple_item_general(b) {
            // (An item the path sniffing takes is never of this shape.)
            return self.tree_item(pos, update, config, k, v).is_some();
        }
        let Some(it) = wire::item(b) else {
            return false;
        };
        let id = self.path_id(&it);
        if let Some((keys, _)) = sniffed {
            self.tree_caches(config).1.remember(pos, keys, id);
        }
        self.tree_set(id, update, config, it.value);
        true
    }

    /// The key caches of summary or (`config`) config records: by key, by key bytes.
    #[inline(always)]
    fn tree_caches(&mut self, config: bool) -> (&mut KeyCache<u32>, &mut KeyCache<u32>) {
        if config {
            (&mut self.config_keys, &mut self.config_paths)
        } else {
            (&mut self.summary_keys, &mut self.summary_paths)
        }
    }

    #[inline(always)]
    #[allow(
        clippy::unused_self,
        reason = "only the tests' build reads a switch on self"
    )]
    fn path_cache_on(&self) -> bool {
        #[cfg(test)]
        return !self.no_path_cache;
        #[cfg(not(test))]
        true
    }

    /// One summary/config item of the common shape (one key element); None when
    /// its text is not UTF-8.
    #[inline(always)]
    fn tree_item(
        &mut self,
        pos: usize,
        update: bool,
        config: bool,
        k: &[u8],
        v: wire::RawValue<'_>,
    ) -> Option<()> {
        let id = match self.tree_caches(config).0.get(pos, k) {
            Some(id) => id,
            None => {
                let id = self.simple_path_id(k)?;
                self.tree_caches(config).0.remember(pos, k, id);
                id
            }
        };
        let value = match v {
            wire::RawValue::Json(b) => ItemValue::Json(wire::text(b)?),
            wire::RawValue::Text(b) => ItemValue::Text(wire::text(b)?),
            wire::RawValue::Null => ItemValue::Null,
            wire::RawValue::Bool(x) => ItemValue::Bool(x),
            wire::RawValue::Int(i) => ItemValue::Int(i),
            wire::RawValue::Number(f) => ItemValue::Number(f),
        };
        self.tree_set(id, update, config, value);
        Some(())
    }

    /// An update (or removal) of the summary/config path `id`.
    #[inline(always)]
    fn tree_set(&mut self, id: u32, update: bool, config: bool, value: ItemValue<'_>) {
        // A summary value set to null is a removal, as W&B treats it
        // (`run.summary.update({"x": None})`); config keeps its nulls.
        let null = !config
            && match value {
                ItemValue::Null => true,
                ItemValue::Json(j) => is_null_json(j),
                _ => false,
            };
        let (c, ops) = if config {
            (&mut self.config, &mut self.ev.config)
        } else {
            (&mut self.summary, &mut self.ev.summary)
        };
        if update && !null {
            c.set(id, value);
        } else {
            c.remove(id, ops);
        }
    }

    /// The path id of a one-element path.
    /// None when the key is new and not UTF-8.
    fn simple_path_id(&mut self, key: &[u8]) -> Option<u32> {
        if let Some(&id) = self.path_ids.get(key) {
            return Some(id);
        }
        let text = wire::text(key)?;
        let id = u32::try_from(self.ev.paths.len()).unwrap_or(u32::MAX);
        self.path_ids.insert(key.into(), id);
        self.ev.paths.push(TreePath {
            joined: text.to_owned(),
            parts: vec![text.to_owned()],
        });
        Some(id)
    }

    fn stats(&mut self, body: &[u8]) -> bool {
        let mut time = None;
        let start = self.ev.values.len();
        let mut key = std::mem::take(&mut self.key);
        let mut f = Fields::new(body);
        let mut ok = true;
        for field in f.by_ref() {
            match field {
                Field::Bytes(2, b) => time = wire::timestamp(b),
                Field::Bytes(3, b) => match wire::item(b) {
                    Some(it) => {
                        if let Some(y) = value::number(it.value) {
                            it.flat_key_into(&mut key);
                            // The key is text already: it always gets an id.
                            if let Some(id) = self.key_id(key.as_bytes()) {
                                self.ev.values.push((id, y));
                            }
                        }
                    }
                    None => {
                        ok = false;
                        break;
                    }
                },
                _ => {}
            }
        }
        self.key = key;
        if !ok || f.error {
            // A bad sample changes nothing.
            self.ev.values.truncate(start);
            return false;
        }
        if self.no_series {
            self.ev.values.truncate(start);
        }
        self.ev.list.push(Event::Stats {
            time,
            values: as_u32(start)..as_u32(self.ev.values.len()),
        });
        true
    }

    fn output(&mut self, body: &[u8], legacy: bool) -> bool {
        let mut stdout = false;
        let mut time = None;
        let mut text = "";
        let mut f = Fields::new(body);
        for field in f.by_ref() {
            match field {
                Field::Varint(1, v) => stdout = v == 1,
                Field::Bytes(2, b) => time = wire::timestamp(b),
                Field::Bytes(3, b) => match wire::str_of(b) {
                    Some(s) => text = s,
                    None => return false,
                },
                _ => {}
            }
        }
        if f.error {
            return false;
        }
        self.ev.list.push(Event::Console {
            stdout,
            time,
            text: text.to_owned(),
            legacy,
            node: None,
        });
        true
    }

    fn other(&mut self, payload: &[u8]) -> bool {
        let Ok(rec) = pb::Record::decode(payload) else {
            return false;
        };
        use pb::record::RecordType as T;
        match rec.record_type {
            Some(T::Run(r)) => self.run(r),
            Some(T::Exit(e)) => self.ev.list.push(Event::Exit {
                code: e.exit_code,
                runtime: e.runtime,
            }),
            Some(T::Environment(e)) => {
                // Every field of every record, later records replacing a field's
                // earlier value.
                let json = super::json::message_json_names(&e).unwrap_or_default();
                self.ev.list.push(Event::Environment(json));
            }
            Some(T::Metric(m)) => self.ev.list.push(Event::Metric(metric_def(m))),
            Some(T::Preempting(_)) => self.ev.list.push(Event::Preempting),
            Some(T::Header(h)) => {
                if let Some(v) = h.version_info {
                    self.ev.list.push(Event::Producer(v.producer));
                }
            }
            _ => {}
        }
        true
    }

    fn run(&mut self, r: pb::RunRecord) {
        let (git_remote, git_commit) = r.git.map(|g| (g.remote_url, g.commit)).unwrap_or_default();
        let info = RunInfo {
            run_id: r.run_id,
            entity: r.entity,
            project: r.project,
            display_name: r.display_name,
            notes: r.notes,
            tags: r.tags,
            group: r.run_group,
            job_type: r.job_type,
            host: r.host,
            sweep_id: r.sweep_id,
            start_time: r.start_time.map(|t| (t.seconds, t.nanos)),
            starting_step: r.starting_step,
            resumed: r.resumed || r.resume,
            runtime: r.runtime,
            git_remote,
            git_commit,
        };
        self.ev.list.push(Event::Run(Box::new(info)));
        // The run record's config and summary are plain updates (nulls kept).
        for item in r.config.into_iter().flat_map(|c| c.update) {
            let id = self.pb_path_id(&item.key, &item.nested_key);
            self.config.set(id, ItemValue::Json(&item.value_json));
        }
        for item in r.summary.into_iter().flat_map(|s| s.update) {
            let id = self.pb_path_id(&item.key, &item.nested_key);
            self.summary.set(id, ItemValue::Json(&item.value_json));
        }
    }

    fn pb_path_id(&mut self, key: &str, nested: &[String]) -> u32 {
        let mut it = Item {
            key,
            nested: wire::smallvec_lite::Path::default(),
            value: ItemValue::Null,
        };
        for n in nested {
            it.nested.push(n);
        }
        self.path_id(&it)
    }
}
