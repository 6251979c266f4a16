//! What the workspace's and the runs' methods may see and change besides their
//! own state ([`WsCx`]), and what they leave for the router to do once they
//! return ([`Then`]): the parts of other features that a new main run, the
//! picker or the runs list's keys change.

use crate::ui::panels::Panels;
use crate::ui::render::Screen;
use crate::ui::{Asks, FilterTarget, OverviewPane, Shown};

/// The context of the runs' methods, built by the router from the `App`'s fields.
pub(crate) struct WsCx<'a> {
    /// The run shown: replaced when another run becomes the main one; its error
    /// line says what a key could not do.
    pub shown: &'a mut Shown,
    /// Which panes show and which has the focus.
    pub panels: &'a mut Panels,
    /// The areas laid out and the page sizes (read only: a relayout is asked for).
    pub screen: &'a Screen,
    /// The filter or prompt being typed into.
    pub filter_target: &'a mut Option<FilterTarget>,
    /// The overview pane (below the runs list while the list is shown).
    pub overview: &'a mut OverviewPane,
    pub asks: &'a mut Asks,
    /// What the router is to do once the method returns.
    pub then: Then,
}

/// What a runs' method leaves for the router, done in this order once it returns
/// (before [`Asks`]' relayout and refresh).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Then {
    /// Another run became the main one without keeping the view: the zoom, the
    /// chart focus, full screen and the panes' scroll positions start afresh.
    pub fresh_view: bool,
    /// Open (true) or close (false) the run picker.
    pub picker: Option<bool>,
    /// Show the left pane (the runs list) and focus it.
    pub show_runs_pane: bool,
    /// Keep the overview on its subject (`Some(fresh)`, see
    /// [`super::runs::Runs::follow_overview`]).
    pub overview: Option<bool>,
}

impl Then {
    /// Ask for the overview to follow its subject; `fresh`: rebuilt even when it
    /// is the same run (the index may have changed it).
    pub fn sync_overview(&mut self, fresh: bool) {
        self.overview = Some(self.overview.unwrap_or(false) || fresh);
    }
}
