//! The console pane: the run's console output. Its state is the app's
//! `ConsolePane` (the scroll and the filter, in `ui/mod.rs`) and its scroll
//! limits (`ui/scroll.rs`); here is its drawing.

pub(crate) mod view;
