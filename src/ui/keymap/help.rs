//! The help overlay's lines, generated from the live key map: the view draws them,
//! the app bounds the overlay's scroll by their count.

use super::{Keymap, Mode};
use crate::ui::action::{Action, GROUPS};
use crate::ui::overlay::{Keys, Kind};

/// What the help is opened over: which sections it lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelpFor {
    /// A run: no process table, no cluster screen.
    Run,
    /// The workspace's runs list (a run's keys, and the list's own).
    Workspace,
    /// The live monitor of this host.
    Live,
    /// The cluster screen (`--prometheus`): its own keys, and those of the host
    /// filter while it is typed; nothing of the panes it does not have.
    Cluster,
    /// A host opened from the cluster screen: the live monitor's keys, then the
    /// cluster screen's (`esc` goes back to it).
    ClusterHost,
}

/// The cluster screen's section of the key map.
const CLUSTER: Mode = Mode::Overlay(Kind::Cluster);

/// Help lines of a run (`live` false) or of the live monitor, without the
/// cluster screen's: (keys, description) rows and group headings (keys empty).
#[must_use]
pub fn help_lines(km: &Keymap, live: bool) -> Vec<(String, String)> {
    help_lines_for(km, if live { HelpFor::Live } else { HelpFor::Run })
}

/// Help lines for what the help is opened over.
#[must_use]
pub fn help_lines_for(km: &Keymap, on: HelpFor) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if on == HelpFor::Cluster {
        section(&mut out, "Cluster screen", mode_rows(km, CLUSTER, on));
        section(
            &mut out,
            "Typing the host filter",
            group_rows(km, "Filter", true, on),
        );
        section(&mut out, "Always", fixed(ALWAYS));
        return out;
    }
    for group in GROUPS.into_iter().filter(|g| shown_on(g, on)) {
        let mut rows = group_rows(km, group, false, on);
        if group == "Workspace" {
            rows.extend(merged_rows(km, ON_THE_LIST));
        }
        section(&mut out, group, rows);
    }
    // Full screen and the overlays (their sections' headings, in the overlays'
    // order): only what differs from normal. The cluster screen's only where
    // there is one.
    let overlays = Mode::ALL.into_iter().filter_map(|m| match m {
        CLUSTER if on != HelpFor::ClusterHost => None,
        // What a run's keys open: nothing on a host.
        Mode::Overlay(Kind::Runs | Kind::Media | Kind::Stats | Kind::Inspector) if !on.is_run() => {
            None
        }
        Mode::Overlay(k) => match k.keys() {
            Keys::Own(s) => Some((m, s.title)),
            Keys::Filter => None,
        },
        _ => None,
    });
    for (mode, title) in std::iter::once((Mode::Fullscreen, "Full-screen chart")).chain(overlays) {
        section(&mut out, title, mode_rows(km, mode, on));
    }
    let mouse = if on.is_run() { MOUSE } else { MOUSE_ON_HOST };
    section(&mut out, "Mouse", fixed(mouse));
    section(&mut out, "Always", fixed(ALWAYS));
    out
}

impl HelpFor {
    /// Whether a run is shown (alone or beside the workspace's runs list).
    fn is_run(self) -> bool {
        matches!(self, HelpFor::Run | HelpFor::Workspace)
    }
}

/// Keys of other groups that do something of their own on the runs list (focused),
/// listed in the workspace's section too (their own lines say what they do on a
/// chart or pane).
const ON_THE_LIST: &[(Action, &str)] = &[
    (Action::FocusUp, "Move the highlight"),
    (Action::FocusDown, "Move the highlight"),
    (Action::PrevPage, "Move the highlight a page"),
    (Action::NextPage, "Move the highlight a page"),
    (Action::FirstPage, "Highlight the first / last run"),
    (Action::LastPage, "Highlight the first / last run"),
    (
        Action::Fullscreen,
        "Show the highlighted run alone (esc comes back)",
    ),
    (
        Action::CyclePaneFocus,
        "Into the highlighted run's overview",
    ),
    (
        Action::Back,
        "Back to the list from a run alone or overview",
    ),
];

