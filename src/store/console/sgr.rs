//! SGR (`ESC [ … m`) styles of console text: the pen a stream writes with, how an
//! SGR sequence's parameters change it, and a finished line's styles as a few
//! byte ranges of its plain text. Nothing here is an escape sequence: the text
//! stays plain and the styles are data the console pane draws.

/// A colour as an SGR sequence named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SgrColor {
    /// The terminal's own (39, 49, or never set).
    #[default]
    Default,
    /// One of the 16 ANSI colours: 0–7 normal (30–37), 8–15 bright (90–97).
    Ansi(u8),
    /// One of the xterm 256 above the first 16 (`38;5;n`).
    Indexed(u8),
    /// 24-bit (`38;2;r;g;b`).
    Rgb(u8, u8, u8),
}

impl SgrColor {
    /// `38;5;n`'s colour: the first 16 are the ANSI ones.
    fn indexed(n: u8) -> Self {
        if n < 16 {
            SgrColor::Ansi(n)
        } else {
            SgrColor::Indexed(n)
        }
    }
}

/// The pen: colours and attributes text is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sgr {
    pub fg: SgrColor,
    pub bg: SgrColor,
    /// [`Sgr::BOLD`], [`Sgr::DIM`], … or'ed.
    pub attrs: u8,
}

impl Sgr {
    pub const BOLD: u8 = 1;
    pub const DIM: u8 = 2;
    pub const ITALIC: u8 = 4;
    pub const UNDERLINE: u8 = 8;
    pub const REVERSE: u8 = 16;

    /// Whether text in this style looks like plain text.
    #[must_use]
    pub fn is_plain(self) -> bool {
        self == Sgr::default()
    }

    #[must_use]
    pub fn has(self, attr: u8) -> bool {
        self.attrs & attr != 0
    }
}

/// A style over bytes `start..end` of a line's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StyleSpan {
    pub start: u32,
    pub end: u32,
    pub style: Sgr,
}

/// Most styled ranges kept per line: past them the rest of the line is plain
/// (a line that changes colour on every character costs no more than this).
pub const MAX_SPANS: usize = 64;

/// Longest CSI parameter string read as SGR; a longer one is not applied (no
/// terminal-made SGR comes near it, and the buffer stays small).
pub(super) const MAX_PARAMS: usize = 64;

/// Change `pen` as the SGR sequence with parameters `params` (the text between
/// `ESC [` and `m`, digits, `;` and `:` only) does. Unknown codes are ignored;
/// a colour with a missing or out-of-range part leaves the colour as it was.
pub(super) fn apply(pen: &mut Sgr, params: &str) {
    let mut groups = params.split(';');
    while let Some(group) = groups.next() {
        let mut sub = group.split(':');
        let Some(code) = number(sub.next().unwrap_or("")) else {
            continue;
        };
        match code {
            0 => *pen = Sgr::default(),
            1 => pen.attrs |= Sgr::BOLD,
            2 => pen.attrs |= Sgr::DIM,
            3 => pen.attrs |= Sgr::ITALIC,
            // `4:0` is "no underline"; `4:1`…`4:5` are underline kinds.
            4 if sub.next().and_then(number) == Some(0) => pen.attrs &= !Sgr::UNDERLINE,
            4 => pen.attrs |= Sgr::UNDERLINE,
            7 => pen.attrs |= Sgr::REVERSE,
            22 => pen.attrs &= !(Sgr::BOLD | Sgr::DIM),
            23 => pen.attrs &= !Sgr::ITALIC,
            24 => pen.attrs &= !Sgr::UNDERLINE,
            27 => pen.attrs &= !Sgr::REVERSE,
            30..=37 => pen.fg = SgrColor::Ansi(low(code - 30)),
            39 => pen.fg = SgrColor::Default,
            40..=47 => pen.bg = SgrColor::Ansi(low(code - 40)),
            49 => pen.bg = SgrColor::Default,
            90..=97 => pen.fg = SgrColor::Ansi(low(code - 90 + 8)),
            100..=107 => pen.bg = SgrColor::Ansi(low(code - 100 + 8)),
            38 | 48 => {
                let colour = if group.contains(':') {
                    extended_colon(&sub.collect::<Vec<_>>())
                } else {
                    extended_semicolon(&mut groups)
                };
                if let Some(c) = colour {
                    if code == 38 {
                        pen.fg = c;
                    } else {
                        pen.bg = c;
                    }
                }
            }
            _ => {}
        }
    }
}

/// A parameter's number; an empty one is 0, as terminals read it.
fn number(s: &str) -> Option<u16> {
    if s.is_empty() {
        Some(0)
    } else {
        s.parse().ok()
    }
}

fn low(n: u16) -> u8 {
    u8::try_from(n).unwrap_or(0)
}

fn byte(s: Option<&str>) -> Option<u8> {
    s.and_then(number).and_then(|n| u8::try_from(n).ok())
}

/// `38;5;n` or `38;2;r;g;b`: the colour's parts are the following parameters
/// (consumed even when they are out of range, as a terminal does).
fn extended_semicolon<'a>(groups: &mut impl Iterator<Item = &'a str>) -> Option<SgrColor> {
    match groups.next().and_then(number)? {
        5 => byte(groups.next()).map(SgrColor::indexed),
        2 => {
            let (r, g, b) = (groups.next(), groups.next(), groups.next());
            Some(SgrColor::Rgb(byte(r)?, byte(g)?, byte(b)?))
        }
        _ => None,
    }
}

