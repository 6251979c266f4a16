//! The keys of one endpoint's series: per-metric label-set indices that stay with their
//! label sets, forgotten after `FORGET_AFTER` scrapes without them, at most
//! `MAX_SERIES` of them.

use std::collections::HashMap;

/// Most distinct series (metric + label set) kept per endpoint. Samples of further
/// label sets are dropped, and the collector reports it once.
pub(crate) const MAX_SERIES: usize = 10_000;

/// Successful scrapes a label set may be missing from before its index is forgotten
/// (and may be given to a new label set of the same metric).
pub(super) const FORGET_AFTER: u64 = 2;

#[derive(Debug)]
struct Slot {
    key: String,
    k: usize,
    last_seen: u64,
}

#[derive(Debug, Default)]
struct PerMetric {
    /// sorted label set → its slot in [`KeyIndex::slots`]
    sets: HashMap<Vec<(String, String)>, usize>,
    /// Indices given up by forgotten label sets, smallest first.
    free: std::collections::BinaryHeap<std::cmp::Reverse<usize>>,
    next: usize,
}

/// Assigns the per-metric label-set indices and builds keys. An index stays with its
/// label set while that set keeps appearing; a set missing from `FORGET_AFTER`
/// scrapes in a row is forgotten and its index reused, so label churn (a label value
/// that changes on every scrape) costs bounded memory, and at most `MAX_SERIES`
/// series are kept.
#[derive(Debug)]
pub struct KeyIndex {
    pub(super) endpoint: String,
    /// metric → its label sets
    keys: HashMap<String, PerMetric>,
    /// The label sets' keys; `None`: free (listed in `free_slots`).
    slots: Vec<Option<Slot>>,
    free_slots: Vec<usize>,
    /// A series as the exporter writes it (`name{labels}`, the text before the value) →
    /// its slot, so a series seen before costs one lookup of its text instead of a
    /// parse of its labels and a lookup of the sorted set. Entries go with their slot.
    pub(super) series: HashMap<Box<str>, usize>,
    /// Label sets held, over all metrics.
    total: usize,
    max_series: usize,
    /// Number of the current scrape (see [`KeyIndex::begin_scrape`]).
    scrape: u64,
    /// Whether this scrape already forgot stale sets to make room.
    evicted: bool,
    /// Samples dropped by the cap in this scrape.
    cut: usize,
}

impl KeyIndex {
    /// An empty index for `endpoint`'s series, capped at `MAX_SERIES`.
    pub fn new(endpoint: &str) -> Self {
        Self::with_cap(endpoint, MAX_SERIES)
    }

    /// An index holding at most `max_series` label sets.
    pub fn with_cap(endpoint: &str, max_series: usize) -> Self {
        Self {
            endpoint: endpoint.to_string(),
            keys: HashMap::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            series: HashMap::new(),
            total: 0,
            max_series,
            scrape: 0,
            evicted: false,
            cut: 0,
        }
    }

    /// Label sets held now.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Whether it holds no label set.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Start a scrape: label sets seen from now on count as present in it.
    pub fn begin_scrape(&mut self) {
        self.scrape += 1;
        self.evicted = false;
        self.cut = 0;
    }

    /// End a scrape: forget the label sets missing from the last `FORGET_AFTER`
    /// scrapes. Returns the samples the cap dropped in this scrape.
    pub fn end_scrape(&mut self) -> usize {
        let oldest = self.scrape.saturating_sub(FORGET_AFTER - 1);
        self.forget_older_than(oldest);
        self.cut
    }

    /// Forget every label set last seen before scrape `oldest`.
    fn forget_older_than(&mut self, oldest: u64) {
        let mut total = 0;
        let mut forgot = false;
        let (slots, free_slots) = (&mut self.slots, &mut self.free_slots);
        self.keys.retain(|_, m| {
            let free = &mut m.free;
            m.sets.retain(|_, id| {
                let Some(slot) = slots.get(*id).and_then(Option::as_ref) else {
                    return false;
                };
                let keep = slot.last_seen >= oldest;
                if !keep {
                    free.push(std::cmp::Reverse(slot.k));
                    slots[*id] = None;
                    free_slots.push(*id);
                    forgot = true;
                }
                keep
            });
            total += m.sets.len();
            !m.sets.is_empty()
        });
        self.total = total;
        if forgot {
            let slots = &self.slots;
            self.series
                .retain(|_, id| slots.get(*id).is_some_and(Option::is_some));
        }
    }

    /// The key of a series seen before, by its text (see [`KeyIndex::series`]); marks it
    /// seen in this scrape.
    pub(super) fn key_of_series(&mut self, series: &str) -> Option<&str> {
        let id = *self.series.get(series)?;
        let slot = self.slots.get_mut(id)?.as_mut()?;
        slot.last_seen = self.scrape;
        Some(&slot.key)
    }

    /// Remember the text of a series whose labels were just given to [`KeyIndex::key`].
    pub(super) fn remember_series(
        &mut self,
        series: &str,
        metric: &str,
        labels: &[(String, String)],
    ) {
        if self.series.len() >= 2 * self.max_series {
            return;
        }
        let found = if labels.is_sorted() {
            self.keys.get(metric).and_then(|m| m.sets.get(labels))
        } else {
            let mut sorted = labels.to_vec();
            sorted.sort();
            self.keys.get(metric).and_then(|m| m.sets.get(&sorted))
        };
        if let Some(&id) = found {
            self.series.insert(series.into(), id);
        }
    }

    /// `openmetrics.<endpoint>.<metric>.<k>` for this label set, or `None` when it is
    /// new and the index is full (counted in what [`KeyIndex::end_scrape`] returns).
    pub fn key(&mut self, metric: &str, labels: &[(String, String)]) -> Option<String> {
        let scrape = self.scrape;
        // Exporters write labels in one order: look up without a sorted copy then.
        let sorted_copy;
        let sorted: &[(String, String)] = if labels.is_sorted() {
            labels
        } else {
            let mut v = labels.to_vec();
            v.sort();
            sorted_copy = v;
            &sorted_copy
        };
        if let Some(slot) = self
            .keys
            .get(metric)
            .and_then(|m| m.sets.get(sorted))
            .and_then(|&id| self.slots.get_mut(id))
            .and_then(Option::as_mut)
        {
            slot.last_seen = scrape;
            return Some(slot.key.clone());
        }
        if self.total >= self.max_series && !self.evicted {
            // Full: make room from the sets that have not appeared in this scrape.
            self.evicted = true;
            self.forget_older_than(scrape);
        }
        if self.total >= self.max_series {
            self.cut += 1;
            return None;
        }
        let m = self.keys.entry(metric.to_string()).or_default();
        let k = match m.free.pop() {
            Some(std::cmp::Reverse(k)) => k,
            None => {
                m.next += 1;
                m.next - 1
            }
        };
        let key = format!("openmetrics.{}.{metric}.{k}", self.endpoint);
        let slot = Slot {
            key: key.clone(),
            k,
            last_seen: scrape,
        };
        let id = match self.free_slots.pop() {
            Some(id) => {
                self.slots[id] = Some(slot);
                id
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        };
        m.sets.insert(sorted.to_vec(), id);
        self.total += 1;
        Some(key)
    }
}
