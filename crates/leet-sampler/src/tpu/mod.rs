//! Google TPUs: found by a PCI scan, read from libtpu's runtime metrics service (spec §8).
//!
//! **Detection** reads only sysfs: a device under `$LEET_SYSFS_ROOT/bus/pci/devices`
//! (`LEET_SYSFS_ROOT` defaults to `/sys`) whose `vendor` is Google's `0x1ae0` and whose
//! `device` (plus `subsystem_device` for v2/v3) is a known TPU chip ([`GENERATIONS`],
//! the table of Google's `tpu-info`). Nothing TPU-specific is loaded or connected on a
//! host without one; other Google devices (gVNIC NICs share the vendor id) are ignored.
//!
//! **Metrics** come from the gRPC service `tpu.monitoring.runtime.RuntimeMetricService`
//! that libtpu serves while a TPU program runs (plaintext HTTP/2; the
//! `proto/tpu_metric_service.proto` subset). Where: `LEET_TPU_METRICS_HOST` (default
//! `localhost`, taken as 127.0.0.1) and the ports of `TPU_RUNTIME_METRICS_PORTS`
//! (comma-separated, default 8431; libtpu uses the same variable, one port per process
//! in multi-process PyTorch/XLA). Every port is read each sample and the results
//! merged: devices are unioned, and when two ports report the same device or
//! distribution label the first port in the list wins.
//!
//! Keys (per device `N`): `tpu.N.dutyCycle` (%, copied to both cores of a v2/v3 chip),
//! `tpu.N.hbmCapacityTotal`, `tpu.N.hbmCapacityUsage` and `tpu.N.memoryUsageBytes`
//! (bytes), `tpu.N.memoryUsage` (usage / total, %), `tpu.N.runtimeHbmUtilization` (%),
//! `tpu.N.tensorcoreIdleDuration` (s), `tpu.N.tensorcoreUtilization` (%, only when the
//! runtime lists such a metric); distributions `tpu.<base>[.<label>].{mean,p50,p90,p95,
//! p999}<unit>` and `tpu.hloQueueSize[.<label>]` (see [`map`]). `iciLinkHealth` and
//! `throttleScore` exist only in libtpu's in-process SDK, which leet does not load.
//!
//! Each port is asked `ListSupportedMetrics` once (redone every 60 samples and after a
//! reconnect), then only for the listed metrics; a name the runtime answers NOT_FOUND
//! for is not asked again until then.
//!
//! Each sample runs on a current-thread tokio runtime owned by the collector (no
//! threads of its own; only a host name that is not an IP or `localhost` is looked up,
//! on tokio's blocking pool), with one deadline for all ports: 40 % of the sampling
//! interval, 50 ms to 2 s (inside the sampler's half-interval deadline). A port that misses it is reported and reconnected on the
//! next sample. A port that refuses the connection (nothing listens: no TPU program runs
//! now) is connected to again after 1 s, then 2, 4, ... up to 30 s ([`refused_backoff`]),
//! and reported in every sample meanwhile without a connection attempt. Errors are per
//! port, in one line per sample.

mod map;
mod pci;

#[allow(
    clippy::all,
    clippy::pedantic,
    clippy::unwrap_used,
    missing_docs,
    unreachable_pub
)]
pub(crate) mod proto {
    include!(concat!(env!("OUT_DIR"), "/tpu.monitoring.runtime.rs"));
}

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::task::JoinSet;
use tonic::transport::{Channel, Endpoint};

use super::{Collector, GpuInfo, SamplerError};
use map::{Fanout, Merged, Shape};
use pci::{most_common, scan_pci, Chip};
use proto::runtime_metric_service_client::RuntimeMetricServiceClient;
#[cfg(test)]
use {pci::generation, std::path::Path};

/// libtpu's default metrics port.
pub(crate) const DEFAULT_PORT: u16 = 8431;
/// Largest gRPC response accepted (real ones are a few KiB; at most 16 are in flight
/// per port).
pub(crate) const MAX_RESPONSE_BYTES: usize = 1 << 20;
/// Longest text of a server's error message shown.
const MAX_ERROR_CHARS: usize = 160;

