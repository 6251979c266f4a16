//! Metric sections by name prefix (issue 14): `many_metrics` grouped, with a
//! section collapsed, and filtered, at every size; read through the key map.

use crate::common;

use common::screen::{app_from, screen, SIZES};

use leet::msg::Msg;
use leet::ui::App;

fn send(app: &mut App, msgs: impl IntoIterator<Item = Msg>) {
    for m in msgs {
        app.update(m);
    }
}

/// `many_metrics` at every size after `keys`, snapshot `many_metrics_<w>x<h>_<name>`.
fn snap(name: &str, keys: &dyn Fn() -> Vec<Msg>) {
    for (w, h) in SIZES {
        let mut app = app_from("many_metrics", w, h);
        send(&mut app, keys());
        insta::assert_snapshot!(format!("many_metrics_{w}x{h}_{name}"), screen(&app, w, h));
    }
}

/// The first page: the root section (`Charts`: keys with no section of their
/// own) first, its header and count, then `eval`'s charts.
#[test]
fn many_metrics_grouped() {
    snap("grouped", &Vec::new);
}

/// `Z` on the first chart collapses its section (`Charts`): its header stays, with
/// its count and `▸`, and the next sections move up onto the first page.
#[test]
fn many_metrics_section_collapsed() {
    snap("collapsed", &|| vec![Msg::char('Z')]);
}

/// `M` collapses every section: one header line each, nothing else.
#[test]
fn many_metrics_all_collapsed() {
    snap("all_collapsed", &|| vec![Msg::char('M')]);
}

fn click(app: &mut App, x: u16, y: u16) {
    use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    app.update(Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    }));
    app.update(Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Up(MouseButton::Left),
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    }));
}

/// The screen row (and column of its first character) showing `text`, in the grid.
fn find(s: &str, text: &str) -> Option<(u16, u16)> {
    s.lines().enumerate().find_map(|(y, l)| {
        let x = l.find(text)?;
        let col = l[..x].chars().count();
        Some((u16::try_from(col).ok()?, u16::try_from(y).ok()?))
    })
}

/// A click on a header collapses its section (`▸`, its charts gone, the next
/// section's header moves up), a second click expands it again; the header
/// takes the focus. A click on the repeated header of a page inside a section
/// toggles that section.
#[test]
fn a_click_on_a_header_toggles_its_section() {
    for (w, h) in SIZES {
        let mut app = app_from("many_metrics", w, h);
        let before = screen(&app, w, h);
        let (x, y) = find(&before, "▾ Charts (19)").unwrap();
        assert!(find(&before, "UPPER/Case─").is_some() || find(&before, "UPPER/Case━").is_some());
        click(&mut app, x + 2, y);
        let s = screen(&app, w, h);
        assert_eq!(find(&s, "▸ Charts (19)"), Some((x, y)), "{s}");
        assert!(
            !s.contains("UPPER/Case━") && !s.contains("UPPER/Case─"),
            "{s}"
        );
        assert_eq!(find(&s, "▾ eval (37)").map(|p| p.1), Some(y + 1), "{s}");
        assert!(s.contains("▸ section Charts"), "{s}");
        // Again: back as it was, but for the focus (the header's now).
        click(&mut app, x + 2, y);
        let s = screen(&app, w, h);
        assert_eq!(find(&s, "▾ Charts (19)"), Some((x, y)), "{s}");
        assert!(s.contains("UPPER/Case─"), "{s}");
        // Page 2 starts inside `Charts` but at 200x60 (where its 19 charts fit
        // on page 1): its header repeated.
        app.update(Msg::char('n'));
        let s = screen(&app, w, h);
        if w == 200 {
            assert!(!s.contains("(cont.)") && s.contains("▾ eval (37)"), "{s}");
            continue;
        }
        let (cx, cy) = find(&s, "▾ Charts (cont.)").unwrap();
        click(&mut app, cx, cy);
        let s = screen(&app, w, h);
        assert!(s.contains("▸ Charts (19)"), "{s}");
    }
}

/// A click on a chart below the headers focuses that chart (the page's cells
/// are the ones drawn, not the flat grid's).
#[test]
fn a_click_on_a_chart_focuses_it() {
    for (w, h) in SIZES {
        let mut app = app_from("many_metrics", w, h);
        app.update(Msg::char('Z'));
        let s = screen(&app, w, h);
        let (x, y) = find(&s, "eval/f1─").unwrap();
        click(&mut app, x + 2, y + 3);
        assert_eq!(app.focused_key(), Some("eval/f1"));
        let s = screen(&app, w, h);
        assert!(s.contains("┏eval/f1━"), "{s}");
    }
}

/// `/` filters within sections: the counts are the matches, sections without
/// one disappear, and clearing the filter brings them back (with a collapsed
/// section still collapsed).
#[test]
fn the_filter_works_within_sections() {
    let (w, h) = (120, 40);
    let mut app = app_from("many_metrics", w, h);
    app.update(Msg::char('Z'));
    send(&mut app, "/acc".chars().map(Msg::char));
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    let s = screen(&app, w, h);
    assert!(s.contains("▾ eval (1)") && s.contains("▾ train (1)"), "{s}");
    assert!(!s.contains("grad (") && !s.contains("Charts ("), "{s}");
    app.act(leet::ui::action::Action::ClearFilters);
    let s = screen(&app, w, h);
    assert!(
        s.contains("▸ Charts (19)") && s.contains("▾ eval (37)"),
        "{s}"
    );
}

/// Collapsed sections are settings: written to the settings file, read back,
/// and laid over a new viewer of the run; a bad value is refused naming the key.
#[test]
fn collapsed_sections_are_saved_and_come_back() {
    use leet::ui::settings::Config;
    let (w, h) = (120, 40);
    let mut app = app_from("many_metrics", w, h);
    app.update(Msg::char('Z'));
    assert_eq!(app.settings().collapsed_sections, [""]);
    let text = app.settings_config().to_toml();
    assert!(text.contains("collapsed_sections = [\"\"]"), "{text}");
    let file = std::path::Path::new("config.toml");
    let back = Config::parse(file, &text).unwrap();
    assert_eq!(back.viewer.collapsed_sections, [""]);
    let mut fresh = app_from("many_metrics", w, h);
    assert!(screen(&fresh, w, h).contains("▾ Charts (19)"));
    fresh.apply_settings(&back.viewer);
    let s = screen(&fresh, w, h);
    assert!(
        s.contains("▸ Charts (19)") && s.contains("▾ eval (37)"),
        "{s}"
    );
    let bad = text.replace("collapsed_sections = [\"\"]", "collapsed_sections = [3]");
    let e = Config::parse(file, &bad).unwrap_err().to_string();
    assert!(
        e.contains("collapsed_sections") && e.contains("strings"),
        "{e}"
    );
}
