//! The GraphQL documents leet sends and the parts of their answers it reads. The
//! field names are those of W&B's own clients (wandb/wandb: the Python API's
//! `RunFragment`, wandb-core's `RunParquetHistory` and `HistoryPage`).

use serde_json::{Map, Value};

use super::client::Client;
use super::url::RemoteUrl;
use super::{shown, RemoteError};

/// A run's facts, fields of the Python API's `RunFragment`.
pub const RUN_QUERY: &str = "query LeetRun($entity: String!, $project: String!, $name: String!) {
  project(name: $project, entityName: $entity) {
    run(name: $name) {
      id name displayName state config summaryMetrics createdAt heartbeatAt
      historyLineCount notes tags group jobType sweepName commit
    }
  }
}";

/// The run's history files (signed URLs) and its live rows' steps.
pub const PARQUET_QUERY: &str = "query RunParquetHistory($entity: String!, $project: String!, $runName: String!, $liveKeys: [String!]!) {
  project(name: $project, entityName: $entity) {
    run(name: $runName) { parquetHistory(liveKeys: $liveKeys) { parquetUrls liveData } }
  }
}";

/// History rows from `minStep` up to `maxStep` (exclusive), each a JSON string.
pub const HISTORY_QUERY: &str = "query HistoryPage($entity: String!, $project: String!, $run: String!, $minStep: Int64!, $maxStep: Int64!, $pageSize: Int!) {
  project(name: $project, entityName: $entity) {
    run(name: $run) { history(minStep: $minStep, maxStep: $maxStep, samples: $pageSize) }
  }
}";

/// The last lines of the run's console, as wandb-core asks for them.
pub const CONSOLE_QUERY: &str =
    "query RunConsoleLogTail($entity: String!, $project: String!, $runName: String!, $last: Int!) {
  project(name: $project, entityName: $entity) {
    run(name: $runName) {
      logLineCount
      logLines(last: $last) { edges { node { number timestamp level label line } } }
    }
  }
}";

/// The run's system metrics (the `events` stream), sampled by the server: the
/// Python API's `RunFullHistory` with `events` for `history`.
pub const EVENTS_QUERY: &str =
    "query RunFullHistory($project: String!, $entity: String!, $name: String!, $samples: Int) {
  project(name: $project, entityName: $entity) { run(name: $name) { events(samples: $samples) } }
}";

/// The run's files of these names: the Python API's `RunFiles`, fewer fields.
pub const FILES_QUERY: &str = "query RunFiles($project: String!, $entity: String!, $name: String!, $fileNames: [String] = []) {
  project(name: $project, entityName: $entity) {
    run(name: $name) { files(names: $fileNames) { edges { node { name directUrl sizeBytes } } } }
  }
}";

/// One console line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConsoleLine {
    /// The line's number in the run's console (None when not given).
    pub number: Option<i64>,
    pub line: String,
    /// Written to standard error (the line's `level` is `error`).
    pub stderr: bool,
    /// The line's `timestamp` as given.
    pub time: String,
}

/// What the run query tells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunMeta {
    pub name: String,
    pub display_name: String,
    /// `running`, `finished`, `failed`, `crashed`, `killed`, `preempted`, …
    pub state: String,
    /// Config keys and their values (W&B's `{"value": …}` wrapping removed).
    pub config: Map<String, Value>,
    pub summary: Map<String, Value>,
    pub created_at: String,
    pub heartbeat_at: String,
    pub history_line_count: u64,
    pub notes: String,
    pub tags: Vec<String>,
    pub group: String,
    pub job_type: String,
    pub sweep: String,
    pub commit: String,
}

impl RunMeta {
    /// Whether the server still takes rows for it: a run marked `preempting` runs
    /// on until it is stopped (`preempted`) or ends.
    pub fn running(&self) -> bool {
        matches!(self.state.as_str(), "running" | "pending" | "preempting")
    }

