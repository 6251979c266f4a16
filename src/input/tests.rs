use super::*;
use crate::ui::keymap::Key;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

fn feed(bytes: &[u8]) -> (Vec<Input>, Parser) {
    let mut p = Parser::new();
    let mut out = Vec::new();
    p.feed(bytes, &mut out);
    (out, p)
}

/// All events of `bytes`, the unfinished end given up as on a timeout.
fn events(bytes: &[u8]) -> Vec<Input> {
    let (mut out, mut p) = feed(bytes);
    p.flush(&mut out);
    out
}

fn k(code: KeyCode, mods: KeyModifiers) -> Input {
    Input::Key(KeyEvent::new(code, mods))
}

fn plain(code: KeyCode) -> Input {
    k(code, KeyModifiers::NONE)
}

fn ch(c: char) -> Input {
    char_key(c)
}

fn ctrl(c: char) -> Input {
    k(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn mouse_at(kind: MouseEventKind, column: u16, row: u16, modifiers: KeyModifiers) -> Input {
    Input::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers,
    })
}

/// What terminals send for every key the shipped key map binds (and the other
/// names it accepts), read as the key map reads it.
const BOUND: &[(&[u8], &str)] = &[
    (b"q", "q"),
    (b"N", "N"),
    (b"R", "R"),
    (b"/", "/"),
    (b"\\", "\\"),
    (b"?", "?"),
    (b"[", "["),
    (b"]", "]"),
    (b"2", "2"),
    (b" ", "space"),
    (b"\x03", "ctrl+c"),
    (b"\x0c", "ctrl+l"),
    (b"\x15", "ctrl+u"),
    (b"\x1a", "ctrl+z"),
    (b"\r", "enter"),
    (b"\x1bOM", "enter"),
    (b"\t", "tab"),
    (b"\x1b[Z", "backtab"),
    (b"\x1b[Z", "shift+tab"),
    (b"\x7f", "backspace"),
    (b"\x1b[3~", "delete"),
    (b"\x1b[2~", "insert"),
    (b"\x1b[A", "up"),
    (b"\x1b[B", "down"),
    (b"\x1b[C", "right"),
    (b"\x1b[D", "left"),
    (b"\x1bOA", "up"),
    (b"\x1bOB", "down"),
    (b"\x1bOC", "right"),
    (b"\x1bOD", "left"),
    (b"\x1b[H", "home"),
    (b"\x1b[F", "end"),
    (b"\x1bOH", "home"),
    (b"\x1bOF", "end"),
    (b"\x1b[1~", "home"),
    (b"\x1b[7~", "home"),
    (b"\x1b[4~", "end"),
    (b"\x1b[8~", "end"),
    (b"\x1b[5~", "pgup"),
    (b"\x1b[6~", "pgdown"),
    (b"\x1bOP", "f1"),
    (b"\x1bOQ", "f2"),
    (b"\x1bOR", "f3"),
    (b"\x1bOS", "f4"),
    (b"\x1b[[A", "f1"),
    (b"\x1b[[E", "f5"),
    (b"\x1b[11~", "f1"),
    (b"\x1b[15~", "f5"),
    (b"\x1b[17~", "f6"),
    (b"\x1b[21~", "f10"),
    (b"\x1b[23~", "f11"),
    (b"\x1b[24~", "f12"),
    (b"\x1b[1;5A", "ctrl+up"),
    (b"\x1b[1;2B", "shift+down"),
    (b"\x1b[1;3C", "alt+right"),
    (b"\x1b[1;7D", "ctrl+alt+left"),
    (b"\x1b[5;5~", "ctrl+pgup"),
    (b"\x1b[1;5P", "ctrl+f1"),
    (b"\x1b[15;2~", "shift+f5"),
    (b"\x1b[5A", "ctrl+up"),
    (b"\x1bx", "alt+x"),
    (b"\x1bN", "alt+N"),
    (b"\x1b\x03", "ctrl+alt+c"),
    (b"\x1b\x7f", "alt+backspace"),
    (b"\x1b[113u", "q"),
    (b"\x1b[99;5u", "ctrl+c"),
    (b"\x1b[27u", "esc"),
    (b"\x1b[9;2u", "backtab"),
];

