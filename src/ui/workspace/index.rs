//! The index as it comes into the workspace: runs merged by run id, the run drawn
//! first picked, drawn runs that vanish for a while remembered, replaced ones
//! noted, partial listings shown while the scan reads big files.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value;

use super::{Vanished, Workspace, WsRun, MAX_SELECTED, VANISHED_SCANS};
use crate::msg::RunIndexEntry;
use crate::source::nodes::{are_nodes, Span};

impl Workspace {
    /// A new index: runs merged by run id, newest first. On the first one, when no
    /// selected run is left (none saved, or every saved one gone from the
    /// directory), the latest run (`latest`: its directory) is selected, or the
    /// newest one that can be read when that one cannot. Selected keys that name
    /// no run any more are let go, and drawn again should they come back within
    /// [`VANISHED_SCANS`] answers; a drawn run whose directory now holds another
    /// run, or whose file started again, is noted (`note`). Returns whether the
    /// selection changed.
    pub fn set_index(&mut self, entries: Vec<RunIndexEntry>, latest: Option<&Path>) -> bool {
        let cursor_key = self.cursor_run().map(|r| r.key.clone());
        let old = std::mem::replace(&mut self.runs, merge(entries));
        let cursor_key = self.rekey(&old, cursor_key);
        let first = !self.complete;
        self.complete = true;
        self.indexed = true;
        let before = self.selected.clone();
        if !first {
            self.note_replaced(&old);
        }
        self.keep_vanished(first);
        let back = self
            .back_to
            .take()
            .and_then(|d| self.runs.iter().find(|r| r.holds(&d)))
            .map(|r| r.key.clone());
        if let Some(k) = &back {
            if !self.selected.contains(k) && self.selected.len() < MAX_SELECTED {
                self.selected.push(k.clone());
            }
        }
        // The first runs to come (also into a workspace opened before any run
        // existed): the latest drawn; of those that came later, one the list
        // shows (its filter in force).
        let first_runs = first || self.awaiting_runs;
        let shown_only = !first;
        if first_runs && self.selected.is_empty() {
            let dir_run = latest.and_then(|d| self.runs.iter().find(|r| r.holds(d)));
            let listed = |r: &&WsRun| !shown_only || self.filter.matches(r);
            let pick = dir_run
                .filter(|r| !r.unreadable())
                .or_else(|| self.runs.iter().filter(listed).find(|r| !r.unreadable()));
            if let Some(r) = pick {
                self.selected = vec![r.key.clone()];
            }
        }
        // Still none to draw (no run yet, or none the list shows): the next to
        // come is.
        self.awaiting_runs = first_runs && self.selected.is_empty();
        if self
            .pinned
            .as_ref()
            .is_some_and(|p| !self.selected.contains(p))
        {
            self.pinned = None;
        }
        self.refilter();
        // The cursor stays on its run; the first time, on the first selected one;
        // back from a run shown alone, on that one.
        let want = if back.is_some() {
            back
        } else if first_runs {
            self.selected.first().cloned()
        } else {
            cursor_key
        };
        self.cursor_to(want.as_deref());
        self.selected != before
    }

    /// Runs keyed by their directory's name (no run record read yet) that now
    /// have their run id: selected, pinned and the cursor's `key` follow them, so a
    /// run drawn while its file was still empty stays drawn when its run record
    /// comes. The cursor's key as it is now.
    fn rekey(&mut self, old: &[WsRun], cursor: Option<String>) -> Option<String> {
        let mut cursor = cursor;
        for r in old
            .iter()
            .filter(|r| r.segments.iter().all(|s| s.run_id.is_empty()))
        {
            let Some(now) = self
                .runs
                .iter()
                .find(|n| r.segments.iter().any(|s| n.holds(&s.dir)))
            else {
                continue;
            };
            if now.key == r.key {
                continue;
            }
            let key = now.key.clone();
            for k in self.selected.iter_mut().filter(|k| **k == r.key) {
                k.clone_from(&key);
            }
            if self.pinned.as_deref() == Some(r.key.as_str()) {
                self.pinned = Some(key.clone());
            }
            if cursor.as_deref() == Some(r.key.as_str()) {
                cursor = Some(key.clone());
            }
        }
        // Two keys that became one are selected once.
        let mut seen = std::collections::HashSet::new();
        self.selected.retain(|k| seen.insert(k.clone()));
        cursor
    }

