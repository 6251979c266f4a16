//! Unit tests of the grid's gap rules.

use super::*;

#[test]
fn a_resumed_run_is_missing_the_steps_between_its_segments() {
    let segs = [
        (Some("r1"), (0.0, 29.0)),
        // Another run in between: its own spans.
        (Some("r2"), (0.0, 99.0)),
        (Some("r1"), (50.0, 80.0)),
        // Contiguous: nothing missing.
        (Some("r1"), (81.0, 90.0)),
    ];
    assert_eq!(resume_gaps(&segs), [(29.0, 50.0)]);
}

#[test]
fn a_rewound_segment_or_a_lone_run_misses_nothing() {
    // The resumed fixture: the second segment starts again at step 0.
    assert!(resume_gaps(&[(Some("r"), (0.0, 29.0)), (Some("r"), (0.0, 19.0))]).is_empty());
    // Runs outside a workspace have no key: never segments of one run.
    assert!(resume_gaps(&[(None, (0.0, 9.0)), (None, (50.0, 60.0))]).is_empty());
}

#[test]
fn the_note_names_the_first_gap_in_view_and_counts_the_rest() {
    let lost = [(125.0, 168.0), (300.0, 302.0)];
    assert_eq!(
        gap_note(&lost, &[], (0.0, 400.0)).as_deref(),
        Some("steps 126–167 lost (+1 more)")
    );
    assert_eq!(
        gap_note(&lost, &[], (200.0, 400.0)).as_deref(),
        Some("step 301 lost")
    );
    assert_eq!(
        gap_note(&[], &[(29.0, 50.0)], (0.0, 90.0)).as_deref(),
        Some("steps 30–49 missing")
    );
    assert_eq!(gap_note(&lost, &[], (170.0, 290.0)), None);
}
