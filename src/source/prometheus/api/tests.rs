//! The client against a fake server on 127.0.0.1: answers as Prometheus writes them,
//! and each way a server fails (a status, the API's error, garbage, silence, a huge
//! body, nothing listening).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use super::*;
use crate::source::http::HttpError;

/// What the fake server does with each request.
#[derive(Clone)]
pub(crate) enum Reply {
    Answer(u16, String),
    /// Holds the connection open without a byte of answer.
    Silent,
}

/// A server answering every request with `reply`; the request lines it got come
/// through the receiver.
pub(crate) fn fake(reply: Reply) -> (String, mpsc::Receiver<String>) {
    fake_by(move |_| reply.clone())
}

/// A server answering each request as `reply` says for its head.
pub(crate) fn fake_by(
    reply: impl Fn(&str) -> Reply + Send + 'static,
) -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = vec![0u8; 16 << 10];
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let n = s.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            let answer = reply(&head);
            let _ = tx.send(head);
            match &answer {
                Reply::Answer(status, body) => {
                    let _ = write!(
                        s,
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
                Reply::Silent => std::thread::sleep(Duration::from_secs(30)),
            }
        }
    });
    (format!("http://127.0.0.1:{}", addr.port()), rx)
}

pub(crate) fn client(url: &str) -> Client {
    let opts = HttpOptions {
        connect: Duration::from_secs(2),
        total: Duration::from_secs(1),
        max_body: 4096,
    };
    Client::new(url, opts).expect("client")
}

const MATRIX: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[
 {"metric":{"__name__":"up","instance":"a:1","job":"j"},"values":[[1700000000,"1"],[1700000015.5,"0"],[1700000030,"NaN"]]},
 {"metric":{"instance":"b:1"},"values":[[1700000000,"+Inf"]]}]}}"#;

#[test]
fn a_range_query_is_read_and_sent_with_its_parameters() {
    let (url, rx) = fake(Reply::Answer(200, MATRIX.into()));
    let c = client(&format!("{url}/prefix/"));
    let s = c
        .query_range(
            "up{job=\"j\"}",
            1_700_000_000.0,
            1_700_000_030.0,
            Duration::from_secs(15),
        )
        .expect("matrix");
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].label("instance"), Some("a:1"));
    assert_eq!(
        s[0].points[..2],
        [(1_700_000_000.0, 1.0), (1_700_000_015.5, 0.0)]
    );
    assert!(s[0].points[2].1.is_nan());
    assert_eq!(s[1].points, [(1_700_000_000.0, f64::INFINITY)]);
    let head = rx.recv().expect("request");
    let line = head.lines().next().expect("request line");
    assert!(line.starts_with("GET /prefix/api/v1/query_range?query=up%7Bjob%3D%22j%22%7D&start=1700000000.000&end=1700000030.000&step=15.000 "), "{line}");
}

#[test]
fn an_instant_query_wants_a_vector() {
    let body = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"h"},"value":[1700000000.1,"0.5"]}]}}"#;
    let (url, _rx) = fake(Reply::Answer(200, body.into()));
    let s = client(&url).query("x", Some(1.0)).expect("vector");
    assert_eq!(s[0].points, [(1_700_000_000.1, 0.5)]);
    let err = client(&url).query_range("x", 0.0, 1.0, Duration::from_secs(1));
    assert!(matches!(err, Err(PromError::Garbage { .. })), "{err:?}");
}

#[test]
fn the_api_error_names_server_kind_and_cause_sanitised() {
    let body =
        r#"{"status":"error","errorType":"bad_data","error":"parse error: unexpected \u001b[31m"}"#;
    let (url, _rx) = fake(Reply::Answer(400, body.into()));
    let err = client(&url).query("(", None).expect_err("api error");
    let PromError::Api {
        server,
        kind,
        error,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!((server.as_str(), kind.as_str()), (url.as_str(), "bad_data"));
    assert!(
        error.starts_with("parse error") && !error.contains('\u{1b}'),
        "{error}"
    );
    assert!(err.to_string().contains(&url));
}

#[test]
fn a_500_without_json_is_a_status_error() {
    let (url, _rx) = fake(Reply::Answer(500, "upstream \x1b]0;pwned\x07 broke".into()));
    let err = client(&url).query("up", None).expect_err("500");
    let PromError::Status {
        status, excerpt, ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(*status, 500);
    assert!(
        !excerpt.contains('\u{1b}') && excerpt.contains("broke"),
        "{excerpt}"
    );
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    for body in [
        "<html>hi</html>",
        "{\"status\":\"success\"}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":7}}",
        "",
    ] {
        let (url, _rx) = fake(Reply::Answer(200, body.into()));
        let err = client(&url).query("up", None);
        assert!(
            matches!(err, Err(PromError::Garbage { .. })),
            "{body}: {err:?}"
        );
    }
}

