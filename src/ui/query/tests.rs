use serde_json::{json, Value};

use super::*;

/// A run as the workspace index would give it.
struct Fake {
    key: String,
    name: String,
    id: String,
    project: String,
    notes: String,
    state: String,
    tags: Vec<String>,
    config: Option<Value>,
    summary: Option<Value>,
}

impl RunFields for Fake {
    fn text(&self, f: TextField) -> Option<&str> {
        Some(match f {
            TextField::Key => &self.key,
            TextField::Name => &self.name,
            TextField::Id => &self.id,
            TextField::Project => &self.project,
            TextField::Notes => &self.notes,
            TextField::State => &self.state,
        })
    }
    fn tags(&self) -> &[String] {
        &self.tags
    }
    fn config(&self) -> Option<&Value> {
        self.config.as_ref()
    }
    fn summary(&self) -> Option<&Value> {
        self.summary.as_ref()
    }
}

/// W&B's `testRunFilterData` (runfilterquery_test.go), plus state and summary.
fn run() -> Fake {
    Fake {
        key: "run-20260209_010101-abc123".into(),
        name: "resnet50-baseline".into(),
        id: "abc123".into(),
        project: "vision".into(),
        notes: "warm start from imagenet checkpoint".into(),
        state: "finished".into(),
        tags: vec!["scheduled".into(), "release".into()],
        config: Some(json!({
            "lr": 0.001,
            "optimizer": "AdamW",
            "model": {"layers": 12, "Act": "gelu"},
            "sizes": [64, 128],
            "steps": 1_000_000,
            "warmup": 3.0,
            "dropout": null,
            "amp": true,
            "seed": "0042",
            "data.split": "val"
        })),
        summary: Some(json!({
            "val/loss": 0.25,
            "train/acc": 0.9,
            "best": {"epoch": 7},
            "phase": "eval",
            "hist": {"_type": "histogram", "bins": [1, 2]}
        })),
    }
}

fn empty_run() -> Fake {
    Fake {
        key: String::new(),
        name: String::new(),
        id: String::new(),
        project: String::new(),
        notes: String::new(),
        state: String::new(),
        tags: vec![],
        config: None,
        summary: None,
    }
}

fn m(q: &str, mode: Mode, r: &Fake) -> bool {
    match parse(q, mode) {
        Ok(query) => query.matches(r),
        Err(e) => panic!("{q:?} did not parse: {e}"),
    }
}

/// Each (query, expected) in regex mode against `run()`.
fn table(cases: &[(&str, bool)]) {
    let r = run();
    for (q, want) in cases {
        assert_eq!(m(q, Mode::Regex, &r), *want, "query {q:?}");
    }
}

#[test]
fn empty_query_matches_everything() {
    for q in ["", "   ", "AND", "-", "NOT"] {
        let query = parse(q, Mode::Regex).expect("parses");
        assert!(query.matches(&empty_run()), "{q:?}");
    }
    assert!(parse("", Mode::Glob).expect("parses").is_empty());
    assert!(!parse("x", Mode::Glob).expect("parses").is_empty());
}

#[test]
fn bare_terms_search_key_name_id_project_notes_tags() {
    table(&[
        ("vision", true),
        ("resnet", true),
        ("RESNET", true),
        ("abc123", true),
        ("20260209", true),
        ("checkpoint", true),
        ("scheduled", true),
        ("nonexistent", false),
        // Not searched by a bare term: state, config, summary.
        ("finished", false),
        ("adamw", false),
        ("eval", false),
        // A regex bare term.
        ("^resnet\\d+", true),
        ("^vision$", true),
        ("^ision", false),
        ("^RESNET\\d+", true),
        ("NAME:^RESNET\\d+", true),
        // `a|b` without spaces is one term: a regex alternation.
        ("zzz|release", true),
    ]);
}

#[test]
fn field_pattern_on_every_alias() {
    table(&[
        ("name:base", true),
        ("run_name:base", true),
        ("display:base", true),
        ("display_name:base", true),
        ("NAME:BASE", true),
        ("name:vision", false),
        ("id:abc", true),
        ("run_id:abc", true),
        ("id:resnet", false),
        ("key:20260209", true),
        ("run_key:20260209", true),
        ("path:20260209", true),
        ("key:resnet", false),
        ("project:vis", true),
        ("project:nlp", false),
        ("notes:imagenet", true),
        ("note:imagenet", true),
        ("notes:ablation", false),
        ("tags:sched", true),
        ("tag:release", true),
        ("tag:canary", false),
        ("name:^resnet\\d+-base", true),
        ("name:^base", false),
        // Leftmost operator wins, so `=` inside the pattern is pattern text.
        ("name:^(foo=bar)$", false),
        // Empty pattern: the field is not empty.
        ("name:", true),
    ]);
}

