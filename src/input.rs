//! Terminal input: the bytes read from the tty, split into keys and mouse reports.
//!
//! crossterm's own reader waits without limit for the end of an unfinished escape
//! sequence: a stray `ESC [ <` held back every later key, `ctrl+c` included, until an
//! `m` arrived. Here a sequence gives up when a byte arrives that cannot continue it
//! (that byte is then read as a key of its own), or when no byte has arrived for
//! [`ESC_TIMEOUT`]; a lone ESC is then the Escape key. The events are crossterm's
//! `KeyEvent` and `MouseEvent`, as crossterm itself reports them, so the app is the
//! same whichever reader runs. A bracketed paste (`ESC [ 200 ~` … `ESC [ 201 ~`)
//! is one [`Input::Paste`] of its raw text, never keys: a pasted newline is not
//! Enter and a pasted `q` does not quit.

use std::time::Duration;

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};

/// How long an unfinished escape sequence waits for its next byte. A terminal writes
/// a sequence at once: its bytes come in one read, or within a few milliseconds
/// when a slow link splits them; a person pressing Escape and then a key is slower.
pub const ESC_TIMEOUT: Duration = Duration::from_millis(50);

/// The longest escape sequence kept (an SGR mouse report at column and row 9999 is
/// 16 bytes): anything longer is garbage and is dropped.
const MAX_SEQ: usize = 64;

const ESC: u8 = 0x1b;

/// How long a paste whose end marker has not come waits for its next byte before
/// it is given up as pasted so far (a link may pause longer inside a paste than
/// inside one escape sequence). Bounded, so a terminal that never ends a paste
/// does not swallow every later key, `ctrl+c` included.
pub const PASTE_TIMEOUT: Duration = Duration::from_secs(1);

/// The most bytes of one paste kept; the rest, up to its end marker, is dropped
/// (no prompt takes more than a few hundred characters).
const MAX_PASTE: usize = 64 << 10;

/// The bracketed paste's end marker.
const PASTE_END: &[u8] = b"\x1b[201~";

/// One thing the user did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Key(KeyEvent),
    Mouse(MouseEvent),
    /// Text pasted in bracketed paste mode, as the terminal sent it (lossy UTF-8,
    /// control characters and all: untrusted).
    Paste(String),
}

/// What the bytes at the front of the buffer are.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// The first `n` bytes are this event, or nothing we report (an unknown or
    /// broken sequence, a terminal's answer to a query).
    Done(usize, Option<Input>),
    /// The first `n` bytes are a bracketed paste's start marker.
    PasteStart(usize),
    /// The bytes so far begin a sequence that more bytes may complete.
    More,
}

/// Splits a byte stream into events. Holds at most one unfinished sequence.
#[derive(Debug, Default)]
pub struct Parser {
    buf: Vec<u8>,
    /// An answer string was given up right after an ESC (its `\` may follow).
    string_cut: bool,
    /// The bytes of a bracketed paste under way (its end marker not yet read).
    paste: Option<Vec<u8>>,
}