    /// A partial index (the scan still reads some files): the list shows it, the
    /// selection waits for the whole index.
    pub fn set_partial_index(&mut self, entries: Vec<RunIndexEntry>) {
        let cursor_key = self.cursor_run().map(|r| r.key.clone());
        self.runs = merge(entries);
        self.indexed = true;
        self.refilter();
        self.cursor_to(cursor_key.as_deref());
    }

    pub(super) fn cursor_to(&mut self, key: Option<&str>) {
        if let Some(k) = key {
            if let Some(i) = self.shown.iter().position(|&i| self.runs[i].key == k) {
                self.cursor = i;
            }
        }
        self.clamp_cursor();
    }

    /// Selected keys gone from the index remembered (not on the first: a run
    /// deleted since the last session is let go), remembered ones back selected.
    fn keep_vanished(&mut self, first: bool) {
        let runs = &self.runs;
        let present = |k: &str| runs.iter().any(|r| r.key == k);
        let (kept, gone): (Vec<String>, Vec<String>) =
            self.selected.drain(..).partition(|k| present(k));
        self.selected = kept;
        if !first {
            for key in gone {
                let pinned = self.pinned.as_deref() == Some(key.as_str());
                self.vanished.push(Vanished {
                    key,
                    pinned,
                    scans: 0,
                });
            }
        }
        let mut back = Vec::new();
        self.vanished.retain(|v| {
            if present(&v.key) {
                back.push((v.key.clone(), v.pinned));
                false
            } else {
                true
            }
        });
        for (key, pinned) in back {
            if self.selected.len() < MAX_SELECTED && !self.selected.contains(&key) {
                if pinned && self.pinned.is_none() {
                    self.pinned = Some(key.clone());
                }
                self.selected.push(key);
            }
        }
    }

    /// One more index answer: vanished runs remembered past [`VANISHED_SCANS`]
    /// are let go.
    pub(crate) fn age_vanished(&mut self) {
        for v in &mut self.vanished {
            v.scans += 1;
        }
        self.vanished.retain(|v| v.scans <= VANISHED_SCANS);
    }

    /// Note a drawn run (of `old`, the runs before this index) whose directory
    /// now holds another run id, whose file is another or started again, or
    /// whose file can no longer be read (no longer drawn: it has no run id to
    /// draw it by until it can be read again).
    fn note_replaced(&mut self, old: &[WsRun]) {
        let segments = || {
            (self.runs.iter())
                .flat_map(|n| &n.segments)
                .filter(|s| !s.reading)
        };
        let by_dir: HashMap<&Path, &RunIndexEntry> = segments()
            .filter(|s| s.has_run_record)
            .map(|s| (s.dir.as_path(), s))
            .collect();
        let unreadable: HashMap<&Path, &str> = segments()
            .filter(|s| !s.has_run_record)
            .filter_map(|s| Some((s.dir.as_path(), s.error.as_deref()?)))
            .collect();
        let mut notes = Vec::new();
        let mut lost = None;
        for r in old.iter().filter(|r| self.is_selected(&r.key)) {
            // Its directories gone and its run nowhere else (a run renamed or
            // moved within the directory is drawn on from where it went).
            let moved = self.runs.iter().any(|n| n.key == r.key);
            let gone = r
                .segments
                .iter()
                .all(|s| segments().all(|n| n.dir != s.dir));
            if gone && !moved {
                let l = r.latest();
                let dir = (l.dir.file_name())
                    .map(|n| crate::text::sanitize(&n.to_string_lossy()))
                    .unwrap_or_default();
                notes.push(format!("{dir} no longer drawn: its directory is gone"));
                lost.get_or_insert((l.dir.clone(), notes.len() - 1));
                continue;
            }
            for was in r.segments.iter().filter(|s| !s.reading) {
                let dir = was
                    .dir
                    .file_name()
                    .map(|n| crate::text::sanitize(&n.to_string_lossy()))
                    .unwrap_or_default();
                if let Some(e) = unreadable.get(was.dir.as_path()) {
                    if was.has_run_record {
                        let e = crate::text::sanitize(e);
                        notes.push(format!("{dir} no longer drawn: unreadable: {e}"));
                        lost.get_or_insert((was.dir.clone(), notes.len() - 1));
                    }
                    continue;
                }
                let Some(now) = by_dir.get(was.dir.as_path()) else {
                    continue;
                };
                if !was.run_id.is_empty() && now.run_id != was.run_id {
                    notes.push(format!(
                        "{dir} now holds run {} (was {})",
                        crate::text::sanitize(&now.run_id),
                        crate::text::sanitize(&was.run_id)
                    ));
                } else if now.file != was.file || now.size < was.size {
                    notes.push(format!("{dir}: its run file started again"));
                }
            }
        }
        if let Some(n) = notes.first() {
            let more = notes.len() - 1;
            let note = if more > 0 {
                format!("{n} (and {more} more)")
            } else {
                n.clone()
            };
            self.lost = lost.map(|(dir, _)| (dir, note.clone()));
            self.note = Some(note);
        }
    }

