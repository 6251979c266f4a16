//! The parts of the state that are saved: a snapshot of them is [`Settings`]
//! ([`Settings::of`]), and settings laid over them at start ([`Settings::apply`]).

use std::collections::BTreeMap;

use super::{FilterSetting, Filters, Settings, YScale, MAX_GRID, MAX_KEY_BYTES, MAX_SCALES};
use crate::ui::charts::Charts;
use crate::ui::filter::FilterState;
use crate::ui::palette::Palette;
use crate::ui::panels::Panels;
use crate::ui::Panes;

/// What the settings are read from: the charts, the panels, the side panes'
/// filters and the colours.
pub(crate) struct Saved<'a> {
    pub charts: &'a Charts,
    pub panels: &'a Panels,
    pub panes: &'a Panes,
    pub palette: Palette,
}

/// What settings are laid over; `host`: the live monitor's (whose left sidebar
/// is automatic unless the settings say).
pub(crate) struct SavedMut<'a> {
    pub charts: &'a mut Charts,
    pub panels: &'a mut Panels,
    pub panes: &'a mut Panes,
    pub palette: &'a mut Palette,
    pub host: bool,
}

/// A filter as saved: the one kept (while its prompt is open, the one in force
/// before it: what is typed is kept with `enter`, not by a quit, ctrl+c or a
/// terminal gone meanwhile).
fn filter_setting(f: &FilterState) -> FilterSetting {
    let (pattern, glob) = f.kept();
    FilterSetting {
        pattern: pattern.to_owned(),
        glob,
    }
}

pub(super) fn apply_filter(f: &mut FilterState, s: &FilterSetting) {
    f.glob = s.glob;
    if s.pattern.is_empty() {
        f.clear();
    } else {
        f.set_draft(s.pattern.clone());
        // (The file's patterns were checked: one that does not compile is none.)
        if !f.apply() {
            f.clear();
        }
    }
}

impl Settings {
    /// The settings of this mode as they are now.
    pub(crate) fn of(now: &Saved<'_>) -> Settings {
        let Saved {
            charts,
            panels,
            panes,
            palette,
        } = now;
        let bounded = |m: BTreeMap<String, YScale>| {
            m.into_iter()
                .filter(|(k, _)| k.len() <= MAX_KEY_BYTES)
                .take(MAX_SCALES)
                .collect()
        };
        Settings {
            rows: charts.grid.rows_setting,
            columns: charts.grid.cols_setting,
            guides: charts.grid.guides,
            palette: *palette,
            band: charts.band,
            left_sidebar: (!panels.auto_left).then_some(panels.left),
            right_sidebar: panels.right,
            console: panels.console,
            metrics_grid: panels.grid,
            sizes: panels.sizes,
            y_scale: bounded(charts.grid.scales.metric_entries()),
            system_y_scale: bounded(charts.grid.scales.system_entries()),
            filters: Filters {
                metrics: filter_setting(&charts.filter),
                overview: filter_setting(&panes.overview.filter),
                system: filter_setting(&panes.system.filter),
            },
            smoothing_all: charts.smoothing.all.to_string(),
            smoothing: charts
                .smoothing
                .charts
                .iter()
                .filter(|(k, _)| k.len() <= MAX_KEY_BYTES)
                .take(MAX_SCALES)
                .map(|(k, v)| (k.clone(), v.to_string()))
                .collect(),
            x_axis_all: charts.xaxis.all.to_string(),
            x_axis: (charts.xaxis.per_chart.iter())
                .filter(|(k, _)| k.len() <= MAX_KEY_BYTES)
                .take(MAX_SCALES)
                .map(|(k, v)| (k.clone(), v.to_string()))
                .collect(),
            log_x: (charts.xaxis.log.iter())
                .filter(|k| k.len() <= MAX_KEY_BYTES)
                .take(MAX_SCALES)
                .cloned()
                .collect(),
            collapsed_sections: (charts.grid.sections.collapsed.iter())
                .filter(|p| p.len() <= MAX_KEY_BYTES)
                .take(MAX_SCALES)
                .cloned()
                .collect(),
        }
    }

    /// Lay these settings over the state; the lists they filter and the layout
    /// are for the caller to rebuild.
    pub(crate) fn apply(&self, to: SavedMut<'_>) {
        let SavedMut {
            charts,
            panels,
            panes,
            palette,
            host,
        } = to;
        let s = self;
        charts.grid.rows_setting = s.rows.map(|n| n.clamp(1, MAX_GRID));
        charts.grid.cols_setting = s.columns.map(|n| n.clamp(1, MAX_GRID));
        charts.grid.guides = s.guides;
        *palette = s.palette;
        charts.band = s.band;
        match s.left_sidebar {
            Some(b) => {
                panels.left = b;
                panels.auto_left = false;
            }
            None if host => panels.auto_left = true,
            None => panels.left = true,
        }
        panels.right = s.right_sidebar;
        panels.console = s.console;
        panels.grid = s.metrics_grid;
        panels.sizes = s.sizes;
        charts.grid.scales.clear();
        for (k, v) in &s.y_scale {
            charts.grid.scales.set_metric(k, *v);
        }
        for (k, v) in &s.system_y_scale {
            charts.grid.scales.set_system_named(k, *v);
        }
        // Smoothing: checked when parsed.
        charts.smoothing.restore(
            s.smoothing_all.parse().unwrap_or_default(),
            s.smoothing
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.parse().ok()?)))
                .collect(),
        );
        // X axis: checked when parsed.
        charts.xaxis.restore(
            s.x_axis_all.parse().unwrap_or_default(),
            (s.x_axis.iter())
                .filter_map(|(k, v)| Some((k.clone(), v.parse().ok()?)))
                .collect(),
            s.log_x.iter().cloned().collect(),
        );
        apply_filter(&mut charts.filter, &s.filters.metrics);
        apply_filter(&mut panes.overview.filter, &s.filters.overview);
        apply_filter(&mut panes.system.filter, &s.filters.system);
        charts.grid.sections.collapsed = s.collapsed_sections.iter().cloned().collect();
    }
}
