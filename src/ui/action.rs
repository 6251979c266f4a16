//! `Action`: what a key can be bound to, in one table: a row per action gives its
//! keymap.toml name, its help group, the handler `App::act` sends it to, its line
//! in the help overlay and its default keys per mode. The names are public API
//! (keymap.toml): rename by adding an alias, never by dropping a name.

/// Groups of the help overlay, in display order.
pub const GROUPS: [&str; 8] = [
    "General",
    "Panels",
    "Navigation",
    "Charts",
    "Filter",
    "Runs",
    "Workspace",
    "Processes",
];

/// Which of `App::act`'s handlers performs an action (the overlays and the
/// workspace take theirs first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handler {
    /// Quit, restart.
    General,
    /// Nothing outside the overlay or the part that owns it.
    Inert,
    /// Panes, overlays, focus between panes.
    Panels,
    /// Moving the focus or a scroll position, paging.
    Motion,
    /// What the charts show.
    Charts,
    /// The live monitor's process table.
    Procs,
    /// Starting, typing and clearing the filters.
    Filter,
}

/// The table: `Variant = "name", HelpGroup, Handler, "help line", [mode "key"…, …];`
/// in help order. It generates the enum and its accessors, so a new action is one
/// row (and its keys in keymap.toml, which a test holds equal to the row's).
macro_rules! actions {
    ($(
        $(#[$doc:meta])*
        $v:ident = $name:literal, $group:ident, $handler:ident, $desc:literal,
        [$($mode:ident $($key:literal)+),*];
    )*) => {
        /// A command the user can bind to a key.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Action {
            $($(#[$doc])* $v,)*
        }

        impl Action {
            /// Every action, in help order.
            pub const ALL: [Action; [$(stringify!($v)),*].len()] = [$(Action::$v),*];

            /// The keymap.toml spelling.
            #[must_use]
            pub fn name(self) -> &'static str {
                match self {
                    $(Action::$v => $name,)*
                }
            }

            /// One line for the help overlay.
            #[must_use]
            pub fn describe(self) -> &'static str {
                match self {
                    $(Action::$v => $desc,)*
                }
            }

            /// Help group.
            #[must_use]
            pub fn group(self) -> &'static str {
                match self {
                    $(Action::$v => stringify!($group),)*
                }
            }

            /// The handler of `App::act` that performs it.
            #[must_use]
            pub fn handler(self) -> Handler {
                match self {
                    $(Action::$v => Handler::$handler,)*
                }
            }

            /// Default keys, per keymap.toml mode name, in keymap.toml spelling.
            #[must_use]
            pub fn default_keys(self) -> &'static [(&'static str, &'static [&'static str])] {
                match self {
                    $(Action::$v => &[$((stringify!($mode), &[$($key),+])),*],)*
                }
            }
        }
    };
}

