//! Folding history rows and system samples into the run's series, and the images a
//! row names into its media lists.

use super::media::{json_strings, json_text, MediaItem, MEDIA_FIELDS, MEDIA_PER_KEY};
use super::run::Run;
use leet_format::event::{Events, Row, Timestamp};

const NONE: usize = usize::MAX;

fn values<'a>(ev: &'a Events, r: &std::ops::Range<u32>) -> &'a [(u32, f64)] {
    ev.values
        .get(r.start as usize..r.end as usize)
        .unwrap_or_default()
}

impl Run {
    /// Forget the batch key → series maps (a new batch has its own key table).
    pub(crate) fn start_batch(&mut self, ev: &Events) {
        self.metric_of.clear();
        self.metric_of.resize(ev.keys.len(), NONE);
        self.system_of.clear();
        self.system_of.resize(ev.keys.len(), NONE);
    }

    fn metric_slot(&mut self, ev: &Events, id: u32) -> usize {
        let i = id as usize;
        match self.metric_of.get(i) {
            Some(&s) if s != NONE => s,
            Some(_) => {
                let s = self.metrics.slot(&ev.keys[i]);
                self.metric_of[i] = s;
                s
            }
            None => NONE,
        }
    }

    fn system_slot(&mut self, ev: &Events, id: u32) -> usize {
        let i = id as usize;
        match self.system_of.get(i) {
            Some(&s) if s != NONE => s,
            Some(_) => {
                let s = self.system.slot(&ev.keys[i]);
                self.system_of[i] = s;
                s
            }
            None => NONE,
        }
    }

    fn step_metric_for(&mut self, key: &str) -> Option<String> {
        if let Some(s) = self.step_metric_of.get(key) {
            return s.clone();
        }
        let found = leet_format::event::step_metric_for(&self.metric_defs, key).map(str::to_owned);
        self.step_metric_of.insert(key.to_owned(), found.clone());
        found
    }

    pub(crate) fn fold_row(&mut self, ev: &Events, r: &Row) {
        if let Some(t) = r.time {
            self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
        }
        // A complete row is counted here; one that a later segment of its resumed
        // run logged again is charted nowhere.
        let x = if r.complete {
            let Some(x) = self.complete_row(r) else {
                return;
            };
            Some(x)
        } else {
            None
        };
        let defs = !self.metric_defs.is_empty();
        if let Some(x) = x.filter(|_| !defs && r.others.is_empty()) {
            self.fold_plain_row(ev, r, x);
            return;
        }
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        self.row_steps.clear();
        for &(id, y) in values(ev, &r.values) {
            let slot = self.metric_slot(ev, id);
            row.push((slot, y));
            if defs {
                self.row_steps.insert(ev.keys[id as usize].clone(), y);
            }
        }
        for (id, text) in &r.others {
            let Some(key) = ev.keys.get(*id as usize) else {
                continue;
            };
            if let Some(prefix) = key.strip_suffix("._type") {
                if !self.media_prefixes.contains(prefix) {
                    self.media_prefixes.insert(prefix.to_owned());
                }
            }
            // The fields of an image object, gathered until the row's step is known.
            if let Some((prefix, field)) = key.rsplit_once('.') {
                if r.complete && MEDIA_FIELDS.contains(&field) {
                    self.row_media
                        .push((prefix.to_owned(), field.to_owned(), json_text(text)));
                }
            }
            // Reuse the key's buffer: no allocation per row once seen.
            if let Some(v) = self.latest_other.get_mut(key.as_str()) {
                v.clear();
                v.push_str(text);
            } else {
                self.latest_other.insert(key.clone(), text.clone());
            }
        }
        let Some(x_default) = x else {
            self.row = row;
            return;
        };
        self.take_row_media(x_default);
        self.timeline.row(x_default, r.time, r.runtime);
        if defs {
            for (k, v) in &self.row_steps {
                self.last_step_values.insert(k.clone(), *v);
            }
            for &(slot, y) in &row {
                let name = self.metrics.keys()[slot].clone();
                let x = match self.step_metric_for(&name) {
                    Some(sm) => self
                        .row_steps
                        .get(&sm)
                        .or_else(|| self.last_step_values.get(&sm))
                        .copied(),
                    None => Some(x_default),
                };
                if let Some(x) = x {
                    self.metrics.push_at(slot, x, y);
                }
                // Charted over a step metric: by `_step` too, for other x axes.
                if self.step_metric_of.get(&name).is_some_and(Option::is_some) {
                    self.timeline.by_step.push(&name, x_default, y);
                }
            }
        } else {
            for &(slot, y) in &row {
                self.metrics.push_at(slot, x_default, y);
            }
        }
        self.row = row;
    }

