//! Bracketed paste: pasted text is typed into the open prompt on one line, never
//! read as keys; with no prompt open it does nothing.

use crossterm::event::KeyCode;
use leet::msg::Msg;
use leet::ui::keymap::Mode;
use leet::ui::Overlay;

use crate::app::app;

#[test]
fn a_paste_into_the_filter_prompt_is_typed_and_not_applied() {
    let mut a = app("many_metrics");
    let total = a.charts.shown.len();
    a.update(Msg::char('/'));
    let fx = a.update(Msg::Paste("loss\nT".into()));
    assert!(fx.redraw && !fx.quit);
    // Still typing, with the newline a space: not applied, and `T` did not open
    // the statistics table.
    assert_eq!(a.mode(), Mode::Filter);
    assert!(matches!(a.overlay, Overlay::None));
    assert_eq!(a.charts.filter.draft, "loss T");
    assert!(a.charts.filter.editing);
    // A paste that would quit as keys is text too; escapes and controls go.
    let fx = a.update(Msg::Paste("\r\n\x1b[2J\x07q".into()));
    assert!(!fx.quit);
    assert_eq!(a.charts.filter.draft, "loss T q");
    // Backspace and enter act on it as on typed text.
    for _ in 0.." T q".len() {
        a.update(Msg::key(KeyCode::Backspace));
    }
    a.update(Msg::key(KeyCode::Enter));
    assert_eq!(a.mode(), Mode::Normal);
    assert_eq!(a.charts.filter.text, "loss");
    let n = a.charts.shown.len();
    assert!(n > 0 && n < total);
}

#[test]
fn a_paste_with_no_prompt_open_changes_nothing() {
    let mut a = app("many_metrics");
    let before = a.charts.shown.len();
    let fx = a.update(Msg::Paste("T/loss\nq".into()));
    assert!(!fx.redraw && !fx.quit);
    assert!(fx.cmds.is_empty());
    assert_eq!(a.mode(), Mode::Normal);
    assert!(matches!(a.overlay, Overlay::None));
    assert_eq!(a.charts.filter.text, "");
    assert_eq!(a.charts.shown.len(), before);
    // Over the help too: it stays open, unscrolled.
    a.update(Msg::char('h'));
    let fx = a.update(Msg::Paste("jjjq".into()));
    assert!(!fx.redraw && !fx.quit);
    assert!(matches!(a.overlay, Overlay::Help { scroll: 0 }));
}

#[test]
fn a_paste_into_the_console_filter_filters_its_lines_only_when_applied() {
    let mut a = app("crashed");
    let total = a.console_view().len();
    a.update(Msg::char('4'));
    a.update(Msg::char('/'));
    a.update(Msg::Paste("STEP 2[0-4]$\n".into()));
    assert_eq!(a.mode(), Mode::Filter);
    a.update(Msg::key(KeyCode::Backspace));
    a.update(Msg::key(KeyCode::Enter));
    assert_eq!(a.console_view().len(), 5);
    assert!(a.console_view().total() == total);
}

#[test]
fn a_paste_into_the_x_axis_metric_list_filters_it_and_picks_nothing() {
    let mut a = app("custom_step");
    for _ in 0..3 {
        a.update(Msg::char('x'));
    }
    let key = a.overlay.picker().expect("the metric list").key.clone();
    let fx = a.update(Msg::Paste("val/\nq\x1b[A".into()));
    assert!(fx.redraw && !fx.quit);
    let p = a.overlay.picker().expect("still open");
    assert_eq!(p.filter, "val/ q");
    // Nothing picked: the chart's x is still the default.
    a.update(Msg::key(KeyCode::Esc));
    assert_eq!(
        *a.charts.xaxis.of(&key),
        leet::ui::charts::xaxis::XAxis::Default
    );
}