actions! {
    Help = "help", General, Panels, "Toggle this help screen",
        [normal "h" "?", help "h" "?", fullscreen "h" "?", cluster "h" "?"];
    Quit = "quit", General, General, "Quit",
        [normal "q" "ctrl+c", filter "ctrl+c", help "q" "ctrl+c", fullscreen "q" "ctrl+c",
         runs "q" "ctrl+c", media "q" "ctrl+c", stats "q" "ctrl+c", inspector "q" "ctrl+c",
         cluster "q" "ctrl+c"];
    Back = "back", General, Panels, "Close overlay, leave full screen, unfocus pane",
        [normal "esc", help "esc", fullscreen "esc" "enter", runs "esc" "R", media "esc",
         stats "esc", inspector "esc"];
    ToggleLeftSidebar = "toggle_left_sidebar", Panels, Panels,
        "Toggle left sidebar with run overview",
        [normal "["];
    ToggleRightSidebar = "toggle_right_sidebar", Panels, Panels,
        "Toggle right sidebar with system metrics",
        [normal "]" "2"];
    ToggleConsole = "toggle_console", Panels, Panels, "Toggle console logs pane",
        [normal "4"];
    CyclePaneFocus = "cycle_pane_focus", Panels, Panels,
        "Focus next pane (overview: next section first)",
        [normal "tab", stats "tab" "shift+right", inspector "tab"];
    CyclePaneFocusBack = "cycle_pane_focus_back", Panels, Panels,
        "Focus previous pane (overview: section first)",
        [normal "backtab", stats "backtab" "shift+left", inspector "backtab"];
    FocusUp = "focus_up", Navigation, Motion, "Move focus up / scroll up",
        [normal "up" "w", help "up" "w", runs "up" "w" "k", media "up" "w", stats "up" "w" "k",
         inspector "up" "w" "k", cluster "up" "w" "k"];
    FocusDown = "focus_down", Navigation, Motion, "Move focus down / scroll down",
        [normal "down" "s", help "down" "s", runs "down" "s" "j", media "down" "s",
         stats "down" "s" "j", inspector "down" "s" "j", cluster "down" "s" "j"];
    FocusLeft = "focus_left", Navigation, Motion, "Move focus left / previous chart",
        [normal "left" "a", fullscreen "left" "a" "N" "pgup", media "left" "a",
         stats "left" "a" "<"];
    FocusRight = "focus_right", Navigation, Motion, "Move focus right / next chart",
        [normal "right" "d", fullscreen "right" "d" "n" "pgdown", media "right" "d",
         stats "right" "d" ">"];
    NextPage = "next_page", Navigation, Motion, "Next page",
        [normal "n" "pgdown", help "pgdown", runs "pgdown", stats "pgdown", inspector "pgdown" "n",
         cluster "pgdown"];
    PrevPage = "prev_page", Navigation, Motion, "Previous page",
        [normal "N" "pgup", help "pgup", runs "pgup", stats "pgup", inspector "pgup" "N",
         cluster "pgup"];
    FirstPage = "first_page", Navigation, Motion, "First page / top",
        [normal "home", fullscreen "home", help "home", runs "home", media "home", stats "home",
         inspector "home", cluster "home"];
    LastPage = "last_page", Navigation, Motion, "Last page / bottom",
        [normal "end", fullscreen "end", help "end", runs "end", media "end", stats "end",
         inspector "end", cluster "end"];
    Fullscreen = "fullscreen", Charts, Charts, "Show focused chart full screen",
        [normal "enter"];
    /// `y`: linear → log → heatmap (percentage charts of several series).
    CycleYScale = "cycle_y_scale", Charts, Charts, "Cycle y: linear, log, heatmap on focused chart",
        [normal "y", fullscreen "y"];
    /// `g`: guides at the y ticks, off → dots → lines.
    CycleGuides = "cycle_guides", Charts, Charts, "Cycle chart guides (off / dots / horizontal)",
        [normal "g", fullscreen "g"];
    SetColumns = "set_columns", Charts, Charts, "Then a digit: grid columns (0 = auto)",
        [normal "c"];
    SetRows = "set_rows", Charts, Charts, "Then a digit: grid rows (0 = auto)",
        [normal "r"];
    ResetZoom = "reset_zoom", Charts, Charts, "Reset x zoom of focused chart (wheel zooms)",
        [normal "z", fullscreen "z"];
    /// Zoom the focused chart's x in or out by keys (the wheel does it at the
    /// pointer): around the crosshair when it is on, else the middle.
    ZoomIn = "zoom_in", Charts, Charts, "Zoom the focused chart's x in (at the crosshair)",
        [normal ">" ".", fullscreen ">" "."];
    ZoomOut = "zoom_out", Charts, Charts, "Zoom the focused chart's x out",
        [normal "<" ",", fullscreen "<" ","];
    StartFilter = "start_filter", Filter, Filter,
        "Filter metric charts (console lines when focused)",
        [normal "/", stats "/", inspector "/", cluster "/"];
    StartSystemFilter = "start_system_filter", Filter, Filter,
        "Filter system charts and nodes (multi-node runs)",
        [normal "\\"];
    StartOverviewFilter = "start_overview_filter", Filter, Filter,
        "Filter the overview (config, summary, environment)",
        [normal "o"];
    ClearFilters = "clear_filters", Filter, Filter, "Clear filters",
        [normal "ctrl+l", stats "ctrl+l", inspector "ctrl+l", cluster "ctrl+l"];
    /// Clear the overview filter only (`ctrl+o`, as `wandb leet`).
    ClearOverviewFilter = "clear_overview_filter", Filter, Filter, "Clear the overview filter",
        [normal "ctrl+o"];
    /// Clear the system filter only (`ctrl+\\`, as `wandb leet`).
    ClearSystemFilter = "clear_system_filter", Filter, Filter, "Clear the system filter",
        [normal "ctrl+\\" "ctrl+4"];
    /// Filter the list: the workspace's runs (query language), the live monitor's
    /// process table (regex).
    FilterList = "filter_list", Filter, Procs,
        "Filter the runs (query) or the processes (regex)",
        [normal "f"];
    FilterApply = "filter_apply", Filter, Filter, "Keep the filter",
        [filter "enter"];
    FilterCancel = "filter_cancel", Filter, Filter, "Restore the previous filter",
        [filter "esc"];
    FilterBackspace = "filter_backspace", Filter, Filter, "Delete a character",
        [filter "backspace"];
    FilterClearInput = "filter_clear_input", Filter, Filter, "Clear the input",
        [filter "ctrl+u"];
    PickRun = "pick_run", Runs, Panels, "List the runs of this wandb directory",
        [normal "R"];
    OpenRun = "open_run", Runs, Inert, "Open the selected run",
        [runs "enter"];
    ToggleCompare = "toggle_compare", Runs, Inert,
        "Draw the selected run beside this one in every chart",
        [runs "space"];
    ToggleMedia = "toggle_media", Panels, Panels, "Media pane: images logged with wandb.Image",
        [normal "3", media "3"];
    /// Live monitor: sort the process table by the next column (CPU, memory, GPU
    /// memory).
    CycleProcessSort = "cycle_process_sort", Processes, Procs,
        "Sort processes by CPU, memory, GPU memory (cycles)",
        [normal "S", cluster "S"];
    /// Live monitor: monitor the selected process (what `enter` does on the table).
    MonitorProcess = "monitor_process", Processes, Procs,
        "Chart the selected process tree (enter on the table)",
        [normal "m"];
    /// Live monitor: monitor no process (host charts only).
    MonitorNone = "monitor_none", Processes, Procs, "Monitor no process (host charts only)",
        [normal "u"];
    /// Workspace: draw the highlighted run in every chart, or stop drawing it.
    ToggleSelect = "toggle_select", Workspace, Inert,
        "Draw the highlighted run in every chart, or stop",
        [normal "space"];
    /// Workspace: pin the highlighted run (drawn on top), or unpin it.
    PinRun = "pin_run", Workspace, Inert, "Pin the highlighted run on top of the others",
        [normal "p"];
    /// Workspace: group the selected runs by a config key (mean and min–max band).
    GroupRuns = "group_runs", Workspace, Inert, "Group drawn runs by config key: mean + band",
        [normal "G"];
    /// Workspace: the summary value shown per run in the list.
    ChooseColumn = "choose_summary_column", Workspace, Inert,
        "Choose the summary value shown per run",
        [normal "v"];
    /// While typing a filter (any of them): regex ↔ glob patterns.
    FilterToggleGlob = "filter_toggle_glob", Filter, Filter,
        "While typing any filter: toggle regex / glob",
        [filter "tab"];
    /// The crosshair: off → focused chart → every visible chart → off.
    CycleCrosshair = "cycle_crosshair", Charts, Charts,
        "Crosshair on focused / all charts (←/→ move it)",
        [normal "C", fullscreen "C"];
    /// Chart the metrics `define_metric(hidden=True)` hides, or hide them again.
    ToggleHidden = "toggle_hidden_metrics", Charts, Charts,
        "Show / hide metrics define_metric hides",
        [normal "H"];
    /// `alt+r`: read the run again from the start of its file (as `wandb leet`'s
    /// restart), keeping the panes and settings.
    Restart = "restart", General, General, "Read the run again from the start of its file",
        [normal "alt+r"];
    /// `1`: hide the metrics grid (the other panes take its room), or show it.
    ToggleGrid = "toggle_metrics_grid", Panels, Panels, "Toggle metrics grid",
        [normal "1"];
    /// `0`: every pane back to its default size.
    ResetPaneSizes = "reset_pane_sizes", Panels, Panels, "Reset pane sizes to defaults",
        [normal "0"];
    /// `T`: the statistics table of every metric, or close it.
    ToggleStats = "toggle_stats", Panels, Panels, "Statistics table: last, min, max, mean, count",
        [normal "T", stats "T"];
    /// In the statistics table: reverse the sort order.
    ReverseSort = "reverse_sort", Panels, Inert, "Reverse the sort order",
        [stats "r", cluster "r"];
    /// The cluster screen: the selected host's own live screen (`esc` comes back).
    OpenHost = "open_host", Panels, Inert, "Open the selected host's live screen",
        [cluster "enter"];
    /// The record inspector: open it over the run, or close it.
    InspectRecords = "inspect_records", Panels, Panels,
        "Record inspector: every record, its full body",
        [normal "i", inspector "i"];
    /// Record inspector: show only the next record type (cycles back to all).
    CycleRecordType = "cycle_record_type", Panels, Inert,
        "Show one record type (cycles; all again at the end)",
        [inspector "t"];
    /// `x`: the focused chart's x: default → relative time → wall time → a metric.
    CycleXAxis = "cycle_x_axis", Charts, Charts, "Cycle x of focused chart: step/time/wall/metric",
        [normal "x", fullscreen "x"];
    /// `X`: every chart's x becomes the focused chart's.
    XAxisToAll = "x_axis_to_all", Charts, Charts, "Give every chart the focused chart's x",
        [normal "X"];
    /// `L`: log x on the focused chart (thinned in log space), or linear.
    ToggleLogX = "toggle_log_x", Charts, Charts, "Toggle log x on focused chart",
        [normal "L", fullscreen "L"];
    /// `e`: the focused chart's smoothing, none → TWEMA → EMA → running average →
    /// Gaussian → none.
    CycleSmoothing = "cycle_smoothing", Charts, Charts,
        "Smoothing: none, TWEMA, EMA, average, Gaussian",
        [normal "e", fullscreen "e"];
    /// `E`: smooth every chart (with the last smoothing chosen), or none.
    ToggleSmoothingAll = "toggle_smoothing_all", Charts, Charts,
        "Smooth every chart like this one / none",
        [normal "E", fullscreen "E"];
    /// `+`/`=`: the focused chart's smoothing parameter one step up.
    SmoothingUp = "smoothing_up", Charts, Charts, "Smooth the focused chart more",
        [normal "+" "=", fullscreen "+" "="];
    /// `-`: the focused chart's smoothing parameter one step down.
    SmoothingDown = "smoothing_down", Charts, Charts, "Smooth the focused chart less",
        [normal "-", fullscreen "-"];
    /// Collapse or expand the focused section (a chart's own section).
    ToggleSection = "toggle_section", Charts, Inert, "Collapse / expand the focused section",
        [normal "Z"];
    /// Collapse every section of the metrics grid.
    CollapseAllSections = "collapse_all_sections", Charts, Inert, "Collapse every metric section",
        [normal "M"];
    /// Expand every section of the metrics grid.
    ExpandAllSections = "expand_all_sections", Charts, Inert, "Expand every metric section",
        [normal "O"];
    /// `b`: the min–max band of charts with more points than columns, or none.
    ToggleBand = "toggle_band", Charts, Charts, "Min–max band on dense charts (show / hide)",
        [normal "b", fullscreen "b"];
    /// `P`: the next colour palette (default → wandb-vibe-10 → okabe-ito →
    /// tol-bright → light).
    CyclePalette = "cycle_palette", Charts, Charts, "Cycle colour palette (saved in the settings)",
        [normal "P", fullscreen "P"];
    /// Unbinds a key of the defaults in a user keymap.
    None = "none", General, Inert, "(unbound)",
        [];
}

