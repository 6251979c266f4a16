//! The refresh thread: one thread, one request in flight. The first refresh reads
//! the whole window; each later one only what is newer than the last answer it got,
//! from one step before it (the model drops the repeated points). A failed refresh
//! is reported and the next one asks again from the same point, so a slow or down
//! server leaves a gap in nothing but time.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::api::{Client, PromError};
use super::fetch::{fetch, Plan};
use super::matchers::Matchers;
use super::rules::Part;

/// The scrape interval assumed where the server does not say one (Prometheus's own
/// default scrape interval is 1 m; 15 s is what clusters run and W&B samples at).
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(15);

/// Points a series of the cluster screen holds over its window at most: the
/// step is coarsened to keep to it. A chart or the heatmap is a few hundred
/// columns wide at most, so more points draw nothing more, yet each costs memory
/// in every series of every host and time in every frame (100 hosts of 8 GPUs
/// hold about 6,700 series). 720 is an hour at 5 s. Well under the 11,000
/// Prometheus allows one range query per series.
pub const MAX_POINTS: usize = 720;

/// Points in one answer past which the next refresh first hands the memory its
/// parsing left free back to the system (see [`crate::release_free_memory`]):
/// the first reads of the window, not the few points of a later refresh.
const BIG_ANSWER: usize = 1 << 20;

/// What the cluster screen reads with.
#[derive(Debug, Clone)]
pub struct DriverOptions {
    pub matchers: Matchers,
    /// How far back the screen shows.
    pub window: Duration,
    /// How often to refresh (`--interval`); None: at the scrape interval.
    pub interval: Option<Duration>,
}

pub use crate::msg::cluster::ClusterUpdate;

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The shortest scrape interval of the targets read, else the server's global
/// one, else the default; and whether the targets gave it. A server that does not
/// answer (down, silent, too slow) is an error at once: asking its configuration
/// too would double the wait before the screen says so.
pub fn scrape_interval(
    client: &Client,
    matchers: &Matchers,
) -> Result<(Duration, bool), PromError> {
    match client.targets_interval(matchers) {
        Ok(Some(d)) => return Ok((d, true)),
        Err(e @ PromError::Http(_)) => return Err(e),
        _ => {}
    }
    let d = (client.scrape_interval(matchers).ok().flatten())
        .filter(|d| !d.is_zero())
        .unwrap_or(DEFAULT_INTERVAL);
    Ok((d, false))
}

/// While the targets have not said their interval (a server just started lists
/// them a few seconds later), the refreshes are at most this far apart and each
/// asks them again, for at most [`UNSETTLED_TRIES`] refreshes: the interval
/// assumed meanwhile (a global 1 m) must not hold the screen empty for a minute.
const UNSETTLED_MAX: Duration = Duration::from_secs(5);
const UNSETTLED_TRIES: u32 = 24;

/// The range the next refresh reads, given the end of the last answer: its start
/// and end, aligned to `step` so that every refresh evaluates at the same instants.
pub fn next_range(now: f64, last_end: Option<f64>, window: Duration, step: Duration) -> (f64, f64) {
    let s = step.as_secs_f64().max(0.001);
    let end = (now / s).floor() * s;
    let start = match last_end {
        Some(last) => (last - s).max(end - window.as_secs_f64()),
        None => end - (window.as_secs_f64() / s).floor() * s,
    };
    (start.min(end), end)
}

/// The step for a window: the interval, or coarser (whole seconds) where the
/// window would need more than [`MAX_POINTS`] points.
pub fn step_for(interval: Duration, window: Duration) -> Duration {
    let least = window.as_secs_f64() / MAX_POINTS as f64;
    if interval.as_secs_f64() >= least {
        interval
    } else {
        Duration::from_secs_f64(least.ceil())
    }
}

