//! `leet serve`: the host sampler of `leet sample` as a Prometheus exporter.
//!
//! The sampler runs on its own thread at `--interval` (the same [`Sampler`] and
//! [`Ticker`] as `leet sample`) and renders each sample once into a page in both text
//! formats ([`expose`]); HTTP requests ([`http`]) only hand out the latest page, so a
//! scrape never reads the hardware and a slow scraper never delays a sample. Series
//! names and labels come from the one table in [`names`].

pub mod expose;
pub mod http;
/// The mapping table lives below `serve`, where the Prometheus client reads it too.
pub use crate::source::prometheus::names;

use std::io::Write as _;
use std::net::{TcpListener, ToSocketAddrs};
use std::sync::Arc;

use anyhow::Context as _;

use leet_sampler::{child, Sampler, SamplerOptions, Ticker};

/// Port `leet serve` listens on unless told otherwise (not among the allocations of
/// Prometheus's default port allocations wiki page).
pub const DEFAULT_PORT: u16 = 9837;
/// Address `leet serve` listens on unless told otherwise: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9837";

/// What `leet serve` runs with.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// `HOST:PORT` to listen on.
    pub listen: String,
    pub sampler: SamplerOptions,
}

/// Bind the first address `listen` resolves to.
fn bind(listen: &str) -> anyhow::Result<TcpListener> {
    let addrs: Vec<_> = listen
        .to_socket_addrs()
        .with_context(|| format!("--listen {listen}: not a HOST:PORT address"))?
        .collect();
    let mut last = None;
    for addr in addrs {
        match TcpListener::bind(addr) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some((addr, e)),
        }
    }
    match last {
        Some((addr, e)) => Err(e).with_context(|| format!("cannot listen on {addr}")),
        None => anyhow::bail!("--listen {listen}: resolves to no address"),
    }
}

/// The sampler thread: detect the families, then one sample per tick, each rendered
/// into `latest`.
fn spawn_sampling(opts: SamplerOptions, latest: Arc<http::Latest>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("leet-sampler".into())
        .spawn(move || {
            let interval = opts.interval;
            let mut sampler = Sampler::new(opts);
            {
                let mut stderr = std::io::stderr().lock();
                for (family, why) in sampler.unavailable() {
                    // Tool output and endpoint text are untrusted: no escape sequence
                    // reaches the terminal.
                    let _ = writeln!(
                        stderr,
                        "{}: not available: {}",
                        leet_text::sanitize(family),
                        leet_text::sanitize(why)
                    );
                }
            }
            let mut renderer = expose::Renderer::new();
            let mut ticker = Ticker::new(interval);
            let mut samples = 0u64;
            loop {
                ticker.wait();
                let sample = sampler.sample();
                samples += 1;
                let families = sampler.families();
                let without_values = sampler.without_values();
                let ctx = expose::Context {
                    families: &families,
                    unavailable: sampler.unavailable(),
                    samples,
                    without_values: &without_values,
                };
                latest.set(renderer.render(&sample, &ctx));
            }
        })
        .map(drop)
}

/// `leet serve`: listen, sample, serve until a signal ends the process.
///
/// # Errors
/// The address cannot be bound, or a thread or the runtime cannot start.
pub fn run(opts: ServeOptions) -> anyhow::Result<()> {
    let listener = bind(&opts.listen)?;
    let addr = listener.local_addr()?;
    if let Err(e) = leet_sampler::exit_on_signals() {
        let _ = writeln!(std::io::stderr(), "leet: cannot handle signals: {e}");
    }
    let _ = writeln!(
        std::io::stderr(),
        "leet serve: listening on http://{addr}/metrics"
    );
    let latest = Arc::new(http::Latest::default());
    spawn_sampling(opts.sampler, latest.clone()).context("cannot start the sampler thread")?;
    let result = http::serve(listener, latest);
    child::kill_all();
    result
}
