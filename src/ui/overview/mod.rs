//! The overview sidebar's rows: run facts, then the Damage (of a damaged run),
//! Config, Summary and Environment sections (live: Unavailable too), each paged on
//! its own, through the overview filter (`o`).

use super::filter::FilterState;
use super::status::part::FilterStatus;
use super::workspace::WsRun;
use crate::decode::leveldb::SkipReason;
use crate::store::Run;

mod sections;
#[cfg(test)]
mod tests;
pub(crate) mod view;

pub use sections::OverviewLayout;

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
    /// A time in Unix seconds (`_timestamp`, a start time): drawn as a date; the
    /// filter matches the date and the raw number, which the filter row shows.
    Time(String, f64),
}

/// One section of the overview: where its rows are in [`OverviewPane::rows`] and how
/// far it is scrolled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Its title: `Damage`, `Config`, `Summary`, `Environment`, `Unavailable`.
    pub name: &'static str,
    /// Its rows before the filter.
    pub total: usize,
    /// Index of its header in [`OverviewPane::rows`]; its rows follow.
    pub at: usize,
    /// Its rows that pass the filter.
    pub len: usize,
    /// Its first row shown.
    pub scroll: usize,
}

/// The overview sidebar (`[`): run facts, then its sections.
#[derive(Debug, Clone, Default)]
pub struct OverviewPane {
    /// Rows shown: the run facts, then each section's header and rows, through the
    /// filter (a section without a match keeps its header: `Config [0 of 2]`).
    pub rows: Vec<Row>,
    /// Every fact row of the run.
    facts: Vec<Row>,
    /// Every section's rows.
    all: SectionRows,
    /// The sections, in order: (Damage,) Config, Summary, Environment (live:
    /// Unavailable).
    pub sections: Vec<Section>,
    /// The section the paging keys move (highlighted while the pane has focus).
    pub active: usize,
    /// Filter of the rows (`o`).
    pub filter: FilterState,
}

/// Keys whose numbers are times in Unix seconds: the last part of the key.
fn is_time_key(k: &str) -> bool {
    let last = k.rsplit(['.', '/']).next().unwrap_or(k);
    matches!(
        last,
        "_timestamp" | "timestamp" | "start_time" | "startTime" | "_start_time" | "started_at"
    )
}

/// A time row when `k` names a time and `v` is a plausible Unix time in seconds
/// (1973 to 2286): anything else stays as it was.
fn time_row(k: String, v: String) -> Row {
    match v.parse::<f64>() {
        Ok(t) if is_time_key(&k) && (1e8..1e10).contains(&t) => Row::Time(k, t),
        _ => Row::Item(k, v),
    }
}

impl Row {
    /// The date of a time row's Unix seconds, to the second (`2026-11-30T17:48:29Z`).
    #[must_use]
    pub fn date(secs: f64) -> String {
        crate::text::rfc3339(secs.floor() as i64, 0).unwrap_or_default()
    }

    /// A time row's raw number, as the run logged it.
    #[must_use]
    pub fn raw_time(secs: f64) -> String {
        secs.to_string()
    }
}

/// Each section's title and rows, in order.
pub(crate) type SectionRows = Vec<(&'static str, Vec<Row>)>;

/// A run's facts as the overview lists them, whoever read them (the run's reader,
/// or the workspace's index). Untrusted: sanitized here.
struct Facts<'a> {
    name: &'a str,
    project: &'a str,
    entity: &'a str,
    group: &'a str,
    job_type: &'a str,
    tags: &'a [String],
    notes: &'a str,
    /// RFC 3339.
    started: Option<String>,
    host: &'a str,
    git: &'a str,
    /// The nodes that wrote it, when several did (`3: node-0 · node-1 · node-2`).
    nodes: String,
}

impl Facts<'_> {
    /// The fact rows, those with a value.
    fn rows(&self) -> Vec<Row> {
        let mut facts = Vec::new();
        let mut item = |k: &str, v: &str| {
            if !v.is_empty() {
                facts.push(Row::Item(k.to_owned(), shown(v)));
            }
        };
        item("Name", self.name);
        item("Project", self.project);
        item("Entity", self.entity);
        item("Group", self.group);
        item("Job type", self.job_type);
        item("Tags", &self.tags.join(", "));
        item("Notes", self.notes);
        item("Started", self.started.as_deref().unwrap_or_default());
        item("Host", self.host);
        item("Nodes", &self.nodes);
        item("Git", self.git);
        facts
    }
}