impl Parser {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Add bytes read from the terminal; complete events go to `out`, an unfinished
    /// sequence at the end waits for more bytes or [`Parser::flush`].
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Input>) {
        // A lone ESC from an earlier read, then a byte that cannot continue an escape
        // sequence: Escape was pressed, then that key (a terminal writes Alt+key,
        // ESC and the key, at once, so they come in one read).
        // An answer string split after its ESC continues it, as `[` and `O` do.
        let continues = |b: &[u8]| match b {
            [b'[' | b'O' | b']', ..] => true,
            [b'P' | b'_', c, ..] => starts_answer(*c),
            _ => false,
        };
        if self.paste.is_none() && self.buf == [ESC] && !bytes.is_empty() && !continues(bytes) {
            out.push(key(KeyCode::Esc, KeyModifiers::NONE));
            self.buf.clear();
        }
        // The `\` of an answer string's end whose ESC came alone and was given up
        // with the string (a slow read): part of the answer, not a key.
        let bytes = if std::mem::take(&mut self.string_cut) {
            bytes.strip_prefix(b"\\").unwrap_or(bytes)
        } else {
            bytes
        };
        self.buf.extend_from_slice(bytes);
        let mut at = 0;
        while at < self.buf.len() {
            if let Some(text) = self.paste.as_mut() {
                let (taken, ended) = paste_bytes(&self.buf[at..], text);
                at += taken;
                if !ended {
                    break;
                }
                out.extend(self.paste.take().map(paste));
                continue;
            }
            match parse(&self.buf[at..]) {
                Step::Done(n, ev) => {
                    out.extend(ev);
                    at += n.max(1);
                }
                Step::PasteStart(n) => {
                    self.paste = Some(Vec::new());
                    at += n;
                }
                Step::More => break,
            }
        }
        self.buf.drain(..at);
    }

    /// Whether an unfinished sequence or paste waits for more bytes.
    #[must_use]
    pub fn pending(&self) -> bool {
        !self.buf.is_empty() || self.paste.is_some()
    }

    /// How long to wait for the next byte before [`Parser::flush`]: a paste
    /// under way waits longer than an escape sequence.
    #[must_use]
    pub fn timeout(&self, esc: Duration) -> Duration {
        if self.paste.is_some() {
            esc.max(PASTE_TIMEOUT)
        } else {
            esc
        }
    }

    /// No byte came within [`ESC_TIMEOUT`]: give up on the unfinished sequence. A
    /// lone ESC is the Escape key, ESC `[`, `O`, `P` and `_` are Alt with that key
    /// (as a terminal sends them); anything longer was not typed and is dropped.
    /// A paste whose end marker has not come is given up as pasted so far (the
    /// start of a marker held back is text then).
    pub fn flush(&mut self, out: &mut Vec<Input>) {
        if let Some(mut text) = self.paste.take() {
            keep_pasted(&mut text, &self.buf);
            self.buf.clear();
            out.push(paste(text));
            return;
        }
        let ev = match self.buf.as_slice() {
            [ESC] => Some(key(KeyCode::Esc, KeyModifiers::NONE)),
            [ESC, c @ (b'[' | b'O' | b'P' | b'_')] => Some(alt(char_key(char::from(*c)))),
            _ => None,
        };
        out.extend(ev);
        self.string_cut = matches!(self.buf.as_slice(), [ESC, b']' | b'P' | b'_', .., ESC]);
        self.buf.clear();
    }
}

/// Pasted bytes from the front of `buf` into `text`, up to and past the end
/// marker: how many bytes were taken, and whether the paste ended. A tail that may
/// begin the end marker is left in `buf` for the next read.
fn paste_bytes(buf: &[u8], text: &mut Vec<u8>) -> (usize, bool) {
    if let Some(i) = buf.windows(PASTE_END.len()).position(|w| w == PASTE_END) {
        keep_pasted(text, &buf[..i]);
        return (i + PASTE_END.len(), true);
    }
    let held = (1..PASTE_END.len())
        .rev()
        .find(|&n| buf.len() >= n && buf.ends_with(&PASTE_END[..n]))
        .unwrap_or(0);
    let taken = buf.len() - held;
    keep_pasted(text, &buf[..taken]);
    (taken, false)
}