#[test]
fn every_bound_key_reads_as_the_key_map_names_it() {
    for (bytes, name) in BOUND {
        let ev = events(bytes);
        let want = Key::parse(name).unwrap();
        match ev.as_slice() {
            [Input::Key(got)] => assert_eq!(
                Key::from_event(got),
                want,
                "{bytes:?} read as {got:?}, the key map means {name}"
            ),
            other => panic!("{bytes:?} gave {other:?}, want one key {name}"),
        }
    }
}

#[test]
fn keys_are_reported_as_crossterm_reports_them() {
    // The app's tests build keys with these constructors: the reader must agree.
    assert_eq!(events(b"q"), vec![plain(KeyCode::Char('q'))]);
    assert_eq!(
        events(b"N"),
        vec![k(KeyCode::Char('N'), KeyModifiers::SHIFT)]
    );
    assert_eq!(events(b"\x03"), vec![ctrl('c')]);
    assert_eq!(events(b"\n"), vec![ctrl('j')]);
    assert_eq!(events(b"\x00"), vec![ctrl(' ')]);
    assert_eq!(events(b"\x1c\x1f"), vec![ctrl('4'), ctrl('7')]);
    assert_eq!(
        events(b"\x1b[Z"),
        vec![k(KeyCode::BackTab, KeyModifiers::SHIFT)]
    );
    let Input::Key(release) = events(b"\x1b[97;1:3u")[0] else {
        panic!("not a key")
    };
    assert_eq!(release.kind, KeyEventKind::Release);
    assert_eq!(release.code, KeyCode::Char('a'));
}

#[test]
fn a_lone_escape_is_the_escape_key_once_nothing_follows() {
    let (out, mut p) = feed(b"\x1b");
    assert!(out.is_empty(), "Esc reported before the timeout: {out:?}");
    assert!(p.pending());
    let mut out = Vec::new();
    p.flush(&mut out);
    assert_eq!(out, vec![plain(KeyCode::Esc)]);
    assert!(!p.pending());
    // Twice: the first at once, the second after the timeout.
    let (out, p) = feed(b"\x1b\x1b");
    assert_eq!(out, vec![plain(KeyCode::Esc)]);
    assert!(p.pending());
    assert_eq!(
        events(b"\x1b\x1b"),
        vec![plain(KeyCode::Esc), plain(KeyCode::Esc)]
    );
    // ESC, then a key in a later read: Escape, then the key.
    let (mut out, mut p) = feed(b"\x1b");
    p.feed(b"q", &mut out);
    assert_eq!(out, vec![plain(KeyCode::Esc), ch('q')]);
    assert!(!p.pending());
    let (mut out, mut p) = feed(b"\x1b");
    p.feed(b"\x1b", &mut out);
    assert_eq!(out, vec![plain(KeyCode::Esc)]);
    assert!(p.pending());
    // ... but `[` or `O` may continue a sequence split across reads.
    let (mut out, mut p) = feed(b"\x1b");
    p.feed(b"[A", &mut out);
    assert_eq!(out, vec![plain(KeyCode::Up)]);
    let (mut out, mut p) = feed(b"\x1b");
    p.feed(b"OP", &mut out);
    assert_eq!(out, vec![plain(KeyCode::F(1))]);
    // ESC then a key in the same read is Alt with that key.
    assert_eq!(
        events(b"\x1bq"),
        vec![k(KeyCode::Char('q'), KeyModifiers::ALT)]
    );
    assert_eq!(
        events(b"\x1b["),
        vec![k(KeyCode::Char('['), KeyModifiers::ALT)]
    );
    assert_eq!(
        events(b"\x1bO"),
        vec![k(
            KeyCode::Char('O'),
            KeyModifiers::ALT | KeyModifiers::SHIFT
        )]
    );
}