/// Ports of `TPU_RUNTIME_METRICS_PORTS` (`None` or blank: 8431). Duplicates are dropped.
pub(crate) fn parse_ports(value: Option<&str>) -> Result<Vec<u16>, String> {
    let Some(v) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(vec![DEFAULT_PORT]);
    };
    let mut ports = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let port: u16 = part.parse().ok().filter(|p| *p > 0).ok_or_else(|| {
            format!(
                "TPU_RUNTIME_METRICS_PORTS: '{}' is not a port number",
                leet_text::sanitize(part)
            )
        })?;
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    if ports.len() > 64 {
        return Err("TPU_RUNTIME_METRICS_PORTS: more than 64 ports".to_string());
    }
    Ok(ports)
}

/// Deadline for one sample of every port: 40 % of the interval, within 50 ms..2 s, so
/// that a reading, errors included, is back before the sampler's own deadline (half
/// the interval) and lands in the sample it was asked for.
pub(crate) fn sample_timeout(interval: Duration) -> Duration {
    (interval * 2 / 5).clamp(Duration::from_millis(50), Duration::from_secs(2))
}

type Client = RuntimeMetricServiceClient<Channel>;

/// One metrics port.
struct Port {
    host: String,
    port: u16,
    addr: Option<SocketAddr>,
    client: Option<Client>,
    /// What to ask for, once `ListSupportedMetrics` answered (or is unimplemented),
    /// less the names the runtime answered NOT_FOUND (or the like) for.
    wanted: Option<Vec<(String, Shape)>>,
    /// Samples since `wanted` was last worked out (it is redone every [`RELIST_EVERY`]).
    since_list: u32,
    /// Connections refused in a row (nothing listens there: no TPU program runs), and
    /// when to try again; until then the port is reported without connecting.
    refused: u32,
    retry_at: Option<std::time::Instant>,
    /// Connections set up so far (for tests).
    connects: u64,
}

/// How long a port that refused `n` connections in a row is left alone: 1 s, doubling up
/// to 30 s. A TPU program that starts is picked up within that time.
fn refused_backoff(n: u32) -> Duration {
    (Duration::from_secs(1) * 2u32.saturating_pow(n.saturating_sub(1).min(5)))
        .min(Duration::from_secs(30))
}

/// Why one port gave nothing this sample.
struct Failure {
    text: String,
    /// The connection was refused (nothing listening).
    refused: bool,
}

impl From<String> for Failure {
    fn from(text: String) -> Self {
        Self {
            text,
            refused: false,
        }
    }
}

/// Whether a status comes from a refused connection (an `io::Error` of that kind in its
/// chain of sources).
fn refused(s: &tonic::Status) -> bool {
    let mut source = std::error::Error::source(s);
    let mut depth = 0;
    while let Some(e) = source {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        depth += 1;
        if depth >= 16 {
            break;
        }
        source = e.source();
    }
    false
}

/// Samples after which a port is asked again what it supports, so metrics that a
/// runtime registers late (the megascale ones, once traffic starts) are picked up.
const RELIST_EVERY: u32 = 60;

impl Port {
    fn label(&self) -> String {
        match self.addr {
            Some(a) => a.to_string(),
            None => format!("{}:{}", leet_text::sanitize(&self.host), self.port),
        }
    }

    /// Forget the connection (after a timeout or a transport error): the next sample
    /// looks the name up, connects afresh and asks again what the runtime supports.
    fn reset(&mut self) {
        self.client = None;
        self.wanted = None;
        self.since_list = 0;
        self.addr = literal_addr(&self.host, self.port);
    }
}

/// What one port gave in one sample.
enum Outcome {
    Answered {
        responses: Vec<(Shape, proto::TpuMetric)>,
        /// First status that is not "this metric is not supported".
        error: Option<String>,
    },
    Failed(String),
}

