//! What the cluster screen's refresh thread (`source::prometheus::driver`) sends
//! the loop: defined here, below the source that makes them, so that `Msg` can
//! carry them; the source re-exports each where it was first named.

use std::time::Duration;

/// Why a request got no usable answer. Every text in it is sanitised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    #[error("'{url}': not a usable http(s) URL: {why}")]
    BadUrl { url: String, why: String },
    #[error("{server}: connection refused")]
    Refused { server: String },
    /// Silent, or too slow (a server that dribbles its answer): the whole
    /// answer did not come in time.
    #[error("{server}: no complete answer within {secs} s")]
    Timeout { server: String, secs: u64 },
    #[error("{server}: answer larger than {limit} bytes")]
    TooLarge { server: String, limit: u64 },
    #[error("{server}: {why}")]
    Failed { server: String, why: String },
}

/// Why a call gave no data. Texts from the server are sanitised and cut short.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromError {
    #[error(transparent)]
    Http(#[from] HttpError),
    #[error("{server}: {kind}: {error}")]
    Api {
        server: String,
        kind: String,
        error: String,
    },
    #[error("{server}: HTTP {status}: {excerpt}")]
    Status {
        server: String,
        status: u16,
        excerpt: String,
    },
    #[error("{server}: not a Prometheus API answer: {why}")]
    Garbage { server: String, why: String },
}

/// Which exporter a rule reads. A key `leet serve` exports on a host is read from
/// it; the others give the keys it does not (a host without it, or its GPUs from
/// dcgm-exporter where `leet serve` has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Exporter {
    Leet,
    Node,
    Dcgm,
}

/// One host's series of one key, values in the key's unit, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSeries {
    pub host: String,
    /// The target it was scraped from (its `instance` label, else the host): two
    /// targets of one host that export the same exporter's series are told apart
    /// by it.
    pub instance: String,
    pub exporter: Exporter,
    pub key: String,
    pub points: Vec<(f64, f64)>,
    /// Shown relative to the first point the model keeps (see [`rules::Rule`]).
    pub since_first: bool,
}

/// A host's `up` over the range: (time, scraped).
#[derive(Debug, Clone, PartialEq)]
pub struct HostUp {
    pub host: String,
    pub instance: String,
    /// The scrape job (empty where the series has none): two targets of one job
    /// on one host are two rows.
    pub job: String,
    pub points: Vec<(f64, bool)>,
}

/// What one refresh read.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub start: f64,
    pub end: f64,
    pub step: Duration,
    pub series: Vec<HostSeries>,
    pub up: Vec<HostUp>,
    /// Rules the server refused (an unknown function, a limit), each named; the
    /// other rules' answers are in the batch.
    pub refused: Vec<String>,
}

/// What the refresh thread reports.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterUpdate {
    /// Sent first: the step of the series (the scrape interval, or coarser for a
    /// long window), the refresh interval and the window.
    Started {
        server: String,
        step: Duration,
        interval: Duration,
        window: Duration,
    },
    /// One refresh's answers.
    Fetched(Box<Batch>),
    /// A refresh that got nothing; `at` is when (unix seconds).
    Failed { error: PromError, at: f64 },
}