/// Append `bytes` to a paste, up to [`MAX_PASTE`] bytes in all.
fn keep_pasted(text: &mut Vec<u8>, bytes: &[u8]) {
    let room = MAX_PASTE.saturating_sub(text.len());
    text.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

fn paste(text: Vec<u8>) -> Input {
    Input::Paste(String::from_utf8_lossy(&text).into_owned())
}

fn key(code: KeyCode, mods: KeyModifiers) -> Input {
    Input::Key(KeyEvent::new(code, mods))
}

/// A typed character: SHIFT for upper case, as crossterm reports it.
fn char_key(c: char) -> Input {
    let mods = if c.is_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    key(KeyCode::Char(c), mods)
}

fn alt(ev: Input) -> Input {
    match ev {
        Input::Key(mut k) => {
            k.modifiers |= KeyModifiers::ALT;
            Input::Key(k)
        }
        other => other,
    }
}

/// The event at the front of `buf` (not empty).
fn parse(buf: &[u8]) -> Step {
    let c = buf[0];
    let ev = match c {
        ESC => return parse_esc(buf),
        b'\r' => key(KeyCode::Enter, KeyModifiers::NONE),
        b'\t' => key(KeyCode::Tab, KeyModifiers::NONE),
        0x7f => key(KeyCode::Backspace, KeyModifiers::NONE),
        // In raw mode \n is ctrl+j (crossterm's reading too): Enter sends \r.
        0x01..=0x1a => key(
            KeyCode::Char(char::from(c - 0x01 + b'a')),
            KeyModifiers::CONTROL,
        ),
        0x1c..=0x1f => key(
            KeyCode::Char(char::from(c - 0x1c + b'4')),
            KeyModifiers::CONTROL,
        ),
        0x00 => key(KeyCode::Char(' '), KeyModifiers::CONTROL),
        _ => return parse_utf8(buf),
    };
    Step::Done(1, Some(ev))
}

/// A UTF-8 character; a malformed byte is dropped alone, so the next one is read
/// afresh.
fn parse_utf8(buf: &[u8]) -> Step {
    let need = match buf[0] {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Step::Done(1, None),
    };
    for (i, &b) in buf.iter().enumerate().take(need).skip(1) {
        if b & 0xc0 != 0x80 {
            return Step::Done(i, None);
        }
    }
    if buf.len() < need {
        return Step::More;
    }
    match std::str::from_utf8(&buf[..need])
        .ok()
        .and_then(|s| s.chars().next())
    {
        Some(c) => Step::Done(need, Some(char_key(c))),
        // Overlong or surrogate: drop the lead byte, the rest are dropped in turn.
        None => Step::Done(1, None),
    }
}

fn parse_esc(buf: &[u8]) -> Step {
    let Some(&next) = buf.get(1) else {
        return Step::More;
    };
    match next {
        b'[' => parse_csi(buf),
        b'O' => parse_ss3(buf),
        // A terminal's answer as a string (OSC colours, DCS version or capability
        // answers, APC graphics answers), never typed: dropped whole. It may come
        // after leet starts when the shell asked before (fish asks at every prompt),
        // and read as keys it would toggle panes, and its `ESC \` end, split off
        // by a slow read, would be a lone Escape.
        b']' => parse_string(buf),
        // Alt+P or Alt+_ alone, or an answer whose next byte is on its way: wait
        // (a timeout makes it the key).
        b'P' | b'_' if buf.len() == 2 => Step::More,
        b'P' | b'_' if starts_answer(buf[2]) => parse_string(buf),
        // Escape pressed twice: the first is a key, the second starts again.
        ESC => Step::Done(1, Some(key(KeyCode::Esc, KeyModifiers::NONE))),
        // ESC before a key is Alt with that key (ESC ^C is ctrl+alt+c, which quits).
        _ => match parse(&buf[1..]) {
            Step::Done(n, ev) => Step::Done(n + 1, ev.map(alt)),
            Step::PasteStart(n) => Step::PasteStart(n + 1),
            Step::More => Step::More,
        },
    }
}

/// Longest answer string held (a colour, a version, a capability name).
const MAX_STRING: usize = 4096;

/// A byte after `ESC P` or `ESC _` that begins a terminal's answer rather than a key
/// typed after Alt+P or Alt+_ (DCS `1$r`, `>|`, `1+r`, `!|`; APC `G` for graphics).
fn starts_answer(c: u8) -> bool {
    matches!(c, b'0'..=b'9' | b'>' | b'!' | b'=' | b'$' | b'+' | b'G')
}

/// `ESC ] …`, `ESC P …`, `ESC _ …` up to BEL or `ESC \`: dropped. A control byte
/// other than ESC ends it early (it is read again as a key, so ctrl+c always
/// arrives), as does an ESC that does not begin `ESC \`; a string over
/// [`MAX_STRING`] bytes is dropped as far as it goes.
fn parse_string(buf: &[u8]) -> Step {
    for (i, &b) in buf.iter().enumerate().skip(2) {
        match b {
            0x07 => return Step::Done(i + 1, None),
            ESC => {
                return match buf.get(i + 1) {
                    None => Step::More,
                    Some(b'\\') => Step::Done(i + 2, None),
                    Some(_) => Step::Done(i, None),
                }
            }
            0x00..=0x1f => return Step::Done(i, None),
            _ if i >= MAX_STRING => return Step::Done(i, None),
            _ => {}
        }
    }
    Step::More
}

/// `ESC O x`: cursor and F1–F4 keys in the terminal's application mode.
fn parse_ss3(buf: &[u8]) -> Step {
    let Some(&c) = buf.get(2) else {
        return Step::More;
    };
    let code = if let Some(k) = cursor_key(c) {
        k
    } else {
        match c {
            b'M' => KeyCode::Enter,
            b'P'..=b'S' => KeyCode::F(1 + c - b'P'),
            0x40..=0x7e => return Step::Done(3, None),
            // Not a sequence: Alt+O, then the byte as a key of its own.
            _ => return Step::Done(2, Some(alt(char_key('O')))),
        }
    };
    Step::Done(3, Some(key(code, KeyModifiers::NONE)))
}

/// The arrow, Home and End keys, whose final byte is the same after `ESC O` and `ESC [`.
fn cursor_key(fin: u8) -> Option<KeyCode> {
    Some(match fin {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        _ => return None,
    })
}

/// `ESC [ …`: a control sequence (keys, mouse reports, answers to queries).
fn parse_csi(buf: &[u8]) -> Step {
    let Some(&first) = buf.get(2) else {
        return Step::More;
    };
    match first {
        b'<' => return parse_sgr_mouse(buf),
        b'M' => return parse_x10_mouse(buf),
        // The Linux console's F1–F5: ESC [ [ A … ESC [ [ E.
        b'[' => {
            return match buf.get(3) {
                None => Step::More,
                Some(&c @ b'A'..=b'E') => {
                    Step::Done(4, Some(key(KeyCode::F(1 + c - b'A'), KeyModifiers::NONE)))
                }
                Some(0x40..=0x7e) => Step::Done(4, None),
                Some(_) => Step::Done(3, None),
            }
        }
        _ => {}
    }
    // Parameter and intermediate bytes (0x20–0x3f), then one final byte (0x40–0x7e).
    for (i, &b) in buf.iter().enumerate().skip(2) {
        match b {
            0x20..=0x3f if i < MAX_SEQ => {}
            b'~' if &buf[2..i] == b"200" => return Step::PasteStart(i + 1),
            0x40..=0x7e => return Step::Done(i + 1, decode_csi(&buf[2..i], b)),
            // A control byte or a byte that cannot be in a sequence ends it: the
            // sequence is dropped and the byte read as a key (ctrl+c among them).
            _ => return Step::Done(i, None),
        }
    }
    Step::More
}

/// The parameters of a CSI sequence as numbers: `1;5` → [1, 5]; a sub-parameter
/// (`5:3`) keeps its first part, an empty one is 0, a malformed one None.
fn numbers(params: &[u8]) -> Option<Vec<(u32, Option<u32>)>> {
    let s = std::str::from_utf8(params).ok()?;
    s.split(';')
        .map(|p| {
            let mut sub = p.split(':');
            let num = |x: Option<&str>| -> Option<Option<u32>> {
                match x {
                    None => Some(None),
                    Some("") => Some(Some(0)),
                    Some(t) => t.parse().ok().map(Some),
                }
            };
            Some((num(sub.next())?.unwrap_or(0), num(sub.next())?))
        })
        .collect()
}

/// xterm's modifier parameter: 1 + bits of shift, alt, ctrl, super, hyper, meta.
fn modifiers(p: u32) -> KeyModifiers {
    let m = p.saturating_sub(1);
    let mut mods = KeyModifiers::NONE;
    for (bit, flag) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
        (8, KeyModifiers::SUPER),
        (16, KeyModifiers::HYPER),
        (32, KeyModifiers::META),
    ] {
        if m & bit != 0 {
            mods |= flag;
        }
    }
    mods
}