/// Status codes that mean "not served by this libtpu", not "the service is broken".
fn unsupported(code: tonic::Code) -> bool {
    matches!(
        code,
        tonic::Code::NotFound
            | tonic::Code::Unimplemented
            | tonic::Code::InvalidArgument
            | tonic::Code::FailedPrecondition
            | tonic::Code::OutOfRange
    )
}

fn status_text(s: &tonic::Status) -> String {
    let mut msg: String = leet_text::sanitize(s.message())
        .chars()
        .take(MAX_ERROR_CHARS)
        .collect();
    if msg.is_empty() {
        msg = "no message".to_string();
    }
    let mut source = std::error::Error::source(s);
    let mut depth = 0;
    while let Some(e) = source {
        if depth >= 8 {
            break;
        }
        let t: String = leet_text::sanitize(&e.to_string())
            .chars()
            .take(MAX_ERROR_CHARS)
            .collect();
        if !msg.contains(&t) {
            msg.push_str(": ");
            msg.push_str(&t);
        }
        source = e.source();
        depth += 1;
    }
    format!("{:?}: {msg}", s.code())
}

/// The fixed metrics plus TensorCore utilisation when the runtime lists it; only those
/// the runtime lists, when it lists any.
fn wanted_from(list: Option<&[String]>) -> Vec<(String, Shape)> {
    let mut out: Vec<(String, Shape)> = map::SPECS
        .iter()
        .filter(|s| list.is_none_or(|l| l.iter().any(|n| n == s.name)))
        .map(|s| (s.name.to_string(), s.shape))
        .collect();
    if let Some(name) = list.and_then(map::find_tensorcore_utilization) {
        out.push((name.to_string(), map::TENSORCORE_UTILIZATION));
    }
    out
}

/// The address of `host` when no name lookup is needed: an IP literal, or `localhost`
/// (taken as 127.0.0.1, where libtpu listens).
fn literal_addr(host: &str, port: u16) -> Option<SocketAddr> {
    if host.eq_ignore_ascii_case("localhost") {
        return Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    let ip = host.trim_matches(['[', ']']).parse::<IpAddr>().ok()?;
    Some(SocketAddr::new(ip, port))
}

/// Look `host` up (through tokio's blocking pool, under the sample's deadline).
async fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("cannot resolve '{}': {e}", leet_text::sanitize(host)))?
        .next()
        .ok_or_else(|| format!("'{}' has no address", leet_text::sanitize(host)))
}

fn connect(addr: SocketAddr, timeout: Duration) -> Result<Client, String> {
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| format!("bad address {addr}: {e}"))?
        // The sample's own deadline bounds each request (see `read_ports`).
        .connect_timeout(timeout);
    Ok(RuntimeMetricServiceClient::new(endpoint.connect_lazy())
        .max_decoding_message_size(MAX_RESPONSE_BYTES))
}

/// Ask one port for every wanted metric, concurrently. Returns what to ask for next
/// time (`wanted` less the unsupported names), the responses, and the first error.
async fn fetch(
    client: Client,
    wanted: Option<Vec<(String, Shape)>>,
) -> Result<
    (
        Vec<(String, Shape)>,
        Vec<(Shape, proto::TpuMetric)>,
        Option<String>,
    ),
    Failure,
