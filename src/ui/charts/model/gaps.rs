//! The x ranges a chart skips: steps lost to damage, and steps between a
//! resumed run's segments; and the legend's words for them.

/// The `_step` ranges no segment of a resumed run logged: between one segment's
/// last step and the next one's first, when they are not consecutive. (A segment
/// that starts at or before the last one's end rewound: it overlaps, nothing is
/// missing; its line is its own either way.)
///
/// `segments`: each drawn series' workspace run (segments share it) and x bounds.
pub(crate) fn resume_gaps(segments: &[(Option<&str>, (f64, f64))]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for &(key, _) in segments {
        let Some(key) = key.filter(|k| !done.contains(k)) else {
            continue;
        };
        done.push(key);
        let mut spans: Vec<(f64, f64)> = segments
            .iter()
            .filter(|(k, _)| *k == Some(key))
            .map(|&(_, b)| b)
            .collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in spans.windows(2) {
            let (end, next) = (w[0].1, w[1].0);
            if next > end + 1.0 {
                out.push((end, next));
            }
        }
    }
    out
}

/// The legend's words for the gaps inside `x`: the first, and how many more.
pub(crate) fn gap_note(
    lost: &[(f64, f64)],
    missing: &[(f64, f64)],
    x: (f64, f64),
) -> Option<String> {
    let inside = |&&(a, b): &&(f64, f64)| b >= x.0 && a <= x.1;
    let mut all: Vec<((f64, f64), &str)> = lost
        .iter()
        .filter(inside)
        .map(|&g| (g, "lost"))
        .chain(missing.iter().filter(inside).map(|&g| (g, "missing")))
        .collect();
    all.sort_by(|a, b| a.0 .0.total_cmp(&b.0 .0));
    let &((a, b), what) = all.first()?;
    let (first, last) = (a + 1.0, b - 1.0);
    let mut note = if last > first {
        format!("steps {first:.0}–{last:.0} {what}")
    } else {
        format!("step {first:.0} {what}")
    };
    if all.len() > 1 {
        note.push_str(&format!(" (+{} more)", all.len() - 1));
    }
    Some(note)
}

#[cfg(test)]
mod tests;
