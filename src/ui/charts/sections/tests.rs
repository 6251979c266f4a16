use super::*;
use crate::ui::charts::grid::GridState;

fn keys(ks: &[&str]) -> Vec<String> {
    ks.iter().map(|k| (*k).to_owned()).collect()
}

/// The tree of `ks` (all shown): each section as (path, depth, count, own keys).
fn outline(ks: &[&str]) -> Vec<(String, u16, usize, Vec<String>)> {
    let ks = keys(ks);
    let all: Vec<usize> = (0..ks.len()).collect();
    let (tree, order) = Tree::build(&ks, &all);
    tree.sections
        .iter()
        .map(|s| {
            let own = order[s.charts.clone()]
                .iter()
                .map(|&i| ks[i].clone())
                .collect();
            (s.path.clone(), s.depth, s.count, own)
        })
        .collect()
}

fn o(path: &str, depth: u16, count: usize, own: &[&str]) -> (String, u16, usize, Vec<String>) {
    (path.to_owned(), depth, count, keys(own))
}

const NESTED: [&str; 9] = [
    "acc",
    "eval/loss",
    "eval/val/a",
    "eval/val/top1/x",
    "eval/val/top1/y",
    "lone/x",
    "train/acc",
    "train/loss",
    "zeta",
];

#[test]
fn sections_nest_at_every_slash_with_counts() {
    assert_eq!(
        outline(&NESTED),
        [
            // A prefix of one key (`lone`) is no section: its key is the root's.
            o("", 0, 3, &["acc", "lone/x", "zeta"]),
            o("eval", 0, 4, &["eval/loss"]),
            o("eval/val", 1, 3, &["eval/val/a"]),
            o(
                "eval/val/top1",
                2,
                2,
                &["eval/val/top1/x", "eval/val/top1/y"]
            ),
            o("train", 0, 2, &["train/acc", "train/loss"]),
        ]
    );
}

#[test]
fn a_prefix_holding_only_one_longer_prefix_is_that_one() {
    // `a` holds nothing but `a/b`: one section `a/b`, at the top.
    assert_eq!(
        outline(&["a/b/x", "a/b/y", "c"]),
        [o("", 0, 1, &["c"]), o("a/b", 0, 2, &["a/b/x", "a/b/y"])]
    );
}

#[test]
fn no_slash_or_one_common_prefix_is_the_flat_grid() {
    for ks in [
        &["acc", "loss"][..],
        &["work/iter", "work/noise"],
        &["a/b/x", "a/b/y"],
    ] {
        let k = keys(ks);
        let (tree, order) = Tree::build(&k, &[0, 1]);
        assert!(!tree.has_sections(), "{ks:?}");
        assert_eq!(order, [0, 1]);
        let s = Sections {
            tree,
            ..Sections::default()
        };
        // No header: the charts in rows as before.
        assert_eq!(
            s.rows(2),
            [Row::Charts {
                sec: 0,
                charts: 0..2
            }]
        );
    }
}

/// The rows of `s` in words: `H path (count)` or `C path [n charts]`.
fn words(s: &Sections, cols: u16) -> Vec<String> {
    s.rows(cols)
        .iter()
        .map(|r| match r {
            Row::Header(i) => format!("H {}", s.label(*i, false)),
            Row::Charts { sec, charts } => {
                format!("C {} {}", s.tree.sections[*sec].path, charts.len())
            }
        })
        .collect()
}

fn nested(shown: &[usize]) -> Sections {
    let (tree, _) = Tree::build(&keys(&NESTED), shown);
    Sections {
        tree,
        ..Sections::default()
    }
}

#[test]
fn rows_are_headers_then_charts_and_collapse_hides_sub_sections() {
    let mut s = nested(&(0..NESTED.len()).collect::<Vec<_>>());
    assert_eq!(
        words(&s, 2),
        [
            "H ▾ Charts (3)",
            "C  2",
            "C  1",
            "H ▾ eval (4)",
            "C eval 1",
            "H   ▾ eval/val (3)",
            "C eval/val 1",
            "H     ▾ eval/val/top1 (2)",
            "C eval/val/top1 2",
            "H ▾ train (2)",
            "C train 2",
        ]
    );
    // Collapsing `eval/val` hides its charts and `eval/val/top1`; its header stays.
    s.toggle(2);
    assert!(s.is_collapsed(2));
    assert_eq!(
        words(&s, 2),
        [
            "H ▾ Charts (3)",
            "C  2",
            "C  1",
            "H ▾ eval (4)",
            "C eval 1",
            "H   ▸ eval/val (3)",
            "H ▾ train (2)",
            "C train 2",
        ]
    );
    s.toggle(2);
    assert!(!s.is_collapsed(2));
    assert_eq!(s.rows(2).len(), 11);
}