> {
    let wanted = match wanted {
        Some(w) => w,
        None => {
            let mut c = client.clone();
            match c
                .list_supported_metrics(proto::ListSupportedMetricsRequest::default())
                .await
            {
                Ok(r) => {
                    let names: Vec<String> = r
                        .into_inner()
                        .supported_metric
                        .into_iter()
                        .map(|m| m.metric_name.trim().to_string())
                        .filter(|n| !n.is_empty())
                        .take(4096)
                        .collect();
                    wanted_from(Some(&names))
                }
                Err(s) if unsupported(s.code()) => wanted_from(None),
                Err(s) => {
                    return Err(Failure {
                        text: status_text(&s),
                        refused: refused(&s),
                    })
                }
            }
        }
    };
    let mut set = JoinSet::new();
    for (name, shape) in wanted.iter().cloned() {
        let mut c = client.clone();
        set.spawn(async move {
            let r = c
                .get_runtime_metric(proto::MetricRequest {
                    metric_name: name.clone(),
                    skip_node_aggregation: false,
                })
                .await;
            (name, shape, r)
        });
    }
    let mut responses = Vec::with_capacity(wanted.len());
    let mut unserved = Vec::new();
    let mut error = None;
    let mut transport_error = None;
    let mut all_refused = true;
    while let Some(joined) = set.join_next().await {
        let Ok((name, shape, r)) = joined else {
            continue;
        };
        match r {
            Ok(resp) => {
                if let Some(m) = resp.into_inner().metric {
                    responses.push((shape, m));
                }
            }
            Err(s) if unsupported(s.code()) => unserved.push(name),
            Err(s) => {
                let text = status_text(&s);
                all_refused &= refused(&s);
                if matches!(s.code(), tonic::Code::Unavailable | tonic::Code::Unknown) {
                    transport_error.get_or_insert(text);
                } else {
                    error.get_or_insert(text);
                }
            }
        }
    }
    let error = transport_error.or(error);
    let mut wanted = wanted;
    wanted.retain(|(n, _)| !unserved.contains(n));
    if responses.is_empty() {
        if let Some(text) = error {
            return Err(Failure {
                text,
                refused: all_refused,
            });
        }
        return Ok((wanted, responses, None));
    }
    // Keep the order of the wanted list, so ports merge the same way every time.
    responses.sort_by_key(|(shape, _)| wanted.iter().position(|(_, s)| s == shape));
    Ok((wanted, responses, error))
}

/// libtpu runtime metrics of the TPUs found on the PCI bus.
pub(crate) struct TpuCollector {
    chips: Vec<Chip>,
    fanout: Fanout,
    runtime: tokio::runtime::Runtime,
    ports: Vec<Port>,
    timeout: Duration,
}

impl TpuCollector {
    /// Scan the PCI bus (`LEET_SYSFS_ROOT`) and read `LEET_TPU_METRICS_HOST` and
    /// `TPU_RUNTIME_METRICS_PORTS`. Connects to nothing yet.
    pub(crate) fn detect(interval: Duration) -> Result<Self, String> {
        let chips = scan_pci(&super::sysfs_root())?;
        let ports = parse_ports(std::env::var("TPU_RUNTIME_METRICS_PORTS").ok().as_deref())?;
        let host = std::env::var("LEET_TPU_METRICS_HOST")
            .ok()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        Self::new(chips, &host, &ports, sample_timeout(interval))
    }