#[test]
fn exact_and_not_equal() {
    table(&[
        ("name=resnet50-baseline", true),
        ("name=RESNET50-BASELINE", true),
        ("name=resnet50", false),
        ("name!=other", true),
        ("name!=resnet50-baseline", false),
        ("id=abc123", true),
        ("tag=release", true),
        ("tags=rel", false),
        ("tag!=canary", true),
        ("tag!=release", false),
        ("notes=\"warm start from imagenet checkpoint\"", true),
        ("notes=\"  warm start from imagenet checkpoint  \"", true),
        ("cfg.optimizer=adamw", true),
        ("cfg.optimizer!=sgd", true),
        ("cfg.optimizer!=ADAMW", false),
    ]);
}

#[test]
fn exact_match_does_not_coerce_numeric_looking_text() {
    let mut r = run();
    r.id = "00123".into();
    r.project = "010".into();
    assert!(m("id=00123", Mode::Regex, &r));
    assert!(!m("id=123", Mode::Regex, &r));
    assert!(m("project=010", Mode::Regex, &r));
    assert!(!m("project=10", Mode::Regex, &r));
    // A config string stays text; a config number compares as a number.
    table(&[
        ("cfg.seed=0042", true),
        ("cfg.seed=42", false),
        ("cfg.lr=0.001", true),
        ("cfg.lr=1e-3", true),
        ("cfg.lr!=1e-3", false),
        ("cfg.model.layers=12", true),
        ("cfg.model.layers=12.0", true),
        ("cfg.warmup=3", true),
        ("cfg.steps=1000000", true),
        ("cfg.amp=true", true),
        ("cfg.dropout=null", true),
    ]);
}

#[test]
fn numeric_comparisons() {
    table(&[
        ("cfg.lr>=1e-3", true),
        ("cfg.lr>1e-3", false),
        ("cfg.lr<=0.001", true),
        ("cfg.lr<0.01", true),
        ("cfg.lr>0.01", false),
        ("cfg.model.layers>11", true),
        ("cfg.model.layers<12", false),
        // A numeric-looking config string compares as a number.
        ("cfg.seed>41", true),
        ("cfg.seed<42", false),
        // Text fields parse as numbers when they can.
        ("name>1", false),
        ("cfg.optimizer>1", false),
        ("cfg.amp>0", false),
        // Tags and the whole config have no single value.
        ("tags>0", false),
        ("cfg>0", false),
        // Spaces inside quotes around a number are trimmed.
        ("cfg.lr>=\" 0.001 \"", true),
    ]);
    let mut r = run();
    r.id = "17".into();
    assert!(m("id>16.5", Mode::Regex, &r));
    assert!(!m("id<=16", Mode::Regex, &r));
}

#[test]
fn has_and_exists() {
    table(&[
        ("has:name", true),
        ("has:display_name", true),
        ("has:tags", true),
        ("has:notes", true),
        ("has:cfg.lr", true),
        ("exists:config.lr", true),
        ("has:cfg.missing", false),
        ("has:cfg", true),
        ("has:config", true),
        // An object counts as present (W&B stores leaves only).
        ("has:cfg.model", true),
        ("has:summary.val/loss", true),
        ("has:summary.nope", false),
        ("has:summary", true),
        ("has:state", true),
        ("-has:cfg.missing", true),
    ]);
    let e = empty_run();
    for q in [
        "has:name",
        "has:tags",
        "has:cfg",
        "has:cfg.lr",
        "has:summary",
        "has:state",
    ] {
        assert!(!m(q, Mode::Regex, &e), "{q}");
    }
    // Quoted, `has:` with an unknown field is text (unquoted, an error).
    let mut r = run();
    r.notes = "see has:foo".into();
    assert!(m("\"has:foo\"", Mode::Regex, &r));
    assert!(!m("\"has:foo\"", Mode::Regex, &run()));
}

#[test]
fn config_any_searches_paths_values_and_pairs() {
    table(&[
        ("config:adam", true),
        ("cfg:adam", true),
        ("cfg:optimizer", true),
        ("cfg:model.layers", true),
        ("cfg:^model\\.layers=12$", true),
        ("cfg=model.layers=12", true),
        ("cfg=adamw", true),
        ("cfg=model", false),
        ("cfg:sgd", false),
        ("cfg:sizes\\[1\\]=128", true),
        ("summary:val/loss", true),
        ("summary=phase=eval", true),
    ]);
}