#[test]
fn the_filter_drops_empty_sections_and_counts_matches() {
    // `/loss` lets through eval/loss and train/loss: the structure stays (from
    // every key), the counts are the matches, sections with none are gone.
    let shown = [1, 7];
    let s = nested(&shown);
    assert_eq!(
        words(&s, 3),
        ["H ▾ eval (1)", "C eval 1", "H ▾ train (1)", "C train 1"]
    );
    // The shown charts in section order: the root's first.
    let k = keys(&["b/x", "b/y", "a"]);
    let (_, order) = Tree::build(&k, &[0, 1, 2]);
    assert_eq!(order, [2, 0, 1]);
}

/// Pages of `rows` as (cont header?, rows), checking every row is on exactly one
/// page, in order, and no page holds more than `r` chart rows or `h` lines at the
/// shortest chart row.
fn paged(rows: &[Row], h: u16, r: u16) -> Vec<Page> {
    // (The plain grid's page as `r` rows of 2: no squeezing of more rows.)
    let p = pages(rows, h, r, usize::from(r));
    let mut next = 0;
    for page in &p {
        assert_eq!(page.rows.start, next, "{p:?}");
        assert!(!page.rows.is_empty());
        next = page.rows.end;
        let charts = rows[page.rows.clone()]
            .iter()
            .filter(|r| matches!(r, Row::Charts { .. }))
            .count();
        assert!(charts <= usize::from(r), "{page:?}");
        // A page starting inside a section repeats its header.
        assert_eq!(
            page.cont.is_some(),
            matches!(rows[page.rows.start], Row::Charts { .. })
        );
    }
    assert_eq!(next, rows.len());
    p
}

#[test]
fn pages_flow_through_sections_and_repeat_the_header() {
    // 3 sections of 5 charts in rows of 2: header, 3 chart rows, each.
    let mut ks = Vec::new();
    for s in ["a", "b", "c"] {
        for i in 0..5 {
            ks.push(format!("{s}/{i}"));
        }
    }
    let (tree, _) = Tree::build(&ks, &(0..15).collect::<Vec<_>>());
    let mut s = Sections {
        tree,
        ..Sections::default()
    };
    let rows = s.rows(2);
    assert_eq!(rows.len(), 12);
    // 22 lines, 2 chart rows of 11 (at least 7 beside headers).
    let p = paged(&rows, 22, 2);
    assert_eq!(p.len(), 5);
    assert_eq!(
        p[0],
        Page {
            cont: None,
            rows: 0..3
        }
    );
    // `a` goes on: its header repeated above its last row, then `b`'s header and
    // first row; `b` goes on, and `c` starts a page (its header would end the
    // page alone: the page has its two chart rows).
    assert_eq!(
        p[1],
        Page {
            cont: Some(1),
            rows: 3..6
        }
    );
    assert_eq!(
        p[2],
        Page {
            cont: Some(2),
            rows: 6..8
        }
    );
    assert_eq!(
        p[3],
        Page {
            cont: None,
            rows: 8..11
        }
    );
    // Collapsed, the three headers share one page.
    for i in 1..4 {
        s.toggle(i);
    }
    let rows = s.rows(2);
    assert_eq!(
        paged(&rows, 22, 2),
        [Page {
            cont: None,
            rows: 0..3
        }]
    );
    // A tall page holds headers and more rows; never more than `r` chart rows.
    let mut s = s.clone();
    s.collapsed.clear();
    let rows = s.rows(2);
    // (a's header and 3 rows, b's header and first row: 4 chart rows.)
    let p = paged(&rows, 60, 4);
    assert_eq!(
        p[0],
        Page {
            cont: None,
            rows: 0..6
        }
    );
    // Tiny bodies still make progress, a row a page.
    let p = paged(&rows, 1, 1);
    assert!(p.len() >= rows.len() / 2);
}

