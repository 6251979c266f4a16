use super::*;
use leet_format::event::{RunInfo, TreeOp};

fn span(start: f64, end: Option<f64>) -> Span {
    Span {
        start: Some(start),
        end,
        resumed: false,
    }
}

#[test]
fn overlapping_spans_are_nodes() {
    assert!(are_nodes(&[
        span(100.0, Some(160.0)),
        span(100.4, Some(158.0))
    ]));
    // Started in any order, each while another still ran.
    assert!(are_nodes(&[
        span(130.0, Some(170.0)),
        span(100.0, Some(140.0)),
        span(101.0, Some(102.0)),
    ]));
}

#[test]
fn one_after_another_are_segments() {
    // A resumed segment starts after the one before it ended.
    assert!(!are_nodes(&[
        span(100.0, Some(130.0)),
        span(131.0, Some(160.0))
    ]));
    assert!(!are_nodes(&[
        span(100.0, Some(130.0)),
        span(130.0, Some(160.0))
    ]));
    // A third that starts after both ended breaks the group.
    assert!(!are_nodes(&[
        span(100.0, Some(130.0)),
        span(101.0, Some(130.0)),
        span(140.0, Some(150.0)),
    ]));
}

#[test]
fn a_resumed_record_or_an_unknown_start_is_never_a_node() {
    let mut resumed = span(100.5, Some(150.0));
    resumed.resumed = true;
    assert!(!are_nodes(&[span(100.0, Some(160.0)), resumed]));
    let unknown = Span {
        start: None,
        end: Some(150.0),
        resumed: false,
    };
    assert!(!are_nodes(&[span(100.0, Some(160.0)), unknown]));
    assert!(!are_nodes(&[span(100.0, Some(160.0))]));
    assert!(!are_nodes(&[]));
    // Nothing says when the first ended: it ended at its start.
    assert!(!are_nodes(&[span(100.0, None), span(100.5, None)]));
}

#[test]
fn run_directory_names_that_may_hold_an_id() {
    assert!(dir_may_hold(
        "offline-run-20261206_150716-nodes001",
        "nodes001"
    ));
    assert!(dir_may_hold(
        "offline-run-20261206_150716-nodes001-2",
        "nodes001"
    ));
    assert!(dir_may_hold("run-20261206_150716-abc", "abc"));
    assert!(!dir_may_hold(
        "offline-run-20261206_150716-xnodes001",
        "nodes001"
    ));
    assert!(!dir_may_hold(
        "offline-run-20261206_150716-nodes001-x",
        "nodes001"
    ));
    assert!(!dir_may_hold(
        "offline-run-20261206_150716-other",
        "nodes001"
    ));
    assert_eq!(
        id_of_file(Path::new("a/run-nodes001.wandb")).as_deref(),
        Some("nodes001")
    );
    assert_eq!(id_of_file(Path::new("a/x.wandb")), None);
}

#[test]
fn labels_of_keys() {
    assert_eq!(label_of("cpu/l:node-1"), Some("node-1"));
    assert_eq!(label_of("gpu.0.gpu/l:a/l:b"), Some("b"));
    assert_eq!(label_of("cpu"), None);
    // A disk path holding `/l:` is no node's label; a node's comes after the metric.
    assert_eq!(label_of("disk./x/l:evil.usageGB"), None);
    assert_eq!(
        label_of("disk./x/l:evil.usagePercent/l:node-2"),
        Some("node-2")
    );
    assert_eq!(label_of("cpu/l:"), None);
}

fn node(label: &str, primary: bool) -> NodeView {
    NodeView::new(&NodeFile {
        file: PathBuf::from("x.wandb"),
        label: label.into(),
        primary,
    })
}

fn stats(keys: &[&str]) -> Events {
    let mut ev = Events {
        keys: keys.iter().map(|k| (*k).to_owned()).collect(),
        ..Events::default()
    };
    for k in 0..keys.len() as u32 {
        ev.values.push((k, f64::from(k)));
    }
    ev.list.push(Event::Stats {
        time: Some((1, 0)),
        values: 0..keys.len() as u32,
    });
    ev
}

