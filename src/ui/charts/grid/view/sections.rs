//! A sectioned metrics grid's page: each section's header line (`▾ train (12)`,
//! `▸ eval (30)` collapsed, indented by depth, a rule to the right, heavy when
//! the header has the focus) and its charts.

use ratatui::buffer::Buffer;

use super::render_grid_item;
use crate::text::sanitize;
use crate::ui::charts::sections::{Item, Slot, View};
use crate::ui::theme::Theme;
use crate::ui::widget::fit::{fit, put};
use crate::ui::App;

/// Draw the headers and charts of the page `v`.
pub(super) fn render_page(buf: &mut Buffer, app: &App, v: &View, pane: bool, theme: Theme) {
    let focus = app.charts.grid.item();
    for &(rect, slot) in &v.slots {
        match slot {
            Slot::Chart(pos) => {
                if let Some(&i) = app.charts.shown.get(pos) {
                    render_grid_item(buf, rect, app, i, pane && focus == Item::Chart(pos), theme);
                }
            }
            Slot::Header { sec, cont } => {
                if rect.height == 0 || rect.width < 2 {
                    continue;
                }
                let on = pane && !cont && focus == Item::Header(sec);
                let w = rect.width.saturating_sub(1);
                let label = fit(
                    &sanitize(&app.charts.grid.sections.label(sec, cont)),
                    usize::from(w),
                );
                let style = if on {
                    theme.title(true)
                } else {
                    theme.heading()
                };
                let used = put(buf, rect.x + 1, rect.y, &label, w, style);
                let rest = w.saturating_sub(used + 1);
                if rest > 0 {
                    let rule = if on { "━" } else { "─" };
                    let line = rule.repeat(usize::from(rest));
                    let style = if on { theme.border(true) } else { theme.dim() };
                    put(buf, rect.x + 2 + used, rect.y, &line, rest, style);
                }
            }
        }
    }
}