#[test]
fn a_stray_mouse_prefix_does_not_hold_later_keys() {
    // The reported reproduction: `ESC [ <` (and `ESC [ M`), then keys.
    for stray in [
        &b"\x1b[<"[..],
        b"\x1b[M",
        b"\x1b[<0;1",
        b"\x1b[M ",
        b"\x1b[1;",
    ] {
        // Nothing more: given up on the timeout, reporting nothing...
        let (out, mut p) = feed(stray);
        assert!(out.is_empty(), "{stray:?}: {out:?}");
        assert!(p.pending(), "{stray:?}");
        let mut out = Vec::new();
        p.flush(&mut out);
        assert!(out.is_empty(), "{stray:?} reported {out:?}");
        // ... and the next key is read.
        p.feed(b"q", &mut out);
        assert_eq!(out, vec![ch('q')], "{stray:?}");
        // ctrl+c cannot be part of any sequence: it ends one at once.
        let mut bytes = stray.to_vec();
        bytes.push(0x03);
        let (out, p) = feed(&bytes);
        assert_eq!(out, vec![ctrl('c')], "{stray:?} then ctrl+c");
        assert!(!p.pending());
    }
    // A key that cannot be in an SGR report ends it too, and is read.
    assert_eq!(events(b"\x1b[<q"), vec![ch('q')]);
    assert_eq!(events(b"\x1b[<1;2q"), vec![ch('q')]);
    assert_eq!(events(b"\x1b[<\x1b[A"), vec![plain(KeyCode::Up)]);
    // A byte that cannot be in a CSI sequence ends it, and is read.
    assert_eq!(
        events(b"\x1b[1;\x1bq"),
        vec![k(KeyCode::Char('q'), KeyModifiers::ALT)]
    );
    assert_eq!(events(b"\x1b[1\xc3\xa9"), vec![ch('é')]);
}

#[test]
fn garbage_and_answers_to_queries_are_not_keys() {
    for bytes in [
        &b"\x1b[12;40R"[..], // cursor position
        b"\x1b[?1;2c",       // device attributes
        b"\x1b[>0;276;0c",
        b"\x1b[?7u", // keyboard flags
        b"\x1b[I",   // focus
        b"\x1b[O",
        b"\x1b[201~", // a paste's end marker with no paste
        b"\x1b[99~",
        b"\x1b[1;2;3;4;5;6;7;8X",
        b"\x1b[<1;2M",    // SGR with a missing value
        b"\x1b[<99;1;1M", // an unknown button
        b"\x1b[<1;99999999999;1M",
        b"\x1b[[Z",
        b"\x1bOz",
        b"\x1b[4294967296~",
        b"\xff",
        b"\x80",
        b"\xc0\x80",     // overlong
        b"\xed\xa0\x80", // surrogate
    ] {
        assert_eq!(events(bytes), vec![], "{bytes:?}");
    }
    // What follows the garbage is read.
    assert_eq!(events(b"\x1b[12;40Rq\x1b[?1;2cN"), vec![ch('q'), ch('N')]);
}

#[test]
fn utf8_characters_whole_or_split() {
    for s in ["é", "€", "😀", "ü", "日本"] {
        let want: Vec<Input> = s.chars().map(ch).collect();
        assert_eq!(events(s.as_bytes()), want, "{s}");
        let mut p = Parser::new();
        let mut out = Vec::new();
        for b in s.as_bytes() {
            p.feed(&[*b], &mut out);
        }
        assert_eq!(out, want, "{s} a byte at a time");
        assert!(!p.pending());
    }
    assert_eq!(
        events("Ä".as_bytes()),
        vec![k(KeyCode::Char('Ä'), KeyModifiers::SHIFT)]
    );
    // A broken character: the byte that cannot continue it is read afresh.
    assert_eq!(events(b"\xc3q"), vec![ch('q')]);
    assert_eq!(events(b"\xe2\x82q"), vec![ch('q')]);
    assert_eq!(events(b"\xffq\xfe"), vec![ch('q')]);
    // The start of a character, then nothing: dropped on the timeout.
    let (out, p) = feed(b"\xe2\x82");
    assert!(out.is_empty() && p.pending());
    assert_eq!(events(b"\xe2\x82"), vec![]);
    // Alt + a non-ASCII character.
    assert_eq!(
        events("\x1bé".as_bytes()),
        vec![k(KeyCode::Char('é'), KeyModifiers::ALT)]
    );
}

