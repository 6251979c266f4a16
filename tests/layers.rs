//! The layer order of `src/`, kept by reading the source: every reference to
//! another file of the crate (`use crate::…`, an inline `crate::a::b` path,
//! `super::…`, and a parent module's use of its own child modules) must point to a
//! module of a lower layer, and no files may reference each other in a cycle. A
//! module's root file (`a/mod.rs`, or `a.rs` with an `a/` directory) declares,
//! re-exports and composes its own submodules; its references down to them are
//! structure, not uses, so children may use what their parent defines. Cycles
//! among siblings (`ui/status.rs` ↔ `ui/overview/view.rs`), and across modules, are
//! what the test finds.
//!
//! The order is written once more, for people, at the top of `src/lib.rs`; the two
//! must agree (a test below compares them).
//!
//! The library crates under `crates/` (`leet-text`, `leet-format`, `leet-sampler`)
//! are below every module here and are not listed: Cargo keeps their order, since a
//! crate can use only its dependencies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules of the crate, lowest layer first. Modules on one line are
/// siblings: neither may use the other.
const LAYERS: &[&[&str]] = &[
    &["msg"],
    &["source"],
    &["store"],
    &["inspect", "ui", "serve"],
    &["input", "terminal"],
    &["cli"],
    &["runtime"],
];

/// Inside `ui`, the app-free drawing (`ui/widget/`) may use only itself and these
/// leaves of `ui` (the colours), never the app state (`ui/mod.rs`) or a feature
/// folder: features draw with widgets, not the other way round.
const WIDGET: &str = "ui/widget/";
const WIDGET_MAY_USE: &[&str] = &["ui/theme.rs", "ui/palette.rs"];