fn kind(k: Option<u32>) -> KeyEventKind {
    match k {
        Some(2) => KeyEventKind::Repeat,
        Some(3) => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    }
}

fn decode_csi(params: &[u8], fin: u8) -> Option<Input> {
    // Private answers (`?…u`, `?…c`, `>…c`) and bracketed paste are not keys.
    if params.first().is_some_and(|c| (b'<'..=b'?').contains(c)) {
        return None;
    }
    let nums = if params.is_empty() {
        Vec::new()
    } else {
        numbers(params)?
    };
    // The modifier parameter, and the event kind after its colon (kitty).
    let (mods, kind) = match nums.get(1) {
        Some(&(m, k)) => (modifiers(m), kind(k)),
        // `ESC [ 5 A` (a lone parameter) is an older spelling of `ESC [ 1 ; 5 A`.
        None if fin != b'~' && fin != b'u' => (
            nums.first()
                .map_or(KeyModifiers::NONE, |&(m, _)| modifiers(m)),
            KeyEventKind::Press,
        ),
        None => (KeyModifiers::NONE, KeyEventKind::Press),
    };
    let code = if let Some(k) = cursor_key(fin) {
        k
    } else {
        match fin {
            b'P' => KeyCode::F(1),
            b'Q' => KeyCode::F(2),
            b'S' => KeyCode::F(4),
            b'Z' if nums.is_empty() => {
                return Some(Input::Key(KeyEvent::new(
                    KeyCode::BackTab,
                    KeyModifiers::SHIFT,
                )))
            }
            b'~' => tilde_key(nums.first()?.0)?,
            b'u' => return csi_u(&nums, mods, kind),
            b'M' => return rxvt_mouse(&nums),
            // `R` is the answer to a cursor position query (and `1;5R` cannot be told
            // apart from one); focus reports `I`/`O` and the rest are not keys.
            _ => return None,
        }
    };
    Some(Input::Key(KeyEvent::new_with_kind(code, mods, kind)))
}

