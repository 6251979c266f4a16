use super::sections::{share, MIN_SECTION_ROWS};
use super::{OverviewPane, Row};

fn items(prefix: &str, n: usize) -> Vec<Row> {
    (0..n)
        .map(|i| Row::Item(format!("{prefix}{i}"), i.to_string()))
        .collect()
}

/// Config 2 rows, Summary 276, Environment 17: `many_metrics`'s shape.
fn pane() -> OverviewPane {
    let mut p = OverviewPane::default();
    p.set(
        vec![Row::Item("Name".into(), "run".into())],
        vec![
            ("Config", items("cfg", 2)),
            ("Summary", items("sum", 276)),
            ("Environment", items("env", 17)),
        ],
    );
    p
}

#[test]
fn everything_fits_each_section_its_rows_and_title() {
    assert_eq!(share(&[2, 10, 17], 40), [3, 11, 18]);
    assert_eq!(share(&[0, 0], 5), [1, 1]);
}

#[test]
fn small_sections_show_whole_and_big_ones_share_the_rest_evenly() {
    // 3 titles + 2 config rows leave 25 rows: 13 and 12.
    assert_eq!(share(&[2, 276, 17], 30), [3, 14, 13]);
    // An even split, the remainder to the first.
    assert_eq!(share(&[100, 100, 100], 13), [5, 4, 4]);
    assert_eq!(share(&[100, 100, 100], 14), [5, 5, 4]);
    // Every line used, none over.
    for room in 3..60 {
        let h = share(&[2, 276, 17], room);
        assert_eq!(
            h.iter().sum::<usize>(),
            room.min(2 + 276 + 17 + 3),
            "{room}"
        );
        assert!(h.iter().all(|&x| x >= 1), "{room}: {h:?}");
        assert!(h[0] <= 3, "{room}: {h:?}");
    }
}

#[test]
fn an_empty_section_is_its_title_alone() {
    assert_eq!(share(&[0, 276, 17], 20), [1, 10, 9]);
}

#[test]
fn titles_first_when_there_is_no_room_for_rows() {
    assert_eq!(share(&[5, 5, 5], 2), [1, 1, 0]);
    assert_eq!(share(&[5, 5, 5], 0), [0, 0, 0]);
    assert_eq!(share(&[], 10), Vec::<usize>::new());
}

#[test]
fn facts_give_way_to_the_sections_on_a_short_pane() {
    let mut p = pane();
    p.set(
        items("fact", 10),
        vec![("Config", items("c", 40)), ("Summary", items("s", 40))],
    );
    // Room for everything the sections need first, then facts.
    let need = 2 * (1 + MIN_SECTION_ROWS);
    let lay = p.layout(need + 4);
    assert_eq!(lay.facts, 4);
    assert_eq!(lay.heights, [1 + MIN_SECTION_ROWS, 1 + MIN_SECTION_ROWS]);
    let lay = p.layout(40);
    assert_eq!(lay.facts, 10);
    assert_eq!(lay.heights.iter().sum::<usize>(), 30);
}

#[test]
fn each_section_pages_on_its_own_and_its_title_says_where() {
    let mut p = pane();
    let lay = p.layout(30);
    // 1 fact, then 29 lines: Config 3, Summary 14, Environment 12... shared.
    assert_eq!(lay.facts, 1);
    assert_eq!(lay.heights, share(&[2, 276, 17], 29));
    let rows = lay.rows(1);
    assert_eq!(p.title(0, &lay), "Config [2]");
    assert_eq!(p.title(1, &lay), format!("Summary [1-{rows} of 276]"));
    p.active = 1;
    p.page_by(&lay, 1);
    assert_eq!(
        p.title(1, &lay),
        format!("Summary [{}-{} of 276]", rows + 1, 2 * rows)
    );
    // The others stay.
    assert_eq!(p.sections[2].scroll, 0);
    p.scroll_to(&lay, true);
    assert_eq!(
        p.title(1, &lay),
        format!("Summary [{}-276 of 276]", 277 - rows)
    );
    p.scroll_by(&lay, 5);
    assert_eq!(p.sections[1].scroll, 276 - rows);
    p.scroll_by(&lay, -1);
    assert_eq!(p.sections[1].scroll, 275 - rows);
    p.scroll_to(&lay, false);
    assert_eq!(p.sections[1].scroll, 0);
    p.page_by(&lay, -3);
    assert_eq!(p.sections[1].scroll, 0);
    // The window is what the title says.
    p.page_by(&lay, 1);
    assert_eq!(p.window(1, &lay), (rows, rows));
    assert_eq!(
        p.section_rows(1)[rows],
        Row::Item(format!("sum{rows}"), rows.to_string())
    );
}

