//! Retention and folding: series with a memory cap, console lines, and the run
//! model, folded from the events the readers decode. Knows no terminal.
pub mod cluster;
pub mod console;
pub(crate) mod damage;
pub mod exact;
pub(crate) mod history;
pub mod load;
pub(crate) mod media;
pub mod metrics;
pub mod run;
pub mod series;
pub mod smooth;
pub mod stitch;
pub mod timeline;
pub(crate) mod tree;

pub use load::load;
pub use metrics::MetricStore;
pub use run::Run;
pub use series::Series;
