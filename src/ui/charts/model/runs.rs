//! The runs a metric chart draws, and their groups.

use crate::store::series::Point;
use crate::ui::charts::group::{group_stats, GroupStats};
use crate::ui::App;

/// A run drawn in the metric charts, as the chart needs it.
pub(crate) struct Drawn<'a> {
    pub run: &'a crate::store::Run,
    pub color: usize,
    pub label: String,
    pub pinned: bool,
    /// The workspace run it belongs to.
    pub key: Option<&'a str>,
    /// Its group (`G`), in the workspace's list.
    pub group: Option<&'a str>,
}

/// One group of runs in a chart: its legend text, colour, number of runs (a
/// resumed run's segments count once) and statistics.
pub(crate) struct Group {
    pub label: String,
    pub color: usize,
    pub runs: usize,
    pub stats: GroupStats,
}

/// The groups of the drawn series `all` (with their points `pts`), when the
/// workspace groups runs; coloured as their first run, in the order of their
/// values ([`by_value`]), which does not change with the order runs are drawn in.
pub(crate) fn groups_of(
    drawn: &[Drawn<'_>],
    all: &[(usize, &crate::store::series::Series)],
    pts: &[Vec<Point>],
    x: (f64, f64),
    buckets: usize,
) -> Option<Vec<Group>> {
    // Per group: its label, colour, members' points and runs (by workspace key).
    type Members<'p> = (&'p str, usize, Vec<&'p [Point]>, Vec<Option<&'p str>>);
    let mut order: Vec<Members<'_>> = Vec::new();
    for (&(i, _), p) in all.iter().zip(pts) {
        let d = &drawn[i];
        let g = d.group?;
        let at = match order.iter().position(|o| o.0 == g) {
            Some(at) => at,
            None => {
                order.push((g, d.color, Vec::new(), Vec::new()));
                order.len() - 1
            }
        };
        let o = &mut order[at];
        o.2.push(p);
        if !o.3.contains(&d.key) {
            o.3.push(d.key);
        }
    }
    order.sort_by(|a, b| by_value(a.0, b.0));
    Some(
        order
            .into_iter()
            .map(|(label, color, members, keys)| Group {
                label: label.to_owned(),
                color,
                runs: keys.len(),
                stats: group_stats(&members, x, buckets),
            })
            .collect(),
    )
}

/// Two groups' labels (`key=value`, one key) in their value's order: numbers
/// numerically, before any other value; the others by their text.
fn by_value(a: &str, b: &str) -> std::cmp::Ordering {
    let number = |label: &str| {
        let v = label.split_once('=').map_or(label, |(_, v)| v);
        serde_json::from_str::<f64>(v).ok()
    };
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y).then_with(|| a.cmp(b)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// The runs drawn, bottom first: the main run and the compared ones, in a
/// workspace with their own colours and the pinned run last (on top).
pub(crate) fn drawn_runs(app: &App) -> Vec<Drawn<'_>> {
    let mut v: Vec<Drawn<'_>> = Vec::with_capacity(1 + app.runs.compare.len());
    let main = app
        .runs
        .main_tag
        .as_ref()
        .filter(|_| app.runs.workspace.is_some());
    let grouped = app.runs.in_workspace_list();
    v.push(Drawn {
        run: &app.shown.run,
        color: app.runs.main_color(),
        label: main.map_or_else(|| app.shown.run_label(), |t| t.label.clone()),
        pinned: main.is_some_and(|t| t.pinned),
        key: main.map(|t| t.key.as_str()),
        group: main.and_then(|t| t.group.as_deref()).filter(|_| grouped),
    });
    for c in &app.runs.compare {
        let t = c.ws.as_ref().filter(|_| app.runs.workspace.is_some());
        v.push(Drawn {
            run: &c.run,
            color: app.runs.compared_color(c),
            label: c.label.clone(),
            pinned: t.is_some_and(|t| t.pinned),
            key: t.map(|t| t.key.as_str()),
            group: t.and_then(|t| t.group.as_deref()).filter(|_| grouped),
        });
    }
    v.sort_by_key(|d| d.pinned);
    tell_apart(&mut v);
    v
}

/// Runs drawn under the same name (the same script run three times) are told
/// apart by their ids (as few of their first characters as do it: `name (b9ws)`)
/// in the legend and the crosshair's readout; a run whose name is its own keeps
/// it. A resumed run's segments are one run (one key), and runs with the same id
/// stay as they are (the id would not tell them apart).
fn tell_apart(v: &mut [Drawn<'_>]) {
    let ids: Vec<&str> = v.iter().map(|d| d.run.info.run_id.as_str()).collect();
    let twin = |i: usize| {
        (0..v.len()).any(|j| {
            j != i
                && v[j].label == v[i].label
                && !ids[i].is_empty()
                && ids[j] != ids[i]
                && (v[i].key.is_none() || v[j].key != v[i].key)
        })
    };
    let twins: Vec<bool> = (0..v.len()).map(twin).collect();
    // Each name's runs by the fewest leading characters of their ids that tell
    // them apart (four for W&B's random ids, nearly always).
    let labels: Vec<String> = v.iter().map(|d| d.label.clone()).collect();
    for (i, d) in v.iter_mut().enumerate() {
        if !twins[i] {
            continue;
        }
        let same: Vec<&str> = (0..labels.len())
            .filter(|&j| labels[j] == labels[i])
            .map(|j| ids[j])
            .collect();
        let n = crate::text::distinct_prefix_len(&same, 4);
        let id = crate::text::sanitize(crate::text::prefix(ids[i], n));
        d.label = format!("{} ({id})", d.label);
    }
}

/// Whether the metric charts draw groups of runs (`G` in the workspace), each
/// group's mean and band rather than the runs' lines: every drawn run is in one.
pub(crate) fn runs_grouped(app: &App) -> bool {
    drawn_runs(app).iter().all(|d| d.group.is_some())
}