/// `ESC [ n ~`: the VT220 keys.
fn tilde_key(n: u32) -> Option<KeyCode> {
    let f = |base: u32| u8::try_from(n - base).ok().map(KeyCode::F);
    match n {
        1 | 7 => Some(KeyCode::Home),
        2 => Some(KeyCode::Insert),
        3 => Some(KeyCode::Delete),
        4 | 8 => Some(KeyCode::End),
        5 => Some(KeyCode::PageUp),
        6 => Some(KeyCode::PageDown),
        11..=15 => f(10),
        17..=21 => f(11),
        23..=26 => f(12),
        28..=29 => f(15),
        31..=34 => f(17),
        _ => None,
    }
}

/// `ESC [ codepoint ; mods u` ("fixterms", kitty's keyboard protocol).
fn csi_u(nums: &[(u32, Option<u32>)], mods: KeyModifiers, kind: KeyEventKind) -> Option<Input> {
    let c = char::from_u32(nums.first()?.0)?;
    let code = match c {
        '\x1b' => KeyCode::Esc,
        '\r' => KeyCode::Enter,
        '\t' if mods.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        '\t' => KeyCode::Tab,
        '\x7f' => KeyCode::Backspace,
        c if c.is_control() => return None,
        c => KeyCode::Char(c),
    };
    Some(Input::Key(KeyEvent::new_with_kind_and_state(
        code,
        mods,
        kind,
        KeyEventState::NONE,
    )))
}