#[test]
fn a_rebuild_keeps_each_sections_scroll() {
    let mut p = pane();
    let lay = p.layout(30);
    p.active = 2;
    p.scroll_by(&lay, 3);
    p.set(
        vec![],
        vec![
            ("Config", items("cfg", 2)),
            ("Summary", items("sum", 276)),
            ("Environment", items("env", 17)),
        ],
    );
    assert_eq!(p.sections[2].scroll, 3);
    assert_eq!(p.active, 2);
}

#[test]
fn the_filter_counts_per_section_and_keeps_empty_ones_as_titles() {
    let mut p = pane();
    p.filter.start();
    p.filter.set_draft("sum1[0-9]$|cfg1".into());
    p.refilter(true);
    let lens: Vec<usize> = p.sections.iter().map(|s| s.len).collect();
    assert_eq!(lens, [1, 10, 0]);
    assert_eq!(p.filter_counts(), "Config: 1, Summary: 10");
    // The section with the most matches becomes active, from its top.
    assert_eq!(p.active, 1);
    let lay = p.layout(30);
    assert_eq!(p.title(0, &lay), "Config [1 of 2]");
    assert_eq!(p.title(1, &lay), "Summary [10 of 276]");
    assert_eq!(p.title(2, &lay), "Environment [0 of 17]");
    assert_eq!(lay.heights[2], 1);
    // The fact did not match.
    assert!(p.facts().is_empty());
    p.filter.set_draft("nothing-matches-this".into());
    p.refilter(true);
    assert_eq!(p.filter_counts(), "no matches");
    assert_eq!(p.active, 1, "no match: the active section stays");
}

#[test]
fn tab_visits_the_sections_with_rows_then_leaves() {
    let mut p = pane();
    p.enter(true);
    assert_eq!(p.active, 0);
    assert!(p.step_section(true));
    assert_eq!(p.active, 1);
    assert!(p.step_section(true));
    assert!(!p.step_section(true), "after the last: the next pane");
    assert_eq!(p.active, 2);
    assert!(p.step_section(false));
    assert_eq!(p.active, 1);
    // Sections without a match are skipped.
    p.filter.start();
    p.filter.set_draft("env".into());
    p.refilter(true);
    p.enter(true);
    assert_eq!(p.active, 2);
    assert!(!p.step_section(true));
    assert!(!p.step_section(false));
    p.enter(false);
    assert_eq!(p.active, 2);
}

#[test]
fn time_rows_are_dates_and_match_their_raw_number() {
    let r = super::time_row("_timestamp".into(), "1796060909.7666638".into());
    assert_eq!(r, Row::Time("_timestamp".into(), 1_796_060_909.766_663_8));
    assert_eq!(Row::date(1_796_060_909.766_663_8), "2026-11-30T17:48:29Z");
    assert_eq!(Row::raw_time(1_796_060_909.766_663_8), "1796060909.7666638");
    // Not a time: another key, or a number that is no plausible date.
    assert!(matches!(
        super::time_row("lr".into(), "1796060909".into()),
        Row::Item(..)
    ));
    assert!(matches!(
        super::time_row("_timestamp".into(), "12".into()),
        Row::Item(..)
    ));
    assert!(matches!(
        super::time_row("train/_timestamp".into(), "1796060909".into()),
        Row::Time(..)
    ));
    let mut p = OverviewPane::default();
    p.set(vec![], vec![("Summary", vec![r])]);
    for q in ["17960609", "2026-11-30", "_timestamp"] {
        p.filter.start();
        p.filter.set_draft(q.into());
        p.refilter(true);
        assert_eq!(p.sections[0].len, 1, "{q}");
    }
    assert_eq!(
        p.filtered_times(),
        [("_timestamp", 1_796_060_909.766_663_8)]
    );
}