/// `38:5:n`, `38:2:r:g:b` or `38:2:space:r:g:b` (ITU T.416, with the colour
/// space id, often empty).
fn extended_colon(sub: &[&str]) -> Option<SgrColor> {
    match (sub.first().copied().and_then(number)?, sub.len()) {
        (5, 2) => byte(Some(sub[1])).map(SgrColor::indexed),
        (2, 4) => Some(SgrColor::Rgb(
            byte(Some(sub[1]))?,
            byte(Some(sub[2]))?,
            byte(Some(sub[3]))?,
        )),
        (2, n) if n >= 5 => Some(SgrColor::Rgb(
            byte(Some(sub[2]))?,
            byte(Some(sub[3]))?,
            byte(Some(sub[4]))?,
        )),
        _ => None,
    }
}

/// The text of `chars` and its styled ranges (`styles[i]` is `chars[i]`'s): runs
/// of one style merged, plain runs left out, at most [`MAX_SPANS`].
pub(super) fn styled(chars: &[char], styles: &[Sgr]) -> (String, Box<[StyleSpan]>) {
    let text: String = chars.iter().collect();
    let mut spans: Vec<StyleSpan> = Vec::new();
    let mut at = 0usize;
    for (&c, &style) in chars.iter().zip(styles) {
        let end = at + c.len_utf8();
        let (start32, end32) = (offset(at), offset(end));
        at = end;
        if style.is_plain() {
            continue;
        }
        if let Some(last) = spans
            .last_mut()
            .filter(|l| l.end == start32 && l.style == style)
        {
            last.end = end32;
        } else if spans.len() == MAX_SPANS {
            break;
        } else {
            spans.push(StyleSpan {
                start: start32,
                end: end32,
                style,
            });
        }
    }
    (text, spans.into_boxed_slice())
}

/// A byte offset in a line, which is at most a few KiB long.
fn offset(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pen(params: &str) -> Sgr {
        let mut p = Sgr::default();
        apply(&mut p, params);
        p
    }

    #[test]
    fn basic_codes_set_and_reset() {
        assert_eq!(pen("31").fg, SgrColor::Ansi(1));
        assert_eq!(pen("1;92;44").fg, SgrColor::Ansi(10));
        assert_eq!(pen("1;92;44").bg, SgrColor::Ansi(4));
        assert_eq!(pen("1;92;44").attrs, Sgr::BOLD);
        assert_eq!(pen("103").bg, SgrColor::Ansi(11));
        assert_eq!(pen("1;2;3;4;7").attrs, 31);
        assert!(pen("31;1;0").is_plain());
        assert!(pen("31;1;").is_plain(), "an empty parameter is 0");
        assert!(pen("").is_plain());
        assert_eq!(
            pen("1;2;3;4;7;22").attrs,
            Sgr::ITALIC | Sgr::UNDERLINE | Sgr::REVERSE
        );
        assert_eq!(pen("3;4;7;23;24;27").attrs, 0);
        assert!(pen("31;41;39;49").is_plain());
        assert_eq!(pen("4:3").attrs, Sgr::UNDERLINE);
        assert_eq!(pen("4;4:0").attrs, 0);
        // Blink, strike-through and unknown codes change nothing drawn.
        assert!(pen("5;9;65535;99999").is_plain());
    }

    #[test]
    fn extended_colours_in_both_forms() {
        assert_eq!(pen("38;5;208").fg, SgrColor::Indexed(208));
        assert_eq!(pen("38;5;9").fg, SgrColor::Ansi(9));
        assert_eq!(pen("48;2;1;2;3").bg, SgrColor::Rgb(1, 2, 3));
        assert_eq!(pen("38:5:208").fg, SgrColor::Indexed(208));
        assert_eq!(pen("38:2:1:2:3").fg, SgrColor::Rgb(1, 2, 3));
        assert_eq!(pen("38:2::1:2:3").fg, SgrColor::Rgb(1, 2, 3));
        // The colour's parts are consumed: 1 after them is bold, not a colour part.
        let p = pen("38;2;10;20;30;1");
        assert_eq!((p.fg, p.attrs), (SgrColor::Rgb(10, 20, 30), Sgr::BOLD));
        // Out of range or cut short: the colour is left as it was.
        assert_eq!(pen("31;38;5;300").fg, SgrColor::Ansi(1));
        assert_eq!(pen("31;38;2;1;2").fg, SgrColor::Ansi(1));
        assert_eq!(pen("31;38;7;1").fg, SgrColor::Ansi(1));
        assert_eq!(pen("31;38:5").fg, SgrColor::Ansi(1));
    }

    #[test]
    fn spans_merge_runs_and_skip_plain_text() {
        let red = pen("31");
        let chars: Vec<char> = "aé红b".chars().collect();
        let styles = [Sgr::default(), red, red, Sgr::default()];
        let (text, spans) = styled(&chars, &styles);
        assert_eq!(text, "aé红b");
        assert_eq!(
            &*spans,
            &[StyleSpan {
                start: 1,
                end: 6,
                style: red
            }]
        );
        assert_eq!(&text[1..6], "é红");
    }

    #[test]
    fn spans_are_capped() {
        let (red, green) = (pen("31"), pen("32"));
        let chars = vec!['x'; 1000];
        let styles: Vec<Sgr> = (0..1000)
            .map(|i| if i % 2 == 0 { red } else { green })
            .collect();
        let (text, spans) = styled(&chars, &styles);
        assert_eq!(text.len(), 1000, "the text is all kept");
        assert_eq!(spans.len(), MAX_SPANS);
        assert_eq!(spans[MAX_SPANS - 1].end as usize, MAX_SPANS);
    }
}