    /// What changes whenever the run does: a cache entry is good while it is equal.
    pub fn version(&self) -> String {
        format!(
            "{}|{}|{}",
            self.state, self.heartbeat_at, self.history_line_count
        )
    }
}

fn run_of<'a>(data: &'a Value, url: &RemoteUrl) -> Result<&'a Value, RemoteError> {
    data.pointer("/project/run")
        .filter(|r| r.is_object())
        .ok_or_else(|| RemoteError::NotFound { url: url.shown() })
}

/// The list at `pointer` in the run of a query's answer (none where the server
/// left it out).
fn run_list<'a>(
    data: &'a Value,
    url: &RemoteUrl,
    pointer: &str,
) -> Result<&'a [Value], RemoteError> {
    Ok(run_of(data, url)?
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice))
}

pub(crate) fn vars(url: &RemoteUrl, run_key: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("entity".into(), url.entity.clone().into());
    m.insert("project".into(), url.project.clone().into());
    m.insert(run_key.into(), url.run.clone().unwrap_or_default().into());
    m
}

/// A JSON object given as JSON text (`JSONString` fields) or as an object.
fn object(v: Option<&Value>) -> Map<String, Value> {
    match v {
        Some(Value::Object(m)) => m.clone(),
        Some(Value::String(s)) => match serde_json::from_str(s) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

fn text(r: &Value, k: &str) -> String {
    r.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Ask for the run's facts.
///
/// # Errors
/// [`RemoteError::NotFound`] when the project or run is null; the client's errors.
pub fn run_meta(c: &Client, url: &RemoteUrl) -> Result<RunMeta, RemoteError> {
    let data = c.graphql("LeetRun", RUN_QUERY, Value::Object(vars(url, "name")))?;
    Ok(meta_of(run_of(&data, url)?))
}

/// A run object's facts (the fields of `RunFragment`; a missing or mistyped one
/// is empty).
pub(crate) fn meta_of(r: &Value) -> RunMeta {
    let config = object(r.get("config"))
        .into_iter()
        .map(|(k, v)| match v {
            Value::Object(mut o) if o.contains_key("value") => {
                (k, o.remove("value").unwrap_or(Value::Null))
            }
            v => (k, v),
        })
        .collect();
    RunMeta {
        name: text(r, "name"),
        display_name: text(r, "displayName"),
        state: text(r, "state"),
        config,
        summary: object(r.get("summaryMetrics")),
        created_at: text(r, "createdAt"),
        heartbeat_at: text(r, "heartbeatAt"),
        history_line_count: r
            .get("historyLineCount")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        notes: text(r, "notes"),
        tags: r
            .get("tags")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        group: text(r, "group"),
        job_type: text(r, "jobType"),
        sweep: text(r, "sweepName"),
        commit: text(r, "commit"),
    }
}

/// The run's history files and the first step only the live rows hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryFiles {
    pub urls: Vec<String>,
    pub first_live_step: Option<i64>,
}

/// Ask for the history files.
///
/// # Errors
/// As [`run_meta`].
pub fn history_files(c: &Client, url: &RemoteUrl) -> Result<HistoryFiles, RemoteError> {
    let mut v = vars(url, "runName");
    v.insert("liveKeys".into(), serde_json::json!(["_step"]));
    let data = c.graphql("RunParquetHistory", PARQUET_QUERY, Value::Object(v))?;
    let h = run_of(&data, url)?.get("parquetHistory");
    let urls = h
        .and_then(|h| h.get("parquetUrls"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let first_live_step = h
        .and_then(|h| h.get("liveData"))
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .filter_map(|row| object(Some(row)).get("_step").and_then(Value::as_f64))
                .map(|s| s as i64)
                .min()
        });
    Ok(HistoryFiles {
        urls,
        first_live_step,
    })
}

/// History rows with `from <= _step < to` (at most `page` of them), as objects.
///
/// # Errors
/// As [`run_meta`]; a row that is not a JSON object is [`RemoteError::Protocol`].
pub fn history_page(
    c: &Client,
    url: &RemoteUrl,
    from: i64,
    to: i64,
    page: i64,
) -> Result<Vec<Map<String, Value>>, RemoteError> {
    let mut v = vars(url, "run");
    v.insert("minStep".into(), from.into());
    v.insert("maxStep".into(), to.into());
    v.insert("pageSize".into(), page.into());
    let data = c.graphql("HistoryPage", HISTORY_QUERY, Value::Object(v))?;
    let rows = run_list(&data, url, "/history")?;
    rows.iter()
        .map(|r| match r {
            Value::Object(m) => Ok(m.clone()),
            Value::String(s) => match serde_json::from_str(s) {
                Ok(Value::Object(m)) => Ok(m),
                _ => Err(RemoteError::protocol(
                    &format!("{}/graphql", c.api()),
                    "a history row is not a JSON object",
                )),
            },
            _ => Err(RemoteError::Protocol {
                url: shown(c.api()),
                cause: "a history row is not a JSON object".into(),
            }),
        })
        .collect()
}

/// The last `last` lines of the run's console, oldest first.
///
/// # Errors
/// As [`run_meta`].
pub fn console_tail(
    c: &Client,
    url: &RemoteUrl,
    last: i64,
) -> Result<Vec<ConsoleLine>, RemoteError> {
    let mut v = vars(url, "runName");
    v.insert("last".into(), last.into());
    let data = c.graphql("RunConsoleLogTail", CONSOLE_QUERY, Value::Object(v))?;
    let edges = run_list(&data, url, "/logLines/edges")?;
    Ok(edges
        .iter()
        .filter_map(|e| e.get("node"))
        .map(|n| ConsoleLine {
            number: n.get("number").and_then(Value::as_i64),
            line: text(n, "line"),
            stderr: text(n, "level").eq_ignore_ascii_case("error"),
            time: text(n, "timestamp"),
        })
        .collect())
}

/// Up to `samples` rows of the run's system metrics, as objects.
///
/// # Errors
/// As [`run_meta`].
pub fn events(
    c: &Client,
    url: &RemoteUrl,
    samples: i64,
) -> Result<Vec<Map<String, Value>>, RemoteError> {
    let mut v = vars(url, "name");
    v.insert("samples".into(), samples.into());
    let data = c.graphql("RunFullHistory", EVENTS_QUERY, Value::Object(v))?;
    let rows = run_list(&data, url, "/events")?;
    Ok(rows
        .iter()
        .filter_map(|r| match r {
            Value::Object(m) => Some(m.clone()),
            Value::String(s) => match serde_json::from_str(s) {
                Ok(Value::Object(m)) => Some(m),
                _ => None,
            },
            _ => None,
        })
        .collect())
}

/// The download URL of the run's file `name`, if the server has it.
///
/// # Errors
/// As [`run_meta`].
pub fn file_url(c: &Client, url: &RemoteUrl, name: &str) -> Result<Option<String>, RemoteError> {
    let mut v = vars(url, "name");
    v.insert("fileNames".into(), serde_json::json!([name]));
    let data = c.graphql("RunFiles", FILES_QUERY, Value::Object(v))?;
    let edges = run_list(&data, url, "/files/edges")?;
    Ok(edges
        .iter()
        .filter_map(|e| e.get("node"))
        .find(|n| n.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|n| n.get("directUrl").and_then(Value::as_str))
        .map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::RunMeta;

    #[test]
    fn a_run_is_followed_while_the_server_says_it_runs() {
        let meta = |state: &str| RunMeta {
            state: state.to_owned(),
            ..RunMeta::default()
        };
        for (state, running) in [
            ("running", true),
            ("pending", true),
            ("preempting", true),
            ("finished", false),
            ("failed", false),
            ("crashed", false),
            ("killed", false),
            ("preempted", false),
        ] {
            assert_eq!(meta(state).running(), running, "{state}");
        }
    }
}
