//! Unit tests of the status bar's fitting.

use super::*;

fn texts(parts: &[Part]) -> Vec<&str> {
    parts.iter().map(|p| p.text.as_str()).collect()
}

fn crashed() -> Vec<Part> {
    let s = Style::default();
    vec![
        Part::whole(" crashed? ".into(), s, 0),
        Part {
            glue: true,
            ..Part::whole("(no exit record, quiet 1h 00m) ".into(), s, 7)
        },
        Part::cut("crashed-run (crash001)".into(), s, 9),
        Part::whole("step 250".into(), s, 1),
        Part::cut("▸ loss".into(), s, 5),
        Part::whole("⚠ 1 corrupt span(s)".into(), s, 1),
        Part {
            glue: true,
            ..Part::whole(" skipped (16.0 KiB)".into(), s, 6)
        },
    ]
}

#[test]
fn everything_fits_when_wide() {
    let mut p = crashed();
    let mut hint = Some(" h: help ".to_owned());
    fit_parts(&mut p, &mut hint, 200);
    assert_eq!(p, crashed());
    assert!(hint.is_some());
}

#[test]
fn at_80_columns_state_step_and_damage_stay_whole() {
    let mut p = crashed();
    let mut hint = Some(" h: help ".to_owned());
    fit_parts(&mut p, &mut hint, 80);
    let t = texts(&p);
    assert!(t.contains(&" crashed? "), "{t:?}");
    assert!(t.contains(&"step 250"), "{t:?}");
    assert!(t.contains(&"⚠ 1 corrupt span(s)"), "{t:?}");
    // The lowest priorities went first: the name, then the state's detail.
    assert!(!t.iter().any(|x| x.contains("crash001")), "{t:?}");
    assert!(parts_width(&p) + hint.as_deref().map_or(0, |h| h.len()) <= 80);
    // Nothing was cut: each text is one given above.
    let given = crashed();
    assert!(p.iter().all(|x| given.contains(x)), "{t:?}");
}

#[test]
fn a_name_is_cut_to_fit_when_that_is_enough() {
    let s = Style::default();
    let mut p = vec![
        Part::whole(" finished ".into(), s, 0),
        Part::cut("a-very-long-run-name-indeed (abcdefgh)".into(), s, 9),
        Part::whole("step 49".into(), s, 1),
    ];
    let mut hint = Some(" h: help ".to_owned());
    fit_parts(&mut p, &mut hint, 50);
    let t = texts(&p);
    assert_eq!(t[0], " finished ");
    assert!(t[1].ends_with('…') && t[1].starts_with("a-very"), "{t:?}");
    assert_eq!(t[2], "step 49");
    assert_eq!(parts_width(&p) + 9, 50);
}

#[test]
fn a_help_text_goes_whole_never_cut() {
    let s = Style::default();
    let mut p = vec![
        Part::whole(" finished ".into(), s, 0),
        Part::cut("/loss▏[2/195]".into(), s, 1),
        Part::whole("enter keep · esc restore".into(), s, 3),
    ];
    let mut hint = Some(" h: help ".to_owned());
    fit_parts(&mut p, &mut hint, 40);
    // 10 + 3 + 13 + 3 + 24 = 53: the hint goes, then the help text, whole.
    assert_eq!(texts(&p), [" finished ", "/loss▏[2/195]"]);
    assert!(hint.is_none());
}

#[test]
fn too_narrow_for_even_the_state_keeps_the_state() {
    let s = Style::default();
    let mut p = vec![
        Part::whole(" crashed? ".into(), s, 0),
        Part::whole("step 1".into(), s, 1),
    ];
    let mut hint = Some(" h: help ".to_owned());
    fit_parts(&mut p, &mut hint, 5);
    assert_eq!(texts(&p), [" crashed? "]);
    assert!(hint.is_none());
}

#[test]
fn steps_lost_names_the_first_break() {
    assert_eq!(steps_lost(&[]), None);
    assert_eq!(
        steps_lost(&[(125.0, 168.0)]).as_deref(),
        Some("steps 126–167 lost")
    );
    assert_eq!(
        steps_lost(&[(1.0, 3.0), (9.0, 20.0)]).as_deref(),
        Some("step 2 lost (+1 more)")
    );
}

/// The workspace's filter being typed keeps its text and match count while its
/// help text (and the rest) goes: the filter was cut for the hint to stay.
#[test]
fn a_workspace_filter_being_typed_outlasts_its_help_text() {
    let theme = Theme::new(true, crate::ui::palette::Palette::Default);
    let typed = "f cfg.lr>=1e-3 state:finished▏[3 of 5 runs]".to_owned();
    let ws = vec![
        (" workspace ".to_owned(), theme.label()),
        ("wandb dir: /tmp/qa3/flat/wandb".to_owned(), theme.text()),
        ("11 runs · 7 drawn".to_owned(), theme.label()),
        (typed.clone(), theme.input()),
        (
            "tab: regex → glob · enter keep · esc restore".to_owned(),
            theme.dim(),
        ),
    ];
    let mut parts = workspace_parts(ws, theme);
    let mut hint = Some(" h: help ".to_owned());
    fit_parts(&mut parts, &mut hint, 80);
    let t = texts(&parts);
    assert!(t.contains(&typed.as_str()), "{t:?}");
    assert!(!t.iter().any(|p| p.starts_with("tab: regex")), "{t:?}");
}