#[test]
fn place_puts_headers_on_one_line_and_rows_below_inside_the_body() {
    let ks = keys(&["a/1", "a/2", "a/3", "b/1", "b/2"]);
    let (tree, _) = Tree::build(&ks, &[0, 1, 2, 3, 4]);
    let s = Sections {
        tree,
        ..Sections::default()
    };
    let rows = s.rows(2);
    let body = Rect::new(10, 5, 60, 30);
    let p = pages(&rows, body.height, 2, 4);
    let mut seen = Vec::new();
    for page in &p {
        let slots = place(page, &rows, body, 2, 2);
        let mut bottom = body.y;
        for (r, slot) in &slots {
            assert!(body.contains(r.as_position()), "{r:?}");
            assert!(r.bottom() <= body.bottom() && r.right() <= body.right());
            assert!(r.y >= bottom || matches!(slot, Slot::Chart(_)), "{slots:?}");
            if let Slot::Header { .. } = slot {
                assert_eq!((r.height, r.width), (1, 60));
            }
            bottom = bottom.max(r.bottom());
            if let Slot::Chart(c) = slot {
                seen.push(*c);
            }
        }
        // Headers share the page: chart rows get at least two thirds of 15; a
        // row of two charts halves the width, `a/3` alone in its row has it all.
        for (r, slot) in &slots {
            if let Slot::Chart(c) = slot {
                let w = if *c == 2 { 60 } else { 30 };
                assert!(r.height >= 10 && r.width == w, "{c}: {r:?}");
            }
        }
    }
    assert_eq!(seen, [0, 1, 2, 3, 4]);
}

/// Sections whose charts all fit on one page with rows to spare fill the body
/// with them, as fewer charts than a page holds fill the plain grid (before: two
/// rows of a three-row grid left its last third blank).
#[test]
fn one_page_of_fewer_rows_than_the_grid_fills_the_body() {
    let ks = keys(&["a/1", "a/2", "b/1", "b/2"]);
    let (tree, _) = Tree::build(&ks, &[0, 1, 2, 3]);
    let s = Sections {
        tree,
        ..Sections::default()
    };
    let rows = s.rows(2);
    let body = Rect::new(0, 1, 80, 42);
    let p = pages(&rows, body.height, 3, 6);
    assert_eq!(p.len(), 1);
    let slots = place(&p[0], &rows, body, 2, 3);
    let bottom = slots.iter().map(|(r, _)| r.bottom()).max();
    assert_eq!(bottom, Some(body.bottom()), "{slots:?}");
    let heights: Vec<u16> = (slots.iter())
        .filter(|(_, s)| matches!(s, Slot::Chart(_)))
        .map(|(r, _)| r.height)
        .collect();
    assert_eq!(heights, [20, 20, 20, 20]);
}

fn grid(shown: &[usize], cols: u16) -> GridState {
    let (tree, _) = Tree::build(&keys(&NESTED), shown);
    GridState {
        cols,
        rows: 2,
        body: Rect::new(0, 1, 80, 22),
        sections: Sections {
            tree,
            ..Sections::default()
        },
        ..GridState::default()
    }
}

#[test]
fn focus_walks_headers_and_charts_and_collapse_takes_it_to_the_header() {
    let n = NESTED.len();
    let mut g = grid(&(0..n).collect::<Vec<_>>(), 2);
    g.settle_sections(n);
    assert_eq!(g.item(), Item::Chart(0));
    // Back from the first chart: the root's header.
    g.section_step(-1, false);
    assert_eq!(g.item(), Item::Header(0));
    assert_eq!(g.focused_header_name(), Some(ROOT_LABEL));
    // Right over the root's 3 charts, then `eval`'s header.
    g.section_step(4, false);
    assert_eq!(g.item(), Item::Header(1));
    assert_eq!(g.focused_header_name(), Some("eval"));
    // Down: eval/loss, then eval/val's header; the same column where it can.
    g.section_vertical(1);
    assert_eq!(g.item(), Item::Chart(3));
    g.section_vertical(2);
    assert_eq!(g.item(), Item::Chart(4));
    // Z on a chart collapses its own section (eval/val): its header has the focus.
    g.toggle_focused_section(n);
    assert!(g.sections.is_collapsed(2));
    assert_eq!(g.item(), Item::Header(2));
    // and again expands it.
    g.toggle_focused_section(n);
    assert!(!g.sections.is_collapsed(2));
    // A chart hidden by collapsing an outer section gives the focus to it.
    g.set_item(Item::Chart(5));
    g.sections.toggle(1);
    g.settle_sections(n);
    assert_eq!(g.item(), Item::Header(1));
    // Charts only (full screen) skip the headers and hidden charts.
    g.set_item(Item::Chart(2));
    g.section_step(1, true);
    assert_eq!(g.item(), Item::Chart(7));
    // Collapse all (the sub-sections are inside `eval`), expand all.
    g.collapse_all(true, n);
    assert_eq!(g.section_rows().len(), 3);
    assert!(matches!(g.item(), Item::Header(_)));
    g.collapse_all(false, n);
    assert_eq!(g.section_rows().len(), 11);
}

