//! Text from files is untrusted: strip escape sequences and control characters
//! before anything reaches the terminal.

/// Remove ANSI/VT escape sequences (CSI, OSC and other string sequences, two-byte
/// escapes) and control characters; tabs become a space, newlines a `⏎` mark.
#[must_use]
pub fn sanitize(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() || c == '\u{1b}') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => match it.next() {
                Some('[') => {
                    for d in it.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&d) {
                            break;
                        }
                    }
                }
                Some(']' | 'P' | '_' | '^' | 'X') => {
                    while let Some(d) = it.next() {
                        if d == '\u{7}' || d == '\u{9c}' {
                            break;
                        }
                        if d == '\u{1b}' && it.peek() == Some(&'\\') {
                            it.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\u{9b}' => {
                for d in it.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&d) {
                        break;
                    }
                }
            }
            '\t' => out.push(' '),
            '\n' => out.push('⏎'),
            c if c.is_control() => {}
            // Bidi overrides and other invisible formatting can reorder what is drawn.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn strips_sequences() {
        assert_eq!(sanitize("plain"), "plain");
        assert_eq!(sanitize("\x1b[2J\x1b[31mred\x1b[0m"), "red");
        assert_eq!(sanitize("a\x1b]0;evil title\x07b"), "ab");
        assert_eq!(
            sanitize("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
            "alink"
        );
        assert_eq!(sanitize("x\u{0}\u{7}\u{8}y\tz\r"), "xy z");
        assert_eq!(sanitize("\u{9b}31mz"), "z");
        assert_eq!(sanitize("a\nb"), "a⏎b");
    }
}
