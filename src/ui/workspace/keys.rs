//! The runs list's keys (select, pin, filter, group, the summary column, one run
//! alone and back) and the typing into its prompts.

use super::cx::WsCx;
use super::runs::Runs;
use super::{Prompt, WsView, MAX_PROMPT_CHARS};
use crate::ui::action::Action;
use crate::ui::panels::Pane;
use crate::ui::prompt::Prefilled;
use crate::ui::{Effect, FilterTarget, Shown};

impl Runs {
    /// Keys the workspace takes before the rest of the app (None: not one of its).
    /// `crosshair`: the charts' crosshair is on (esc turns it off first). The
    /// router asks only while no overlay is open.
    pub(crate) fn act_workspace(
        &mut self,
        cx: &mut WsCx,
        a: Action,
        crosshair: bool,
    ) -> Option<Effect> {
        if let Some(fx) = self.act_ws_overview(cx, a) {
            return Some(fx);
        }
        let fx = self.act_runs_list(cx, a, crosshair);
        // The cursor may have moved, or the view changed.
        cx.then.sync_overview(false);
        fx
    }

    fn act_runs_list(&mut self, cx: &mut WsCx, a: Action, crosshair: bool) -> Option<Effect> {
        let ws = self.workspace.as_mut()?;
        let list = ws.view == WsView::List;
        let on_pane = list && cx.panels.focus == Pane::Left && !cx.panels.fullscreen;
        // The overview part below the list has the moving keys while focused.
        let on_list = on_pane && !ws.overview.focus;
        let err = |shown: &mut Shown, r: Result<(), String>| {
            if let Err(e) = r {
                shown.source.error = Some(e);
            }
        };
        match a {
            Action::ToggleSelect if list => err(cx.shown, ws.toggle_cursor()),
            Action::PinRun if list => err(cx.shown, ws.pin_cursor()),
            Action::FilterList if list => {
                ws.filter.start();
                *cx.filter_target = Some(FilterTarget::Runs);
                // The list itself, not the overview below it.
                ws.overview.focus = false;
                cx.then.show_runs_pane = true;
                return Some(Effect::REDRAW);
            }
            Action::GroupRuns if list => {
                let text = ws.group_by.clone().unwrap_or_default();
                ws.prompt = Some((Prompt::Group, Prefilled::new(text)));
                *cx.filter_target = Some(FilterTarget::Group);
                return Some(Effect::REDRAW);
            }
            Action::ChooseColumn if list => {
                let text = ws.summary_column.clone().unwrap_or_default();
                ws.prompt = Some((Prompt::Column, Prefilled::new(text)));
                *cx.filter_target = Some(FilterTarget::Column);
                return Some(Effect::REDRAW);
            }
            Action::PickRun if list => {
                ws.overview.focus = false;
                cx.then.show_runs_pane = true;
                return Some(Effect::REDRAW);
            }
            Action::Fullscreen if on_pane => {
                // A list the filter emptied: nothing to show alone, and the key is
                // the list's, not the focused chart's (full screen).
                let Some(run) = ws.cursor_run() else {
                    return Some(Effect::NONE);
                };
                let dir = run.latest().dir.clone();
                ws.view = WsView::Run(dir);
                cx.panels.focus = Pane::Grid;
                self.reconcile(cx);
                cx.asks.relayout();
                return Some(Effect::REDRAW);
            }
            Action::FocusUp | Action::FocusDown if on_list => {
                let d: isize = if a == Action::FocusUp { -1 } else { 1 };
                ws.cursor = ws
                    .cursor
                    .saturating_add_signed(d)
                    .min(ws.shown.len().saturating_sub(1));
                return Some(Effect::REDRAW);
            }
            Action::NextPage | Action::PrevPage | Action::FirstPage | Action::LastPage
                if on_list =>
            {
                let page = cx.screen.limits.runs_page.max(1);
                let last = ws.shown.len().saturating_sub(1);
                ws.cursor = match a {
                    Action::NextPage => (ws.cursor + page).min(last),
                    Action::PrevPage => ws.cursor.saturating_sub(page),
                    Action::FirstPage => 0,
                    _ => last,
                };
                return Some(Effect::REDRAW);
            }
            Action::Back
                if !list
                    && !crosshair
                    && !cx.panels.fullscreen
                    && cx.panels.focus == Pane::Grid =>
            {
                return self.back_to_list(cx);
            }
            _ => return None,
        }
        self.reconcile(cx);
        self.save_workspace(cx.asks);
        Some(Effect::REDRAW)
    }