/// The button byte of a mouse report: button, shift/alt/ctrl, motion.
fn mouse_kind(cb: u32) -> Option<(MouseEventKind, KeyModifiers)> {
    let button = (cb & 0b11) | ((cb & 0b1100_0000) >> 4);
    let motion = cb & 0b10_0000 != 0;
    let kind = match (button, motion) {
        (0, false) => MouseEventKind::Down(MouseButton::Left),
        (1, false) => MouseEventKind::Down(MouseButton::Middle),
        (2, false) => MouseEventKind::Down(MouseButton::Right),
        (0, true) => MouseEventKind::Drag(MouseButton::Left),
        (1, true) => MouseEventKind::Drag(MouseButton::Middle),
        (2, true) => MouseEventKind::Drag(MouseButton::Right),
        (3, false) => MouseEventKind::Up(MouseButton::Left),
        (3..=5, true) => MouseEventKind::Moved,
        (4, false) => MouseEventKind::ScrollUp,
        (5, false) => MouseEventKind::ScrollDown,
        (6, false) => MouseEventKind::ScrollLeft,
        (7, false) => MouseEventKind::ScrollRight,
        _ => return None,
    };
    let mut mods = KeyModifiers::NONE;
    if cb & 0b100 != 0 {
        mods |= KeyModifiers::SHIFT;
    }
    if cb & 0b1000 != 0 {
        mods |= KeyModifiers::ALT;
    }
    if cb & 0b1_0000 != 0 {
        mods |= KeyModifiers::CONTROL;
    }
    Some((kind, mods))
}

/// A mouse event at 1-based column `x`, row `y` (0 is read as 1).
fn mouse(cb: u32, x: u32, y: u32) -> Option<Input> {
    let (kind, modifiers) = mouse_kind(cb)?;
    let at = |v: u32| u16::try_from(v.saturating_sub(1)).unwrap_or(u16::MAX);
    Some(Input::Mouse(MouseEvent {
        kind,
        column: at(x),
        row: at(y),
        modifiers,
    }))
}

/// `ESC [ b ; x ; y M`: urxvt's mouse mode (1015), the button byte + 32.
fn rxvt_mouse(nums: &[(u32, Option<u32>)]) -> Option<Input> {
    match nums {
        [(cb, _), (x, _), (y, _)] => mouse(cb.checked_sub(32)?, *x, *y),
        _ => None,
    }
}

/// `ESC [ < b ; x ; y M` (press) or `m` (release): SGR mouse mode (1006).
fn parse_sgr_mouse(buf: &[u8]) -> Step {
    for (i, &b) in buf.iter().enumerate().skip(3) {
        match b {
            b'0'..=b'9' | b';' if i < MAX_SEQ => {}
            b'M' | b'm' => {
                let ev = numbers(&buf[3..i]).and_then(|n| match n.as_slice() {
                    [(cb, _), (x, _), (y, _), ..] => {
                        let ev = mouse(*cb, *x, *y)?;
                        Some(match ev {
                            Input::Mouse(mut m) if b == b'm' => {
                                if let MouseEventKind::Down(button) = m.kind {
                                    m.kind = MouseEventKind::Up(button);
                                }
                                Input::Mouse(m)
                            }
                            other => other,
                        })
                    }
                    _ => None,
                });
                return Step::Done(i + 1, ev);
            }
            // Anything else cannot be in the report: drop what came so far and read
            // this byte as a key.
            _ => return Step::Done(i, None),
        }
    }
    Step::More
}

/// `ESC [ M b x y`: the normal mouse encoding, each value + 32 in one byte.
fn parse_x10_mouse(buf: &[u8]) -> Step {
    for i in 3..6 {
        match buf.get(i) {
            None => return Step::More,
            // A control byte cannot be a value: the report is broken.
            Some(&b) if b < 0x20 => return Step::Done(i, None),
            Some(_) => {}
        }
    }
    let v = |i: usize| u32::from(buf[i]) - 32;
    Step::Done(6, mouse(v(3), v(4), v(5)))
}

mod reader;
pub(crate) use reader::{read_loop, tty};

#[cfg(test)]
mod tests;