/// Refresh until `send` says the receiver is gone.
pub fn run(client: &Client, opts: &DriverOptions, mut send: impl FnMut(ClusterUpdate) -> bool) {
    let (scrape, mut settled, first_error) = match scrape_interval(client, &opts.matchers) {
        Ok((d, settled)) => (d, settled, None),
        Err(e) => (DEFAULT_INTERVAL, false, Some(e)),
    };
    // The step of the series and the refresh interval for a scrape interval.
    let timing = |scrape: Duration| {
        let interval = opts.interval.filter(|d| !d.is_zero()).unwrap_or(scrape);
        (step_for(scrape, opts.window), interval)
    };
    let started = |(step, interval)| ClusterUpdate::Started {
        server: client.server().to_string(),
        step,
        interval,
        window: opts.window,
    };
    let (mut step, mut interval) = timing(scrape);
    if !send(started((step, interval))) {
        return;
    }
    // Whether the last request got no answer: the targets are not asked again
    // then (a silent server would cost a timeout more per refresh).
    let mut last_failed = first_error.is_some();
    if let Some(error) = first_error {
        if !send(ClusterUpdate::Failed {
            error,
            at: now_secs(),
        }) {
            return;
        }
    }
    let mut plan = Plan {
        matchers: opts.matchers.clone(),
        scrape,
    };
    let mut tries = 0u32;
    // Where the screen's rules and the rest have been read to. Until both have
    // read the window they are asked apart, the screen's first (see [`Part`]).
    let (mut screen_end, mut rest_end): (Option<f64>, Option<f64>) = (None, None);
    // An answer of more than BIG_ANSWER points came: its parsing's memory is free
    // once the loop has folded it, by the next refresh.
    let mut release = false;
    loop {
        let began = std::time::Instant::now();
        if std::mem::take(&mut release) {
            crate::release_free_memory();
        }
        if !settled && !last_failed {
            tries += 1;
            settled = tries > UNSETTLED_TRIES;
            let asked = client.targets_interval(&opts.matchers).ok().flatten();
            if let Some(d) = asked {
                settled = true;
                if d != plan.scrape {
                    (step, interval) = timing(d);
                    plan.scrape = d;
                    // The window read again at the new step (the model starts over
                    // on a new step: its rings are sized by it).
                    (screen_end, rest_end) = (None, None);
                    if !send(started((step, interval))) {
                        return;
                    }
                }
            }
        }
        let now = now_secs();
        let parts: &[Part] = if screen_end.is_some() && screen_end == rest_end {
            &[Part::All]
        } else {
            &[Part::Screen, Part::Rest]
        };
        for &part in parts {
            let read_to = if part == Part::Rest {
                rest_end
            } else {
                screen_end
            };
            let range = next_range(now, read_to, opts.window, step);
            let update = match fetch(client, &plan, part, range, step) {
                Ok(batch) => {
                    release |=
                        batch.series.iter().map(|s| s.points.len()).sum::<usize>() > BIG_ANSWER;
                    if part != Part::Rest {
                        screen_end = Some(range.1);
                    }
                    if part != Part::Screen {
                        rest_end = Some(range.1);
                    }
                    ClusterUpdate::Fetched(Box::new(batch))
                }
                Err(error) => ClusterUpdate::Failed {
                    error,
                    at: now_secs(),
                },
            };
            let failed = matches!(update, ClusterUpdate::Failed { .. });
            last_failed = failed;
            if !send(update) {
                return;
            }
            if failed {
                break;
            }
        }
        let wait = if settled {
            interval
        } else {
            interval.min(UNSETTLED_MAX)
        };
        std::thread::sleep(wait.saturating_sub(began.elapsed()));
    }
}

