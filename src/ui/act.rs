//! Keys and actions: a key press is looked up in the key map for the mode in force,
//! and the action it is bound to changes the state.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::action::{Action, Handler};
use super::filter::FilterState;
use super::keymap::{Key, Mode};
use super::layout;
use super::panels::Pane;
use super::{App, Effect, FilterTarget, Overlay, Pending};

impl App {
    pub(super) fn on_key(&mut self, ev: KeyEvent) -> Effect {
        if ev.kind == KeyEventKind::Release {
            return Effect::NONE;
        }
        let key = Key::from_event(&ev);
        if key.is_ctrl_c() {
            return Effect::QUIT;
        }
        if let Some(p) = self.charts.pending.take() {
            if let (KeyCode::Char(d @ '0'..='9'), true) = (key.code, key.mods.is_empty()) {
                let n = u16::try_from(d.to_digit(10).unwrap_or(0)).unwrap_or(0);
                let v = (n > 0).then_some(n);
                match p {
                    Pending::Columns => self.charts.grid.cols_setting = v,
                    Pending::Rows => self.charts.grid.rows_setting = v,
                }
                let focus = self.charts.grid.focus;
                self.relayout();
                self.charts.grid.focus = focus;
                return Effect::REDRAW;
            }
        }
        // An overlay typed into (the x axis's metric picker) takes the keys.
        if let Some(fx) = self.key_overlay(&key) {
            return fx;
        }
        let mode = self.mode();
        match self.screen.keymap.action(mode, &key) {
            Some(a) => {
                if mode == Mode::Filter {
                    if let Some(fx) = self.ws(|r, cx| r.type_workspace(cx, Some(a), None)) {
                        return fx;
                    }
                }
                self.act(a)
            }
            None if mode == Mode::Filter => {
                if let KeyCode::Char(c) = key.code {
                    if !key
                        .mods
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                    {
                        if let Some(fx) = self.ws(|r, cx| r.type_workspace(cx, None, Some(c))) {
                            return fx;
                        }
                        self.with_filter(|f| f.push(c));
                        return Effect::REDRAW;
                    }
                }
                Effect::NONE
            }
            None => Effect::NONE,
        }
    }

    fn start_proc_filter(&mut self) {
        self.host.procs.filter.start();
        self.filter_target = Some(FilterTarget::Procs);
    }

    fn with_filter<R>(&mut self, f: impl FnOnce(&mut FilterState) -> R) {
        match self.filter_target {
            // A changed filter starts again from its first match, as a search does.
            Some(FilterTarget::Metrics) => {
                f(&mut self.charts.filter);
                self.charts.refilter(self.is_host(), None, &mut self.panels);
            }
            Some(FilterTarget::System) => {
                f(&mut self.panes.system.filter);
                self.panes.system.scroll = 0;
                self.panes.system.refilter(&self.charts.sys);
            }
            Some(FilterTarget::Overview) => {
                f(&mut self.panes.overview.filter);
                self.panes.overview.refilter(true);
            }
            Some(FilterTarget::Console) => {
                f(&mut self.panes.console.filter);
                self.panes.console.back = 0;
            }
            Some(FilterTarget::Procs) => {
                f(&mut self.host.procs.filter);
                self.host.procs.sel = 0;
                self.host.procs.scroll = 0;
                self.host.procs.rebuild();
            }
            Some(FilterTarget::Stats) => {
                f(&mut self.stats.filter);
                if let Overlay::Stats(c) = &mut self.overlay {
                    c.refiltered();
                }
            }
            Some(FilterTarget::Records) => {
                if let Some(i) = self.overlay.inspector_mut() {
                    i.with_filter(f, self.screen.size, &mut self.asks);
                }
            }
            // Typed through `type_workspace`.
            Some(FilterTarget::Runs | FilterTarget::Group | FilterTarget::Column) | None => {}
        }
    }

    /// Perform an action (what a key is bound to).
    pub fn act(&mut self, a: Action) -> Effect {
        if let Some(fx) = self.act_overlay(a) {
            return fx;
        }
        if matches!(self.overlay, Overlay::None) {
            let crosshair = self.charts.crosshair.is_some();
            if let Some(fx) = self.ws(|r, cx| r.act_workspace(cx, a, crosshair)) {
                return fx;
            }
        }
        if let Some(fx) = self.charts.act_sections(&mut self.panels, a) {
            return fx;
        }
        match a.handler() {
            Handler::General => self.act_general(a),
            Handler::Inert => Effect::NONE,
            Handler::Panels => self.act_panels(a),
            Handler::Motion => self.act_motion(a),
            Handler::Charts => self.act_charts(a),
            Handler::Procs => self.act_procs(a),
            Handler::Filter => self.act_filter(a),
        }
    }

