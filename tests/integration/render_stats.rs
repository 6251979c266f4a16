//! The statistics table (`T`, issue 14) on screen: every metric's last, min, @step,
//! max, @step, mean and count; sorted by a column; filtered by name; with two
//! compared runs, one column group each headed by the run's name. Whole screens on
//! the SDK fixtures, at every size, driven through key messages.

use crate::common;

use common::screen::{app_from, screen, SIZES};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use leet::msg::Msg;
use leet::ui::App;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn keys(app: &mut App, codes: &[KeyCode]) {
    for &c in codes {
        app.update(Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    }
}

fn typed(s: &str) -> Vec<KeyCode> {
    s.chars().map(KeyCode::Char).collect()
}

/// Two runs of `multi` drawn beside the fixture's run.
fn compare_two(app: &mut App) {
    let others = common::compare_multi(app, 2);
    app.take_cmds();
    for (i, (_, dir)) in others.iter().enumerate() {
        let (_, b) = leet::source::tail::read_batch(dir).unwrap();
        let tag = app.runs.compare[i].tag;
        app.update(Msg::Tagged(tag, Box::new(Msg::Run(b))));
    }
}

fn snap(name: &str, fixture: &str, setup: &dyn Fn(&mut App)) {
    for (w, h) in SIZES {
        let mut app = app_from(fixture, w, h);
        setup(&mut app);
        insta::assert_snapshot!(format!("{fixture}_{w}x{h}_{name}"), screen(&app, w, h));
    }
}

#[test]
fn stats_table_by_name() {
    snap("stats", "many_metrics", &|a| keys(a, &typed("T")));
    snap("stats", "custom_step", &|a| keys(a, &typed("T")));
}

#[test]
fn stats_table_sorted_by_max_descending() {
    // → four times: the max column; r: largest first; down twice: a selected row.
    snap("stats_sorted", "many_metrics", &|a| {
        keys(a, &typed("T"));
        keys(a, &[KeyCode::Right; 4]);
        keys(a, &typed("rjj"));
    });
}

#[test]
fn stats_table_filtered() {
    snap("stats_filtered", "many_metrics", &|a| {
        keys(a, &typed("T/loss"));
        keys(a, &[KeyCode::Enter]);
    });
    // While typing: the prompt, in glob mode.
    snap("stats_filtering", "many_metrics", &|a| {
        keys(a, &typed("T/"));
        keys(a, &[KeyCode::Tab]);
        keys(a, &typed("*/acc"));
    });
}

#[test]
fn stats_table_of_compared_runs() {
    snap("stats_compared", "tiny", &|a| {
        compare_two(a);
        keys(a, &typed("T"));
    });
    // Sorted by the third run's mean: its group stays in view at 80 columns.
    snap("stats_compared_sorted", "tiny", &|a| {
        compare_two(a);
        keys(a, &typed("T"));
        keys(a, &[KeyCode::Right; 20]);
    });
}

#[test]
fn run_names_head_their_groups_in_the_runs_colours() {
    let (w, h) = (200, 40);
    let mut app = app_from("tiny", w, h);
    app.screen.color = true;
    compare_two(&mut app);
    keys(&mut app, &typed("T"));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| leet::ui::render::render(f, &app)).unwrap();
    let buf = t.backend().buffer().clone();
    // The group names' line: the first cell of each label.
    let labels: Vec<String> = app.stats_runs().into_iter().map(|r| r.label).collect();
    let line: String = (0..w).map(|x| buf[(x, 1)].symbol().to_owned()).collect();
    let mut colours = Vec::new();
    for l in &labels {
        let at = line
            .find(l.as_str())
            .unwrap_or_else(|| panic!("{l} not in {line}"));
        let x = u16::try_from(line[..at].chars().count()).unwrap();
        colours.push(buf[(x, 1)].fg);
    }
    assert_eq!(colours.len(), 3);
    assert!(colours[0] != colours[1] && colours[1] != colours[2] && colours[0] != colours[2]);
    assert!(colours.iter().all(|c| *c != ratatui::style::Color::Reset));
}

/// Six runs drawn beside `tiny` (the five of `multi` and the first of `resumed`):
/// seven column groups, more than fit at 120 columns.
fn compare_six(app: &mut App) {
    let mut others = common::compare_multi(app, 5);
    let resumed = common::fixture_runs()
        .into_iter()
        .find(|(name, _)| name.starts_with("resumed.offline-run-"))
        .unwrap();
    let file = common::wandb_file(&resumed.1);
    app.request_compare(resumed.1.clone(), file.parent().unwrap().to_path_buf());
    others.push(resumed);
    app.take_cmds();
    for (i, (_, dir)) in others.iter().enumerate() {
        let (_, b) = leet::source::tail::read_batch(dir).unwrap();
        let tag = app.runs.compare[i].tag;
        app.update(Msg::Tagged(tag, Box::new(Msg::Run(b))));
    }
    assert_eq!(app.stats_runs().len(), 7);
}

fn shifted(app: &mut App, code: KeyCode, times: usize) {
    for _ in 0..times {
        app.update(Msg::Key(KeyEvent::new(code, KeyModifiers::SHIFT)));
    }
}

#[test]
fn stats_table_of_seven_runs_scrolls_sideways() {
    let (w, h) = (120, 30);
    let seven = || {
        let mut app = app_from("tiny", w, h);
        compare_six(&mut app);
        keys(&mut app, &typed("T"));
        app
    };
    // Two groups fit, the steps of the extremes left out to make room for the
    // second; the title says which of the seven.
    let app = seven();
    insta::assert_snapshot!("tiny_120x30_stats_seven_runs", screen(&app, w, h));
    // shift+→ three times: the same column (last) of the fourth run, in view.
    let mut app = seven();
    shifted(&mut app, KeyCode::Right, 3);
    insta::assert_snapshot!("tiny_120x30_stats_seven_runs_fourth", screen(&app, w, h));
    // Past the last run it stays there; ← then sorts by the sixth run's count,
    // and the view follows the sort column back.
    let mut app = seven();
    shifted(&mut app, KeyCode::Right, 9);
    keys(&mut app, &[KeyCode::Left]);
    insta::assert_snapshot!("tiny_120x30_stats_seven_runs_sixth", screen(&app, w, h));
    // backtab (shift+tab) walks back, to the metric name column at the first run.
    keys(&mut app, &[KeyCode::BackTab; 6]);
    assert_eq!(app.stats.sort, 0);
    insta::assert_snapshot!("tiny_120x30_stats_seven_runs", screen(&app, w, h));
}
