//! A cluster's metrics from Prometheus (or any server with its HTTP API): the
//! client ([`api`]), `--match` matchers ([`matchers`]), the mapping of exporters'
//! series to W&B keys ([`rules`], by the table `leet serve` exports with,
//! [`names`]), one refresh ([`fetch`]) and the thread that refreshes ([`driver`]).
pub mod api;
pub mod driver;
pub mod fetch;
pub mod matchers;
pub mod names;
pub mod rules;

pub use api::{Client, PromError};
pub use driver::{ClusterUpdate, DriverOptions};
pub use matchers::Matchers;