    fn act_general(&mut self, a: Action) -> Effect {
        match a {
            Action::Quit => Effect::QUIT,
            Action::Restart
                if !self.is_host() && self.ws(super::workspace::runs::Runs::restart_main) =>
            {
                Effect::REDRAW
            }
            _ => Effect::NONE,
        }
    }

    fn act_panels(&mut self, a: Action) -> Effect {
        match a {
            Action::ToggleMedia => self.toggle_media(),
            Action::ToggleStats => return self.open_stats(),
            Action::InspectRecords => return self.toggle_inspector(),
            Action::PickRun => return self.ws(super::workspace::runs::Runs::open_picker),
            // Open: the help closes itself (`ui/overlay/help.rs`).
            Action::Help => self.overlay = Overlay::Help { scroll: 0 },
            Action::Back => {
                if self.charts.crosshair.is_some() {
                    self.charts.crosshair = None;
                } else if self.panels.fullscreen {
                    self.panels.fullscreen = false;
                } else if self.panels.focus != Pane::Grid {
                    self.panels.focus = Pane::Grid;
                } else {
                    return Effect::NONE;
                }
            }
            Action::ToggleLeftSidebar => self.toggle_sidebar(false),
            Action::ToggleRightSidebar => self.toggle_sidebar(true),
            Action::ToggleConsole => {
                self.panels.console = !self.panels.console;
                self.relayout();
                if self.panels.console && self.screen.areas.console.is_some() {
                    self.panels.focus = Pane::Console;
                }
            }
            Action::CyclePaneFocus | Action::CyclePaneFocusBack => {
                return self.cycle_pane_focus(a == Action::CyclePaneFocus);
            }
            Action::ToggleGrid => self.toggle_grid(),
            Action::ResetPaneSizes => self.reset_pane_sizes(),
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }

    fn cycle_pane_focus(&mut self, forward: bool) -> Effect {
        // In the overview, tab visits its sections before the next pane.
        if self.panels.focus == Pane::Left
            && !self.panels.fullscreen
            && self.screen.areas.left.is_some()
            && !self.runs.in_workspace_list()
            && self.panes.overview.step_section(forward)
        {
            return Effect::REDRAW;
        }
        let panes = self.visible_panes();
        let i = panes
            .iter()
            .position(|&p| p == self.panels.focus)
            .unwrap_or(0);
        let j = if forward {
            (i + 1) % panes.len()
        } else {
            (i + panes.len() - 1) % panes.len()
        };
        self.panels.focus = panes[j];
        if panes[j] == Pane::Left {
            self.panes.overview.enter(forward);
        }
        Effect::REDRAW
    }

    fn act_motion(&mut self, a: Action) -> Effect {
        match a {
            // With the crosshair on, left/right move it along the focused chart.
            Action::FocusLeft | Action::FocusRight
                if self.charts.crosshair.is_some()
                    && (self.panels.focus == Pane::Grid || self.panels.fullscreen)
                    && !self.is_host()
                    && matches!(self.overlay, Overlay::None) =>
            {
                let runs = super::drawn_runs(&self.shown.run, &self.runs);
                self.charts.step_crosshair(&runs, a == Action::FocusRight);
            }
            Action::FocusUp | Action::FocusDown | Action::FocusLeft | Action::FocusRight => {
                self.move_focus(a);
            }
            Action::NextPage | Action::PrevPage | Action::FirstPage | Action::LastPage => {
                self.page(a);
            }
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }

    fn act_charts(&mut self, a: Action) -> Effect {
        match a {
            Action::ToggleHidden => {
                if self.is_host() || (self.charts.hidden == 0 && !self.charts.show_hidden) {
                    return Effect::NONE;
                }
                self.charts.show_hidden = !self.charts.show_hidden;
                self.rederive_metrics();
            }
            Action::CycleCrosshair => {
                if self.is_host() {
                    return Effect::NONE;
                }
                let runs = super::drawn_runs(&self.shown.run, &self.runs);
                self.charts.cycle_crosshair(&runs);
            }
            // With the process table focused, enter monitors the selected process
            // and `/` filters the table.
            Action::Fullscreen if self.panels.focus == Pane::Procs => {
                return self
                    .host
                    .procs
                    .monitor_selected(self.is_host(), &mut self.asks);
            }
            Action::Fullscreen if self.panels.focus == Pane::Media => self.media_fullscreen(),
            Action::Fullscreen => {
                if self.charts.shown.is_empty() {
                    return Effect::NONE;
                }
                self.panels.fullscreen = true;
            }
            Action::CycleYScale => return self.cycle_y_scale(),
            Action::CycleXAxis => return self.cycle_x_axis(),
            Action::XAxisToAll => return self.charts.x_axis_to_all(self.is_host()),
            Action::ToggleLogX => return self.charts.toggle_log_x(self.is_host()),
            Action::CycleSmoothing
            | Action::ToggleSmoothingAll
            | Action::SmoothingUp
            | Action::SmoothingDown => return self.charts.act_smoothing(self.is_host(), a),
            Action::CycleGuides => self.charts.grid.guides = self.charts.grid.guides.next(),
            Action::ToggleBand => self.charts.band = !self.charts.band,
            Action::CyclePalette => self.screen.palette = self.screen.palette.next(),
            Action::SetColumns => self.charts.pending = Some(Pending::Columns),
            Action::SetRows => self.charts.pending = Some(Pending::Rows),
            Action::ResetZoom => {
                if let Some(k) = self.focused_key().map(str::to_owned) {
                    self.charts.zoom.remove(&k);
                }
            }
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }

    fn act_procs(&mut self, a: Action) -> Effect {
        match a {
            Action::MonitorProcess => {
                return self
                    .host
                    .procs
                    .monitor_selected(self.is_host(), &mut self.asks)
            }
            Action::MonitorNone => {
                return super::host::procs::monitor(self.is_host(), &mut self.asks, None)
            }
            Action::CycleProcessSort => {
                if !self.is_host() {
                    return Effect::NONE;
                }
                self.host.procs.sort = self.host.procs.sort.next();
                self.host.procs.rebuild();
                self.host.procs.keep_in_view(self.screen.areas.procs);
            }
            Action::FilterList => {
                if !self.is_host() {
                    return Effect::NONE;
                }
                self.start_proc_filter();
            }
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }

    fn act_filter(&mut self, a: Action) -> Effect {
        match a {
            // Every filter typed here (the workspace's are typed in `type_workspace`).
            Action::FilterToggleGlob => self.with_filter(FilterState::toggle_glob),
            Action::StartFilter if self.panels.focus == Pane::Procs => self.start_proc_filter(),
            // With the console focused, `/` filters its lines (as wandb leet does).
            Action::StartFilter if self.panels.focus == Pane::Console => {
                self.panes.console.filter.start();
                self.filter_target = Some(FilterTarget::Console);
            }
            Action::StartFilter => {
                self.charts.filter.start();
                self.filter_target = Some(FilterTarget::Metrics);
            }
            Action::StartSystemFilter => {
                self.panes.system.filter.start();
                self.filter_target = Some(FilterTarget::System);
            }
            Action::StartOverviewFilter => {
                self.panes.overview.filter.start();
                self.filter_target = Some(FilterTarget::Overview);
                if self.screen.areas.left.is_none() {
                    self.toggle_sidebar(false);
                }
            }
            Action::ClearFilters => self.clear_filters(),
            Action::ClearOverviewFilter => {
                self.panes.overview.filter.clear();
                self.panes.overview.refilter(true);
            }
            Action::ClearSystemFilter => {
                self.panes.system.filter.clear();
                self.panes.system.scroll = 0;
                self.panes.system.refilter(&self.charts.sys);
            }
            Action::FilterApply => {
                self.with_filter(FilterState::apply);
                self.filter_target = None;
            }
            Action::FilterCancel => {
                self.with_filter(FilterState::cancel);
                self.filter_target = None;
            }
            Action::FilterBackspace => self.with_filter(FilterState::backspace),
            Action::FilterClearInput => self.with_filter(|f| f.set_draft(String::new())),
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }

    fn clear_filters(&mut self) {
        self.charts.filter.clear();
        self.panes.system.filter.clear();
        self.panes.overview.filter.clear();
        self.panes.console.filter.clear();
        self.host.procs.filter.clear();
        self.host.procs.rebuild();
        let keep = self.focused_key().map(str::to_owned);
        self.charts
            .refilter(self.is_host(), keep.as_deref(), &mut self.panels);
        self.panes.system.refilter(&self.charts.sys);
        self.panes.overview.refilter(true);
    }

    /// `y`: the focused chart's next y scale. With the system sidebar focused, its
    /// top chart; in the live monitor, the focused grid chart (a system chart);
    /// otherwise the focused metric chart.
    fn cycle_y_scale(&mut self) -> Effect {
        let sys = if self.panels.focus == Pane::Right && !self.panels.fullscreen {
            self.panes.system.shown.get(self.panes.system.scroll)
        } else if self.is_host() {
            self.charts.shown.get(self.charts.grid.focus)
        } else {
            let Some(k) = self.focused_key().map(str::to_owned) else {
                return Effect::NONE;
            };
            self.charts.grid.scales.cycle_metric(&k);
            return Effect::REDRAW;
        };
        let Some(chart) = sys.and_then(|&i| self.charts.sys.get(i)) else {
            return Effect::NONE;
        };
        self.charts.grid.scales.cycle_system(chart);
        Effect::REDRAW
    }

    pub(super) fn move_focus(&mut self, a: Action) {
        let n = self.charts.shown.len();
        let (dx, dy): (isize, isize) = match a {
            Action::FocusUp => (0, -1),
            Action::FocusDown => (0, 1),
            Action::FocusLeft => (-1, 0),
            _ => (1, 0),
        };
        if self.panels.fullscreen {
            if self.charts.grid.sectioned() {
                // Charts in view, in section order.
                self.charts.grid.section_step(dx + dy, true);
            } else {
                self.charts.grid.step(dx + dy, n);
            }
            return;
        }
        match self.panels.focus {
            Pane::Grid if self.charts.grid.sectioned() => {
                if dy == 0 {
                    self.charts.grid.section_step(dx, false);
                } else {
                    self.charts.grid.section_vertical(dy);
                }
            }
            Pane::Grid => {
                // A row of the grid as drawn (a few charts fill it in fewer columns).
                let cols = isize::try_from(self.charts.grid.shape(n).0).unwrap_or(1);
                self.charts.grid.step(dx + dy * cols, n);
            }
            Pane::Left => {
                let lay = self.panes.overview.layout(self.screen.limits.overview_room);
                self.panes.overview.scroll_by(&lay, dy);
            }
            Pane::Right => {
                self.panes.system.scroll =
                    scroll(self.panes.system.scroll, dy, self.panes.system.shown.len());
            }
            Pane::Console => {
                let max = self.screen.limits.console_max;
                self.panes.console.back = scroll(self.panes.console.back.min(max), -dy, max + 1);
            }
            Pane::Procs => self
                .host
                .procs
                .move_selection(dy, None, self.screen.areas.procs),
            Pane::Media => {
                self.step_media(a);
            }
        }
    }

    fn page(&mut self, a: Action) {
        let n = self.charts.shown.len();
        let big = usize::MAX / 4;
        let (delta, abs): (isize, Option<usize>) = match a {
            Action::NextPage => (1, None),
            Action::PrevPage => (-1, None),
            Action::FirstPage => (0, Some(0)),
            _ => (0, Some(big)),
        };
        match self.panels.focus {
            Pane::Grid if self.charts.grid.sectioned() => {
                let p = abs.unwrap_or_else(|| self.charts.grid.page().saturating_add_signed(delta));
                self.charts.grid.section_goto_page(p);
            }
            Pane::Grid => {
                let p = abs.unwrap_or_else(|| self.charts.grid.page().saturating_add_signed(delta));
                self.charts.grid.goto_page(p, n);
            }
            Pane::Left => {
                let lay = self.panes.overview.layout(self.screen.limits.overview_room);
                match abs {
                    Some(a) => self.panes.overview.scroll_to(&lay, a > 0),
                    None => self.panes.overview.page_by(&lay, delta),
                }
            }
            Pane::Right => {
                let len = self.panes.system.shown.len();
                let step = self.screen.limits.system_page;
                self.panes.system.scroll = match abs {
                    Some(0) => 0,
                    Some(_) => len.saturating_sub(step),
                    None => scroll(self.panes.system.scroll, delta * signed(step), len),
                };
            }
            Pane::Console => {
                let (max, step) = (
                    self.screen.limits.console_max,
                    self.screen.limits.console_page,
                );
                let at = self.panes.console.back.min(max);
                self.panes.console.back = match abs {
                    Some(0) => max,
                    Some(_) => 0,
                    None => scroll(at, -delta * signed(step), max + 1),
                };
            }
            Pane::Procs => {
                let step = signed(layout::list_page(super::host::procs::room(
                    self.screen.areas.procs,
                )));
                self.host.procs.move_selection(
                    delta * step,
                    abs.map(|a| a > 0),
                    self.screen.areas.procs,
                );
            }
            Pane::Media => {
                self.step_media(a);
            }
        }
    }
}

pub(super) fn scroll(pos: usize, d: isize, len: usize) -> usize {
    pos.saturating_add_signed(d).min(len.saturating_sub(1))
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}
