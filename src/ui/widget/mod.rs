//! Drawing that knows no `App`: the chart (braille lines, axes, bands), the
//! min–max band, the heatmap, text fitted into cells and number formatting. The
//! feature folders draw with these; these never read the app's state.

pub(crate) mod band;
pub(crate) mod chart;
pub(crate) mod fit;
pub mod format;
pub mod guides;
pub(crate) mod heatmap;
pub mod unit;