#[test]
fn a_silent_server_times_out() {
    let (url, _rx) = fake(Reply::Silent);
    let err = client(&url).query("up", None).expect_err("timeout");
    assert!(
        matches!(err, PromError::Http(HttpError::Timeout { .. })),
        "{err:?}"
    );
}

#[test]
fn a_huge_answer_is_refused() {
    let big = format!(
        r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{"x":"{}"}},"value":[1,"1"]}}]}}}}"#,
        "a".repeat(10_000)
    );
    let (url, _rx) = fake(Reply::Answer(200, big));
    let err = client(&url).query("up", None).expect_err("huge");
    assert!(
        matches!(
            err,
            PromError::Http(HttpError::TooLarge { limit: 4096, .. })
        ),
        "{err:?}"
    );
}

#[test]
fn series_labels_and_config() {
    let (url, rx) = fake(Reply::Answer(
        200,
        r#"{"status":"success","data":[{"__name__":"up","instance":"a"}]}"#.into(),
    ));
    let s = client(&url)
        .series(&["up", "{job=\"x\"}"], 0.0, 10.0)
        .expect("series");
    assert_eq!(s[0].get("instance").map(String::as_str), Some("a"));
    let line = rx.recv().expect("request");
    assert!(line.starts_with("GET /api/v1/series?match%5B%5D=up&match%5B%5D=%7Bjob%3D%22x%22%7D&start=0.000&end=10.000 "), "{line}");
    let (url, _rx) = fake(Reply::Answer(
        200,
        r#"{"status":"success","data":["a","b"]}"#.into(),
    ));
    assert_eq!(
        client(&url).labels(Some("instance"), &[]).expect("values"),
        ["a", "b"]
    );
    assert!(client(&url).labels(Some("../x"), &[]).is_err());
    let yaml = r#"{"status":"success","data":{"yaml":"global:\n  scrape_interval: 1m30s\n  evaluation_interval: 1m\nscrape_configs:\n- job_name: x\n  scrape_interval: 5s\n"}}"#;
    let (url, _rx) = fake(Reply::Answer(200, yaml.into()));
    assert_eq!(
        client(&url)
            .scrape_interval(&Matchers::default())
            .expect("config"),
        Some(Duration::from_secs(90))
    );
}

#[test]
fn the_scrape_interval_is_the_shortest_of_the_targets_read() {
    // The global interval is 1 m; the job leet reads scrapes every second.
    let body = r#"{"status":"success","data":{"activeTargets":[
        {"scrapeInterval":"1m","labels":{"job":"node","instance":"a:9100"}},
        {"scrapeInterval":"1s","labels":{"job":"leet","instance":"a:9837"}},
        {"labels":{"job":"other"}}],"droppedTargets":[]}}"#;
    let (url, rx) = fake(Reply::Answer(200, body.into()));
    let c = client(&url);
    assert_eq!(
        c.scrape_interval(&Matchers::default()).expect("targets"),
        Some(Duration::from_secs(1))
    );
    let first = rx.recv().expect("request");
    assert!(
        first.starts_with("GET /api/v1/targets?state=active "),
        "{first}"
    );
    // Only the targets the matchers select count.
    let node = Matchers::parse(&[r#"job=~"no.*""#]).expect("matchers");
    assert_eq!(
        c.scrape_interval(&node).expect("targets"),
        Some(Duration::from_secs(60))
    );
}

#[test]
fn durations() {
    assert_eq!(parse_duration("15s"), Some(Duration::from_secs(15)));
    assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
    assert_eq!(parse_duration("1h2m"), Some(Duration::from_secs(3720)));
    for bad in ["", "s", "15", "1x", "-1s"] {
        assert_eq!(parse_duration(bad), None, "{bad}");
    }
}
