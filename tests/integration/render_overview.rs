//! The run overview (issue 13): Config, Summary and Environment shown together,
//! each paged on its own under a `[a-b of n]` title; `tab` moves between them; the
//! overview filter with per-section counts; times as dates; every filter's
//! regex ↔ glob toggle in its prompt. Whole screens on the SDK fixtures, at every
//! size, driven through key messages.

use crate::common;

use common::screen::{app_from, screen, SIZES};

use crossterm::event::KeyCode;
use leet::msg::Msg;
use leet::ui::App;

fn send(app: &mut App, msgs: impl IntoIterator<Item = Msg>) {
    for m in msgs {
        app.update(m);
    }
}

fn snap(name: &str, fixture: &str, keys: &dyn Fn() -> Vec<Msg>) {
    for (w, h) in SIZES {
        let mut app = app_from(fixture, w, h);
        // At 80 columns a run's overview shows too (only the live monitor's starts
        // hidden); `[` would hide it.
        send(&mut app, keys());
        insta::assert_snapshot!(format!("{fixture}_{w}x{h}_{name}"), screen(&app, w, h));
    }
}

/// The overview pane's text (left of its separator), one entry per screen row.
fn left_pane(s: &str) -> Vec<String> {
    s.lines()
        .map(|l| l.split('│').next().unwrap_or("").trim().to_owned())
        .collect()
}

/// The section titles on screen, in order.
fn titles(s: &str) -> Vec<String> {
    left_pane(s)
        .into_iter()
        .map(|l| l.trim_start_matches("▸ ").to_owned())
        .filter(|l| {
            ["Config [", "Summary [", "Environment ["]
                .iter()
                .any(|t| l.starts_with(t))
        })
        .collect()
}

/// `many_metrics` has 211 summary rows (its histogram one of them), 2 config rows and 17 environment rows:
/// all three sections show, Config first, each paged on its own.
#[test]
fn sections_are_paged_on_their_own() {
    snap("sections", "many_metrics", &Vec::new);
    for (w, h) in SIZES {
        let app = app_from("many_metrics", w, h);
        let s = screen(&app, w, h);
        let t = titles(&s);
        assert_eq!(t.len(), 3, "{w}x{h}: {t:?}\n{s}");
        assert_eq!(t[0], "Config [2]", "{w}x{h}\n{s}");
        assert!(t[1].starts_with("Summary [1-") && t[1].ends_with(" of 211]"));
        // Paged where it does not fit, whole (its count alone) where it does.
        assert!(
            t[2] == "Environment [17]"
                || (t[2].starts_with("Environment [1-") && t[2].ends_with(" of 17]")),
            "{w}x{h}: {t:?}"
        );
    }
}

