//! Records as JSON, in the shape `wandb leet inspect --json` prints: `num`, `type`
//! and the body under the type's name, protobuf-JSON style (proto field names,
//! enum names, RFC 3339 timestamps, 64-bit integers as strings, default values
//! left out), with key/value item lists turned into `flat.key → value` objects.

use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, DynamicMessage, ReflectMessage as _, SerializeOptions};
use serde_json::{Map, Value};

use super::pb;
use super::value;
use super::wire;
use crate::record::{record_kind, record_type_name};

fn pool() -> Option<&'static DescriptorPool> {
    static POOL: OnceLock<Option<DescriptorPool>> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(pb::FILE_DESCRIPTOR_SET).ok())
        .as_ref()
}

/// Decode `bytes` as the message `full_name` and render it as JSON.
#[must_use]
pub fn bytes_json(full_name: &str, bytes: &[u8]) -> Option<Value> {
    bytes_json_named(full_name, bytes, true)
}

/// As [`bytes_json`], with proto field names (`code_path`, as `inspect` prints) or
/// protobuf-JSON names (`codePath`, or the schema's `json_name`, as W&B shows them).
fn bytes_json_named(full_name: &str, bytes: &[u8], proto_names: bool) -> Option<Value> {
    let desc = pool()?.get_message_by_name(full_name)?;
    let mut msg = DynamicMessage::decode(desc, bytes).ok()?;
    drop_bad_timestamps(&mut msg);
    let opts = SerializeOptions::new()
        .use_proto_field_name(proto_names)
        .skip_default_fields(true);
    let mut v = msg
        .serialize_with_options(serde_json::value::Serializer, &opts)
        .ok()?;
    tidy(&mut v);
    Some(v)
}

/// Clear Timestamp fields outside protobuf's range (protobuf JSON cannot print them),
/// so one bad field does not cost the whole record; the summary leaves them out too.
fn drop_bad_timestamps(msg: &mut DynamicMessage) {
    use prost_reflect::Value as V;
    let mut bad = Vec::new();
    for (fd, v) in msg.fields_mut() {
        match v {
            V::Message(m) if is_bad_timestamp(m) => bad.push(fd),
            V::Message(m) => drop_bad_timestamps(m),
            V::List(items) => {
                for x in items {
                    if let V::Message(m) = x {
                        drop_bad_timestamps(m);
                    }
                }
            }
            V::Map(entries) => {
                for x in entries.values_mut() {
                    if let V::Message(m) = x {
                        drop_bad_timestamps(m);
                    }
                }
            }
            _ => {}
        }
    }
    for fd in bad {
        msg.clear_field(&fd);
    }
}

fn is_bad_timestamp(m: &DynamicMessage) -> bool {
    if m.descriptor().full_name() != "google.protobuf.Timestamp" {
        return false;
    }
    let secs = m
        .get_field_by_name("seconds")
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    let nanos = m
        .get_field_by_name("nanos")
        .and_then(|v| v.as_i32())
        .unwrap_or(0);
    leet_text::rfc3339(secs, nanos).is_none()
}

