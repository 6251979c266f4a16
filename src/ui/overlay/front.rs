//! The overlay in front: `overlays!` lists every overlay once (its `Overlay`
//! variant and state, and the keys it reads), and the one `match` each for its
//! keys ([`Overlay::act`]) and its drawing ([`Overlay::render`]).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{help, media, stats, Keys, Outcome, Section};
use crate::ui::action::Action;
use crate::ui::charts::xaxis;
use crate::ui::inspector::{self, Inspector};
use crate::ui::keymap::Mode;
use crate::ui::theme::Theme;
use crate::ui::{App, Asks, FilterTarget};

/// The overlays, one row each: `Variant(State) => keys;` with keys either
/// `("section", "Help heading", HELP_LINES)` or `filter`. It generates `Overlay`
/// and `Kind` (the variants without their state, the key-map modes are made of).
macro_rules! overlays {
    ($(
        $(#[$doc:meta])*
        $v:ident $(($t:ty))? $({ $($f:ident : $ft:ty),* })? => $keys:tt;
    )*) => {
        /// The overlay in front of the panes (at most one), holding its own state:
        /// a closed overlay holds nothing.
        #[derive(Debug, Clone, Default)]
        pub enum Overlay {
            #[default]
            None,
            $($(#[$doc])* $v $(($t))? $({ $($f: $ft),* })?,)*
        }

        /// Which overlay, without its state.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Kind {
            $($v,)*
        }

        impl Kind {
            /// Every overlay, in the order the help lists their keys.
            pub const ALL: [Kind; [$(stringify!($v)),*].len()] = [$(Kind::$v),*];

            /// The keys it reads.
            #[must_use]
            pub const fn keys(self) -> Keys {
                match self {
                    $(Kind::$v => overlays!(@keys $keys),)*
                }
            }
        }

        impl Overlay {
            /// Which overlay is in front (None: none).
            #[must_use]
            pub fn kind(&self) -> Option<Kind> {
                match self {
                    Overlay::None => None,
                    $(Overlay::$v { .. } => Some(Kind::$v),)*
                }
            }
        }
    };
    (@keys filter) => { Keys::Filter };
    (@keys ($name:literal, $title:literal, $help:expr)) => {
        Keys::Own(Section { name: $name, title: $title, help: $help })
    };
}

overlays! {
    /// The run picker (`R`).
    Runs => ("runs", "Run picker", RUNS_HELP);
    /// The media viewer (`3`).
    Media => ("media", "Media viewer", media::HELP);
    /// The statistics table (`T`): its selection and scroll.
    Stats(stats::StatsCursor) => ("stats", "Statistics table", stats::HELP);
    /// The record inspector (`i`), full screen.
    Inspector(Box<Inspector>) => ("inspector", "Record inspector", inspector::HELP);
    /// Key help, scrolled this many lines.
    Help { scroll: usize } => ("help", "This help", help::HELP);
    /// The x axis's metric picker (`x` after wall time), over its chart.
    XAxis(xaxis::Picker) => filter;
    /// The cluster screen (`--prometheus`), full screen; its state is the live
    /// monitor's (`host::Host::cluster`), kept while a host is opened or another
    /// overlay is in front.
    Cluster => ("cluster", "Cluster screen", crate::ui::cluster::HELP);
}

impl Overlay {
    /// The overlay action `a` opens on nothing but its own first state (None: it
    /// opens none, or one that needs more than its state to open, which the
    /// router opens: the inspector, the statistics table, the media viewer, the
    /// run picker, the x axis's picker). An overlay added here opens without a
    /// line in the router.
    #[must_use]
    pub(crate) fn opened_by(a: Action) -> Option<Overlay> {
        match a {
            Action::Help => Some(Overlay::Help { scroll: 0 }),
            _ => None,
        }
    }
}

/// The run picker's lines in the help (its keys are the workspace's, `ui/workspace/runs`).
const RUNS_HELP: &[(&[Action], &str)] = &[
    (
        &[Action::FocusUp, Action::PrevPage, Action::FirstPage],
        "Select an earlier row",
    ),
    (
        &[Action::FocusDown, Action::NextPage, Action::LastPage],
        "Select a later row",
    ),
    (&[Action::Back], "Close the picker"),
];

/// What every overlay may see and ask for: the screen's size, how far the help
/// scrolls, the filter being typed into (`/` starts one), and the runtime.
pub(crate) struct OverlayCx<'a> {
    pub size: Rect,
    pub help_max: usize,
    pub filter_target: &'a mut Option<FilterTarget>,
    pub asks: &'a mut Asks,
}

impl Kind {
    /// Its key-map mode: its own section's, else the filter's.
    #[must_use]
    pub const fn mode(self) -> Mode {
        match self.keys() {
            Keys::Own(_) => Mode::Overlay(self),
            Keys::Filter => Mode::Filter,
        }
    }
}

impl Overlay {
    /// The key-map mode of the overlay in front (None: none is).
    #[must_use]
    pub fn mode(&self) -> Option<Mode> {
        self.kind().map(Kind::mode)
    }

    /// Whether it has the whole screen: the panes are not drawn under it and take
    /// no clicks.
    #[must_use]
    pub fn full_screen(&self) -> bool {
        matches!(self, Overlay::Inspector(_) | Overlay::Cluster)
    }

    /// Whether it hides the panes (the metric picker sits inside its chart).
    #[must_use]
    pub fn covers(&self) -> bool {
        !matches!(self, Overlay::None | Overlay::XAxis(_))
    }

    /// The record inspector, while open.
    #[must_use]
    pub fn inspector(&self) -> Option<&Inspector> {
        match self {
            Overlay::Inspector(i) => Some(i),
            _ => None,
        }
    }

    /// The record inspector, while open, to change.
    pub fn inspector_mut(&mut self) -> Option<&mut Inspector> {
        match self {
            Overlay::Inspector(i) => Some(i),
            _ => None,
        }
    }

    /// The statistics table's selection and scroll (the top, when closed).
    #[must_use]
    pub fn stats_cursor(&self) -> stats::StatsCursor {
        match self {
            Overlay::Stats(c) => *c,
            _ => stats::StatsCursor::default(),
        }
    }

    /// The metric picker, while open.
    #[must_use]
    pub fn picker(&self) -> Option<&xaxis::Picker> {
        match self {
            Overlay::XAxis(p) => Some(p),
            _ => None,
        }
    }

    /// A key action for the overlay in front: what it did, or None where it lets
    /// the action through. The ones that see more than `cx` (the run picker, the
    /// media viewer, the statistics table, the metric picker) are routed by the
    /// router (`App::act_overlay`, `App::key_overlay`). The inspector's filter is
    /// typed with every filter's keys.
    pub(crate) fn act(&mut self, a: Action, cx: OverlayCx<'_>) -> Option<Outcome> {
        let typing = cx.filter_target.is_some();
        match self {
            Overlay::Help { scroll } => help::act(scroll, a, cx.help_max),
            Overlay::Inspector(i) if !typing => Some(i.act(a, cx.size, cx.filter_target, cx.asks)),
            Overlay::None
            | Overlay::Runs
            | Overlay::Media
            | Overlay::Stats(_)
            | Overlay::Inspector(_)
            | Overlay::XAxis(_)
            | Overlay::Cluster => None,
        }
    }

    /// Draw it in front of the screen `area` drawn (the boxes leave the status
    /// line shown).
    pub(crate) fn render(&self, buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
        let boxed = Rect::new(area.x, area.y, area.width, area.height.saturating_sub(1));
        match self {
            // The metric picker is drawn by the focused chart's drawing, the one
            // that knows where it is.
            Overlay::None | Overlay::XAxis(_) => {}
            Overlay::Runs => crate::ui::workspace::runs::view::render_runs(buf, boxed, app, theme),
            Overlay::Media => media::view::render_media(buf, boxed, app, theme),
            Overlay::Stats(_) => stats::view::render_stats(buf, boxed, app, theme),
            Overlay::Inspector(_) => inspector::view::render_inspector(buf, area, app, theme),
            Overlay::Help { .. } => help::render_help(buf, boxed, app, theme),
            Overlay::Cluster => crate::ui::cluster::view::render_cluster(buf, area, app, theme),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::Effect;

    /// An overlay's row is all the key map needs: each section of its own is a
    /// mode of that name (one table each), and one typed into reads the filter's.
    #[test]
    fn each_overlay_row_gives_its_key_map_mode() {
        let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
        for k in Kind::ALL {
            match k.keys() {
                Keys::Own(s) => {
                    assert_eq!(k.mode(), Mode::Overlay(k));
                    assert_eq!(
                        names.iter().filter(|n| **n == s.name).count(),
                        1,
                        "{}",
                        s.name
                    );
                }
                Keys::Filter => assert_eq!(k.mode(), Mode::Filter),
            }
        }
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        let picker = Overlay::XAxis(xaxis::Picker::default());
        assert_eq!(picker.mode(), Some(Mode::Filter));
        assert!(!picker.covers() && Overlay::Help { scroll: 0 }.covers());
        assert_eq!(Overlay::None.mode(), None);
    }

    /// The help scrolls within its last offset (so `end` then `up` moves), closes
    /// on its own keys, and lets quit through.
    #[test]
    fn the_help_scrolls_within_its_bound_and_closes() {
        let mut scroll = 0;
        let redraw = Some(Outcome::Stay(Effect::REDRAW));
        assert_eq!(help::act(&mut scroll, Action::LastPage, 12), redraw);
        assert_eq!(scroll, 12);
        assert_eq!(help::act(&mut scroll, Action::FocusUp, 12), redraw);
        assert_eq!(scroll, 11);
        help::act(&mut scroll, Action::NextPage, 12);
        assert_eq!(scroll, 12);
        help::act(&mut scroll, Action::PrevPage, 12);
        assert_eq!(scroll, 2);
        assert_eq!(
            help::act(&mut scroll, Action::Back, 12),
            Some(Outcome::Close)
        );
        assert_eq!(help::act(&mut scroll, Action::Quit, 12), None);
    }
}