#[test]
fn mouse_reports_sgr_normal_and_urxvt() {
    use MouseButton::{Left, Right};
    use MouseEventKind::{Down, Drag, Moved, ScrollDown, ScrollUp, Up};
    let none = KeyModifiers::NONE;
    let cases: &[(&[u8], Input)] = &[
        (b"\x1b[<0;10;5M", mouse_at(Down(Left), 9, 4, none)),
        (b"\x1b[<0;10;5m", mouse_at(Up(Left), 9, 4, none)),
        (b"\x1b[<2;1;1M", mouse_at(Down(Right), 0, 0, none)),
        (b"\x1b[<64;80;24M", mouse_at(ScrollUp, 79, 23, none)),
        (b"\x1b[<65;80;24M", mouse_at(ScrollDown, 79, 23, none)),
        (b"\x1b[<32;3;4M", mouse_at(Drag(Left), 2, 3, none)),
        (b"\x1b[<35;3;4M", mouse_at(Moved, 2, 3, none)),
        (
            b"\x1b[<16;3;4M",
            mouse_at(Down(Left), 2, 3, KeyModifiers::CONTROL),
        ),
        (
            b"\x1b[<68;3;4M",
            mouse_at(ScrollUp, 2, 3, KeyModifiers::SHIFT),
        ),
        (b"\x1b[<0;1200;900M", mouse_at(Down(Left), 1199, 899, none)),
        // Column and row 0 (out of range): read as the first, never underflow.
        (b"\x1b[<0;0;0M", mouse_at(Down(Left), 0, 0, none)),
        // A trailing `;`, as crossterm accepts.
        (b"\x1b[<0;10;5;M", mouse_at(Down(Left), 9, 4, none)),
        // Normal encoding: ESC [ M, then button, column, row + 32.
        (b"\x1b[M !!", mouse_at(Down(Left), 0, 0, none)),
        (b"\x1b[M#*%", mouse_at(Up(Left), 9, 4, none)),
        (b"\x1b[M`*%", mouse_at(ScrollUp, 9, 4, none)),
        (b"\x1b[Ma*%", mouse_at(ScrollDown, 9, 4, none)),
        (b"\x1b[M \x7f\xff", mouse_at(Down(Left), 94, 222, none)),
        (b"\x1b[M   ", mouse_at(Down(Left), 0, 0, none)),
        // urxvt: ESC [ button+32 ; column ; row M.
        (b"\x1b[96;10;5M", mouse_at(ScrollUp, 9, 4, none)),
        (b"\x1b[32;10;5M", mouse_at(Down(Left), 9, 4, none)),
    ];
    for (bytes, want) in cases {
        assert_eq!(events(bytes), vec![want.clone()], "{bytes:?}");
    }
    // A normal report whose values include `q` is one report, not a key (`q` is
    // 81 + 32: the wheel down with ctrl).
    assert_eq!(
        events(b"\x1b[Mq!!"),
        vec![mouse_at(ScrollDown, 0, 0, KeyModifiers::CONTROL)]
    );
}

/// A stream with every kind of event, for the split tests. Not Alt+key: ESC and a
/// key in different reads are Escape and the key (tested above).
const STREAM: &[u8] =
    b"a\x1b[Ab\x1b[<64;10;5Mc\x1b[M`*%\xe2\x82\xac\x1b[1;5A\x1bOP\x1b[15~\r\x1b[<0;1;1m\x03";

#[test]
fn any_split_of_a_stream_gives_the_same_events() {
    let whole = events(STREAM);
    assert_eq!(whole.len(), 13, "{whole:?}");
    for cut in 0..=STREAM.len() {
        let mut p = Parser::new();
        let mut out = Vec::new();
        p.feed(&STREAM[..cut], &mut out);
        p.feed(&STREAM[cut..], &mut out);
        assert_eq!(out, whole, "cut at {cut}");
    }
    let mut p = Parser::new();
    let mut out = Vec::new();
    for b in STREAM {
        p.feed(&[*b], &mut out);
    }
    assert_eq!(out, whole, "a byte at a time");
}