fn stats_keys(ev: &Events) -> Vec<String> {
    ev.list
        .iter()
        .filter_map(|e| match e {
            Event::Stats { values, .. } => Some(values.clone()),
            _ => None,
        })
        .flat_map(|r| ev.values[r.start as usize..r.end as usize].to_vec())
        .map(|(k, _)| ev.keys[k as usize].clone())
        .collect()
}

#[test]
fn unlabelled_system_keys_take_the_nodes_label() {
    let mut n = node("host-b", false);
    let ev = n.view(stats(&["cpu", "gpu.0.gpu"]));
    assert_eq!(stats_keys(&ev), ["cpu/l:host-b", "gpu.0.gpu/l:host-b"]);
}

#[test]
fn a_label_of_the_nodes_own_keys_wins_over_the_guess() {
    let mut n = node("offline-run-x", true);
    let ev = n.view(stats(&["cpu/l:node-3", "memory_percent"]));
    assert_eq!(stats_keys(&ev), ["cpu/l:node-3", "memory_percent/l:node-3"]);
    assert_eq!(n.label(), "node-3");
}

fn console(text: &str) -> Event {
    Event::Console {
        stdout: true,
        time: None,
        text: text.into(),
        legacy: false,
        node: None,
    }
}

#[test]
fn a_node_s_console_text_comes_as_written_named_as_its() {
    // The run's console keeps each node's lines, cursor and partial line apart
    // (`store::console`): the text is handed on whole, escapes and all.
    let mut n = node("node-1", false);
    let mut ev = Events::default();
    let raw = "\rbatch 1\u{1b}[A\nhalf";
    ev.list.push(console(raw));
    let ev = n.view(ev);
    let got: Vec<(&str, Option<&str>)> = ev
        .list
        .iter()
        .filter_map(|e| match e {
            Event::Console { text, node, .. } => Some((text.as_str(), node.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(got, [(raw, Some("node-1"))]);
}

#[test]
fn only_the_primary_speaks_for_the_run() {
    let make = || {
        let mut ev = Events::default();
        ev.list.push(Event::Run(Box::new(RunInfo {
            display_name: "n".into(),
            ..RunInfo::default()
        })));
        ev.list.push(Event::Exit {
            code: 1,
            runtime: 3,
        });
        ev.summary.push(TreeOp::Touch(0));
        ev.config.push(TreeOp::Touch(0));
        ev
    };
    let other = node("b", false).view(make());
    assert!(other.list.is_empty());
    assert!(other.summary.is_empty() && other.config.is_empty());
    let primary = node("a", true).view(make());
    assert_eq!(primary.list.len(), 2);
    assert_eq!(primary.summary.len(), 1);
}

/// Another node's metric definitions come through, labelled for its keys (its
/// step metric, its hidden metrics); the primary's as they are.
#[test]
fn another_node_s_metric_definitions_are_labelled_for_its_keys() {
    let make = || {
        let mut ev = Events::default();
        ev.list.push(Event::Metric(leet_format::event::MetricDef {
            glob: "train/*".into(),
            step_metric: "train/global_step".into(),
            ..Default::default()
        }));
        ev
    };
    let defs = |ev: &Events| -> Vec<(String, String)> {
        (ev.list.iter())
            .filter_map(|e| match e {
                Event::Metric(d) => Some((d.glob.clone(), d.step_metric.clone())),
                _ => None,
            })
            .collect()
    };
    let other = node("b", false).view(make());
    assert_eq!(
        defs(&other),
        [("train/*/l:b".to_owned(), "train/global_step/l:b".to_owned())]
    );
    let primary = node("a", true).view(make());
    assert_eq!(
        defs(&primary),
        [("train/*".to_owned(), "train/global_step".to_owned())]
    );
}