#[test]
fn nested_config_paths() {
    table(&[
        ("cfg.model.layers:12", true),
        ("config.model.layers:^12$", true),
        ("cfg.MODEL.ACT=GELU", true),
        ("cfg.model.act:gel", true),
        ("cfg.sizes[0]=64", true),
        ("cfg.sizes[1]>100", true),
        ("cfg.sizes[2]>0", false),
        ("has:cfg.sizes[1]", true),
        // A key that contains a dot is found by the same path.
        ("cfg.data.split=val", true),
        // Objects and lists are not leaves: patterns and comparisons miss them.
        ("cfg.model:layers", false),
        ("cfg.sizes>0", false),
    ]);
}

#[test]
fn config_added_later_by_config_update_is_searched() {
    let mut r = run();
    assert!(!m("cfg.batch_size>=64", Mode::Regex, &r));
    if let Some(Value::Object(c)) = r.config.as_mut() {
        c.insert("batch_size".into(), json!(128));
    }
    assert!(m("cfg.batch_size>=64", Mode::Regex, &r));
}

#[test]
fn missing_fields_never_match_a_comparison() {
    table(&[
        ("cfg.x>1", false),
        ("cfg.x<1", false),
        ("cfg.x=1", false),
        ("cfg.x!=1", false),
        ("cfg.x:.", false),
        ("cfg.x:", false),
        ("-cfg.x>1", true),
        ("NOT cfg.x!=1", true),
        ("summary.nope<1", false),
    ]);
    let e = empty_run();
    for q in [
        "name!=x",
        "tag!=x",
        "cfg!=x",
        "state!=running",
        "summary.val/loss<1",
    ] {
        assert!(!m(q, Mode::Regex, &e), "{q}");
    }
}

#[test]
fn state_extension() {
    let mut r = run();
    for (state, q, want) in [
        ("finished", "state:finished", true),
        ("finished", "state:fin", true),
        ("finished", "state=finished", true),
        ("running", "state:run|fin", true),
        ("failed", "state!=running", true),
        ("finished", "state:running", false),
        ("running", "state:run", true),
        ("running", "-state:running", false),
        ("crashed", "state:crashed | state:failed", true),
        ("failed", "state:crashed | state:failed", true),
        ("finished", "state:crashed | state:failed", false),
        ("failed", "STATE:FAIL", true),
    ] {
        r.state = state.into();
        assert_eq!(m(q, Mode::Regex, &r), want, "{state} {q}");
    }
}

#[test]
fn summary_extension() {
    table(&[
        ("summary.val/loss<0.3", true),
        ("summary.val/loss<0.25", false),
        ("summary.val/loss<=0.25", true),
        ("summary.VAL/LOSS>0.2", true),
        ("summary.train/acc>=0.9", true),
        ("summary.best.epoch=7", true),
        ("summary.phase=eval", true),
        ("summary.phase:^ev", true),
        ("summary.hist>0", false),
        ("summary.val/loss<0.3 cfg.lr>=1e-3 state:finished", true),
    ]);
}

#[test]
fn boolean_operators_and_precedence() {
    table(&[
        // AND: whitespace or the word, any case.
        ("vision resnet", true),
        ("vision AND resnet", true),
        ("vision and nlp", false),
        // OR: `|` or the word.
        ("nlp | vision", true),
        ("nlp OR vision", true),
        ("nlp or zzz", false),
        // NOT: `-`, `!`, the word; doubled cancels.
        ("-nlp", true),
        ("!vision", false),
        ("NOT vision", false),
        ("not nlp", true),
        ("--vision", true),
        ("-!vision", true),
        ("-!-vision", false),
        ("NOT NOT vision", true),
        ("NOT -vision", true),
        // AND binds tighter than OR: (nlp AND vision) OR resnet.
        ("nlp vision | resnet", true),
        ("nlp vision | zzz", false),
        // vision AND (NOT nlp) — NOT binds to one term.
        ("NOT nlp vision", true),
        ("NOT vision nlp | resnet", true),
        // NOT then AND still negates the next term.
        ("NOT AND vision", false),
        // No parentheses in W&B's grammar: `(` is pattern text (a regex group here).
        ("(vision)", true),
        // W&B's own case (TestCompileRunFilterQuery_TextualBooleanAliases).
        ("project:vision AND NOT name:debug OR project:nlp", true),
    ]);
    let q = parse(
        "project:vision AND NOT name:debug OR project:nlp",
        Mode::Regex,
    )
    .expect("parses");
    let mut r = run();
    r.name = "debug-run".into();
    assert!(!q.matches(&r));
    r.project = "nlp".into();
    assert!(q.matches(&r));
}