/// `table`'s rows with each action's normal keys, actions saying the same on one.
fn merged_rows(km: &Keymap, table: &[(Action, &str)]) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    for &(a, desc) in table {
        let keys: Vec<String> = km
            .keys_for(Mode::Normal, a)
            .map(|k| k.to_string())
            .collect();
        if keys.is_empty() {
            continue;
        }
        add_row(&mut rows, &keys, desc);
    }
    rows
}

/// What is not in the key map: the mouse, read by the panes it points at.
const MOUSE: &[(&str, &str)] = &[
    ("click", "Focus a chart or pane"),
    ("wheel", "Zoom the chart's x-range (z resets)"),
    (
        "right click",
        "Crosshair under the pointer (a drag moves it)",
    ),
    (
        "drag a border",
        "Resize the overview, system sidebar or console",
    ),
];

/// The mouse on a host: its charts are a window of time, neither zoomed nor
/// read under a crosshair.
const MOUSE_ON_HOST: &[(&str, &str)] = &[
    ("click", "Focus a chart, pane or process"),
    ("drag a border", "Resize the overview or process table"),
];

/// Keys the input thread acts on before the key map, in every mode.
const ALWAYS: &[(&str, &str)] = &[
    ("ctrl+c", "Quit, in every mode"),
    ("ctrl+z", "Suspend to the shell (fg resumes)"),
];

fn fixed(rows: &[(&str, &str)]) -> Vec<(String, String)> {
    rows.iter()
        .map(|&(k, d)| (k.to_owned(), d.to_owned()))
        .collect()
}

/// Whether a group's keys work where the help is opened: the process table is
/// the live monitor's alone, the runs list a run's (its workspace).
fn shown_on(group: &str, on: HelpFor) -> bool {
    match group {
        "Processes" => !on.is_run(),
        "Workspace" => on == HelpFor::Workspace,
        _ => true,
    }
}

/// Whether `a` does something where the help is opened: on a host, a run's keys
/// do not ([`Action::on_host`]); on a run alone, `f` has no list to filter (the
/// workspace's runs, the host's processes).
fn acts_on(a: Action, on: HelpFor) -> bool {
    match (a, on) {
        (Action::FilterList, HelpFor::Run) => false,
        _ => on.is_run() || a.on_host(),
    }
}

/// An action's help line where the help is opened: `f` filters the runs of a
/// workspace and the processes of a host, not both anywhere.
fn described_on(a: Action, on: HelpFor) -> &'static str {
    match (a, on) {
        (Action::FilterList, HelpFor::Workspace) => "Filter the runs (query language, see README)",
        (Action::FilterList, _) => "Filter the processes (regex)",
        // Beside the workspace's list the left pane is the list, not an overview.
        (Action::PickRun, HelpFor::Workspace) => "Focus the runs list",
        (Action::ToggleLeftSidebar, HelpFor::Workspace) => "Toggle the runs list and its overview",
        _ => a.describe(),
    }
}

/// `rows` under the heading `title`, where there are any.
fn section(out: &mut Vec<(String, String)>, title: &str, rows: Vec<(String, String)>) {
    if !rows.is_empty() {
        out.push((String::new(), title.to_owned()));
        out.extend(rows);
    }
}

/// The rows of a group's actions, each with its normal keys, or, for the Filter
/// group's keys while typing (those the action table binds in the filter mode),
/// with the filter mode's; `typing_only` keeps only the latter.
fn group_rows(km: &Keymap, group: &str, typing_only: bool, on: HelpFor) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    for a in Action::ALL {
        if a.group() != group || a == Action::None || !acts_on(a, on) {
            continue;
        }
        let typing = group == "Filter" && a.default_keys().iter().any(|(m, _)| *m == "filter");
        if typing_only && !typing {
            continue;
        }
        let mode = if typing { Mode::Filter } else { Mode::Normal };
        let keys: Vec<String> = km.keys_for(mode, a).map(|k| k.to_string()).collect();
        if !keys.is_empty() {
            rows.push((keys.join(", "), described_on(a, on).to_owned()));
        }
    }
    rows
}