    /// Count a complete row: its x (its step, else its row number), or None when
    /// the row is at or past the run's cut (see [`super::stitch::Stitch`]).
    fn complete_row(&mut self, r: &Row) -> Option<f64> {
        let x = r.step.unwrap_or(self.history_rows as f64);
        self.history_rows += 1;
        if let Some(s) = r.step {
            self.last_step = Some(s as i64);
            self.top_step = self.top_step.max(self.last_step);
        }
        self.stitch.row(x).then_some(x)
    }

    /// [`Run::fold_row`] of a complete row of numbers only, without metric
    /// definitions, at `x` (already counted): the same slots looked up in the same
    /// order (so series are created and capped as there), then the points pushed,
    /// without the row buffer.
    fn fold_plain_row(&mut self, ev: &Events, r: &Row, x: f64) {
        let vals = values(ev, &r.values);
        for &(id, _) in vals {
            self.metric_slot(ev, id);
        }
        self.take_row_media(x);
        self.timeline.row(x, r.time, r.runtime);
        for &(id, y) in vals {
            if let Some(&slot) = self.metric_of.get(id as usize) {
                self.metrics.push_at(slot, x, y);
            }
        }
    }

    /// Record the row's images at `step`: each `image-file` (`_type`, with a
    /// `path`) under its key, and each image of a list (`images/separated`, with
    /// `filenames`) under its key and index, `samples[0]`, as W&B's leet lists them.
    fn take_row_media(&mut self, step: f64) {
        if self.row_media.is_empty() {
            return;
        }
        let fields = std::mem::take(&mut self.row_media);
        for (prefix, field, text) in &fields {
            if field != "_type" {
                continue;
            }
            let get = |want: &str| {
                fields
                    .iter()
                    .find(|(p, f, _)| p == prefix && f == want)
                    .map(|(_, _, t)| t.as_str())
            };
            match text.as_str() {
                "image-file" => {
                    let Some(path) = get("path") else {
                        continue;
                    };
                    let caption = get("caption").unwrap_or_default().to_owned();
                    self.push_media(prefix.clone(), step, path.to_owned(), caption);
                }
                "images/separated" => {
                    let paths = json_strings(get("filenames").unwrap_or_default());
                    let captions = json_strings(get("captions").unwrap_or_default());
                    for (i, path) in paths.into_iter().enumerate() {
                        let Some(path) = path else {
                            continue;
                        };
                        let caption = captions.get(i).cloned().flatten().unwrap_or_default();
                        self.push_media(format!("{prefix}[{i}]"), step, path, caption);
                    }
                }
                _ => {}
            }
        }
        self.row_media = fields;
        self.row_media.clear();
    }

    fn push_media(&mut self, key: String, step: f64, path: String, caption: String) {
        let items = self.media.entry(key.clone()).or_default();
        if items.len() == MEDIA_PER_KEY {
            items.pop_front();
            *self.media_dropped.entry(key).or_default() += 1;
        }
        items.push_back(MediaItem {
            step,
            path,
            caption,
        });
    }

    pub(crate) fn fold_stats(
        &mut self,
        ev: &Events,
        time: Option<Timestamp>,
        r: &std::ops::Range<u32>,
    ) {
        let x = time.map_or_else(
            || self.last_time.unwrap_or(0.0),
            |(s, n)| s as f64 + f64::from(n) * 1e-9,
        );
        self.last_time = Some(self.last_time.map_or(x, |l| l.max(x)));
        for &(id, y) in values(ev, r) {
            let slot = self.system_slot(ev, id);
            self.system.push_at(slot, x, y);
        }
    }
}