/// A typed message as a JSON object.
#[must_use]
pub fn message_json<M: prost::Message + prost::Name>(m: &M) -> Option<Map<String, Value>> {
    match bytes_json(&M::full_name(), &m.encode_to_vec())? {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

/// A typed message as a JSON object with protobuf-JSON field names (`codePath`,
/// `writerId`; `cpu_count` where the schema sets that `json_name`), the names
/// W&B's own viewer shows.
#[must_use]
pub fn message_json_names<M: prost::Message + prost::Name>(m: &M) -> Option<Map<String, Value>> {
    match bytes_json_named(&M::full_name(), &m.encode_to_vec(), false)? {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

/// One record payload as an inspect JSON object, or None if it does not decode.
#[must_use]
pub fn record_json(payload: &[u8]) -> Option<Value> {
    let (num, kind, body) = record_kind(payload)?;
    let name = record_type_name(kind);
    let body_json = match kind {
        2 => history_json(body)?,
        3 | 5 => tree_json(body)?,
        7 => stats_json(body)?,
        18 => {
            let mut v = bytes_json("wandb_internal.RunExitRecord", body)?;
            if let Value::Object(o) = &mut v {
                if !o.contains_key("exit_code") {
                    // Keep exit_code even when 0: it is the point of the record.
                    let mut with = Map::new();
                    with.insert("exit_code".into(), Value::from(0));
                    with.extend(std::mem::take(o));
                    *o = with;
                }
            }
            v
        }
        0 => Value::Object(Map::new()),
        // output / output_raw: STDERR is the enum's zero value, which protobuf JSON
        // leaves out; say it, as wandb does, so the stream is never lost.
        4 | 13 => {
            let mut v = bytes_json(pb_message_name(kind)?, body)?;
            if let Value::Object(o) = &mut v {
                o.entry("output_type").or_insert_with(|| "STDERR".into());
            }
            v
        }
        _ => {
            let full = pb_message_name(kind)?;
            bytes_json(full, body)?
        }
    };
    let mut out = Map::new();
    out.insert("num".into(), Value::from(num));
    out.insert("type".into(), Value::from(name));
    if kind != 0 {
        out.insert(name.into(), body_json);
    }
    Some(Value::Object(out))
}

fn pb_message_name(kind: u32) -> Option<&'static str> {
    Some(match kind {
        4 => "wandb_internal.OutputRecord",
        6 => "wandb_internal.FilesRecord",
        8 => "wandb_internal.ArtifactRecord",
        9 => "wandb_internal.TBRecord",
        10 => "wandb_internal.AlertRecord",
        11 => "wandb_internal.TelemetryRecord",
        12 => "wandb_internal.MetricRecord",
        13 => "wandb_internal.OutputRawRecord",
        17 => "wandb_internal.RunRecord",
        20 => "wandb_internal.FinalRecord",
        21 => "wandb_internal.HeaderRecord",
        22 => "wandb_internal.FooterRecord",
        23 => "wandb_internal.RunPreemptingRecord",
        24 => "google.protobuf.Empty",
        25 => "wandb_internal.UseArtifactRecord",
        26 => "wandb_internal.EnvironmentRecord",
        27 => "wandb_internal.OutputLoggerRecord",
        _ => return None,
    })
}

/// Items → `{ "a.b": value }`.
fn items_object<'a>(items: impl Iterator<Item = wire::Item<'a>>) -> Value {
    let mut m = Map::new();
    let mut key = String::new();
    for it in items {
        it.flat_key_into(&mut key);
        m.insert(key.clone(), value::to_json(it.value));
    }
    Value::Object(m)
}

fn collect_items(body: &[u8], field: u32) -> Option<Vec<wire::Item<'_>>> {
    let mut out = Vec::new();
    let mut f = wire::Fields::new(body);
    for fl in f.by_ref() {
        if let wire::Field::Bytes(n, b) = fl {
            if n == field {
                out.push(wire::item(b)?);
            }
        }
    }
    (!f.error).then_some(out)
}

fn history_json(body: &[u8]) -> Option<Value> {
    let items = collect_items(body, 1)?;
    let mut step: Option<i64> = None;
    for fl in wire::Fields::new(body) {
        if let wire::Field::Bytes(2, b) = fl {
            step = Some(0);
            for g in wire::Fields::new(b) {
                if let wire::Field::Varint(1, v) = g {
                    step = Some(v as i64);
                }
            }
        }
    }
    let row_step = items
        .iter()
        .find(|it| it.path().eq(["_step"]))
        .and_then(|it| step_num(it.value));
    let mut m = Map::new();
    m.insert("item".into(), items_object(items.into_iter()));
    let step = step.or(row_step);
    if let Some(s) = step {
        m.insert("step".into(), serde_json::json!({ "num": s }));
    }
    Some(Value::Object(m))
}

/// A `_step` item as the record's step number (an int64, as the protobuf's
/// `HistoryStep.num`): an integer exactly as logged (its double is not exact past
/// 2^53); a fraction cut toward zero, as a cast to int64 cuts it; None for a
/// number no int64 holds (`1e20` is no step, not i64::MAX) and for anything else.
pub(crate) fn step_num(v: wire::ItemValue<'_>) -> Option<i64> {
    if let wire::ItemValue::Int(i) = v {
        return Some(i);
    }
    if let wire::ItemValue::Json(t) = v {
        let t = t.trim_ascii();
        if value::is_integer_literal(t) {
            return t.parse().ok();
        }
    }
    let n = value::number(v)?.trunc();
    // `i64::MAX as f64` is 2^63, just past the range: the bound is exclusive.
    (n.is_finite() && n >= -(2f64.powi(63)) && n < 2f64.powi(63)).then_some(n as i64)
}

fn tree_json(body: &[u8]) -> Option<Value> {
    let updates = collect_items(body, 1)?;
    let removes = collect_items(body, 2)?;
    let mut m = Map::new();
    if !updates.is_empty() {
        m.insert("update".into(), items_object(updates.into_iter()));
    }
    if !removes.is_empty() {
        // As the protobuf says it (and wandb prints it): `{"key": k}` or
        // `{"nested_key": [..]}`, so "a.b" and ["a", "b"] stay distinct.
        let keys: Vec<Value> = removes
            .iter()
            .map(|it| {
                if it.key.is_empty() {
                    let path: Vec<Value> = it.path().map(Value::from).collect();
                    serde_json::json!({ "nested_key": path })
                } else {
                    serde_json::json!({ "key": it.key })
                }
            })
            .collect();
        m.insert("remove".into(), Value::Array(keys));
    }
    Some(Value::Object(m))
}

fn stats_json(body: &[u8]) -> Option<Value> {
    let items = collect_items(body, 3)?;
    let mut m = Map::new();
    if !items.is_empty() {
        m.insert("item".into(), items_object(items.into_iter()));
    }
    let mut stats_type = 0u64;
    for fl in wire::Fields::new(body) {
        match fl {
            wire::Field::Bytes(2, b) => {
                if let Some(Value::String(s)) = bytes_json("google.protobuf.Timestamp", b) {
                    m.insert("timestamp".into(), Value::String(s));
                }
            }
            wire::Field::Varint(1, v) => stats_type = v,
            _ => {}
        }
    }
    if stats_type != 0 {
        m.insert("stats_type".into(), Value::from(stats_type));
    }
    Some(Value::Object(m))
}

/// Drop `_info` bodies and turn nested key/value item lists into objects.
fn tidy(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("_info");
            for key in ["update", "item", "storage_policy_config"] {
                if let Some(Value::Array(items)) = o.get(key) {
                    if let Some(obj) = items_to_object(items) {
                        o.insert(key.into(), obj);
                    }
                }
            }
            for (_, child) in o.iter_mut() {
                tidy(child);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy),
        _ => {}
    }
}

