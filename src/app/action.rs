//! `Action`: what a key can be bound to. The names are public API (keymap.toml):
//! rename by adding an alias, never by dropping a name.

/// A command the user can bind to a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Quit,
    Help,
    Back,
    ToggleLeftSidebar,
    ToggleRightSidebar,
    ToggleConsole,
    CyclePaneFocus,
    CyclePaneFocusBack,
    FocusUp,
    FocusDown,
    FocusLeft,
    FocusRight,
    NextPage,
    PrevPage,
    FirstPage,
    LastPage,
    Fullscreen,
    /// `y`: linear → log → heatmap (percentage charts of several series).
    CycleYScale,
    /// `g`: guides at the y ticks, off → dots → lines.
    CycleGuides,
    SetColumns,
    SetRows,
    ResetZoom,
    StartFilter,
    StartSystemFilter,
    StartOverviewFilter,
    ClearFilters,
    /// Clear the overview filter only (`ctrl+o`, as `wandb leet`).
    ClearOverviewFilter,
    /// Clear the system filter only (`ctrl+\\`, as `wandb leet`).
    ClearSystemFilter,
    FilterApply,
    FilterCancel,
    FilterBackspace,
    FilterClearInput,
    PickRun,
    OpenRun,
    ToggleCompare,
    ToggleMedia,
    /// Live monitor: sort the process table by the next column (CPU, memory, GPU
    /// memory).
    CycleProcessSort,
    /// Filter the list: the workspace's runs (query language), the live monitor's
    /// process table (regex).
    FilterList,
    /// Live monitor: monitor the selected process (what `enter` does on the table).
    MonitorProcess,
    /// Live monitor: monitor no process (host charts only).
    MonitorNone,
    /// Workspace: draw the highlighted run in every chart, or stop drawing it.
    ToggleSelect,
    /// Workspace: pin the highlighted run (drawn on top), or unpin it.
    PinRun,
    /// Workspace: group the selected runs by a config key (mean and min–max band).
    GroupRuns,
    /// Workspace: the summary value shown per run in the list.
    ChooseColumn,
    /// While typing a filter (any of them): regex ↔ glob patterns.
    FilterToggleGlob,
    /// The crosshair: off → focused chart → every visible chart → off.
    CycleCrosshair,
    /// Chart the metrics `define_metric(hidden=True)` hides, or hide them again.
    ToggleHidden,
    /// `alt+r`: read the run again from the start of its file (as `wandb leet`'s
    /// restart), keeping the panes and settings.
    Restart,
    /// `1`: hide the metrics grid (the other panes take its room), or show it.
    ToggleGrid,
    /// `0`: every pane back to its default size.
    ResetPaneSizes,
    /// `T`: the statistics table of every metric, or close it.
    ToggleStats,
    /// In the statistics table: reverse the sort order.
    ReverseSort,
    /// The record inspector: open it over the run, or close it.
    InspectRecords,
    /// Record inspector: show only the next record type (cycles back to all).
    CycleRecordType,
    /// `x`: the focused chart's x: default → relative time → wall time → a metric.
    CycleXAxis,
    /// `X`: every chart's x becomes the focused chart's.
    XAxisToAll,
    /// `L`: log x on the focused chart (thinned in log space), or linear.
    ToggleLogX,
    /// `e`: the focused chart's smoothing, none → TWEMA → EMA → running average →
    /// Gaussian → none.
    CycleSmoothing,
    /// `E`: smooth every chart (with the last smoothing chosen), or none.
    ToggleSmoothingAll,
    /// `+`/`=`: the focused chart's smoothing parameter one step up.
    SmoothingUp,
    /// `-`: the focused chart's smoothing parameter one step down.
    SmoothingDown,
    /// Collapse or expand the focused section (a chart's own section).
    ToggleSection,
    /// Collapse every section of the metrics grid.
    CollapseAllSections,
    /// Expand every section of the metrics grid.
    ExpandAllSections,
    /// `b`: the min–max band of charts with more points than columns, or none.
    ToggleBand,
    /// `P`: the next colour palette (default → wandb-vibe-10 → okabe-ito →
    /// tol-bright → light).
    CyclePalette,
    /// Unbinds a key of the defaults in a user keymap.
    None,
}

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

