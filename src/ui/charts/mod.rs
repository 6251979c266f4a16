//! The metric charts: the grid of charts and its paging (`grid`), the sections
//! they are grouped in (`sections`), each chart's x axis (`xaxis`) and smoothing
//! (`smoothing`), the crosshair, a group of runs' statistics (`group`), and the
//! drawing of the grid and its charts (`grid::view`).

pub mod crosshair;
pub mod grid;
pub(crate) mod group;
pub mod sections;
pub mod smoothing;
pub mod xaxis;