#[test]
fn random_bytes_never_panic_keep_the_buffer_small_and_then_q_is_q() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(8);
    // Bytes that start and continue sequences, more often than by chance.
    let alphabet: Vec<u8> = b"\x1b[<M;0123456789~O?mAu\x03\xc3\xa9\xe2\x82\xff "
        .iter()
        .copied()
        .chain(0..=255)
        .collect();
    for _ in 0..500 {
        let mut p = Parser::new();
        let mut out = Vec::new();
        let len = rng.random_range(0..400);
        let bytes: Vec<u8> = (0..len)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())])
            .collect();
        let mut at = 0;
        while at < bytes.len() {
            let n = rng.random_range(1..=16).min(bytes.len() - at);
            p.feed(&bytes[at..at + n], &mut out);
            assert!(p.buf.len() <= MAX_SEQ, "{} bytes held", p.buf.len());
            at += n;
        }
        p.flush(&mut out);
        out.clear();
        p.feed(b"q", &mut out);
        assert_eq!(out, vec![ch('q')], "after {bytes:?}");
    }
    // One endless parameter run is cut, not kept.
    let mut p = Parser::new();
    let mut out = Vec::new();
    p.feed(b"\x1b[", &mut out);
    for _ in 0..10_000 {
        p.feed(b"1;", &mut out);
        assert!(p.buf.len() <= MAX_SEQ);
    }
}

/// A pipe standing for the terminal.
struct Pipe {
    read: OwnedFd,
    write: std::fs::File,
}

fn pipe() -> Pipe {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: pipe returned two new descriptors that nothing else owns.
    unsafe {
        use std::os::fd::FromRawFd;
        Pipe {
            read: OwnedFd::from_raw_fd(fds[0]),
            write: std::fs::File::from_raw_fd(fds[1]),
        }
    }
}

/// Run `read_loop` on a thread; events come back with when they were emitted.
fn reader(
    fd: OwnedFd,
    timeout: Duration,
) -> (
    std::sync::mpsc::Receiver<(Input, Instant)>,
    std::thread::JoinHandle<io::Result<()>>,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        read_loop(
            fd.as_raw_fd(),
            timeout,
            || true,
            |ev| tx.send((ev, Instant::now())).is_ok(),
        )
    });
    (rx, h)
}

#[test]
fn the_reader_gives_up_on_an_unfinished_sequence_after_the_timeout() {
    use std::io::Write as _;
    let Pipe { read, mut write } = pipe();
    let timeout = Duration::from_millis(50);
    let (rx, h) = reader(read, timeout);
    // A lone ESC is Escape, after the timeout and not before.
    let t0 = Instant::now();
    write.write_all(b"\x1b").unwrap();
    let (ev, at) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(ev, plain(KeyCode::Esc));
    let waited = at - t0;
    assert!(waited >= timeout, "Esc after {waited:?}");
    // A stray mouse prefix: nothing, then the next key is read.
    write.write_all(b"\x1b[<").unwrap();
    std::thread::sleep(timeout * 4);
    write.write_all(b"q").unwrap();
    let (ev, _) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(ev, ch('q'));
    // The same with `ESC [ M`, whose report would take any three bytes.
    write.write_all(b"\x1b[M").unwrap();
    std::thread::sleep(timeout * 4);
    write.write_all(b"q").unwrap();
    let (ev, _) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(ev, ch('q'));
    // The end of the input ends the reader with an error that says so.
    drop(write);
    let err = h.join().unwrap().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    assert!(rx.try_recv().is_err(), "an event after the end");
}