#[test]
fn the_damage_section_counts_everything_and_lists_the_first() {
    use crate::decode::leveldb::{Skip, SkipReason};
    use crate::store::Run;
    let mut run = Run::default();
    assert!(super::damage_rows(&run).is_empty());
    // 25 spans, each losing the steps between the one before and 10 after.
    for k in 0..25_u64 {
        let step = i64::try_from(k).unwrap_or(0) * 10;
        run.breaks.damage(Some(step));
        run.breaks.row(Some(step + 5));
        run.damage.add(Skip {
            offset: 1000 * k,
            len: 7,
            reason: SkipReason::ZeroFilled,
        });
    }
    let rows = super::damage_rows(&run);
    let key = |r: &Row| match r {
        Row::Item(k, _) | Row::Note(k, _) | Row::Bytes(k, _) => k.clone(),
        _ => String::new(),
    };
    let count = |k: &str| rows.iter().filter(|r| key(r) == k).count();
    assert_eq!(rows[0], Row::Item("spans".into(), "25 corrupt".into()));
    assert_eq!(rows[1], Row::Bytes("skipped".into(), 175.0));
    // 20 ranges and a line for the rest; 20 spans and a line for the rest.
    assert_eq!(count("steps lost"), 21);
    assert_eq!(rows[2], Row::Item("steps lost".into(), "1–4".into()));
    assert_eq!(
        rows.iter().find(|r| key(r) == "at 1000"),
        Some(&Row::Note(
            "at 1000".into(),
            "7 B, zero-filled space".into()
        ))
    );
    assert_eq!(
        rows.last(),
        Some(&Row::Note("at …".into(), "5 more span(s)".into()))
    );
    assert_eq!(rows.len(), 2 + 21 + 21);
}

#[test]
fn bytes_after_an_ended_run_s_last_record_are_damage_shown_while_a_live_tail_is_not() {
    use crate::store::Run;
    let mut run = Run::default();
    run.damage.incomplete_tail = 107;
    // Still running: the writer may be finishing that record.
    assert!(super::damage_rows(&run).is_empty());
    assert_eq!(run.unfinished_tail(), 0);
    // Ended: nothing will finish them.
    run.exit_code = Some(0);
    assert_eq!(
        super::damage_rows(&run),
        [Row::Bytes("unreadable".into(), 107.0)]
    );
}

/// W&B's `_wandb` bookkeeping is left out of Config whole, also once the SDK has
/// filled it in (a run renamed or retagged mid-run: `cli_version`, `t`, `m`,
/// `visualize`); a user's key that only starts alike stays.
#[test]
fn the_sdk_s_wandb_subtree_is_left_out_of_config() {
    let config = serde_json::json!({
        "_wandb": {"cli_version": "0.31.0", "t": {"3": [4, 13]}, "m": [], "visualize": {"p": {"x": 1}}},
        "_wandbish": 1,
        "a": 2,
    });
    let rows = super::config_section(config.as_object().expect("object"));
    let keys: Vec<&str> = rows
        .iter()
        .filter_map(|r| match r {
            Row::Item(k, _) => Some(k.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(keys, ["_wandbish", "a"]);
}

/// A value of megabytes (a logged prompt, a file's contents) is kept as much of
/// it as a row can show, not whole: the pane, its filter and each refilter
/// held copies of all of it.
#[test]
fn a_huge_value_is_kept_as_far_as_a_row_shows_it() {
    let huge = format!("{}\u{1b}[31m{}", "é".repeat(3000), "x".repeat(5_000_000));
    let rows = super::section(vec![
        ("big".to_owned(), huge),
        ("small".to_owned(), "0.5".to_owned()),
    ]);
    let Row::Item(k, v) = &rows[0] else {
        panic!("{rows:?}")
    };
    assert_eq!(k, "big");
    assert_eq!(v.chars().count(), super::SHOWN_CHARS + 1);
    assert!(v.starts_with("éé") && v.ends_with('…'), "{}", &v[..20]);
    assert!(matches!(&rows[1], Row::Item(k, v) if k == "small" && v == "0.5"));
}