#[test]
fn quoting_and_escapes() {
    let mut r = run();
    r.name = r#"exp "alpha" baseline"#.into();
    r.notes = "it's -rc OR done".into();
    for (q, want) in [
        (r#"name:"exp \"alpha\"""#, true),
        (r#"name:"exp \"beta\"""#, false),
        (r#"name:'exp "alpha" base'"#, true),
        (r"name:'exp \'alpha'", false),
        (r#""alpha" baseline"#, true),
        ("notes:\"-rc OR\"", true),
        // Quoted text is not a negation, keyword or operator.
        ("\"-rc\"", true),
        ("\"OR\" done", true),
        ("nlp \"OR\" vision", false),
        ("nlp OR vision", true),
        ("\"NOT\" nlp", false),
        ("NOT nlp", true),
        ("\"and\"", false),
        ("\"notes:it\"", false),
        ("'it\\'s'", true),
        // `\` inside quotes makes the next char literal: `\d` is `d`.
        (r#"name:"\d""#, false),
        // Outside quotes `\` is literal: a regex escape.
        (r"name:\x22alpha", true),
        // Quotes may start mid-term and join with what follows.
        ("na\"me\":exp", true),
    ] {
        assert_eq!(m(q, Mode::Regex, &r), want, "{q}");
    }
}

#[test]
fn glob_mode() {
    let r = run();
    for (q, want) in [
        ("project:vis*", true),
        ("project:*ion", true),
        ("project:v?sion", true),
        ("project:v??sion", false),
        ("project:VIS", true),
        ("name:res*base", true),
        ("name:base*res", false),
        ("res*line", true),
        // Regex syntax is literal text in glob mode.
        ("name:^resnet", false),
        ("name:res.et", false),
        ("(", false),
        // W&B's case (TestCompileRunFilterQuery_GlobNegationAndOr).
        ("project:vis* -name:debug | project:nlp", true),
    ] {
        assert_eq!(m(q, Mode::Glob, &r), want, "{q}");
    }
    // The same text, regex mode: `.` is any char.
    assert!(m("name:res.et", Mode::Regex, &r));
    let q = parse("project:vis* -name:debug | project:nlp", Mode::Glob).expect("parses");
    let mut r = run();
    r.name = "debug-run".into();
    assert!(!q.matches(&r));
    r.project = "nlp".into();
    assert!(q.matches(&r));
}

#[test]
fn an_unknown_field_is_an_error_and_quoted_it_is_text() {
    let mut r = run();
    assert!(!m("\"foo:bar\"", Mode::Regex, &r));
    r.notes = "see foo:bar".into();
    assert!(m("\"foo:bar\"", Mode::Regex, &r));
    assert!(m("'foo:bar'", Mode::Glob, &r));
    // A pattern that is no word before its `:` stays a pattern.
    assert!(m("(?:see)", Mode::Regex, &r));
}

#[test]
fn queries_that_cannot_be_right_say_where() {
    for (q, message, at, len) in [
        ("foo:bar", "unknown field 'foo'", 0, 3),
        ("x group:g1", "unknown field 'group'", 2, 5),
        ("sumary.acc>1", "unknown field 'sumary.acc'", 0, 10),
        ("-has:dropout", "unknown field 'dropout'", 5, 7),
        ("cfg.:x", "unknown field 'cfg.'", 0, 4),
        ("cfg.lr>abc", "expected a number after '>'", 7, 3),
        (
            "cfg.lr>>1",
            "'>>' is no operator (=, ==, !=, <, <=, >, >=, :)",
            6,
            2,
        ),
        (
            "cfg.arch===b",
            "'===' is no operator (=, ==, !=, <, <=, >, >=, :)",
            8,
            3,
        ),
        (
            "cfg.lr=>0.1",
            "'=>' is no operator (=, ==, !=, <, <=, >, >=, :)",
            6,
            2,
        ),
        (
            "cfg.lr >= = 1",
            "'>==' is no operator (=, ==, !=, <, <=, >, >=, :)",
            7,
            3,
        ),
        ("cfg.lr<=x", "expected a number after '<='", 8, 1),
        ("state:runing", "no state is 'runing'", 6, 6),
        ("state=fin", "no state is 'fin'", 6, 3),
        ("OR", "expected a term before 'OR'", 0, 2),
        ("| a", "expected a term before '|'", 0, 1),
        ("a OR", "expected a term after 'OR'", 2, 2),
        ("a | | b", "expected a term before '|'", 4, 1),
        ("NOT OR a", "expected a term before 'OR'", 4, 2),
    ] {
        for mode in [Mode::Regex, Mode::Glob] {
            let e = err(q, mode);
            assert_eq!(
                (e.message.as_str(), e.at, e.len),
                (message, at, len),
                "{q:?}"
            );
        }
    }
    assert!(err("has:dropout", Mode::Regex)
        .to_string()
        .contains("cfg.…"));
}

fn err(q: &str, mode: Mode) -> QueryError {
    match parse(q, mode) {
        Ok(_) => panic!("{q:?} parsed"),
        Err(e) => e,
    }
}

#[test]
fn bad_queries_say_what_and_where() {
    for (q, message, at, len) in [
        ("name:\"abc", "unclosed quote", 5, 1),
        ("a 'b c", "unclosed quote", 2, 1),
        ("name:\"a\\\"", "unclosed quote", 5, 1),
        (
            "state:running cfg.lr>=",
            "expected a value after '>='",
            20,
            2,
        ),
        ("cfg.lr>", "expected a value after '>'", 6, 1),
        ("cfg.lr<", "expected a value after '<'", 6, 1),
        ("cfg.lr<=  ", "expected a value after '<='", 6, 2),
        ("name=", "expected a value after '='", 4, 1),
        ("name!=", "expected a value after '!='", 4, 2),
        ("name:(", "bad regex in name:(", 5, 1),
        ("x name:a[b", "bad regex in name:a[b", 7, 3),
        ("-(", "bad regex in (", 1, 1),
        ("ok ab(c", "bad regex in ab(c", 3, 4),
    ] {
        let e = err(q, Mode::Regex);
        assert_eq!(
            (e.message.as_str(), e.at, e.len),
            (message, at, len),
            "{q:?}"
        );
    }
    let e = err("name:(", Mode::Regex);
    assert_eq!(e.detail.as_deref(), Some("unclosed group"));
    assert_eq!(e.to_string(), "bad regex in name:( at 5: unclosed group");
    assert_eq!(
        err("state:running cfg.lr>=", Mode::Regex).to_string(),
        "expected a value after '>=' at 20"
    );
    assert_eq!(err("é \"x", Mode::Regex).to_string(), "unclosed quote at 2");
    // The same text is fine in glob mode.
    assert!(parse("name:(", Mode::Glob).is_ok());
}

#[test]
fn bad_regex_message_is_bounded_and_sanitized() {
    let q = format!("name:(\u{1b}[31m{}", "a".repeat(100));
    let e = err(&q, Mode::Regex);
    assert!(!e.message.contains('\u{1b}'), "{:?}", e.message);
    assert!(e.message.chars().count() < 60, "{:?}", e.message);
    assert!(e.message.ends_with('…'));
}

#[test]
fn huge_regex_is_refused_not_built() {
    // Builds under the regex crate's default 10 MiB limit, not under our 1 MiB.
    let e = err("name:(a{200}){100}", Mode::Regex);
    assert_eq!(e.message, "bad regex in name:(a{200}){100}");
    assert_eq!(e.detail.as_deref(), Some("pattern too large"));
}

#[test]
fn regexes_are_compiled_once_at_parse() {
    let q = parse("name:^res|id:zz", Mode::Regex).expect("parses");
    let regexes = q
        .groups
        .iter()
        .flatten()
        .filter(|c| matches!(c.pred, Pred::Pattern(_, Matcher::Regex(_))))
        .count();
    assert_eq!(regexes, 1);
}

/// Spaces around an operator (`config.n >= 1`, `state: running`) read as the
/// comparison written without them: each piece alone matched no run.
#[test]
fn spaces_around_an_operator_are_one_comparison() {
    table(&[
        ("cfg.lr >= 1e-3", true),
        ("cfg.lr >=1e-3", true),
        ("cfg.lr>= 1e-3", true),
        ("cfg.lr > 0.01", false),
        ("cfg.model.layers < 12", false),
        ("cfg.optimizer = AdamW", true),
        ("cfg.optimizer == AdamW", true),
        ("cfg.optimizer==AdamW", true),
        ("cfg.optimizer == SGD", false),
        ("state == finished", true),
        ("cfg.optimizer != AdamW", false),
        ("state : finished", true),
        ("state: finished", true),
        ("cfg.lr >= 1e-3 and cfg.steps > 10", true),
        ("cfg.lr >= 1e-3 or cfg.steps < 10", true),
        ("not cfg.lr >= 1e-3", false),
        // A negation stays a term of its own; quoted operators are text.
        ("!resnet50", false),
        ("resnet50 \">\"", false),
    ]);
}