/// Most node labels the overview names; the others are counted.
const NODES_NAMED: usize = 8;

/// The nodes whose system keys the run holds (their `/l:` labels), when there are
/// several: how many, and the first few by name.
fn node_labels(run: &Run) -> String {
    let labels: std::collections::BTreeSet<&str> = run
        .system
        .keys()
        .iter()
        .filter_map(|k| crate::source::nodes::label_of(k))
        .collect();
    nodes_text(&labels)
}

/// The `Nodes` row's text of a run's node labels (sorted): empty for fewer than two.
fn nodes_text<S: AsRef<str>>(labels: &std::collections::BTreeSet<S>) -> String {
    if labels.len() < 2 {
        return String::new();
    }
    let named: Vec<&str> = labels.iter().map(AsRef::as_ref).take(NODES_NAMED).collect();
    let more = labels.len() - named.len();
    let tail = if more > 0 {
        format!(" · +{more}")
    } else {
        String::new()
    };
    format!("{}: {}{tail}", labels.len(), named.join(" · "))
}

/// A nested object's leaves as `(key, value)`, keys sorted naturally.
fn flat(m: &serde_json::Map<String, serde_json::Value>) -> Vec<(String, String)> {
    let mut flat = Vec::new();
    crate::text::flatten_into("", m, &mut flat);
    flat.sort_by(|a, b| crate::text::natural_cmp(&a.0, &b.0));
    flat
}

/// A section's rows from flattened leaves (times as times).
fn section(flat: Vec<(String, String)>) -> Vec<Row> {
    flat.into_iter()
        .map(|(k, v)| time_row(shown(&k), shown(&v)))
        .collect()
}

/// Most characters of a key or value the overview keeps: a row shows one line
/// of it, and the widest terminal is a few hundred columns. A run holding
/// megabytes of text in one config or summary value (a logged prompt, a file's
/// contents) would otherwise have it kept and copied whole for the pane, the
/// filter and each refilter: a 5 MB summary string was held twice more here.
const SHOWN_CHARS: usize = 2048;

/// `text` sanitized, cut to [`SHOWN_CHARS`] with `…` where it is longer.
fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => {
            let mut s = crate::text::sanitize(&text[..at]);
            s.push('…');
            s
        }
        None => crate::text::sanitize(text),
    }
}

/// Config leaves (W&B's `_wandb` bookkeeping left out).
fn config_section(m: &serde_json::Map<String, serde_json::Value>) -> Vec<Row> {
    let mut f = flat(m);
    // The whole subtree: the SDK fills it in (`cli_version`, `t`, `m`,
    // `visualize`) once a run's name, tags or notes change mid-run.
    f.retain(|(k, _)| {
        k.strip_prefix("_wandb")
            .is_none_or(|rest| !(rest.is_empty() || rest.starts_with(['.', '['])))
    });
    section(f)
}

/// Lost step ranges and skipped spans the Damage section lists, each (the first
/// ones: its counts are of all of them).
const DAMAGE_LISTED: usize = 20;