/// [`run`] on its own thread, named `leet-prometheus`.
pub fn spawn(
    client: Client,
    opts: DriverOptions,
    send: impl FnMut(ClusterUpdate) -> bool + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("leet-prometheus".into())
        .spawn(move || run(&client, &opts, send))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::http::{HttpError, HttpOptions};
    use crate::source::prometheus::PromError;

    /// The driver of the server at `url` reading a 60 s window every `interval`
    /// (None: the server's), its updates and its thread.
    fn driven(
        url: &str,
        http: HttpOptions,
        interval: Option<Duration>,
    ) -> (
        std::sync::mpsc::Receiver<ClusterUpdate>,
        std::thread::JoinHandle<()>,
    ) {
        let client = Client::new(url, http).expect("client");
        let (tx, rx) = std::sync::mpsc::channel();
        let opts = DriverOptions {
            matchers: Matchers::default(),
            window: Duration::from_secs(60),
            interval,
        };
        let thread = spawn(client, opts, move |u| tx.send(u).is_ok()).expect("thread");
        (rx, thread)
    }

    #[test]
    fn the_first_range_is_the_window_and_later_ones_overlap_one_step() {
        let (w, s) = (Duration::from_secs(60), Duration::from_secs(15));
        assert_eq!(next_range(1000.0, None, w, s), (930.0, 990.0));
        assert_eq!(next_range(1007.0, Some(990.0), w, s), (975.0, 1005.0));
        // Long after the last answer: never more than the window.
        assert_eq!(next_range(5000.0, Some(990.0), w, s), (4935.0, 4995.0));
        assert_eq!(step_for(s, Duration::from_secs(3600)), s);
        // Whatever the scrape interval, a window holds at most MAX_POINTS steps.
        for (scrape, window) in [(1, 86_400 * 7), (2, 3600), (1, 300), (15, 86_400)] {
            let step = step_for(Duration::from_secs(scrape), Duration::from_secs(window));
            assert!(
                window as f64 / step.as_secs_f64() <= MAX_POINTS as f64,
                "{scrape} s over {window} s: step {step:?}"
            );
        }
        assert_eq!(
            step_for(Duration::from_secs(2), Duration::from_secs(3600)),
            Duration::from_secs(5)
        );
        assert_eq!(
            step_for(Duration::from_secs(2), Duration::from_secs(300)),
            Duration::from_secs(2)
        );
    }

    #[test]
    fn the_first_refresh_sends_the_screen_s_keys_then_the_rest_and_later_ones_all() {
        use crate::source::prometheus::api::tests::{fake_by, Reply};
        const UP: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"__name__":"up","instance":"n1:9100"},"values":[[10,"1"]]}]}}"#;
        const EMPTY: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
        let (url, heads) = fake_by(|head| {
            let line = head.lines().next().unwrap_or_default();
            Reply::Answer(
                200,
                if line.contains("query=up") { UP } else { EMPTY }.into(),
            )
        });
        let (rx, thread) = driven(
            &url,
            HttpOptions::default(),
            Some(Duration::from_millis(10)),
        );
        assert!(matches!(rx.recv(), Ok(ClusterUpdate::Started { .. })));
        let mut ranges = Vec::new();
        let mut has_up = Vec::new();
        for _ in 0..3 {
            let Ok(ClusterUpdate::Fetched(b)) = rx.recv() else {
                panic!("a refresh of a server that answers");
            };
            ranges.push((b.start, b.end));
            has_up.push(!b.up.is_empty());
        }
        drop(rx);
        thread.join().expect("thread ends");
        // The screen's part (with `up`), the rest over the same window (without),
        // then everything at once from where both stopped.
        assert_eq!(has_up, [true, false, true]);
        assert_eq!(ranges[0], ranges[1]);
        assert!(ranges[2].0 >= ranges[0].1 - DEFAULT_INTERVAL.as_secs_f64());
        let asked: Vec<String> = heads
            .try_iter()
            .filter(|h| h.contains("query_range"))
            .collect();
        let (screen, rest) = (
            crate::source::prometheus::rules::part(Part::Screen).len(),
            crate::source::prometheus::rules::part(Part::Rest).len(),
        );
        let all = crate::source::prometheus::rules::RULES.len();
        assert!(
            asked.len() >= 1 + screen + rest + 1 + all,
            "{}",
            asked.len()
        );
        // The DCGM fields the screen draws are asked in the first part; the others
        // only in the second.
        let first: String = asked[..=screen].concat();
        assert!(
            first.contains("GPU_UTIL") && !first.contains("%21~"),
            "{first}"
        );
    }

    #[test]
    fn targets_listed_late_set_the_interval_when_they_come() {
        use crate::source::prometheus::api::tests::{fake_by, Reply};
        use std::sync::atomic::{AtomicUsize, Ordering};
        // A server just started: a global 1 m, its targets (scraped every second)
        // listed from the third time asked.
        const CONFIG: &str =
            r#"{"status":"success","data":{"yaml":"global:\n  scrape_interval: 1m\n"}}"#;
        const NONE: &str = r#"{"status":"success","data":{"activeTargets":[]}}"#;
        const LISTED: &str = r#"{"status":"success","data":{"activeTargets":[{"scrapeInterval":"1s","labels":{"job":"leet"}}]}}"#;
        const EMPTY: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
        let asked = AtomicUsize::new(0);
        let (url, _heads) = fake_by(move |head| {
            let line = head.lines().next().unwrap_or_default();
            let body = if line.contains("/targets") {
                if asked.fetch_add(1, Ordering::Relaxed) < 2 {
                    NONE
                } else {
                    LISTED
                }
            } else if line.contains("/status/config") {
                CONFIG
            } else {
                EMPTY
            };
            Reply::Answer(200, body.into())
        });
        let (rx, thread) = driven(&url, HttpOptions::default(), None);
        let mut intervals = Vec::new();
        while intervals.len() < 2 {
            if let Ok(ClusterUpdate::Started { interval, step, .. }) = rx.recv() {
                assert_eq!(step, interval);
                intervals.push(interval);
            }
        }
        assert_eq!(intervals, [Duration::from_secs(60), Duration::from_secs(1)]);
        drop(rx);
        thread.join().expect("thread ends");
    }

    /// A server that reads each request and never answers, each connection on its
    /// own thread; the request lines come through the receiver.
    fn silent_server() -> (String, std::sync::mpsc::Receiver<String>) {
        use std::io::Read as _;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for mut s in listener.incoming().flatten() {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let n = s.read(&mut buf).unwrap_or(0);
                    let head = String::from_utf8_lossy(&buf[..n]);
                    let _ = tx.send(head.lines().next().unwrap_or_default().to_owned());
                    // Held open, silent, until the client gives up.
                    let _ = s.read(&mut buf);
                });
            }
        });
        (format!("http://{addr}"), rx)
    }

    #[test]
    fn a_silent_server_is_reported_after_one_timeout_not_several() {
        let (url, heads) = silent_server();
        let quick = HttpOptions {
            total: Duration::from_millis(300),
            ..HttpOptions::default()
        };
        let (rx, thread) = driven(&url, quick, Some(Duration::from_millis(10)));
        assert!(matches!(rx.recv(), Ok(ClusterUpdate::Started { .. })));
        let Ok(ClusterUpdate::Failed { error, .. }) = rx.recv() else {
            panic!("a failure first");
        };
        assert!(
            error.to_string().contains("no complete answer within 1 s"),
            "{error}"
        );
        // The targets, then the refreshes' queries: neither the configuration
        // (another timeout) nor the targets again while the server fails.
        let first: Vec<String> = (0..3).filter_map(|_| heads.recv().ok()).collect();
        assert!(first[0].contains("/api/v1/targets"), "{first:?}");
        assert!(
            first[1..].iter().all(|h| h.contains("/api/v1/query_range")),
            "{first:?}"
        );
        drop(rx);
        thread.join().expect("thread ends");
    }

    #[test]
    fn a_server_that_is_down_is_reported_and_asked_again() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("port")
            .port();
        let server = format!("http://127.0.0.1:{port}");
        let (rx, thread) = driven(
            &server,
            HttpOptions::default(),
            Some(Duration::from_millis(10)),
        );
        assert_eq!(
            rx.recv().expect("started"),
            ClusterUpdate::Started {
                server: server.clone(),
                step: DEFAULT_INTERVAL,
                interval: Duration::from_millis(10),
                window: Duration::from_secs(60),
            }
        );
        for _ in 0..2 {
            let ClusterUpdate::Failed { error, .. } = rx.recv().expect("failed") else {
                panic!("a refresh of a server that is down");
            };
            let refused = PromError::Http(HttpError::Refused {
                server: server.clone(),
            });
            assert_eq!(error, refused);
        }
        // The receiver gone, the thread ends at its next report.
        drop(rx);
        thread.join().expect("thread ends");
    }
}
