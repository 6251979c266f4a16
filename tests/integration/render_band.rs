//! The min–max band (issue 14): a chart with more points in view than dot
//! columns draws each series as its columns' mean line over a faint (DIM) band
//! from each column's min to its max; `b` hides the bands (and the line zigzags
//! through the extremes again); a chart with fewer points than columns has none.
//! The runs are made by hand: one history record per step.

use crate::common;

use common::screen::{screen, NOW, SIZES};
use crossterm::event::KeyCode;
use leet::decode::leveldb::{scan, Frame, Writer};
use leet::decode::pb;
use leet::msg::{Msg, RunBatch};
use leet::ui::{App, Options};
use prost::Message as _;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;
use ratatui::Terminal;

/// Uniform in [-1, 1), a pure function of `i` (splitmix64).
fn noise(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A finished run of `steps` history rows; `metrics(step)` gives each row's
/// (key, value) pairs.
fn run_app(
    steps: u64,
    metrics: &dyn Fn(u64) -> Vec<(&'static str, f64)>,
    color: bool,
    w: u16,
    h: u16,
) -> App {
    use pb::record::RecordType as T;
    let mut wr = Writer::new();
    let mut num = 0;
    let mut emit = |r: T| {
        num += 1;
        let rec = pb::Record {
            num,
            record_type: Some(r),
            ..Default::default()
        };
        wr.append(&rec.encode_to_vec());
    };
    let start = NOW - 7200.0;
    emit(T::Run(pb::RunRecord {
        run_id: "band0001".into(),
        project: "leet-band".into(),
        display_name: "noisy-band".into(),
        start_time: Some(prost_types::Timestamp {
            seconds: start as i64,
            nanos: 0,
        }),
        ..Default::default()
    }));
    let item = |k: &str, v: String| pb::HistoryItem {
        nested_key: vec![k.to_owned()],
        value_json: v,
        ..Default::default()
    };
    for step in 0..steps {
        let t = start + step as f64 * 0.05;
        let mut items = vec![
            item("_step", step.to_string()),
            item("_timestamp", format!("{t}")),
        ];
        for (k, v) in metrics(step) {
            items.push(item(k, format!("{v}")));
        }
        emit(T::History(pb::HistoryRecord {
            item: items,
            ..Default::default()
        }));
    }
    emit(T::Exit(pb::RunExitRecord {
        exit_code: 0,
        runtime: 360,
        ..Default::default()
    }));
    let mut batch = RunBatch::default();
    scan(wr.bytes(), 0, |f| {
        if let Frame::Record { offset, payload } = f {
            batch.records.push((offset, payload.into_owned()));
        }
    })
    .unwrap();
    let mut app = App::new(Options {
        color,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: "noisy.wandb".into(),
        len: wr.bytes().len() as u64,
        modified: Some(NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(NOW));
    app
}

/// A loss that falls from 2 towards 0.5 with ±0.4 of noise.
fn loss(step: u64) -> f64 {
    0.5 + 1.5 * (-(step as f64) / 1500.0).exp() + 0.4 * noise(step)
}

/// A noisy run of `steps` rows: `loss`, and `acc` rising with less noise.
fn noisy(steps: u64, color: bool, w: u16, h: u16) -> App {
    let metrics = |s: u64| {
        vec![
            ("loss", loss(s)),
            (
                "acc",
                0.9 - 0.8 * (-(s as f64) / 2000.0).exp() + 0.05 * noise(s + (1 << 40)),
            ),
        ]
    };
    run_app(steps, &metrics, color, w, h)
}

fn buffer(app: &App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| leet::ui::render::render(f, app)).unwrap();
    t.backend().buffer().clone()
}

fn braille(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| ('\u{2801}'..='\u{28ff}').contains(&c))
}

/// Cells of braille dots: (x, y, dim).
fn dots(buf: &Buffer) -> Vec<(u16, u16, bool)> {
    let a = buf.area;
    let mut out = Vec::new();
    for y in a.top()..a.bottom() {
        for x in a.left()..a.right() {
            let c = &buf[(x, y)];
            if braille(c.symbol()) {
                out.push((x, y, c.modifier.contains(Modifier::DIM)));
            }
        }
    }
    out
}

/// The columns where a band cell lies above a line cell and another below it.
fn band_around_line(d: &[(u16, u16, bool)]) -> usize {
    let mut cols: Vec<u16> = d.iter().map(|c| c.0).collect();
    cols.dedup();
    cols.sort_unstable();
    cols.dedup();
    cols.into_iter()
        .filter(|&x| {
            let col: Vec<_> = d.iter().filter(|c| c.0 == x).collect();
            col.iter().filter(|c| !c.2).any(|line| {
                col.iter().any(|c| c.2 && c.1 < line.1) && col.iter().any(|c| c.2 && c.1 > line.1)
            })
        })
        .count()
}

#[test]
fn a_noisy_chart_has_a_band_around_its_line_and_b_hides_it() {
    let (w, h) = (120, 40);
    let mut app = noisy(20_000, true, w, h);
    // The loss chart full screen: its line and band only.
    app.update(Msg::key(KeyCode::Enter));
    assert_eq!(app.focused_key(), Some("acc"));
    app.update(Msg::key(KeyCode::Right));
    assert_eq!(app.focused_key(), Some("loss"));
    let d = dots(&buffer(&app, w, h));
    let dim = d.iter().filter(|c| c.2).count();
    let line = d.len() - dim;
    assert!(
        dim > 200 && line > 50,
        "band cells {dim}, line cells {line}"
    );
    // Most columns of the plot show the band both above and below the line.
    let around = band_around_line(&d);
    assert!(
        around > 60,
        "{around} columns with the band around the line"
    );
    // b: no band; the line zigzags through each column's min and max instead.
    app.update(Msg::key(KeyCode::Char('b')));
    assert!(!app.charts.band);
    let d = dots(&buffer(&app, w, h));
    assert!(d.iter().all(|c| !c.2), "a band cell left after b");
    assert!(d.len() > 200, "{} line cells", d.len());
    // And back.
    app.update(Msg::key(KeyCode::Char('b')));
    assert!(app.charts.band);
    assert!(dots(&buffer(&app, w, h)).iter().any(|c| c.2));
}

#[test]
fn b_hides_the_band_in_the_grid_too_and_every_chart_had_one() {
    let (w, h) = (200, 60);
    let mut app = noisy(20_000, true, w, h);
    let before = dots(&buffer(&app, w, h));
    // Both charts (acc left, loss right of it) have band cells.
    let dim_x: Vec<u16> = before.iter().filter(|c| c.2).map(|c| c.0).collect();
    let grid = app.screen.areas.grid;
    let mid = grid.x + grid.width / 2;
    assert!(dim_x.iter().any(|&x| x < mid) && dim_x.iter().any(|&x| x >= mid));
    app.update(Msg::key(KeyCode::Char('b')));
    assert!(dots(&buffer(&app, w, h)).iter().all(|c| !c.2));
}

#[test]
fn a_spike_of_one_point_in_100k_stays_visible() {
    let (w, h) = (120, 40);
    let spike_at = 54_321;
    let metrics = move |s: u64| {
        let y = if s == spike_at { 1000.0 } else { noise(s) };
        vec![("spiky", y)]
    };
    let mut app = run_app(100_000, &metrics, true, w, h);
    app.update(Msg::key(KeyCode::Enter));
    let series = app.shown.run.metrics.get("spiky").unwrap();
    assert_eq!(series.count(), 100_000);
    assert!(series.stored() < 100_000, "compacted");
    for band in [true, false] {
        app.charts.band = band;
        let d = dots(&buffer(&app, w, h));
        // The spike sets the y range: the highest dots are over the spike's x (54%
        // across the dots), and only there, far above the noise.
        let (top, bottom) = (
            d.iter().map(|c| c.1).min().unwrap(),
            d.iter().map(|c| c.1).max().unwrap(),
        );
        let (left, right) = (
            d.iter().map(|c| c.0).min().unwrap(),
            d.iter().map(|c| c.0).max().unwrap(),
        );
        assert!(bottom - top >= 20, "band {band}: rows {top}..{bottom}");
        let xs: Vec<u16> = d.iter().filter(|c| c.1 == top).map(|c| c.0).collect();
        let (a, b) = (xs[0], xs[xs.len() - 1]);
        let frac = f64::from(a - left) / f64::from(right - left);
        assert!(
            b - a <= 2 && (0.5..0.6).contains(&frac),
            "band {band}: {xs:?} {frac}"
        );
        // With the band, it is the band that reaches it (the mean line stays low).
        if band {
            assert!(d.iter().filter(|c| c.1 == top).all(|c| c.2), "{d:?}");
        }
    }
}

#[test]
fn a_chart_with_fewer_points_than_columns_has_no_band() {
    for (w, h) in SIZES {
        let app = noisy(60, true, w, h);
        let d = dots(&buffer(&app, w, h));
        assert!(d.len() > 20, "{w}x{h}: lines drawn");
        assert!(d.iter().all(|c| !c.2), "{w}x{h}: a band cell");
    }
}

#[test]
fn the_band_setting_is_saved_and_printed() {
    let mut app = noisy(60, false, 80, 24);
    assert!(app.settings().band);
    assert!(app.settings_config().to_toml().contains("\nband = true\n"));
    app.update(Msg::key(KeyCode::Char('b')));
    assert!(!app.settings().band);
    let text = app.settings_config().to_toml();
    assert!(text.contains("\nband = false\n"), "{text}");
    let back = leet::ui::settings::Config::parse(std::path::Path::new("c.toml"), &text).unwrap();
    assert!(!back.viewer.band);
    let mut fresh = noisy(60, false, 80, 24);
    fresh.apply_settings(&back.viewer);
    assert!(!fresh.charts.band);
}

#[test]
fn snapshots_of_a_noisy_run_with_the_band() {
    for (w, h) in SIZES {
        let app = noisy(20_000, false, w, h);
        insta::assert_snapshot!(format!("noisy_{w}x{h}_band"), screen(&app, w, h));
    }
}

#[test]
fn snapshots_of_a_noisy_chart_full_screen_with_and_without_the_band() {
    for (w, h) in SIZES {
        let mut app = noisy(20_000, false, w, h);
        app.update(Msg::key(KeyCode::Enter));
        app.update(Msg::key(KeyCode::Right));
        insta::assert_snapshot!(format!("noisy_{w}x{h}_loss_band"), screen(&app, w, h));
        app.update(Msg::key(KeyCode::Char('b')));
        insta::assert_snapshot!(format!("noisy_{w}x{h}_loss_no_band"), screen(&app, w, h));
    }
}

#[test]
fn print_config_shows_the_band_setting() {
    let home = tempfile::tempdir().unwrap();
    let print = |args: &[&std::ffi::OsStr]| {
        let out = crate::common::isolated::leet()
            .arg("--print-config")
            .args(args)
            .env("XDG_CONFIG_HOME", home.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let defaults = print(&[]);
    assert!(defaults.contains("\n[viewer]\n") && defaults.contains("\nband = true\n"));
    assert!(!defaults.contains("band = false"), "{defaults}");
    let mine = home.path().join("mine.toml");
    std::fs::write(&mine, "[viewer]\nband = false\n").unwrap();
    let printed = print(&["--config".as_ref(), mine.as_os_str()]);
    let viewer =
        &printed[printed.find("\n[viewer]\n").unwrap()..printed.find("\n[live]\n").unwrap()];
    assert!(viewer.contains("\nband = false\n"), "{printed}");
    let live = &printed[printed.find("\n[live]\n").unwrap()..];
    assert!(live.contains("\nband = true\n"), "{printed}");
}

#[test]
fn live_system_charts_get_the_band_and_b_hides_it() {
    use leet::msg::Sample;
    let (w, h) = (120, 40);
    let mut app = App::live(
        Options {
            color: true,
            ..Options::default()
        },
        600.0,
    );
    app.update(Msg::Resize(w, h));
    // One sample a second for ten minutes: far more than the chart's columns.
    for i in 0..600u32 {
        let t = NOW - 600.0 + f64::from(i);
        app.update(Msg::Sample(Sample {
            timestamp: t,
            errors: Vec::new(),
            values: vec![("memory_percent".into(), 50.0 + 10.0 * noise(u64::from(i)))],
        }));
    }
    app.update(Msg::Tick(NOW));
    let d = dots(&buffer(&app, w, h));
    assert!(d.iter().any(|c| !c.2), "a line is drawn");
    assert!(band_around_line(&d) > 10, "the band around the line");
    app.update(Msg::key(KeyCode::Char('b')));
    let d = dots(&buffer(&app, w, h));
    assert!(
        !d.is_empty() && d.iter().all(|c| !c.2),
        "a band cell left after b"
    );
}