/// The Damage section of a run read past damage (none for a clean one): the
/// spans skipped and their bytes, the records that did not decode, the `_step`
/// ranges lost, then the first spans (offset, length in bytes, why), as `leet
/// inspect` reports them. The status bar's warning says the same in brief.
fn damage_rows(run: &Run) -> Vec<Row> {
    let d = &run.damage;
    let tail = run.unfinished_tail();
    if d.is_clean() && tail == 0 {
        return Vec::new();
    }
    // Keys short enough for the key column of an 80-column screen.
    let mut rows = Vec::new();
    if let Some(a) = d.appended {
        rows.push(Row::Item(
            "joined on".into(),
            format!(
                "another run file at offset {} ({} bytes): not read",
                a.offset, a.len
            ),
        ));
    }
    let (spans, bytes) = d.corrupt();
    if spans > 0 {
        rows.push(Row::Item("spans".into(), format!("{spans} corrupt")));
        rows.push(Row::Bytes("skipped".into(), bytes as f64));
    }
    if tail > 0 {
        // Bytes after the exit that make no record (garbage, a cut write).
        rows.push(Row::Bytes("unreadable".into(), tail as f64));
    }
    if d.bad_records > 0 {
        rows.push(Row::Item(
            "records".into(),
            format!("{} undecodable", d.bad_records),
        ));
    }
    let breaks = run.breaks.spans();
    for &(a, b) in breaks.iter().take(DAMAGE_LISTED) {
        // A break is (last step read before, first after): the steps between are lost.
        let (first, last) = (a + 1.0, b - 1.0);
        let steps = if last > first {
            format!("{first:.0}–{last:.0}")
        } else {
            format!("{first:.0}")
        };
        rows.push(Row::Item("steps lost".into(), steps));
    }
    if breaks.len() > DAMAGE_LISTED {
        let more = breaks.len() - DAMAGE_LISTED;
        rows.push(Row::Item(
            "steps lost".into(),
            format!("… {more} more range(s)"),
        ));
    }
    // A span as a note: its offset is short, its length and reason get the line
    // (another file joined on has its row above).
    let damage = (d.skips.iter()).filter(|s| s.reason != SkipReason::AppendedFile);
    let mut listed = 0_u64;
    for s in damage.take(DAMAGE_LISTED) {
        rows.push(Row::Note(
            format!("at {}", s.offset),
            format!("{} B, {}", s.len, s.reason),
        ));
        listed += 1;
    }
    if spans > listed {
        let more = spans - listed;
        rows.push(Row::Note("at …".into(), format!("{more} more span(s)")));
    }
    rows
}

/// The overview's facts and sections of `subject`, the run highlighted in the
/// workspace's runs list while that is shown, else of the run read (or the host:
/// `host`, with the process's readings while `process`).
/// `segment`: what the overview says of a resumed run's segment read alone;
/// `started`: a resumed run's start drawn whole (its first segment's), where the
/// run read is a later segment.
pub(crate) fn rows_of(
    subject: Option<&WsRun>,
    run: &Run,
    (host, process): (bool, bool),
    (segment, started): (Option<String>, Option<leet_format::event::Timestamp>),
) -> (Vec<Row>, SectionRows) {
    match subject {
        Some(r) => index_rows(r),
        None => {
            let (mut facts, sections) = rows(run, host, process);
            if let Some(t) = started.and_then(|(s, n)| crate::text::rfc3339(s, n.min(0))) {
                for f in &mut facts {
                    if let Row::Item(k, v) = f {
                        if k == "Started" {
                            *v = t.clone();
                        }
                    }
                }
            }
            if let Some(s) = segment {
                // After the start, where a run's time is told.
                let at = (facts.iter())
                    .position(|r| matches!(r, Row::Item(k, _) if k == "Started"))
                    .map_or(facts.len(), |i| i + 1);
                facts.insert(at, Row::Item("Segment".into(), s));
            }
            (facts, sections)
        }
    }
}