/// The rows of a mode other than normal: each action's keys there, the actions
/// that mean the same there on one row.
fn mode_rows(km: &Keymap, mode: Mode, on: HelpFor) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    for a in Action::ALL.into_iter().filter(|&a| acts_on(a, on)) {
        let keys: Vec<String> = km.keys_for(mode, a).map(|k| k.to_string()).collect();
        if keys.is_empty() {
            continue;
        }
        let desc = in_mode(mode, a);
        add_row(&mut rows, &keys, desc);
    }
    rows
}

/// An action's line in the help of a mode other than normal, where it means
/// something more particular than its help line (an overlay's are in its row of
/// `overlays!`).
fn in_mode(mode: Mode, a: Action) -> &'static str {
    let particular = match mode {
        Mode::Fullscreen => match a {
            Action::FocusLeft => Some("Previous chart"),
            Action::FocusRight => Some("Next chart"),
            Action::Back => Some("Back to the grid"),
            _ => None,
        },
        Mode::Overlay(k) => match k.keys() {
            Keys::Own(s) => s.help.iter().find(|r| r.0.contains(&a)).map(|r| r.1),
            Keys::Filter => None,
        },
        Mode::Normal | Mode::Filter => None,
    };
    particular.unwrap_or_else(|| a.describe())
}