    /// A collector for `chips`, reading `host` on `ports`.
    pub(crate) fn new(
        chips: Vec<Chip>,
        host: &str,
        ports: &[u16],
        timeout: Duration,
    ) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| format!("cannot start the gRPC client runtime: {e}"))?;
        let fanout = Fanout {
            duty_cycle: most_common(&chips).map_or(1, |g| g.duty_cycle_fanout),
        };
        Ok(Self {
            chips,
            fanout,
            runtime,
            ports: ports
                .iter()
                .map(|&port| Port {
                    host: host.to_string(),
                    port,
                    addr: literal_addr(host, port),
                    client: None,
                    wanted: None,
                    since_list: 0,
                    refused: 0,
                    retry_at: None,
                    connects: 0,
                })
                .collect(),
            timeout,
        })
    }

    /// Read every port once, within the deadline.
    fn read_ports(&mut self) -> Vec<Outcome> {
        let timeout = self.timeout;
        let now = std::time::Instant::now();
        let resting = |p: &Port| p.retry_at.is_some_and(|t| now < t);
        let jobs: Vec<_> = self
            .ports
            .iter_mut()
            .enumerate()
            .filter(|(_, p)| !resting(p))
            .map(|(i, p)| {
                if p.client.is_none() {
                    p.connects += 1;
                }
                (
                    i,
                    p.host.clone(),
                    p.port,
                    p.addr,
                    p.client.clone(),
                    p.wanted.clone(),
                )
            })
            .collect();
        let mut results = self.runtime.block_on(async move {
            let deadline = tokio::time::Instant::now() + timeout;
            let mut set = JoinSet::new();
            for (i, host, port, addr, client, wanted) in jobs {
                set.spawn(async move {
                    let work = async {
                        let addr = match addr {
                            Some(a) => a,
                            None => resolve(&host, port).await?,
                        };
                        let client = match client {
                            Some(c) => c,
                            None => connect(addr, timeout)?,
                        };
                        let got = fetch(client.clone(), wanted).await?;
                        Ok::<_, Failure>((addr, client, got))
                    };
                    let r = match tokio::time::timeout_at(deadline, work).await {
                        Ok(r) => r,
                        Err(_) => Err(Failure::from(format!(
                            "no answer within {} ms",
                            timeout.as_millis()
                        ))),
                    };
                    (i, r)
                });
            }
            let mut out = BTreeMap::new();
            while let Some(joined) = set.join_next().await {
                if let Ok((i, r)) = joined {
                    out.insert(i, r);
                }
            }
            out
        });
        let mut outcomes = Vec::with_capacity(self.ports.len());
        for (i, port) in self.ports.iter_mut().enumerate() {
            if resting(port) {
                let left = port.retry_at.map_or(0, |t| {
                    t.saturating_duration_since(now).as_secs_f64().ceil() as u64
                });
                outcomes.push(Outcome::Failed(format!(
                    "nothing listening (connection refused {} times in a row); next try in {left} s",
                    port.refused
                )));
                continue;
            }
            match results.remove(&i) {
                Some(Ok((addr, client, (wanted, responses, error)))) => {
                    port.refused = 0;
                    port.retry_at = None;
                    port.addr = Some(addr);
                    port.client = Some(client);
                    // An empty list may be a runtime still starting: ask again next time.
                    port.since_list += 1;
                    port.wanted =
                        (!wanted.is_empty() && port.since_list < RELIST_EVERY).then_some(wanted);
                    if port.wanted.is_none() {
                        port.since_list = 0;
                    }
                    outcomes.push(Outcome::Answered { responses, error });
                }
                Some(Err(e)) => {
                    port.reset();
                    if e.refused {
                        port.refused += 1;
                        let wait = refused_backoff(port.refused);
                        port.retry_at = Some(std::time::Instant::now() + wait);
                        outcomes.push(Outcome::Failed(format!(
                            "{}; next try in {} s",
                            e.text,
                            wait.as_secs()
                        )));
                    } else {
                        port.refused = 0;
                        outcomes.push(Outcome::Failed(e.text));
                    }
                }
                None => {
                    port.reset();
                    outcomes.push(Outcome::Failed("request task failed".to_string()));
                }
            }
        }
        outcomes
    }
}

impl Collector for TpuCollector {
    fn name(&self) -> &'static str {
        "tpu"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        let outcomes = self.read_ports();
        let mut merged = Merged::default();
        let mut errors = Vec::new();
        let mut answered = Vec::new();
        for (port, outcome) in self.ports.iter().zip(outcomes) {
            match outcome {
                Outcome::Answered { responses, error } => {
                    for (shape, metric) in &responses {
                        merged.add(*shape, metric, self.fanout);
                    }
                    if let Some(e) = error {
                        errors.push(format!("{}: {e}", port.label()));
                    }
                    answered.push(port.label());
                }
                Outcome::Failed(e) => errors.push(format!("{}: {e}", port.label())),
            }
        }
        if merged.is_empty() && errors.is_empty() {
            errors.push(format!(
                "{} answered but served no TPU metric",
                answered.join(", ")
            ));
        }
        merged.finish(out);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(SamplerError::Http {
                url: "tpu runtime metrics".to_string(),
                detail: errors.join("; "),
            })
        }
    }

    fn gpus(&self) -> Vec<GpuInfo> {
        self.chips.iter().map(Chip::info).collect()
    }
}

#[cfg(test)]
mod tests;
