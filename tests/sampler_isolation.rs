use leet::app::{App, Options};
use leet::msg::{Msg, Sample};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use std::time::Instant;

#[test]
fn profile_app_100k() {
    let mut a = App::live(Options::default(), 600.0);
    a.update(Msg::Resize(200, 60));
    let mut t = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let n = 20_000;
    for i in 0..3 {
        let values: Vec<(String, f64)> = (0..n)
            .map(|k| (format!("openmetrics.big.m{}.{}", k % 100, k / 100), k as f64))
            .collect();
        let s = Instant::now();
        a.update(Msg::Sample(Sample { timestamp: 1000.0 + i as f64, values }));
        let u = s.elapsed();
        let s = Instant::now();
        t.draw(|f| leet::view::render(f, &a)).unwrap();
        eprintln!("update {u:?} draw {:?}", s.elapsed());
    }
}