/// A help row of `keys` doing `desc`: joined to the row of the same description.
fn add_row(rows: &mut Vec<(String, String)>, keys: &[String], desc: &str) {
    if let Some(r) = rows.iter_mut().find(|r| r.1 == desc) {
        r.0.push_str(", ");
        r.0.push_str(&keys.join(", "));
    } else {
        rows.push((keys.join(", "), desc.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headings(on: HelpFor) -> Vec<String> {
        (help_lines_for(&Keymap::builtin(), on).into_iter())
            .filter(|(k, _)| k.is_empty())
            .map(|(_, d)| d)
            .collect()
    }

    #[test]
    fn the_cluster_screen_s_keys_only_where_there_is_one() {
        for on in [HelpFor::Run, HelpFor::Live] {
            assert!(
                !headings(on).contains(&"Cluster screen".to_owned()),
                "{on:?}"
            );
        }
        assert!(!headings(HelpFor::Run).contains(&"Processes".to_owned()));
        // On the cluster screen: its keys first, the host filter's, nothing else.
        assert_eq!(
            headings(HelpFor::Cluster),
            ["Cluster screen", "Typing the host filter", "Always"]
        );
        let lines = help_lines_for(&Keymap::builtin(), HelpFor::Cluster);
        assert!(
            lines.contains(&(
                "enter".into(),
                "Open the host's own live screen (esc comes back)".into()
            )),
            "{lines:?}"
        );
        // A host opened from it: the live monitor's keys, the cluster screen's after.
        let host = headings(HelpFor::ClusterHost);
        assert_eq!(host.first().map(String::as_str), Some("General"));
        assert!(host.contains(&"Cluster screen".to_owned()), "{host:?}");
    }

    const SCREENS: [HelpFor; 5] = [
        HelpFor::Run,
        HelpFor::Workspace,
        HelpFor::Live,
        HelpFor::Cluster,
        HelpFor::ClusterHost,
    ];

    /// Whether `lines` hold `key` on a row that says `desc`.
    fn lists(lines: &[(String, String)], key: &str, desc: &str) -> bool {
        lines
            .iter()
            .any(|(keys, d)| d == desc && keys.split(", ").any(|k| k == key))
    }

    #[test]
    fn every_key_of_keymap_toml_is_in_the_help_of_a_screen_where_it_works() {
        let km = Keymap::builtin();
        let helps: Vec<_> = SCREENS.map(|on| help_lines_for(&km, on)).into();
        let file: toml::Table = super::super::DEFAULT_TOML.parse().expect("keymap.toml");
        let mut checked = 0;
        for (section, table) in &file {
            let mode = (Mode::ALL.into_iter())
                .find(|m| m.name() == section)
                .unwrap_or_else(|| panic!("section [{section}]"));
            for (key, action) in table.as_table().expect("a table") {
                let a = Action::from_name(action.as_str().expect("a name")).expect("an action");
                if a == Action::None {
                    continue;
                }
                // The key as the help spells it, on the action's line for the mode.
                let key = super::super::Key::parse(key).expect("a key").to_string();
                let desc = |on| match mode {
                    Mode::Normal | Mode::Filter => described_on(a, on),
                    _ => in_mode(mode, a),
                };
                assert!(
                    helps
                        .iter()
                        .zip(SCREENS)
                        .any(|(h, on)| lists(h, &key, desc(on))),
                    "[{section}] {key:?} = {:?} ({:?}) is in no help",
                    a.name(),
                    in_mode(mode, a)
                );
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked} keys");
    }

    #[test]
    fn the_run_s_help_lists_its_filters_and_what_is_not_in_the_key_map() {
        let km = Keymap::builtin();
        let run = help_lines_for(&km, HelpFor::Run);
        // `f` filters a list: the workspace's runs, not a run alone's.
        let f = described_on(Action::FilterList, HelpFor::Workspace);
        assert!(
            !run.iter().any(|(k, _)| k.split(", ").any(|k| k == "f")),
            "{run:?}"
        );
        assert!(lists(&help_lines_for(&km, HelpFor::Workspace), "f", f));
        assert!(lists(&run, "ctrl+o", "Clear the overview filter"));
        assert!(lists(&run, "ctrl+\\", "Clear the system filter"));
        // The workspace's keys where there is one; the process table's where there is.
        assert!(!lists(&run, "G", Action::GroupRuns.describe()));
        let ws = help_lines_for(&km, HelpFor::Workspace);
        assert!(lists(&ws, "G", Action::GroupRuns.describe()));
        let live = help_lines_for(&km, HelpFor::Live);
        let procs = described_on(Action::FilterList, HelpFor::Live);
        assert!(lists(&live, "f", procs) && !lists(&live, "G", Action::GroupRuns.describe()));
        assert!(lists(&live, "m", Action::MonitorProcess.describe()));
        assert!(!lists(&run, "m", Action::MonitorProcess.describe()));
        for on in SCREENS {
            let lines = help_lines_for(&km, on);
            assert!(
                lists(&lines, "ctrl+z", "Suspend to the shell (fg resumes)"),
                "{on:?}"
            );
            assert!(lists(&lines, "ctrl+c", "Quit, in every mode"), "{on:?}");
        }
        assert!(run
            .iter()
            .any(|(k, d)| k == "right click" && d.contains("Crosshair")));
    }

    #[test]
    fn the_workspace_s_help_says_what_its_keys_do_on_the_list() {
        let km = Keymap::builtin();
        let ws = help_lines_for(&km, HelpFor::Workspace);
        let start = ws
            .iter()
            .position(|(k, d)| k.is_empty() && d == "Workspace");
        let section: Vec<_> = ws[start.expect("a Workspace section") + 1..]
            .iter()
            .take_while(|(k, _)| !k.is_empty())
            .cloned()
            .collect();
        for (key, says) in [
            ("space", "Draw the highlighted run"),
            ("enter", "alone"),
            ("esc", "Back to the list"),
            ("up", "highlight"),
            ("down", "highlight"),
            ("pgdown", "highlight"),
            ("tab", "overview"),
        ] {
            assert!(
                (section.iter()).any(|(k, d)| k.split(", ").any(|x| x == key) && d.contains(says)),
                "{key}: {section:?}"
            );
        }
        assert!(lists(&ws, "R", "Focus the runs list"), "{ws:?}");
        assert!(ws
            .iter()
            .any(|(k, d)| k == "[" && d.starts_with("Toggle the runs list")));
        assert!(!lists(&ws, "R", Action::PickRun.describe()));
        assert!(!lists(&ws, "[", Action::ToggleLeftSidebar.describe()));
        // A run's own help keeps its lines.
        let run = help_lines_for(&km, HelpFor::Run);
        assert!(lists(&run, "[", Action::ToggleLeftSidebar.describe()));
    }

    #[test]
    fn the_system_filter_line_says_it_filters_nodes() {
        let lines = help_lines(&Keymap::builtin(), false);
        let line = lines.iter().find(|(k, _)| k == "\\").expect("the \\ line");
        assert!(line.1.contains("nodes"), "{line:?}");
    }
}