    /// From one run alone back to the workspace's list, on that run.
    fn back_to_list(&mut self, cx: &mut WsCx) -> Option<Effect> {
        let ws = self.workspace.as_mut()?;
        let view = std::mem::replace(&mut ws.view, WsView::List);
        if let WsView::Run(d) = view {
            ws.come_back_to(d);
        }
        cx.panels.left = true;
        ws.focus_list = true;
        self.reconcile(cx);
        self.scan_index(cx.asks);
        cx.asks.relayout();
        Some(Effect::REDRAW)
    }

    /// An arrow, home or end in a workspace prompt (`target`): its prefill kept,
    /// no longer selected. Whether it was selected.
    pub(crate) fn keep_prefill(&mut self, target: FilterTarget) -> bool {
        let Some(ws) = self.workspace.as_mut() else {
            return false;
        };
        match target {
            FilterTarget::Runs => ws.filter.deselect(),
            FilterTarget::Group | FilterTarget::Column => {
                ws.prompt.as_mut().is_some_and(|(_, t)| t.deselect())
            }
            _ => false,
        }
    }

    /// Typing into a workspace prompt (the runs filter, `G`, `v`): an action, or
    /// text typed or pasted. None: the filter being typed is not the workspace's.
    pub(crate) fn type_workspace(
        &mut self,
        cx: &mut WsCx,
        a: Option<Action>,
        typed: Option<&str>,
    ) -> Option<Effect> {
        let target = (*cx.filter_target)?;
        let ws = self.workspace.as_mut()?;
        match target {
            FilterTarget::Runs => {
                let f = &mut ws.filter;
                // Typing parses the draft (at most `MAX_PATTERN_CHARS`); the list
                // is filtered only when the query in force changed.
                let (changed, shown) = match (a, typed) {
                    (_, Some(t)) => f.push_str(t),
                    (Some(Action::FilterBackspace), _) => (f.backspace(), true),
                    (Some(Action::FilterClearInput), _) => (f.set_draft(String::new()), true),
                    (Some(Action::FilterToggleGlob), _) => (f.toggle_glob(), true),
                    // A query that does not parse is refused: its error stays shown.
                    (Some(Action::FilterApply), _) => {
                        if f.apply() {
                            *cx.filter_target = None;
                            ws.refilter_if_due();
                        }
                        (false, true)
                    }
                    (Some(Action::FilterCancel), _) => {
                        f.cancel();
                        *cx.filter_target = None;
                        (true, true)
                    }
                    _ => return Some(Effect::NONE),
                };
                if changed {
                    ws.filter_changed();
                }
                if cx.filter_target.is_none() {
                    if changed {
                        ws.refilter_if_due();
                    }
                    self.save_workspace(cx.asks);
                }
                if !shown {
                    return Some(Effect::NONE);
                }
                cx.then.sync_overview(false);
            }
            FilterTarget::Group | FilterTarget::Column => {
                let (kind, text) = ws.prompt.as_mut()?;
                let kind = *kind;
                match (a, typed) {
                    (_, Some(t)) => text.type_str(t, MAX_PROMPT_CHARS),
                    (Some(Action::FilterBackspace), _) => text.backspace(),
                    (Some(Action::FilterClearInput), _) => text.clear(),
                    (Some(Action::FilterApply), _) => {
                        let text = std::mem::take(&mut text.text);
                        if ws.prompt_note.is_some() && cx.shown.source.error == ws.prompt_note {
                            cx.shown.source.error = None;
                        }
                        ws.prompt_note = ws.apply_prompt(kind, &text).err();
                        if let Some(e) = &ws.prompt_note {
                            cx.shown.source.error = Some(e.clone());
                        }
                        ws.prompt = None;
                        *cx.filter_target = None;
                        self.tag_drawn(cx);
                        self.save_workspace(cx.asks);
                    }
                    (Some(Action::FilterCancel), _) => {
                        ws.prompt = None;
                        *cx.filter_target = None;
                    }
                    _ => return Some(Effect::NONE),
                }
            }
            _ => return None,
        }
        Some(Effect::REDRAW)
    }
}