/// Focus the overview (`tab` from the grid), `tab` to the Summary, page it.
#[test]
fn tab_moves_between_sections_and_keys_page_the_active_one() {
    snap("summary_page2", "many_metrics", &|| {
        vec![
            Msg::key(KeyCode::Tab),
            Msg::key(KeyCode::Tab),
            Msg::key(KeyCode::PageDown),
        ]
    });
    let (w, h) = (120, 40);
    let mut app = app_from("many_metrics", w, h);
    send(&mut app, [Msg::key(KeyCode::Tab)]);
    let s = screen(&app, w, h);
    assert!(left_pane(&s).iter().any(|l| l == "▸ Config [2]"), "{s}");
    send(&mut app, [Msg::key(KeyCode::Tab)]);
    let s = screen(&app, w, h);
    let summary = left_pane(&s)
        .into_iter()
        .find(|l| l.starts_with("▸ Summary [1-"))
        .unwrap_or_else(|| panic!("{s}"));
    // A page is the rows the section shows: `[1-k of 211]` → `[k+1-2k of 211]`.
    let k: usize = summary["▸ Summary [1-".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    send(&mut app, [Msg::key(KeyCode::PageDown)]);
    let s = screen(&app, w, h);
    let want = format!("▸ Summary [{}-{} of 211]", k + 1, 2 * k);
    assert!(left_pane(&s).contains(&want), "{want}\n{s}");
    // The other sections did not move.
    assert!(titles(&s)[0] == "Config [2]", "{s}");
    // End: the last summary row on the section's last line; Down stays there.
    send(&mut app, [Msg::key(KeyCode::End)]);
    let end = screen(&app, w, h);
    let want = format!("▸ Summary [{}-211 of 211]", 212 - k);
    assert!(left_pane(&end).contains(&want), "{want}\n{end}");
    send(&mut app, [Msg::key(KeyCode::Down)]);
    assert_eq!(screen(&app, w, h), end);
    send(&mut app, [Msg::key(KeyCode::Up)]);
    let want = format!("▸ Summary [{}-210 of 211]", 211 - k);
    assert!(left_pane(&screen(&app, w, h)).contains(&want), "{want}");
    // Tab: Environment; tab again leaves the overview for the next pane; backtab
    // comes back to its last section.
    send(&mut app, [Msg::key(KeyCode::Tab)]);
    let s = screen(&app, w, h);
    assert!(
        left_pane(&s)
            .iter()
            .any(|l| l.starts_with("▸ Environment [1-")),
        "{s}"
    );
    send(&mut app, [Msg::key(KeyCode::Tab)]);
    let s = screen(&app, w, h);
    assert!(
        !left_pane(&s).iter().any(|l| l.contains('▸')),
        "the focus left the overview\n{s}"
    );
    send(&mut app, [Msg::key(KeyCode::BackTab)]);
    let s = screen(&app, w, h);
    assert!(
        left_pane(&s)
            .iter()
            .any(|l| l.starts_with("▸ Environment [1-")),
        "{s}"
    );
}

/// `o` filters the three sections at once: each title counts its matches out of
/// its rows, the prompt counts them per section as `wandb leet` does.
#[test]
fn overview_filter_counts_per_section() {
    snap("filter_key", "many_metrics", &|| {
        std::iter::once(Msg::char('o'))
            .chain(Msg::typed("key"))
            .collect()
    });
    let (w, h) = (200, 60);
    let mut app = app_from("many_metrics", w, h);
    send(
        &mut app,
        std::iter::once(Msg::char('o')).chain(Msg::typed("key")),
    );
    let s = screen(&app, w, h);
    let status = s.lines().nth(usize::from(h) - 1).unwrap();
    assert!(
        status.contains("Overview filter (regex): key▏ [Config: 1, Summary: 2, Env: 1]"),
        "{status}"
    );
    assert!(
        status.contains("tab: regex → glob · enter keep"),
        "{status}"
    );
    let t = titles(&s);
    assert_eq!(t[0], "Config [1 of 2]", "{t:?}");
    assert_eq!(t[1], "Summary [2 of 211]", "{t:?}");
    assert_eq!(t[2], "Environment [1 of 17]", "{t:?}");
    // Enter keeps it: the status bar says it with the same counts.
    send(&mut app, [Msg::key(KeyCode::Enter)]);
    let s = screen(&app, w, h);
    let status = s.lines().nth(usize::from(h) - 1).unwrap();
    assert!(
        status.contains("overview: key [Config: 1, Summary: 2, Env: 1]"),
        "{status}"
    );
}

/// `_timestamp` is a date; the filter matches its raw number too, which the filter
/// row (the status bar) shows while the overview filter is typed or in force.
#[test]
fn timestamps_are_dates_with_the_raw_number_on_the_filter_row() {
    snap("timestamp", "tiny", &Vec::new);
    snap("timestamp_filtered", "tiny", &|| {
        std::iter::once(Msg::char('o'))
            .chain(Msg::typed("17960609"))
            .collect()
    });
    let (w, h) = (200, 60);
    let date_row = |s: &str| {
        left_pane(s)
            .into_iter()
            .find(|l| l.starts_with("_timestamp"))
            .unwrap_or_else(|| panic!("{s}"))
    };
    let mut app = app_from("tiny", w, h);
    let s = screen(&app, w, h);
    assert!(date_row(&s).ends_with(" 2026-11-30T17:48:29Z"), "{s}");
    assert!(!s.contains("1796060909"), "{s}");
    send(
        &mut app,
        std::iter::once(Msg::char('o')).chain(Msg::typed("17960609")),
    );
    let s = screen(&app, w, h);
    assert!(date_row(&s).ends_with(" 2026-11-30T17:48:29Z"), "{s}");
    let status = s.lines().nth(usize::from(h) - 1).unwrap();
    assert!(
        status.contains("[Summary: 1] _timestamp = 1796060909.7666638"),
        "{status}"
    );
    send(&mut app, [Msg::key(KeyCode::Enter)]);
    let s = screen(&app, w, h);
    let status = s.lines().nth(usize::from(h) - 1).unwrap();
    assert!(
        status.contains("overview: 17960609 [Summary: 1] _timestamp = 1796060909.7666638"),
        "{status}"
    );
}

/// `tab` while typing the metrics filter switches it to a glob: the prompt says
/// which mode is on, the charts follow the glob.
#[test]
fn tab_toggles_the_metrics_filter_to_glob() {
    snap("filter_glob", "many_metrics", &|| {
        std::iter::once(Msg::char('/'))
            .chain(Msg::typed("eval*1"))
            .chain([Msg::key(KeyCode::Tab)])
            .collect()
    });
    let (w, h) = (200, 60);
    let mut app = app_from("many_metrics", w, h);
    send(
        &mut app,
        std::iter::once(Msg::char('/')).chain(Msg::typed("eval*1")),
    );
    // As a regex, `eval*1` is "eva", any `l`s, "1".
    let regex = app.charts.shown.len();
    send(&mut app, [Msg::key(KeyCode::Tab)]);
    let glob = app.charts.shown.len();
    let s = screen(&app, w, h);
    let status = s.lines().nth(usize::from(h) - 1).unwrap();
    assert!(status.contains("tab: glob → regex"), "{status}");
    assert_ne!(regex, glob, "{status}");
    send(&mut app, [Msg::key(KeyCode::Enter)]);
    let s = screen(&app, w, h);
    let status = s.lines().nth(usize::from(h) - 1).unwrap();
    assert!(status.contains("/eval*1 (glob) ["), "{status}");
}

/// `crashed` (three 32 KiB blocks) with 3000 bytes of its middle block flipped, read
/// as `common::screen::app_from` reads a fixture (the temporary directory is kept
/// alive by the returned guard).
fn damaged_app(w: u16, h: u16) -> (tempfile::TempDir, App) {
    use leet::decode::leveldb::BLOCK_SIZE;
    let src = common::runs_dir().join("crashed/wandb/latest-run");
    let file = leet::source::resolve::resolve_file(&src).unwrap();
    let mut data = std::fs::read(&file).unwrap();
    for b in &mut data[BLOCK_SIZE + BLOCK_SIZE / 2..][..3000] {
        *b ^= 0xff;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-crash001.wandb");
    std::fs::write(&path, &data).unwrap();
    let (_, batch) = leet::source::tail::read_batch(&path).unwrap();
    let mut app = App::new(leet::ui::Options {
        color: false,
        ..leet::ui::Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: std::path::PathBuf::from("damaged.wandb"),
        len: batch.file_len,
        modified: Some(common::screen::NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(common::screen::NOW));
    (dir, app)
}

/// The status bar cuts its damage warning to what fits (at 80 columns, the count
/// alone); the overview lists it whole: the spans and bytes skipped, the steps
/// lost, and each span's offset, length and reason, first of its sections.
#[test]
fn a_damaged_run_shows_its_damage_in_the_overview() {
    for (w, h) in SIZES {
        let (_dir, app) = damaged_app(w, h);
        let d = &app.shown.run.damage;
        assert_eq!(d.skipped_spans, 1);
        let span = d.skips[0];
        let (a, b) = app.shown.run.breaks.spans()[0];
        let s = screen(&app, w, h);
        let left = left_pane(&s);
        let row = |key: &str| {
            left.iter()
                .find(|l| l.starts_with(key))
                .unwrap_or_else(|| panic!("{w}x{h}: no {key}\n{s}"))
                .clone()
        };
        let sections: Vec<&String> = left.iter().filter(|l| l.ends_with(']')).collect();
        assert!(
            sections[0].starts_with("Damage ["),
            "{w}x{h}: {sections:?}\n{s}"
        );
        assert!(row("spans").ends_with(" 1 corrupt"), "{s}");
        assert!(row("skipped").ends_with("KiB"), "{s}");
        let steps = format!("{}–{}", a + 1.0, b - 1.0);
        assert!(row("steps lost").ends_with(&steps), "{w}x{h}: {steps}\n{s}");
        // 80×24 pages the section (`Damage [1-3 of 4]`): the span is on its next page.
        if w >= 120 {
            let at = row(&format!("at {}", span.offset));
            let what = format!("{} B, {}", span.len, span.reason.as_str());
            assert!(at.ends_with(&what), "{w}x{h}: {what}\n{s}");
        }
        insta::assert_snapshot!(format!("damaged_{w}x{h}_overview"), s);
        if w < 120 {
            // Focused (`tab`), the section is the active one; its next page shows the span.
            let mut app = app;
            send(
                &mut app,
                [Msg::key(KeyCode::Tab), Msg::key(KeyCode::PageDown)],
            );
            let s = screen(&app, w, h);
            let left = left_pane(&s);
            assert!(left.iter().any(|l| l.starts_with("▸ Damage [")), "{s}");
            let at = format!("at {}", span.offset);
            assert!(left.iter().any(|l| l.starts_with(&at)), "{at}\n{s}");
        }
    }
    // A clean run has no Damage section.
    let s = screen(&app_from("crashed", 120, 40), 120, 40);
    assert!(
        !left_pane(&s).iter().any(|l| l.starts_with("Damage")),
        "{s}"
    );
}
