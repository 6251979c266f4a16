//! The overview sidebar's rows: run facts, then Summary, Config and Environment
//! flattened, through the overview filter.

use super::App;
use crate::store::Run;

/// A row of the run overview sidebar.
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Header(String),
    Item(String, String),
    /// A value that is a number of bytes (the live monitor's memory sizes), drawn
    /// in binary units by the view.
    Bytes(String, f64),
    /// A live reading: the view writes it in its key's unit (`system::key_unit`).
    Metric(String, f64),
    /// A line of prose (why a device family is unavailable): the view shortens it
    /// at a word, never inside one.
    Note(String, String),
}

/// Overview sidebar rows: run facts, then Summary, Config and Environment flattened.
/// Live (`host`): the Summary lists the latest readings, a process's only while one
/// is monitored (`process`).
fn rows(run: &Run, host: bool, process: bool) -> Vec<Row> {
    use crate::text::flatten_into;
    use crate::text::{natural_cmp, sanitize};
    let mut rows = Vec::new();
    let i = &run.info;
    let mut item = |k: &str, v: &str| {
        if !v.is_empty() {
            rows.push(Row::Item(k.to_owned(), sanitize(v)));
        }
    };
    item("Name", &i.display_name);
    item("Project", &i.project);
    item("Entity", &i.entity);
    item("Group", &i.group);
    item("Job type", &i.job_type);
    item("Tags", &i.tags.join(", "));
    item("Notes", &i.notes);
    if let Some((s, n)) = i.start_time {
        item(
            "Started",
            &crate::text::rfc3339(s, n.min(0)).unwrap_or_default(),
        );
    }
    item("Host", &i.host);
    item("Git", &i.git_commit);
    let section = |rows: &mut Vec<Row>, title: &str, flat: Vec<(String, String)>| {
        rows.push(Row::Header(format!("{title} [{}]", flat.len())));
        for (k, v) in flat {
            rows.push(Row::Item(sanitize(&k), sanitize(&v)));
        }
    };
    if host {
        // The latest reading of each key, in its unit (the store drops the keys of a
        // process no longer monitored; the summary would keep them).
        let mut keys: Vec<&String> = run
            .system
            .keys()
            .iter()
            .filter(|k| process || !super::system::is_process_key(k))
            .collect();
        keys.sort_by(|a, b| natural_cmp(a, b));
        let vals: Vec<(String, f64)> = keys
            .into_iter()
            .filter_map(|k| Some((sanitize(k), run.system.get(k)?.last()?.1)))
            .collect();
        rows.push(Row::Header(format!("Summary [{}]", vals.len())));
        rows.extend(vals.into_iter().map(|(k, v)| Row::Metric(k, v)));
    } else {
        let mut flat = Vec::new();
        flatten_into("", &run.summary.to_json(), &mut flat);
        flat.sort_by(|a, b| natural_cmp(&a.0, &b.0));
        section(&mut rows, "Summary", flat);
    }
    let mut flat = Vec::new();
    flatten_into("", &run.config.to_json(), &mut flat);
    flat.retain(|(k, _)| k != "_wandb");
    flat.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    section(&mut rows, "Config", flat);
    let mut flat = Vec::new();
    flatten_into("", &run.environment, &mut flat);
    flat.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    // Live: the device families the sampler could not read get a section of their
    // own, one line each (`amd  rocm-smi not found on PATH`).
    let (gone, flat): (Vec<_>, Vec<_>) = flat
        .into_iter()
        .partition(|(k, _)| host && k.starts_with("unavailable."));
    section(&mut rows, "Environment", flat);
    if !gone.is_empty() {
        rows.push(Row::Header(format!("Unavailable [{}]", gone.len())));
        for (k, v) in gone {
            let fam = k.strip_prefix("unavailable.").unwrap_or(&k);
            rows.push(Row::Note(sanitize(fam), sanitize(&v)));
        }
    }
    if host {
        // The sampler's sizes are numbers of bytes: the view writes them in units.
        for r in &mut rows {
            if let Row::Item(k, v) = r {
                if let (true, Ok(b)) = (is_bytes_key(k), v.parse::<f64>()) {
                    *r = Row::Bytes(std::mem::take(k), b);
                }
            }
        }
    }
    rows
}

/// Environment keys the live monitor fills with byte counts.
fn is_bytes_key(k: &str) -> bool {
    k == "memory.total"
        || k.strip_prefix("gpu.")
            .and_then(|r| r.strip_suffix(".memory"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

impl App {
    /// The overview's rows for the run (or the host) now.
    pub(super) fn overview_rows(&self) -> Vec<Row> {
        rows(&self.run, self.is_host(), self.procs.process_keys_shown())
    }

    pub(super) fn set_overview(&mut self, rows: Vec<Row>) {
        self.overview.all = rows;
        self.refilter_overview();
    }

    /// Overview rows whose key or value matches the overview filter, under their
    /// section headers (which then count the matches: `Summary [3 of 276]`).
    pub(super) fn refilter_overview(&mut self) {
        let f = &self.overview.filter;
        if !f.is_active() {
            self.overview.rows.clone_from(&self.overview.all);
            return;
        }
        let mut out = Vec::new();
        let mut header: Option<(usize, &str)> = None;
        let mut hits = 0;
        let close = |out: &mut Vec<Row>, header: Option<(usize, &str)>, hits: usize| {
            if let Some((at, h)) = header {
                if hits == 0 {
                    out.truncate(at);
                } else {
                    let name = h.split(" [").next().unwrap_or(h);
                    let total = h
                        .rsplit_once('[')
                        .map_or("", |(_, n)| n.trim_end_matches(']'));
                    out[at] = Row::Header(format!("{name} [{hits} of {total}]"));
                }
            }
        };
        for r in &self.overview.all {
            match r {
                Row::Header(h) => {
                    close(&mut out, header, hits);
                    header = Some((out.len(), h.as_str()));
                    hits = 0;
                    out.push(r.clone());
                }
                Row::Bytes(k, _) | Row::Metric(k, _) => {
                    if f.matches(k) {
                        hits += 1;
                        out.push(r.clone());
                    }
                }
                Row::Item(k, v) | Row::Note(k, v) => {
                    if f.matches(k) || f.matches(v) {
                        hits += 1;
                        out.push(r.clone());
                    }
                }
            }
        }
        close(&mut out, header, hits);
        self.overview.rows = out;
        self.overview.scroll = self.overview.scroll.min(self.overview.rows.len());
    }
}