impl Action {
    /// Every action, in help order.
    pub const ALL: [Action; 67] = [
        Action::Help,
        Action::Quit,
        Action::Back,
        Action::ToggleLeftSidebar,
        Action::ToggleRightSidebar,
        Action::ToggleConsole,
        Action::CyclePaneFocus,
        Action::CyclePaneFocusBack,
        Action::FocusUp,
        Action::FocusDown,
        Action::FocusLeft,
        Action::FocusRight,
        Action::NextPage,
        Action::PrevPage,
        Action::FirstPage,
        Action::LastPage,
        Action::Fullscreen,
        Action::CycleYScale,
        Action::CycleGuides,
        Action::SetColumns,
        Action::SetRows,
        Action::ResetZoom,
        Action::StartFilter,
        Action::StartSystemFilter,
        Action::StartOverviewFilter,
        Action::ClearFilters,
        Action::ClearOverviewFilter,
        Action::ClearSystemFilter,
        Action::FilterApply,
        Action::FilterCancel,
        Action::FilterBackspace,
        Action::FilterClearInput,
        Action::PickRun,
        Action::OpenRun,
        Action::ToggleCompare,
        Action::ToggleMedia,
        Action::CycleProcessSort,
        Action::FilterList,
        Action::MonitorProcess,
        Action::MonitorNone,
        Action::ToggleSelect,
        Action::PinRun,
        Action::GroupRuns,
        Action::ChooseColumn,
        Action::FilterToggleGlob,
        Action::CycleCrosshair,
        Action::ToggleHidden,
        Action::Restart,
        Action::ToggleGrid,
        Action::ResetPaneSizes,
        Action::ToggleStats,
        Action::ReverseSort,
        Action::InspectRecords,
        Action::CycleRecordType,
        Action::CycleXAxis,
        Action::XAxisToAll,
        Action::ToggleLogX,
        Action::CycleSmoothing,
        Action::ToggleSmoothingAll,
        Action::SmoothingUp,
        Action::SmoothingDown,
        Action::ToggleSection,
        Action::CollapseAllSections,
        Action::ExpandAllSections,
        Action::ToggleBand,
        Action::CyclePalette,
        Action::None,
    ];