/// Overview facts and sections: run facts, then Damage (where there is any), Config,
/// Summary, Environment flattened. Live (`host`): the Summary lists the latest readings, a process's only
/// while one is monitored (`process`).
fn rows(run: &Run, host: bool, process: bool) -> (Vec<Row>, SectionRows) {
    use crate::text::{natural_cmp, sanitize};
    let i = &run.info;
    let facts = Facts {
        name: &i.display_name,
        project: &i.project,
        entity: &i.entity,
        group: &i.group,
        job_type: &i.job_type,
        tags: &i.tags,
        notes: &i.notes,
        started: i
            .start_time
            .and_then(|(s, n)| crate::text::rfc3339(s, n.min(0))),
        host: &i.host,
        git: &i.git_commit,
        nodes: node_labels(run),
    }
    .rows();
    let mut sections = Vec::new();
    // First, where it is seen: what was lost to damage.
    let damage = damage_rows(run);
    if !damage.is_empty() {
        sections.push(("Damage", damage));
    }
    sections.push(("Config", config_section(&run.config.to_json())));
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
        let vals: Vec<Row> = keys
            .into_iter()
            .filter_map(|k| Some(Row::Metric(sanitize(k), run.system.get(k)?.last()?.1)))
            .collect();
        sections.push(("Summary", vals));
    } else {
        sections.push(("Summary", section(flat(&run.summary.to_json()))));
    }
    // Live: the device families the sampler could not read get a section of their
    // own, one line each (`amd  rocm-smi not found on PATH`).
    let (gone, kept): (Vec<_>, Vec<_>) = flat(&run.environment)
        .into_iter()
        .partition(|(k, _)| host && k.starts_with("unavailable."));
    let mut env = section(kept);
    if host {
        // The sampler's sizes are numbers of bytes: the view writes them in units.
        for r in &mut env {
            if let Row::Item(k, v) = r {
                if let (true, Ok(b)) = (is_bytes_key(k), v.parse::<f64>()) {
                    *r = Row::Bytes(std::mem::take(k), b);
                }
            }
        }
    }
    sections.push(("Environment", env));
    if !gone.is_empty() {
        let notes = gone
            .into_iter()
            .map(|(k, v)| {
                let fam = k.strip_prefix("unavailable.").unwrap_or(&k);
                Row::Note(sanitize(fam), sanitize(&v))
            })
            .collect();
        sections.push(("Unavailable", notes));
    }
    (facts, sections)
}

/// The overview of a run of the workspace from its index entries (the runs list's
/// highlighted run, which is not read): the newest segment's facts, the first's
/// start, config and summary over the segments, the newest's environment.
fn index_rows(r: &WsRun) -> (Vec<Row>, SectionRows) {
    let l = r.latest();
    let started = r
        .start()
        .and_then(|t| crate::text::rfc3339(t.floor() as i64, 0));
    let facts = Facts {
        name: &l.display_name,
        project: &l.project,
        entity: &l.entity,
        group: &l.group,
        job_type: &l.job_type,
        tags: &l.tags,
        notes: &l.notes,
        started,
        host: &l.host,
        git: &l.git_commit,
        nodes: nodes_text(&r.node_labels()),
    }
    .rows();
    let mut facts = facts;
    let left_out = r.keys_not_indexed();
    if left_out > 0 {
        facts.push(Row::Note(
            "Keys".into(),
            format!("{left_out} more (enter shows all)"),
        ));
    }
    let empty = serde_json::Map::new();
    let sections = vec![
        (
            "Config",
            config_section(r.config.as_object().unwrap_or(&empty)),
        ),
        (
            "Summary",
            section(flat(r.summary.as_object().unwrap_or(&empty))),
        ),
        ("Environment", section(flat(&l.environment))),
    ];
    (facts, sections)
}

