//! The grid's own keys: motion over the charts (arrows, pages), its shape (`c`/`r`
//! then a digit), each chart's y scale (`y`), the guides (`g`), the band (`b`),
//! hidden metrics (`H`) and the zoom reset. They change the charts' state only;
//! what they need to know besides comes as arguments.

use crossterm::event::KeyCode;

use super::GridState;
use crate::ui::act::Motion;
use crate::ui::action::Action;
use crate::ui::charts::Charts;
use crate::ui::keymap::Key;

/// A prefix key waiting for its digit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    Columns,
    Rows,
}

/// Whose y scale `y` cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum YTarget {
    /// The focused grid chart: a metric chart, or in the live monitor (`host`)
    /// a system chart.
    Grid { host: bool },
    /// The system sidebar's top chart (an index into `Charts::sys`; None: it
    /// shows none).
    Sidebar(Option<usize>),
}

impl GridState {
    /// A motion key over the grid of `n` charts; `full`: the focused chart is
    /// full screen, where an arrow steps through the charts in order (in
    /// section order when sectioned).
    pub(crate) fn motion(&mut self, m: Motion, n: usize, full: bool) {
        match m {
            Motion::Step { dx, dy } if full => self.full_step(dx + dy, n),
            // Full screen, `home`/`end`: the first / last chart.
            Motion::Page { to: Some(last), .. } if full => {
                self.full_step(
                    if last {
                        isize::MAX / 4
                    } else {
                        -(isize::MAX / 4)
                    },
                    n,
                );
            }
            Motion::Step { dx, dy } if self.sectioned() => {
                if dy == 0 {
                    self.section_step(dx, false);
                } else {
                    self.section_vertical(dy);
                }
            }
            Motion::Step { dx, dy } => {
                // A row of the grid as drawn (a few charts fill it in fewer columns).
                let cols = isize::try_from(self.shape(n).0).unwrap_or(1);
                self.step(dx + dy * cols, n);
            }
            Motion::Page { delta, to } => {
                let p = match to {
                    Some(false) => 0,
                    Some(true) => usize::MAX / 4,
                    None => self.page().saturating_add_signed(delta),
                };
                if self.sectioned() {
                    self.section_goto_page(p);
                } else {
                    self.goto_page(p, n);
                }
            }
        }
    }

    /// Full screen: `d` charts on in order (across sections when sectioned).
    fn full_step(&mut self, d: isize, n: usize) {
        if self.sectioned() {
            self.section_step(d, true);
        } else {
            self.step(d, n);
        }
    }

    /// `c`/`r` then `digit`: that many columns or rows (0: from the terminal
    /// size). The caller lays the grid out again.
    pub(crate) fn set_dims(&mut self, p: Pending, digit: char) {
        let n = u16::try_from(digit.to_digit(10).unwrap_or(0)).unwrap_or(0);
        let v = (n > 0).then_some(n);
        match p {
            Pending::Columns => self.cols_setting = v,
            Pending::Rows => self.rows_setting = v,
        }
    }
}

impl Charts {
    /// A key after `c`/`r`: a digit sets the grid's columns or rows (the caller
    /// lays it out again); whether it was one. Any key ends the wait.
    pub(crate) fn take_digit(&mut self, key: &Key) -> bool {
        let Some(p) = self.pending.take() else {
            return false;
        };
        match (key.code, key.mods.is_empty()) {
            (KeyCode::Char(d @ '0'..='9'), true) => {
                self.grid.set_dims(p, d);
                true
            }
            _ => false,
        }
    }

    /// `y`: the next y scale of the chart `on`; whether there was one.
    pub(crate) fn cycle_y_scale(&mut self, on: YTarget) -> bool {
        let sys = match on {
            YTarget::Sidebar(i) => i,
            YTarget::Grid { host: true } => self.shown.get(self.grid.focus).copied(),
            YTarget::Grid { host: false } => {
                let Some(k) = self.focused_key().map(str::to_owned) else {
                    return false;
                };
                self.grid.scales.cycle_metric(&k);
                return true;
            }
        };
        let Some(chart) = sys.and_then(|i| self.sys.get(i)) else {
            return false;
        };
        self.grid.scales.cycle_system(chart);
        true
    }

    /// `H`: show the metrics hidden by the run, or hide them again; whether
    /// there were any (the caller derives the lists again).
    pub(crate) fn toggle_hidden(&mut self) -> bool {
        if self.hidden == 0 && !self.show_hidden {
            return false;
        }
        self.show_hidden = !self.show_hidden;
        true
    }

    /// The keys that change only how the grid draws; whether `a` was one.
    pub(crate) fn act_grid(&mut self, a: Action) -> bool {
        match a {
            Action::CycleGuides => self.grid.guides = self.grid.guides.next(),
            Action::ToggleBand => self.band = !self.band,
            Action::SetColumns => self.pending = Some(Pending::Columns),
            Action::SetRows => self.pending = Some(Pending::Rows),
            Action::ResetZoom => {
                if let Some(k) = self.focused_key().map(str::to_owned) {
                    self.zoom.remove(&k);
                }
            }
            _ => return false,
        }
        true
    }
}