fn items_to_object(items: &[Value]) -> Option<Value> {
    let mut m = Map::new();
    for it in items {
        let o = it.as_object()?;
        if !o.contains_key("value_json") && !o.contains_key("key") && !o.contains_key("nested_key")
        {
            return None;
        }
        let key = match o.get("key").and_then(Value::as_str) {
            Some(k) if !k.is_empty() => k.to_owned(),
            _ => o
                .get("nested_key")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(".")
                })
                .unwrap_or_default(),
        };
        let raw = o
            .get("value_json")
            .and_then(Value::as_str)
            .unwrap_or("null");
        m.insert(key, value::parse_lenient(raw));
    }
    Some(Value::Object(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_timestamps_are_left_out_not_fatal() {
        use prost::Message as _;
        let rec = pb::Record {
            num: 3,
            record_type: Some(pb::record::RecordType::OutputRaw(pb::OutputRawRecord {
                line: "hello".into(),
                timestamp: Some(prost_types::Timestamp {
                    seconds: i64::MAX,
                    nanos: 0,
                }),
                ..Default::default()
            })),
            ..Default::default()
        };
        let v = record_json(&rec.encode_to_vec()).expect("printable");
        assert_eq!(v["output_raw"]["line"], "hello");
        assert!(v["output_raw"].get("timestamp").is_none());
    }

    /// The step derived from a `_step` item is the integer as logged, however big
    /// (2^53 + 1 is not its nearest double); none where no int64 holds it.
    #[test]
    fn a_step_from_the_step_item_is_exact() {
        let num = |step: &str| {
            let rec = crate::synth::history_record(1, &[("_step", step)]);
            let v = record_json(&rec).expect("printable");
            v["history"].get("step").map(|s| s["num"].clone())
        };
        let n = |i: i64| Some(Value::from(i));
        assert_eq!(num("9007199254740993"), n(9_007_199_254_740_993));
        assert_eq!(num("-9007199254740993"), n(-9_007_199_254_740_993));
        assert_eq!(num("9223372036854775807"), n(i64::MAX));
        assert_eq!(num("-9223372036854775808"), n(i64::MIN));
        assert_eq!(num("3"), n(3));
        assert_eq!(num("1.5"), n(1));
        assert_eq!(num("1e20"), None);
        assert_eq!(num("9223372036854775808"), None);
        assert_eq!(num("NaN"), None);
        assert_eq!(num("\"7\""), None);
    }

    #[test]
    fn stderr_is_named_and_removes_keep_their_key_form() {
        use prost::Message as _;
        let rec = pb::Record {
            num: 4,
            record_type: Some(pb::record::RecordType::OutputRaw(pb::OutputRawRecord {
                line: "oops".into(),
                output_type: 0, // STDERR, the zero value
                ..Default::default()
            })),
            ..Default::default()
        };
        let v = record_json(&rec.encode_to_vec()).expect("printable");
        assert_eq!(v["output_raw"]["output_type"], "STDERR");

        let item = |key: &str, nested: &[&str]| pb::SummaryItem {
            key: key.into(),
            nested_key: nested.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        };
        let rec = pb::Record {
            num: 5,
            record_type: Some(pb::record::RecordType::Summary(pb::SummaryRecord {
                remove: vec![item("a.b", &[]), item("", &["a", "b"])],
                ..Default::default()
            })),
            ..Default::default()
        };
        let v = record_json(&rec.encode_to_vec()).expect("printable");
        assert_eq!(
            v["summary"]["remove"],
            serde_json::json!([{"key": "a.b"}, {"nested_key": ["a", "b"]}])
        );
    }

    #[test]
    fn pool_loads() {
        assert!(pool().is_some_and(|p| p.get_message_by_name("wandb_internal.Record").is_some()));
    }
}
