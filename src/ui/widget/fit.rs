//! Text in cells: display widths, truncation with an ellipsis, word wrapping and
//! clipped writes into the buffer.

use ratatui::buffer::Buffer;
use ratatui::style::Style;

/// Write `s` at (x, y), at most `max` columns; the columns written.
pub(crate) fn put(buf: &mut Buffer, x: u16, y: u16, s: &str, max: u16, style: Style) -> u16 {
    if max == 0 {
        return 0;
    }
    let (end, _) = buf.set_stringn(x, y, s, usize::from(max), style);
    end.saturating_sub(x)
}

/// The `width` columns from `x` on row `y` (those written, up to `end`) drawn
/// reversed: a prompt's prefill, selected, which the first key typed replaces.
pub(crate) fn reverse(buf: &mut Buffer, (x, y): (u16, u16), width: u16, end: u16) {
    let w = width.min(end.saturating_sub(x));
    if w > 0 {
        let sel = Style::new().add_modifier(ratatui::style::Modifier::REVERSED);
        buf.set_style(ratatui::layout::Rect::new(x, y, w, 1), sel);
    }
}

/// Truncate to `w` display columns with an ellipsis.
#[must_use]
pub(crate) fn fit(s: &str, w: usize) -> String {
    use unicode_segmentation::UnicodeSegmentation as _;
    use unicode_width::UnicodeWidthStr;
    // By grapheme, as the terminal draws them: an emoji joined of several takes
    // two columns, not the sum of its parts.
    if s.width() <= w {
        return s.to_owned();
    }
    if w == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in s.graphemes(true) {
        let cw = g.width();
        if used + cw + 1 > w {
            break;
        }
        out.push_str(g);
        used += cw;
    }
    out.push('…');
    out
}

/// [`fit`] for a key path (`optim.sched.warmup`, `layers[12]`): cut in the middle
/// when its last part is short, so keys that differ only there stay told apart
/// (`model.encoder.lay….3`, not `model.encoder.layer…` for every one).
#[must_use]
pub(crate) fn fit_key(s: &str, w: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    if s.width() <= w {
        return s.to_owned();
    }
    let last = s
        .char_indices()
        .rev()
        .find(|&(_, c)| matches!(c, '.' | '/' | '['))
        .map(|(i, _)| &s[i..]);
    match last {
        // The head keeps at least half the room.
        Some(tail) if tail.len() < s.len() && tail.width() * 2 <= w => {
            let head = &s[..s.len() - tail.len()];
            format!("{}{tail}", fit(head, w - tail.width()))
        }
        _ => fit(s, w),
    }
}

/// Truncate to `w` display columns at a word boundary, with an ellipsis (prose such
/// as why a device is unavailable: never cut inside a word, unless its first word
/// alone is wider than `w`).
#[must_use]
pub(crate) fn fit_words(s: &str, w: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    if s.width() <= w {
        return s.to_owned();
    }
    let mut out = String::new();
    for word in s.split(' ') {
        let need = out.width() + usize::from(!out.is_empty()) + word.width();
        if need + 1 > w {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.is_empty() {
        return fit(s, w);
    }
    out.push('…');
    out
}

/// Display width of `s` in columns.
pub(crate) fn width(s: &str) -> u16 {
    use unicode_width::UnicodeWidthStr;
    u16::try_from(s.width()).unwrap_or(u16::MAX)
}

/// `s` in rows of at most `w` display columns, broken at spaces where it can be (a
/// word longer than a row is cut).
pub(crate) fn word_wrap(s: &str, w: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let mut rows: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in s.split(' ') {
        let need = if cur.is_empty() { 0 } else { cur.width() + 1 };
        if need + word.width() <= w {
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
            continue;
        }
        if !cur.is_empty() {
            rows.push(std::mem::take(&mut cur));
        }
        let mut parts = crate::text::wrap(word, w);
        if let Some(last) = parts.pop() {
            rows.extend(parts.into_iter().map(str::to_owned));
            cur = last.to_owned();
        }
    }
    rows.push(cur);
    rows
}

/// [`fit`] to `w` columns, then padded with spaces to exactly `w` (by display
/// width: `format!("{:<w$}")` pads by chars, so a wide char would push what
/// follows a column further right); `right`: the text against the right edge.
#[must_use]
pub(crate) fn fit_pad(s: &str, w: usize, right: bool) -> String {
    use unicode_width::UnicodeWidthStr;
    let cut = fit(s, w);
    let pad = " ".repeat(w.saturating_sub(cut.width()));
    if right {
        pad + &cut
    } else {
        cut + &pad
    }
}

#[cfg(test)]
mod tests {

    /// A joined emoji (a family: four emoji, three joiners) is the two columns the
    /// terminal draws, not eight: text around it is not cut early, nor inside it.
    #[test]
    fn a_joined_emoji_counts_as_two_columns() {
        let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
        let name = format!("run-{family}-jp");
        assert_eq!(width(&name), 9);
        assert_eq!(fit(&name, 9), name);
        assert_eq!(fit(&name, 8), format!("run-{family}-…"));
        assert_eq!(fit(&name, 7), format!("run-{family}…"));
        assert_eq!(fit(&name, 6), "run-…");
    }
    #[test]
    fn a_key_is_cut_in_the_middle_where_its_last_part_tells_it_apart() {
        use super::fit_key;
        let keys: Vec<String> = (0..12).map(|i| format!("{}.{i}", "k".repeat(30))).collect();
        let shown: Vec<String> = keys.iter().map(|k| fit_key(k, 16)).collect();
        assert!(shown.iter().all(|s| s.chars().count() <= 16), "{shown:?}");
        let mut distinct = shown.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), keys.len(), "{shown:?}");
        assert_eq!(fit_key("optim.sched.warmup", 17), "optim.sch….warmup");
        // A long last part: cut at the end as before; short keys as they are.
        assert_eq!(fit_key("network.tcpRetransmits", 17), "network.tcpRetra…");
        assert_eq!(fit_key("loss", 17), "loss");
        assert_eq!(fit_key("layers[12]", 8), "lay…[12]");
    }
    use super::*;

    #[test]
    fn fit_words_cuts_between_words() {
        let s = "rocm-smi not found on PATH";
        assert_eq!(fit_words(s, 40), s);
        assert_eq!(fit_words(s, 26), s);
        // Never `rocm-smi not found on P…`.
        assert_eq!(fit_words(s, 25), "rocm-smi not found on…");
        assert_eq!(fit_words(s, 13), "rocm-smi not…");
        // A first word wider than the room is cut (nothing else fits).
        assert_eq!(fit_words(s, 6), "rocm-…");
        assert_eq!(fit_words(s, 0), "");
    }
}
