//! The ticker's and a sample's timing contracts, on a manual clock.
use super::super::clock::ManualClock;
use super::*;

#[test]
fn ticker_does_not_drift() {
    let clock = ManualClock::new();
    let mut t = Ticker::with_clock(Duration::from_millis(20), clock.clone());
    let mut ticks = Vec::new();
    for _ in 0..10 {
        t.wait();
        ticks.push(clock.elapsed());
        clock.advance(Duration::from_millis(8)); // simulated sampling work
    }
    // Ticks due at 0, 20, ..., 180 ms whatever the work took; with drift the
    // k-th would come at k × 28 ms.
    let due: Vec<Duration> = (0..10).map(|k| Duration::from_millis(20 * k)).collect();
    assert_eq!(ticks, due);
    assert_eq!(clock.elapsed(), Duration::from_millis(188));
}

#[test]
fn a_ticker_that_fell_behind_skips_the_missed_deadlines() {
    let clock = ManualClock::new();
    let mut t = Ticker::with_clock(Duration::from_millis(100), clock.clone());
    t.wait(); // due at 0
    clock.advance(Duration::from_millis(350)); // a sample that took 3.5 intervals
    t.wait(); // 100 was due: at once, and 200, 300 are skipped
    assert_eq!(clock.elapsed(), Duration::from_millis(350));
    t.wait(); // the next is 400, not 200
    assert_eq!(clock.elapsed(), Duration::from_millis(400));
    t.wait();
    assert_eq!(clock.elapsed(), Duration::from_millis(500));
}

/// Never answers (its worker blocks until the test ends).
struct Hung(std::sync::mpsc::Receiver<()>);

impl Collector for Hung {
    fn name(&self) -> &'static str {
        "hung"
    }
    fn sample(&mut self, _out: &mut Vec<(String, f64)>) -> Result<(), super::super::SamplerError> {
        let _ = self.0.recv();
        Ok(())
    }
}

#[test]
fn a_sample_waits_exactly_its_deadline_for_a_hung_source() {
    let (_keep, never) = std::sync::mpsc::channel();
    let clock = ManualClock::new();
    let mut s = Sampler::with_collectors_on(vec![Box::new(Hung(never))], clock.clone());
    s.set_deadline(Duration::from_millis(300));
    let first = s.sample();
    assert_eq!(clock.elapsed(), Duration::from_millis(300));
    assert_eq!(first.errors.len(), 1, "{first:?}");
    assert!(
        first.errors[0]
            .1
            .starts_with("late: no reading within 300ms"),
        "{first:?}"
    );
    // The next tick does not queue a request behind the hung one, nor wait for it.
    clock.advance(Duration::from_millis(700));
    let second = s.sample();
    assert_eq!(clock.elapsed(), Duration::from_secs(1));
    assert_eq!(
        second.errors[0].1,
        "busy: the reading asked for 1.0 s ago has not finished; skipped"
    );
}

/// Gives a value at its first and third readings, nothing at the second.
struct Fitful(u32);

impl Collector for Fitful {
    fn name(&self) -> &'static str {
        "fitful"
    }
    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), super::super::SamplerError> {
        self.0 += 1;
        if self.0 != 2 {
            out.push(("fitful".into(), f64::from(self.0)));
        }
        Ok(())
    }
}

#[test]
fn the_families_a_sample_has_no_value_of_are_named() {
    // The system's clock, a deadline no answer misses: each sample has the
    // collector's reading (a manual clock's deadline passes at once).
    let mut s: Sampler = Sampler::with_collectors(vec![Box::new(Fitful(0))]);
    s.set_deadline(Duration::from_secs(60));
    let mut quiet = Vec::new();
    for _ in 0..3 {
        let sample = s.sample();
        assert!(sample.errors.is_empty(), "{sample:?}");
        quiet.push(s.without_values().join(","));
    }
    assert_eq!(quiet, ["", "fitful", ""]);
}

/// Writes `gpu.0.gpu` (and a key of its own) with its value, except at the
/// readings listed in `quiet`.
struct Gpu {
    name: &'static str,
    value: f64,
    quiet: Vec<u32>,
    n: u32,
}

impl Collector for Gpu {
    fn name(&self) -> &'static str {
        self.name
    }
    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), super::super::SamplerError> {
        self.n += 1;
        if !self.quiet.contains(&self.n) {
            out.push(("gpu.0.gpu".into(), self.value));
            out.push((format!("{}.only", self.name), self.value));
        }
        Ok(())
    }
}

#[test]
fn a_key_two_families_write_is_the_first_listed_one_s_alone() {
    // NVML first, a dcgm-exporter page on the same GPU second: the utilisation
    // alternated between their readings. NVML gives none at its first reading (a
    // late start): the page's value is taken then, NVML's from then on.
    let nvml = Gpu {
        name: "nvidia",
        value: 87.0,
        quiet: vec![1],
        n: 0,
    };
    let page = Gpu {
        name: "dcgm-exporter",
        value: 0.0,
        quiet: Vec::new(),
        n: 0,
    };
    let mut s: Sampler = Sampler::with_collectors(vec![Box::new(nvml), Box::new(page)]);
    s.set_deadline(Duration::from_secs(60));
    let gpu = |sample: &crate::Sample| -> Vec<f64> {
        sample
            .values
            .iter()
            .filter(|(k, _)| k == "gpu.0.gpu")
            .map(|(_, v)| *v)
            .collect()
    };
    let first = s.sample();
    assert_eq!(gpu(&first), [0.0]);
    for _ in 0..3 {
        let sample = s.sample();
        assert_eq!(gpu(&sample), [87.0], "{sample:?}");
        // Each family's own keys are kept.
        assert!(sample.values.iter().any(|(k, _)| k == "dcgm-exporter.only"));
        assert!(sample.values.iter().any(|(k, _)| k == "nvidia.only"));
    }
}