    /// The note of [`Workspace::lost`] when its run is drawn again (its file
    /// readable again): it no longer holds.
    pub(crate) fn take_found(&mut self) -> Option<String> {
        let (dir, _) = self.lost.as_ref()?;
        let drawn = (self.runs.iter()).any(|r| r.holds(dir) && self.is_selected(&r.key));
        drawn.then(|| self.lost.take().map(|(_, n)| n)).flatten()
    }
}

/// Index entries (newest first) merged by run id into workspace runs, newest
/// first; colours by position oldest first.
fn merge(entries: Vec<RunIndexEntry>) -> Vec<WsRun> {
    let mut runs: Vec<WsRun> = Vec::new();
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    let mut rank: BTreeMap<String, usize> = BTreeMap::new();
    // Oldest first, so segments come in order.
    for (n, e) in entries.into_iter().rev().enumerate() {
        let dir_name = e
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let key = if e.run_id.is_empty() {
            dir_name.clone()
        } else {
            e.run_id.clone()
        };
        rank.insert(key.clone(), n);
        let i = *by_key.entry(key.clone()).or_insert_with(|| {
            runs.push(WsRun {
                key,
                config: Value::Object(serde_json::Map::new()),
                summary: Value::Object(serde_json::Map::new()),
                ..WsRun::default()
            });
            runs.len() - 1
        });
        let r = &mut runs[i];
        fold_into(&mut r.config, &e.config);
        fold_into(&mut r.summary, &e.summary);
        r.dir_name = dir_name;
        r.segments.push(e);
    }
    for (i, r) in runs.iter_mut().enumerate() {
        r.color = i;
        split_nodes(r);
    }
    // Newest first, in the scan's order (the directory names' start times) of each
    // run's newest segment.
    runs.sort_by_key(|r| std::cmp::Reverse(rank.get(&r.key).copied().unwrap_or(0)));
    runs
}

/// A run whose directories are the nodes of one distributed run (written at the
/// same time, see [`crate::source::nodes::are_nodes`]), not a resumed run's
/// segments: its primary node (the one that wrote the environment, else the most
/// history) is its one segment, whose config and summary are the run's; the
/// others are its `nodes`, read with it.
fn split_nodes(r: &mut WsRun) {
    let spans: Vec<Span> = r
        .segments
        .iter()
        .map(|e| Span {
            start: e.start_time,
            end: match (e.last_time, e.start_time.zip(e.runtime)) {
                (Some(l), Some((s, t))) => Some(l.max(s + t)),
                (l, st) => l.or(st.map(|(s, t)| s + t)),
            },
            resumed: e.resumed,
        })
        .collect();
    if !are_nodes(&spans) {
        return;
    }
    let primary = r
        .segments
        .iter()
        .enumerate()
        .max_by_key(|(i, e)| (!e.environment.is_empty(), e.history_rows, Reverse(*i)))
        .map_or(0, |(i, _)| i);
    let p = r.segments.remove(primary);
    r.nodes = std::mem::take(&mut r.segments);
    r.config = Value::Object(p.config.clone());
    r.summary = Value::Object(p.summary.clone());
    if let Some(n) = p.dir.file_name() {
        r.dir_name = n.to_string_lossy().into_owned();
    }
    r.segments.push(p);
}

fn fold_into(into: &mut Value, from: &serde_json::Map<String, Value>) {
    if let Value::Object(m) = into {
        for (k, v) in from {
            m.insert(k.clone(), v.clone());
        }
    }
}