/// Environment keys the live monitor fills with byte counts.
fn is_bytes_key(k: &str) -> bool {
    k == "memory.total"
        || ["gpu.", "tpu.", "ipu.", "neuron."].iter().any(|p| {
            k.strip_prefix(p)
                .and_then(|r| r.strip_suffix(".memory"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Whether a row passes the filter: its key or its value (a time: its date or its
/// raw number; a reading: its key).
fn passes(f: &FilterState, r: &Row) -> bool {
    match r {
        Row::Header(_) => true,
        Row::Bytes(k, _) | Row::Metric(k, _) => f.matches(k),
        Row::Item(k, v) | Row::Note(k, v) => f.matches(k) || f.matches(v),
        Row::Time(k, t) => {
            f.matches(k) || f.matches(&Row::date(*t)) || f.matches(&Row::raw_time(*t))
        }
    }
}

impl OverviewPane {
    /// Replace the run's rows, keeping each section's scroll (clamped by the view and
    /// the keys) and the active section.
    pub(crate) fn set(&mut self, facts: Vec<Row>, all: SectionRows) {
        self.facts = facts;
        self.all = all;
        self.refilter(false);
    }

    /// Rebuild `rows` and `sections` through the filter. `changed`: the filter
    /// changed, so every section starts from its top again and the one with the
    /// most matches becomes active (as `wandb leet` does).
    pub(crate) fn refilter(&mut self, changed: bool) {
        let f = &self.filter;
        let on = f.is_active();
        let mut rows: Vec<Row> = self
            .facts
            .iter()
            .filter(|r| !on || passes(f, r))
            .cloned()
            .collect();
        let old = std::mem::take(&mut self.sections);
        for (i, (name, all)) in self.all.iter().enumerate() {
            let at = rows.len();
            rows.push(Row::Header(String::new()));
            rows.extend(all.iter().filter(|r| !on || passes(f, r)).cloned());
            let len = rows.len() - at - 1;
            rows[at] = Row::Header(if on {
                format!("{name} [{len} of {}]", all.len())
            } else {
                format!("{name} [{}]", all.len())
            });
            let scroll = match old.get(i) {
                Some(s) if !changed && s.name == *name => s.scroll.min(len.saturating_sub(1)),
                _ => 0,
            };
            self.sections.push(Section {
                name,
                total: all.len(),
                at,
                len,
                scroll,
            });
        }
        self.rows = rows;
        if changed && on {
            // Ties keep the active section.
            let best = self
                .sections
                .iter()
                .enumerate()
                .max_by_key(|&(i, s)| (s.len, i == self.active))
                .filter(|(_, s)| s.len > 0)
                .map(|(i, _)| i);
            if let Some(b) = best {
                self.active = b;
            }
        }
        self.active = self.active.min(self.sections.len().saturating_sub(1));
    }

    /// The fact rows shown (those before the first section).
    #[must_use]
    pub fn facts(&self) -> &[Row] {
        let end = self.sections.first().map_or(self.rows.len(), |s| s.at);
        &self.rows[..end]
    }

    /// The rows of section `i` that pass the filter.
    #[must_use]
    pub fn section_rows(&self, i: usize) -> &[Row] {
        self.sections
            .get(i)
            .and_then(|s| self.rows.get(s.at + 1..s.at + 1 + s.len))
            .unwrap_or(&[])
    }

    /// Every section back to its top.
    pub(crate) fn home(&mut self) {
        for s in &mut self.sections {
            s.scroll = 0;
        }
    }

    /// The time rows that pass the filter, as (key, raw number): the filter row
    /// shows their raw numbers beside the counts (the sidebar shows dates).
    #[must_use]
    pub fn filtered_times(&self) -> Vec<(&str, f64)> {
        self.sections
            .iter()
            .enumerate()
            .flat_map(|(i, _)| self.section_rows(i))
            .filter_map(|r| match r {
                Row::Time(k, t) => Some((k.as_str(), *t)),
                _ => None,
            })
            .collect()
    }

    /// The overview's filter (`o`), with its match counts per section (only while
    /// typed or in force) and the raw number of a time that matches (the sidebar
    /// shows it as a date).
    pub(crate) fn filter_status(&self) -> FilterStatus<'_> {
        let mut count = format!("[{}]", self.filter_counts());
        if self.filter.is_active() {
            let times = self.filtered_times();
            if let Some((k, t)) = times.first() {
                count.push_str(&format!(" {k} = {}", Row::raw_time(*t)));
                if times.len() > 1 {
                    count.push_str(&format!(" (+{} more)", times.len() - 1));
                }
            }
        }
        FilterStatus {
            filter: &self.filter,
            sigil: 'o',
            label: "overview: ",
            count,
        }
    }

    /// Per-section match counts for the filter prompt, as `wandb leet` writes them
    /// (`Config: 3, Summary: 1`; sections without a match left out; `Environment`
    /// as `Env`), or `no matches`.
    #[must_use]
    pub fn filter_counts(&self) -> String {
        let parts: Vec<String> = self
            .sections
            .iter()
            .filter(|s| s.len > 0)
            .map(|s| {
                let name = if s.name == "Environment" {
                    "Env"
                } else {
                    s.name
                };
                format!("{name}: {}", s.len)
            })
            .collect();
        if parts.is_empty() {
            "no matches".to_owned()
        } else {
            parts.join(", ")
        }
    }
}