impl Action {
    /// Parse a keymap.toml action name (or an old name kept as an alias).
    #[must_use]
    pub fn from_name(s: &str) -> Option<Action> {
        match s {
            // Before `y` gained the heatmap it only toggled log scale.
            "toggle_log_y" => Some(Action::CycleYScale),
            // Before the workspace's runs filter shared the key.
            "start_process_filter" => Some(Action::FilterList),
            _ => Action::ALL.into_iter().find(|a| a.name() == s),
        }
    }

    /// Whether it acts in the live monitor, which has no run file (no console,
    /// media, records, statistics, other runs or rereading) and charts its window
    /// of time alone (no x axis to choose or zoom, no crosshair, no hidden
    /// metrics): the others do nothing there and its help leaves them out.
    #[must_use]
    pub fn on_host(self) -> bool {
        !matches!(
            self,
            Action::ToggleConsole
                | Action::ToggleMedia
                | Action::ToggleStats
                | Action::InspectRecords
                | Action::Restart
                | Action::PickRun
                | Action::OpenRun
                | Action::ToggleCompare
                | Action::ToggleHidden
                | Action::CycleXAxis
                | Action::XAxisToAll
                | Action::ToggleLogX
                | Action::ZoomIn
                | Action::ZoomOut
                | Action::ResetZoom
                | Action::CycleCrosshair
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_the_old_y_name_is_an_alias() {
        for a in Action::ALL {
            assert_eq!(Action::from_name(a.name()), Some(a), "{}", a.name());
        }
        assert_eq!(Action::CycleYScale.name(), "cycle_y_scale");
        assert_eq!(Action::from_name("toggle_log_y"), Some(Action::CycleYScale));
        assert_eq!(Action::from_name("toggle_log"), None);
    }

    #[test]
    fn every_group_is_shown_in_help() {
        for a in Action::ALL {
            assert!(GROUPS.contains(&a.group()), "{}: {}", a.name(), a.group());
        }
    }
}