#[test]
fn the_reader_joins_a_sequence_split_across_reads() {
    use std::io::Write as _;
    let Pipe { read, mut write } = pipe();
    // A long timeout: the pieces arrive well within it, however loaded the machine.
    let (rx, h) = reader(read, Duration::from_secs(5));
    for piece in [
        &b"\x1b"[..],
        b"[",
        b"<64;1",
        b"0;5",
        b"M",
        b"\x1b[1;",
        b"5A",
    ] {
        write.write_all(piece).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let (ev, _) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(
        ev,
        mouse_at(MouseEventKind::ScrollUp, 9, 4, KeyModifiers::NONE)
    );
    let (ev, _) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(ev, k(KeyCode::Up, KeyModifiers::CONTROL));
    drop(write);
    assert!(h.join().unwrap().is_err());
    assert!(rx.try_recv().is_err());
}

#[test]
fn the_reader_stops_when_told() {
    use std::io::Write as _;
    let Pipe { read, mut write } = pipe();
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        read_loop(
            read.as_raw_fd(),
            ESC_TIMEOUT,
            || true,
            |ev| {
                tx.send(ev).unwrap();
                false
            },
        )
    });
    write.write_all(b"ab").unwrap();
    assert!(h.join().unwrap().is_ok());
    assert_eq!(rx.try_iter().collect::<Vec<_>>(), vec![ch('a')]);
}

/// Once the terminal is given back (on the way out), what is typed is left for
/// the shell: not one byte read, however long the process takes to end; taken
/// again, the terminal's keys are read as before.
#[test]
fn the_reader_leaves_what_is_typed_alone_while_the_terminal_is_not_its() {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let Pipe { read, mut write } = pipe();
    let fd = read.as_raw_fd();
    let ours = Arc::new(AtomicBool::new(true));
    let (tx, rx) = std::sync::mpsc::channel();
    let flag = Arc::clone(&ours);
    let h = std::thread::spawn(move || {
        read_loop(
            read.as_raw_fd(),
            ESC_TIMEOUT,
            move || flag.load(Ordering::SeqCst),
            |ev| tx.send(ev).is_ok(),
        )
    });
    write.write_all(b"q").unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), ch('q'));
    ours.store(false, Ordering::SeqCst);
    let line = b"echo EXIT:$?\n";
    write.write_all(line).unwrap();
    // Time for the reader to have taken the line, had it read it.
    std::thread::sleep(Duration::from_millis(200));
    let mut waiting: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int; `fd` is open (the reader holds it).
    let r = unsafe { libc::ioctl(fd, libc::FIONREAD, &raw mut waiting) };
    assert_eq!(r, 0);
    assert_eq!(
        usize::try_from(waiting).unwrap(),
        line.len(),
        "typed bytes read"
    );
    assert!(
        rx.try_recv().is_err(),
        "a key read from a terminal not ours"
    );
    ours.store(true, Ordering::SeqCst);
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), ch('e'));
    drop(write);
    let _ = h.join().unwrap();
}

/// Answers a terminal gives to a shell's queries (fish asks for the background
/// colour, the version and the keyboard protocol at its prompt), arriving after
/// leet starts: none is a key, whole or cut at any byte with a timeout between.
#[test]
fn terminal_answer_strings_are_not_keys_however_they_are_cut() {
    let answers: [&[u8]; 7] = [
        b"\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\",
        b"\x1b]10;rgb:ffff/ffff/ffff\x07",
        b"\x1bP>|tmux 3.3a\x1b\\",
        b"\x1bP1$r0;1m\x1b\\",
        b"\x1bP1+r544e=787465726d\x1b\\",
        b"\x1b_Gi=1;OK\x1b\\",
        b"\x1b[?62;22c",
    ];
    for a in answers {
        assert_eq!(events(a), [], "{a:?}");
        // Followed by a key in the same read: the key alone.
        let mut with_q = a.to_vec();
        with_q.push(b'q');
        assert_eq!(events(&with_q), [ch('q')], "{a:?}");
        for cut in 1..a.len() {
            // Cut after its second byte or later, the first part given up after the
            // timeout (a slow read): no Escape. (A lone ESC followed by silence is
            // the Escape key whatever comes after it.)
            if cut >= 2 && a[1] != b'[' {
                let mut p = Parser::new();
                let mut out = Vec::new();
                p.feed(&a[..cut], &mut out);
                p.flush(&mut out);
                p.feed(&a[cut..], &mut out);
                p.flush(&mut out);
                let esc = out
                    .iter()
                    .any(|e| matches!(e, Input::Key(k) if k.code == KeyCode::Esc));
                assert!(!esc, "{a:?} cut at {cut}: {out:?}");
            }
            // Cut within one read's wait (no timeout): nothing at all.
            let mut p = Parser::new();
            let mut out = Vec::new();
            p.feed(&a[..cut], &mut out);
            p.feed(&a[cut..], &mut out);
            assert_eq!(out, [], "{a:?} cut at {cut} without a timeout");
        }
    }
}