#[test]
fn pages_move_to_their_first_item() {
    let n = NESTED.len();
    let mut g = grid(&(0..n).collect::<Vec<_>>(), 1);
    g.settle_sections(n);
    let rows = g.section_rows();
    let pages = g.section_pages(&rows);
    assert!(pages.len() > 3, "{pages:?}");
    for p in 0..pages.len() {
        g.section_goto_page(p);
        assert_eq!(g.section_page(&rows, &pages), p);
    }
    // Past the end: the last page.
    g.section_goto_page(99);
    assert_eq!(g.section_page(&rows, &pages), pages.len() - 1);
}

#[test]
fn deep_and_long_keys_nest_at_most_max_depth_and_build_quickly() {
    // Every level holds a key of its own and the deeper ones: a section at each
    // level, without the cap as deep as the keys are long.
    let mut ks = Vec::new();
    let mut p = String::from("a");
    for _ in 0..3000 {
        ks.push(format!("{p}/x"));
        p.push_str("/b");
    }
    // One key of 100k levels too.
    ks.push("q/".repeat(100_000));
    ks.sort();
    let shown: Vec<usize> = (0..ks.len()).collect();
    let (tree, order) = Tree::build(&ks, &shown);
    assert!(tree.has_sections());
    assert!(tree
        .sections
        .iter()
        .all(|s| usize::from(s.depth) < MAX_DEPTH));
    // Every chart is somewhere, once.
    let mut seen = order.clone();
    seen.sort_unstable();
    assert_eq!(seen, shown);
    let total: usize = tree
        .sections
        .iter()
        .filter(|s| s.parent.is_none())
        .map(|s| s.count)
        .sum();
    assert_eq!(total, ks.len());
}

/// Twenty charts on a grid of 5 × 4: a section of 4 and one of 16 are five chart
/// rows (4, 5, 5, 5, 1) and two headers; they share one page, the rows a little
/// shorter, rather than leave the last chart alone on a second page.
#[test]
fn as_many_charts_as_the_grid_holds_are_one_page_whatever_their_sections() {
    let mut ks: Vec<String> = (0..4).map(|i| format!("c{i}")).collect();
    ks.extend((0..16).map(|i| format!("train/m{i:02}")));
    let (tree, _) = Tree::build(&ks, &(0..20).collect::<Vec<_>>());
    let s = Sections {
        tree,
        ..Sections::default()
    };
    let rows = s.rows(5);
    assert_eq!(rows.len(), 7, "{rows:?}");
    let body = Rect::new(0, 1, 200, 46);
    let p = pages(&rows, body.height, 4, 20);
    assert_eq!(
        p,
        [Page {
            cont: None,
            rows: 0..7
        }]
    );
    let slots = place(&p[0], &rows, body, 5, 4);
    let mut charts = Vec::new();
    for (r, slot) in &slots {
        assert!(r.bottom() <= body.bottom(), "{slots:?}");
        if let Slot::Chart(c) = slot {
            // 44 lines shared by five rows.
            assert!(r.height >= 8, "{slots:?}");
            charts.push(*c);
        }
    }
    assert_eq!(charts, (0..20).collect::<Vec<_>>());
    // One chart more than the grid holds: pages as before, at most 4 rows each.
    ks.push("train/m16".to_owned());
    let (tree, _) = Tree::build(&ks, &(0..21).collect::<Vec<_>>());
    let s = Sections {
        tree,
        ..Sections::default()
    };
    let rows = s.rows(5);
    let p = pages(&rows, body.height, 4, 20);
    assert_eq!(p.len(), 2, "{p:?}");
    // Nor where five rows do not fit at the shortest a row gets: 4 × 5 rows of
    // at least 6 lines, 2 headers, in 30 lines.
    let (tree, _) = Tree::build(&ks[..20], &(0..20).collect::<Vec<_>>());
    let s = Sections {
        tree,
        ..Sections::default()
    };
    let rows = s.rows(5);
    assert_eq!(pages(&rows, 30, 4, 20).len(), 2);
}