/// Whether `from` (a file under `ui/widget/`) may use `to`.
fn widget_may_use(from: &Path, to: &Path) -> bool {
    let (f, t) = (from.to_string_lossy(), to.to_string_lossy());
    !f.starts_with(WIDGET)
        || !t.starts_with("ui/")
        || t.starts_with(WIDGET)
        || WIDGET_MAY_USE.contains(&t.as_ref())
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// One source file: its module path (`["store", "run"]`; `[]` for the crate root)
/// and its text.
struct SourceFile {
    module: Vec<String>,
    text: String,
}

/// Source text with comments, string and char literals blanked out (so a path
/// in a doc comment or a message is not a reference).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(b' ');
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // Raw string r"…" / r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == b'#')
                        .count()
                        == hashes
                {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            out.extend_from_slice(b"\"\"");
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.extend_from_slice(b"\"\"");
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{1b}') or a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                // Multi-byte UTF-8 char literal.
                let s = std::str::from_utf8(&b[i + 1..])
                    .ok()
                    .or_else(|| std::str::from_utf8(&b[i + 1..b.len().min(i + 6)]).ok());
                s.and_then(|s| s.chars().next())
                    .filter(|ch| ch.len_utf8() > 1 && b.get(i + 1 + ch.len_utf8()) == Some(&b'\''))
                    .map(|ch| i + 1 + ch.len_utf8())
            };
            match end {
                Some(e) => {
                    i = e + 1;
                    out.extend_from_slice(b"' '");
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Paths written in `code`: each `crate::…`, `super::…` and (for files with child
/// modules) `child::…` path, with `{…}` groups expanded, as segment lists starting
/// at the keyword.
fn paths(code: &str, children: &BTreeSet<String>) -> Vec<(usize, Vec<String>)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if !ident(b[i]) || (i > 0 && (ident(b[i - 1]) || b[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && ident(b[i]) {
            i += 1;
        }
        let word = &code[start..i];
        let keyword = matches!(word, "crate" | "super" | "self") || children.contains(word);
        if !keyword || !code[i..].starts_with("::") {
            continue;
        }
        // `self` only matters as `self::child`.
        let mut prefix = vec![word.to_owned()];
        let (n, found) = path_tail(&code[i..], &mut prefix);
        out.extend(found.into_iter().map(|p| (start, p)));
        i += n;
    }
    out
}

/// Parse `::a::b::{c, d::e}` after a path's first segment (in `prefix`); the paths
/// it names and the bytes read.
fn path_tail(s: &str, prefix: &mut Vec<String>) -> (usize, Vec<Vec<String>>) {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if !s[i..].starts_with("::") {
            out.push(prefix.clone());
            return (i, out);
        }
        i += 2;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) == Some(&b'{') {
            i += 1;
            loop {
                while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
                    i += 1;
                }
                if i >= b.len() || b[i] == b'}' {
                    return (
                        i + 1,
                        if out.is_empty() {
                            vec![prefix.clone()]
                        } else {
                            out
                        },
                    );
                }
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'*')
                {
                    i += 1;
                }
                if start == i {
                    i += 1;
                    continue;
                }
                let mut sub = prefix.clone();
                if &s[start..i] != "self" && &s[start..i] != "*" {
                    sub.push(s[start..i].to_owned());
                }
                let (n, found) = path_tail(&s[i..], &mut sub);
                out.extend(found);
                i += n;
                // Skip an `as name`.
                while i < b.len() && b[i] != b',' && b[i] != b'}' {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if start == i {
            out.push(prefix.clone());
            return (i, out);
        }
        prefix.push(s[start..i].to_owned());
    }
}

/// Whether the path at byte `at` of `code` is in a `pub use` / `pub(crate) use`
/// statement.
fn reexport_at(code: &str, at: usize) -> bool {
    let before = &code[..at];
    let stmt = before
        .rfind([';', '}', '{'])
        .map_or(before, |i| &before[i + 1..]);
    let words: Vec<&str> = stmt.split_whitespace().collect();
    matches!(
        words.as_slice(),
        ["pub" | "pub(crate)" | "pub(super)", "use", ..] | ["#[doc(inline)]", "pub", "use", ..]
    ) && !stmt.contains("::")
}

/// Whether byte `at` of `code` lies inside an inline module (`mod x { … }`).
fn inline_mod_at(code: &str, at: usize) -> bool {
    let b = code.as_bytes();
    let mut i = 0;
    while let Some(p) = code[i..].find("mod ") {
        let s = i + p;
        i = s + 4;
        if s > 0 && (b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b'_') {
            continue;
        }
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        if b.get(j) != Some(&b'{') {
            continue;
        }
        let open = j;
        let mut depth = 0usize;
        let mut close = b.len();
        for (k, &c) in b.iter().enumerate().skip(open) {
            if c == b'{' {
                depth += 1;
            } else if c == b'}' {
                depth -= 1;
                if depth == 0 {
                    close = k;
                    break;
                }
            }
        }
        if (open..close).contains(&at) {
            return true;
        }
    }
    false
}

/// Child modules a file declares (`mod x;` / `pub mod x;` / `mod x {`).
fn declared_children(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(rest) = t.strip_prefix("mod ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The crate's files by path, as module paths.
struct Crate {
    files: BTreeMap<PathBuf, SourceFile>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut files = BTreeMap::new();
        let mut todo = vec![src.to_owned()];
        while let Some(dir) = todo.pop() {
            for e in std::fs::read_dir(&dir).expect("read src dir") {
                let p = e.expect("dir entry").path();
                if p.is_dir() {
                    todo.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let rel = p.strip_prefix(src).expect("under src").to_owned();
                    let text = std::fs::read_to_string(&p).expect("read source file");
                    files.insert(rel.clone(), SourceFile::new(&rel, text));
                }
            }
        }
        Crate { files }
    }

    fn from_memory(files: &[(&str, &str)]) -> Crate {
        Crate {
            files: files
                .iter()
                .map(|(p, t)| {
                    (
                        PathBuf::from(p),
                        SourceFile::new(Path::new(p), (*t).to_owned()),
                    )
                })
                .collect(),
        }
    }

    /// The file that defines module path `m` (its longest prefix that is a file).
    fn file_of(&self, m: &[String]) -> Option<PathBuf> {
        for n in (0..=m.len()).rev() {
            let part = &m[..n];
            let cands = if part.is_empty() {
                vec![PathBuf::from("lib.rs")]
            } else {
                let j = part.join("/");
                vec![
                    PathBuf::from(format!("{j}.rs")),
                    PathBuf::from(format!("{j}/mod.rs")),
                ]
            };
            if let Some(c) = cands.into_iter().find(|c| self.files.contains_key(c)) {
                return Some(c);
            }
        }
        None
    }

    /// Every reference from one file to another: (from, to).
    fn edges(&self) -> BTreeSet<(PathBuf, PathBuf)> {
        let mut out = BTreeSet::new();
        for (path, f) in &self.files {
            let code = code_only(&f.text);
            let children = declared_children(&code);
            for (at, p) in paths(&code, &children) {
                let mut m = match p[0].as_str() {
                    "crate" => Vec::new(),
                    "super" => {
                        let mut m = f.module.clone();
                        // Inside an inline `mod x { … }` of this file, `super` is
                        // the file's own module.
                        if !inline_mod_at(&code, at) {
                            m.pop();
                        }
                        m
                    }
                    "self" => f.module.clone(),
                    // A parent re-exporting a child's items (`pub use child::X;`)
                    // is the module's table of contents, not a use of the child.
                    _ if reexport_at(&code, at) => continue,
                    child => {
                        let mut m = f.module.clone();
                        m.push(child.to_owned());
                        m
                    }
                };
                let mut rest = p[1..].iter();
                // Each further `super` goes one more level up.
                let mut segs = Vec::new();
                for s in rest.by_ref() {
                    if s == "super" && segs.is_empty() {
                        m.pop();
                    } else {
                        segs.push(s.clone());
                    }
                }
                m.extend(segs);
                if let Some(to) = self.file_of(&m) {
                    // A module's root file declares, re-exports and composes its
                    // own submodules (`mod.rs` holding `App` with fields of the
                    // types its children define): that is structure, not a use. The
                    // children's uses of their parent (`super::App`) and of each
                    // other are the edges that can close a cycle.
                    let own_child = self.files[&to].module.starts_with(&f.module)
                        && self.files[&to].module.len() > f.module.len();
                    if &to != path && !own_child {
                        out.insert((path.clone(), to));
                    }
                }
            }
        }
        out
    }

    /// Everything against the order: references to a module of the same or a
    /// higher layer, modules without a layer, and cycles between files.
    fn violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in self.files.values() {
            if let Some(top) = f.module.first() {
                if rank(top).is_none() {
                    out.push(format!(
                        "module `{top}` has no layer: add it to LAYERS in tests/layers.rs and to the list in src/lib.rs"
                    ));
                }
            }
        }
        out.sort();
        out.dedup();
        let edges = self.edges();
        for (from, to) in &edges {
            let (a, b) = (&self.files[from].module, &self.files[to].module);
            let (Some(ma), Some(mb)) = (a.first(), b.first()) else {
                continue; // the crate root is above every layer
            };
            if ma == mb {
                continue;
            }
            if let (Some(ra), Some(rb)) = (rank(ma), rank(mb)) {
                if rb >= ra {
                    out.push(format!(
                        "src/{} uses src/{}: `{ma}` may only use layers below it, and `{mb}` is {}",
                        from.display(),
                        to.display(),
                        if rb == ra { "its sibling" } else { "above it" }
                    ));
                }
            }
        }
        for (from, to) in &edges {
            if !widget_may_use(from, to) {
                out.push(format!(
                    "src/{} uses src/{}: ui/widget draws without the app and may not use its state or a feature folder",
                    from.display(),
                    to.display()
                ));
            }
        }
        for cycle in cycles(&edges) {
            let names: Vec<String> = cycle
                .iter()
                .map(|p| format!("src/{}", p.display()))
                .collect();
            out.push(format!(
                "files use each other in a cycle: {}",
                names.join(" -> ")
            ));
        }
        out
    }
}

impl SourceFile {
    fn new(rel: &Path, text: String) -> SourceFile {
        let mut module: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        // `a/mod.rs` is module `a`; `lib.rs` and `main.rs` are the crate root.
        let last = module.last().cloned().unwrap_or_default();
        if last == "mod" || (module.len() == 1 && matches!(last.as_str(), "lib" | "main")) {
            module.pop();
        }
        SourceFile { module, text }
    }
}

/// The strongly connected components of more than one file, each as a path
/// through the cycle.
fn cycles(edges: &BTreeSet<(PathBuf, PathBuf)>) -> Vec<Vec<PathBuf>> {
    let mut adj: BTreeMap<&PathBuf, Vec<&PathBuf>> = BTreeMap::new();
    for (a, b) in edges {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default();
    }
    // Tarjan, iterative enough for a crate's worth of files.
    struct T<'a> {
        adj: &'a BTreeMap<&'a PathBuf, Vec<&'a PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        next: usize,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a PathBuf) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for &w in &t.adj[v] {
            if !t.index.contains_key(w) {
                visit(t, w);
                let l = t.low[v].min(t.low[w]);
                t.low.insert(v, l);
            } else if t.on.contains(w) {
                let l = t.low[v].min(t.index[w]);
                t.low.insert(v, l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        adj: &adj,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    let nodes: Vec<&PathBuf> = adj.keys().copied().collect();
    for v in nodes {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn src_keeps_the_layer_order_and_has_no_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let krate = Crate::read(&src);
    assert!(krate.files.len() > 20, "read the crate's files");
    assert!(
        !krate.edges().is_empty(),
        "the reader found no references at all: the parser is broken"
    );
    let v = krate.violations();
    assert!(
        v.is_empty(),
        "{} against the layer order:\n{}",
        v.len(),
        v.join("\n")
    );
}

#[test]
fn lib_rs_states_the_same_order() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("read lib.rs");
    let want: Vec<String> = LAYERS.iter().map(|l| l.join(" | ")).collect();
    let line = want.join(" < ");
    assert!(
        lib.contains(&line),
        "src/lib.rs should state the layer order as the line\n//! {line}"
    );
}

#[test]
fn an_import_against_the_order_is_found() {
    // `store` (layer 5) using `ui` (layer 6), and a sibling use (`ui` → `inspect`).
    let k = Crate::from_memory(&[
        (
            "lib.rs",
            "pub mod ui; pub mod store; pub mod inspect; pub mod msg;",
        ),
        ("store/mod.rs", "pub mod run;"),
        (
            "store/run.rs",
            "use crate::ui::App;\nfn f() { crate::msg::note(\"crate::ui::x\"); }",
        ),
        (
            "ui/mod.rs",
            "use crate::{store::run::Run, inspect::{self, rfc3339}};",
        ),
        ("inspect.rs", "// use crate::ui::App;\nfn g() {}"),
        ("msg.rs", ""),
    ]);
    let v = k.violations();
    assert_eq!(v.len(), 3, "{v:#?}");
    assert!(v[0].contains("src/store/run.rs uses src/ui/mod.rs") && v[0].contains("above"));
    assert!(v[1].contains("src/ui/mod.rs uses src/inspect.rs") && v[1].contains("sibling"));
    // ui uses store (allowed) and store uses ui: also a cycle.
    assert!(v[2].contains("cycle: src/store/run.rs -> src/ui/mod.rs"));
    // The text in the string and the comment are not references.
    assert!(!v.iter().any(|l| l.contains("src/inspect.rs uses")));
}

#[test]
fn a_cycle_between_files_is_found_also_inside_a_module() {
    let k = Crate::from_memory(&[
        ("lib.rs", "pub mod ui;"),
        (
            "ui/mod.rs",
            "pub mod charts;\npub mod sidebar;\npub mod theme;",
        ),
        (
            "ui/charts.rs",
            "use super::sidebar::width;\nuse super::theme::Theme;",
        ),
        ("ui/sidebar.rs", "pub fn width() { super::charts::draw(); }"),
        ("ui/theme.rs", "pub struct Theme;"),
    ]);
    let v = k.violations();
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("cycle") && v[0].contains("src/ui/charts.rs"));
    assert!(v[0].contains("src/ui/sidebar.rs") && !v[0].contains("theme"));
}

#[test]
fn a_parent_composing_its_children_is_structure_but_siblings_in_a_cycle_are_not() {
    let ok = Crate::from_memory(&[
        ("lib.rs", "pub mod ui;"),
        (
            "ui/mod.rs",
            "mod grid;\npub struct App { g: grid::GridState }\nfn f() { grid::layout(); }",
        ),
        (
            "ui/grid.rs",
            "use super::App;\npub struct GridState;\npub fn layout() {}",
        ),
    ]);
    assert_eq!(ok.violations(), Vec::<String>::new());
    // Two children using each other (through paths from the parent or directly).
    let bad = Crate::from_memory(&[
        ("lib.rs", "pub mod ui;"),
        ("ui/mod.rs", "mod grid;\nmod media;\npub struct App;"),
        (
            "ui/grid.rs",
            "use super::media::Media;\npub struct GridState;",
        ),
        (
            "ui/media.rs",
            "use super::{App, grid::GridState};\npub struct Media;",
        ),
    ]);
    let v = bad.violations();
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("src/ui/grid.rs -> src/ui/media.rs"), "{v:#?}");
}

#[test]
fn a_cycle_through_a_deeper_module_is_found() {
    // sampler/amd.rs uses sampler/child.rs, which uses sampler/amd.rs.
    let k = Crate::from_memory(&[
        ("lib.rs", "pub mod source;"),
        ("source/mod.rs", "pub mod sampler;"),
        (
            "source/sampler/mod.rs",
            "mod amd;\nmod child;\npub use amd::Amd;",
        ),
        (
            "source/sampler/amd.rs",
            "use super::child::run;\npub struct Amd;",
        ),
        (
            "source/sampler/child.rs",
            "pub fn run() { let _ = crate::source::sampler::amd::Amd; }",
        ),
    ]);
    let v = k.violations();
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("src/source/sampler/amd.rs -> src/source/sampler/child.rs"));
}

#[test]
fn a_widget_using_the_app_or_a_feature_is_found() {
    let k = Crate::from_memory(&[
        ("lib.rs", "pub mod ui;"),
        (
            "ui/mod.rs",
            "pub mod charts;\nmod theme;\npub mod widget;\npub struct App;",
        ),
        ("ui/theme.rs", "pub struct Theme;"),
        ("ui/charts/mod.rs", "pub struct ChartState;"),
        ("ui/widget/mod.rs", "pub mod band;\npub mod chart;"),
        ("ui/widget/band.rs", "pub struct MinMax;"),
        (
            "ui/widget/chart.rs",
            "use super::band::MinMax;\nuse crate::ui::theme::Theme;\nuse crate::ui::App;\nfn f(_: crate::ui::charts::ChartState) {}",
        ),
    ]);
    let v = k.violations();
    assert_eq!(v.len(), 2, "{v:#?}");
    assert!(v[0].contains("src/ui/widget/chart.rs uses src/ui/charts/mod.rs"));
    assert!(v[1].contains("src/ui/widget/chart.rs uses src/ui/mod.rs"));
}