#[test]
fn keys_that_begin_like_an_answer_are_still_keys() {
    // Alt+P and Alt+_ typed (ESC and the key in one read).
    assert_eq!(events(b"\x1bP"), [alt(ch('P'))]);
    assert_eq!(events(b"\x1b_"), [alt(ch('_'))]);
    assert_eq!(events(b"\x1bPq"), [alt(ch('P')), ch('q')]);
    // ctrl+c inside an unfinished answer still arrives.
    assert_eq!(
        events(b"\x1b]11;rgb:\x03"),
        [k(KeyCode::Char('c'), KeyModifiers::CONTROL)]
    );
    // An over-long answer is dropped as far as it goes; what follows is read.
    let mut long = b"\x1b]".to_vec();
    long.extend(std::iter::repeat_n(b'x', 5000));
    let (out, p) = feed(&long);
    assert!(out.iter().all(|e| *e == ch('x')), "{}", out.len());
    assert!(out.len() < 5000 - MAX_STRING + 10);
    assert!(!p.pending() || p.buf.len() < 10);
}

fn pasted(s: &str) -> Input {
    Input::Paste(s.to_owned())
}

#[test]
fn a_bracketed_paste_is_one_event_not_keys() {
    let bytes = b"/\x1b[200~loss\rq\x1b\x03\ttrain\x1b[201~T";
    let want = vec![ch('/'), pasted("loss\rq\x1b\x03\ttrain"), ch('T')];
    assert_eq!(events(bytes), want);
    // However the reads cut it, markers included.
    for cut in 0..=bytes.len() {
        let mut p = Parser::new();
        let mut out = Vec::new();
        p.feed(&bytes[..cut], &mut out);
        p.feed(&bytes[cut..], &mut out);
        assert_eq!(out, want, "cut at {cut}");
    }
    // One byte per read.
    let mut p = Parser::new();
    let mut out = Vec::new();
    for b in bytes {
        p.feed(&[*b], &mut out);
    }
    assert_eq!(out, want);
}

#[test]
fn a_paste_whose_end_never_comes_is_given_up_as_pasted_so_far() {
    let (out, mut p) = feed(b"\x1b[200~abc\x1b[20");
    assert_eq!(out, vec![]);
    assert!(p.pending());
    assert_eq!(p.timeout(ESC_TIMEOUT), PASTE_TIMEOUT);
    let mut out = Vec::new();
    p.flush(&mut out);
    assert_eq!(out, vec![pasted("abc\x1b[20")]);
    // Keys read as keys again.
    assert!(!p.pending());
    assert_eq!(p.timeout(ESC_TIMEOUT), ESC_TIMEOUT);
    p.feed(b"q", &mut out);
    assert_eq!(out[1], ch('q'));
}

#[test]
fn a_huge_paste_is_capped() {
    let mut bytes = b"\x1b[200~".to_vec();
    bytes.extend(std::iter::repeat_n(b'a', MAX_PASTE * 2));
    bytes.extend_from_slice(b"\x1b[201~x");
    let out = events(&bytes);
    assert_eq!(out.len(), 2);
    assert!(matches!(&out[0], Input::Paste(t) if t.len() == MAX_PASTE));
    assert_eq!(out[1], ch('x'));
}

#[test]
fn invalid_utf8_in_a_paste_is_replaced() {
    assert_eq!(
        events(b"\x1b[200~a\xffb\x1b[201~"),
        vec![pasted("a\u{fffd}b")]
    );
}
