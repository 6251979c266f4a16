//! Retention and folding: series with a memory cap, console lines, and the run
//! model. Knows no terminal and no files.
pub mod console;
pub mod metrics;
pub mod run;
pub mod series;

pub use metrics::MetricStore;
pub use run::{Run, RunState};
pub use series::Series;