    /// The keymap.toml spelling.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Back => "back",
            Action::ToggleLeftSidebar => "toggle_left_sidebar",
            Action::ToggleRightSidebar => "toggle_right_sidebar",
            Action::ToggleConsole => "toggle_console",
            Action::CyclePaneFocus => "cycle_pane_focus",
            Action::CyclePaneFocusBack => "cycle_pane_focus_back",
            Action::FocusUp => "focus_up",
            Action::FocusDown => "focus_down",
            Action::FocusLeft => "focus_left",
            Action::FocusRight => "focus_right",
            Action::NextPage => "next_page",
            Action::PrevPage => "prev_page",
            Action::FirstPage => "first_page",
            Action::LastPage => "last_page",
            Action::Fullscreen => "fullscreen",
            Action::CycleYScale => "cycle_y_scale",
            Action::CycleGuides => "cycle_guides",
            Action::SetColumns => "set_columns",
            Action::SetRows => "set_rows",
            Action::ResetZoom => "reset_zoom",
            Action::StartFilter => "start_filter",
            Action::StartSystemFilter => "start_system_filter",
            Action::StartOverviewFilter => "start_overview_filter",
            Action::ClearFilters => "clear_filters",
            Action::ClearOverviewFilter => "clear_overview_filter",
            Action::ClearSystemFilter => "clear_system_filter",
            Action::FilterApply => "filter_apply",
            Action::FilterCancel => "filter_cancel",
            Action::FilterBackspace => "filter_backspace",
            Action::FilterClearInput => "filter_clear_input",
            Action::PickRun => "pick_run",
            Action::OpenRun => "open_run",
            Action::ToggleCompare => "toggle_compare",
            Action::ToggleMedia => "toggle_media",
            Action::CycleProcessSort => "cycle_process_sort",
            Action::FilterList => "filter_list",
            Action::ToggleSelect => "toggle_select",
            Action::PinRun => "pin_run",
            Action::GroupRuns => "group_runs",
            Action::ChooseColumn => "choose_summary_column",
            Action::FilterToggleGlob => "filter_toggle_glob",
            Action::CycleCrosshair => "cycle_crosshair",
            Action::ToggleHidden => "toggle_hidden_metrics",
            Action::Restart => "restart",
            Action::MonitorProcess => "monitor_process",
            Action::MonitorNone => "monitor_none",
            Action::ToggleGrid => "toggle_metrics_grid",
            Action::ResetPaneSizes => "reset_pane_sizes",
            Action::ToggleStats => "toggle_stats",
            Action::ReverseSort => "reverse_sort",
            Action::InspectRecords => "inspect_records",
            Action::CycleRecordType => "cycle_record_type",
            Action::CycleXAxis => "cycle_x_axis",
            Action::XAxisToAll => "x_axis_to_all",
            Action::ToggleLogX => "toggle_log_x",
            Action::CycleSmoothing => "cycle_smoothing",
            Action::ToggleSmoothingAll => "toggle_smoothing_all",
            Action::SmoothingUp => "smoothing_up",
            Action::SmoothingDown => "smoothing_down",
            Action::ToggleSection => "toggle_section",
            Action::CollapseAllSections => "collapse_all_sections",
            Action::ExpandAllSections => "expand_all_sections",
            Action::ToggleBand => "toggle_band",
            Action::CyclePalette => "cycle_palette",
            Action::None => "none",
        }
    }

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

    /// One line for the help overlay.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Action::Quit => "Quit",
            Action::Help => "Toggle this help screen",
            Action::Back => "Close overlay, leave full screen, unfocus pane",
            Action::ToggleLeftSidebar => "Toggle left sidebar with run overview",
            Action::ToggleRightSidebar => "Toggle right sidebar with system metrics",
            Action::ToggleConsole => "Toggle console logs pane",
            Action::CyclePaneFocus => "Focus next pane (overview: next section first)",
            Action::CyclePaneFocusBack => "Focus previous pane (overview: section first)",
            Action::FocusUp => "Move focus up / scroll up",
            Action::FocusDown => "Move focus down / scroll down",
            Action::FocusLeft => "Move focus left / previous chart",
            Action::FocusRight => "Move focus right / next chart",
            Action::NextPage => "Next page",
            Action::PrevPage => "Previous page",
            Action::FirstPage => "First page / top",
            Action::LastPage => "Last page / bottom",
            Action::Fullscreen => "Show focused chart full screen",
            Action::CycleYScale => "Cycle y: linear, log, heatmap on focused chart",
            Action::CycleGuides => "Cycle chart guides (off / dots / horizontal)",
            Action::SetColumns => "Then a digit: grid columns (0 = auto)",
            Action::SetRows => "Then a digit: grid rows (0 = auto)",
            Action::ResetZoom => "Reset x zoom of focused chart (wheel zooms)",
            Action::StartFilter => "Filter metric charts (console lines when focused)",
            Action::StartSystemFilter => "Filter system charts",
            Action::StartOverviewFilter => "Filter the overview (config, summary, environment)",
            Action::ClearFilters => "Clear filters",
            Action::ClearOverviewFilter => "Clear the overview filter",
            Action::ClearSystemFilter => "Clear the system filter",
            Action::FilterApply => "Keep the filter",
            Action::FilterCancel => "Restore the previous filter",
            Action::FilterBackspace => "Delete a character",
            Action::FilterClearInput => "Clear the input",
            Action::PickRun => "List the runs of this wandb directory",
            Action::OpenRun => "Open the selected run",
            Action::ToggleCompare => "Draw the selected run beside this one in every chart",
            Action::ToggleMedia => "Media pane: images logged with wandb.Image",
            Action::CycleProcessSort => "Sort processes by CPU, memory, GPU memory (cycles)",
            Action::FilterList => "Filter the runs (query) or the processes (regex)",
            Action::ToggleSelect => "Draw the highlighted run in every chart, or stop",
            Action::PinRun => "Pin the highlighted run on top of the others",
            Action::GroupRuns => "Group drawn runs by config key: mean + band",
            Action::ChooseColumn => "Choose the summary value shown per run",
            Action::FilterToggleGlob => "While typing any filter: toggle regex / glob",
            Action::CycleCrosshair => "Crosshair on focused / all charts (←/→ move it)",
            Action::ToggleHidden => "Show / hide metrics define_metric hides",
            Action::Restart => "Read the run again from the start of its file",
            Action::MonitorProcess => "Chart the selected process tree (enter on the table)",
            Action::MonitorNone => "Monitor no process (host charts only)",
            Action::ToggleGrid => "Toggle metrics grid",
            Action::ResetPaneSizes => "Reset pane sizes to defaults",
            Action::ToggleStats => "Statistics table: last, min, max, mean, count",
            Action::ReverseSort => "Reverse the sort order",
            Action::InspectRecords => "Record inspector: every record, its full body",
            Action::CycleRecordType => "Show one record type (cycles; all again at the end)",
            Action::CycleXAxis => "Cycle x of focused chart: step/time/wall/metric",
            Action::XAxisToAll => "Give every chart the focused chart's x",
            Action::ToggleLogX => "Toggle log x on focused chart",
            Action::CycleSmoothing => "Smoothing: none, TWEMA, EMA, average, Gaussian",
            Action::ToggleSmoothingAll => "Smooth every chart like this one / none",
            Action::SmoothingUp => "Smooth the focused chart more",
            Action::SmoothingDown => "Smooth the focused chart less",
            Action::ToggleSection => "Collapse / expand the focused section",
            Action::CollapseAllSections => "Collapse every metric section",
            Action::ExpandAllSections => "Expand every metric section",
            Action::ToggleBand => "Min–max band on dense charts (show / hide)",
            Action::CyclePalette => "Cycle colour palette (saved in the settings)",
            Action::None => "(unbound)",
        }
    }

    /// Help group.
    #[must_use]
    pub fn group(self) -> &'static str {
        match self {
            Action::Quit | Action::Help | Action::Back | Action::Restart | Action::None => {
                "General"
            }
            Action::ToggleLeftSidebar
            | Action::ToggleRightSidebar
            | Action::ToggleConsole
            | Action::ToggleMedia
            | Action::CyclePaneFocus
            | Action::CyclePaneFocusBack
            | Action::ToggleGrid
            | Action::ResetPaneSizes
            | Action::ToggleStats
            | Action::ReverseSort => "Panels",
            Action::InspectRecords | Action::CycleRecordType => "Panels",
            Action::FocusUp
            | Action::FocusDown
            | Action::FocusLeft
            | Action::FocusRight
            | Action::NextPage
            | Action::PrevPage
            | Action::FirstPage
            | Action::LastPage => "Navigation",
            Action::Fullscreen
            | Action::CycleYScale
            | Action::CycleGuides
            | Action::SetColumns
            | Action::SetRows
            | Action::ResetZoom
            | Action::CycleCrosshair
            | Action::ToggleHidden => "Charts",
            Action::CycleXAxis | Action::XAxisToAll | Action::ToggleLogX => "Charts",
            Action::CycleSmoothing
            | Action::ToggleSmoothingAll
            | Action::SmoothingUp
            | Action::SmoothingDown => "Charts",
            Action::ToggleSection | Action::CollapseAllSections | Action::ExpandAllSections => {
                "Charts"
            }
            Action::ToggleBand | Action::CyclePalette => "Charts",
            Action::StartFilter
            | Action::StartSystemFilter
            | Action::StartOverviewFilter
            | Action::ClearFilters
            | Action::ClearOverviewFilter
            | Action::ClearSystemFilter
            | Action::FilterApply
            | Action::FilterCancel
            | Action::FilterBackspace
            | Action::FilterClearInput
            | Action::FilterToggleGlob => "Filter",
            Action::ToggleSelect | Action::PinRun | Action::GroupRuns | Action::ChooseColumn => {
                "Workspace"
            }
            Action::PickRun | Action::OpenRun | Action::ToggleCompare => "Runs",
            Action::CycleProcessSort
            | Action::FilterList
            | Action::MonitorProcess
            | Action::MonitorNone => "Processes",
        }
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
}
