use super::*;

#[test]
fn an_endpoint_down_at_start_is_retried_and_picked_up() {
    use std::io::{Read as _, Write as _};
    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = probe.local_addr().expect("addr");
    drop(probe); // nothing listens there now
    let url = format!("http://{addr}/metrics");
    let mut c = OpenMetricsCollector::new("late", &url, None).expect("valid url");
    let mut out = Vec::new();
    let why = c.sample(&mut out).expect_err("a closed port answered");
    assert!(why.to_string().contains("retrying every 30 s"), "{why}");
    // Within the back-off nothing is tried (no stall, no error).
    assert!(c.sample(&mut out).is_ok() && out.is_empty());
    let server = std::net::TcpListener::bind(addr).expect("rebind");
    let t = std::thread::spawn(move || {
        if let Ok((mut s, _)) = server.accept() {
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let body = "# TYPE up gauge\nup 1\n";
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    c.retry_at = Some(std::time::Instant::now());
    c.sample(&mut out).expect("scraped after retry");
    assert_eq!(out, vec![("openmetrics.late.up.0".to_owned(), 1.0)]);
    let _ = t.join();
}

#[test]
fn a_bad_url_is_refused_without_io() {
    let e = OpenMetricsCollector::new("x", "ftp://127.0.0.1/", None).err();
    assert!(e.is_some_and(|e| e.contains("only http:// and https://")));
    assert!(OpenMetricsCollector::new("x", "https://127.0.0.1/", None).is_ok());
}

fn exposition_of(sets: impl Iterator<Item = String>) -> Exposition {
    let mut text = String::from("# TYPE m gauge\n");
    for l in sets {
        text.push_str(&format!("m{{id=\"{l}\"}} 1\n"));
    }
    parse_exposition(&text)
}

#[test]
fn churning_label_sets_are_forgotten_and_indices_reused() {
    let mut idx = KeyIndex::new("e");
    let mut keys = std::collections::BTreeSet::new();
    for scrape in 0..50 {
        // 100 label sets, every one new on every scrape
        let exp = exposition_of((0..100).map(|i| format!("{scrape}-{i}")));
        let mut out = Vec::new();
        assert_eq!(openmetrics_values(&exp, &mut idx, None, &mut out), 0);
        assert_eq!(out.len(), 100);
        keys.extend(out.into_iter().map(|(k, _)| k));
        // held: this scrape's and the previous one's (FORGET_AFTER = 2)
        assert!(idx.len() <= 200, "{}", idx.len());
    }
    // the same few hundred keys, not 5,000
    assert!(keys.len() <= 300, "{}", keys.len());
}

#[test]
fn stable_sets_keep_their_index_through_churn() {
    let mut idx = KeyIndex::new("e");
    for scrape in 0..10 {
        let exp = exposition_of(
            ["a".to_string(), "b".to_string()]
                .into_iter()
                .chain((0..5).map(|i| format!("{scrape}-{i}"))),
        );
        let mut out = Vec::new();
        openmetrics_values(&exp, &mut idx, None, &mut out);
        assert_eq!(out[0].0, "openmetrics.e.m.0");
        assert_eq!(out[1].0, "openmetrics.e.m.1");
        let mut ks: Vec<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
        ks.sort_unstable();
        ks.dedup();
        assert_eq!(ks.len(), 7, "no two label sets share a key: {ks:?}");
    }
}

#[test]
fn the_series_cap_cuts_and_says_so() {
    let mut idx = KeyIndex::with_cap("e", 1_000);
    let exp = exposition_of((0..1_500).map(|i| i.to_string()));
    let mut out = Vec::new();
    assert_eq!(openmetrics_values(&exp, &mut idx, None, &mut out), 500);
    assert_eq!(out.len(), 1_000);
    // churn under a full index: the stale sets make room for the new ones
    let exp = exposition_of((5_000..5_900).map(|i| i.to_string()));
    let mut out = Vec::new();
    assert_eq!(openmetrics_values(&exp, &mut idx, None, &mut out), 0);
    assert_eq!(out.len(), 900);
    assert!(idx.len() <= 1_000);
}

#[test]
fn labels_with_escapes_and_commas() {
    let text = "# HELP m A \\\\ help\\nline\n# TYPE m gauge\nm{path=\"C:\\\\dir\",msg=\"say \\\"hi\\\", ok\",nl=\"a\\nb\",} 1.5e3 1700000000000\n";
    let exp = parse_exposition(text);
    assert!(exp.errors.is_empty(), "{:?}", exp.errors);
    assert_eq!(exp.help["m"], "A \\ help\nline");
    let s = &exp.samples[0];
    assert_eq!(s.kind, MetricKind::Gauge);
    assert_eq!(s.value, 1500.0);
    assert_eq!(
        s.labels,
        vec![
            ("path".to_string(), "C:\\dir".to_string()),
            ("msg".to_string(), "say \"hi\", ok".to_string()),
            ("nl".to_string(), "a\nb".to_string()),
        ]
    );
}

#[test]
fn special_values_and_bad_lines() {
    let text =
        "# TYPE a gauge\na +Inf\na{x=\"1\"} -Inf\na{x=\"2\"} NaN\nbad{x=1} 2\n{x=\"1\"} 3\nb\n";
    let exp = parse_exposition(text);
    assert_eq!(exp.samples.len(), 3);
    assert_eq!(exp.samples[0].value, f64::INFINITY);
    assert_eq!(exp.samples[1].value, f64::NEG_INFINITY);
    assert!(exp.samples[2].value.is_nan());
    assert_eq!(
        exp.errors.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
        vec![5, 6, 7]
    );
    // non-finite values never become keys
    let mut out = Vec::new();
    openmetrics_values(&exp, &mut KeyIndex::new("e"), None, &mut out);
    assert!(out.is_empty());
}

#[test]
fn histogram_summary_and_openmetrics_counter() {
    let text = "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_sum 3\nh_count 2\n# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 1\n# TYPE c counter\nc_total 7\nc_created 1.7e9\n# EOF\nafter_eof 1\n";
    let exp = parse_exposition(text);
    let kinds: Vec<(&str, MetricKind)> = exp
        .samples
        .iter()
        .map(|s| (s.name.as_str(), s.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("h_bucket", MetricKind::Histogram),
            ("h_sum", MetricKind::Histogram),
            ("h_count", MetricKind::Histogram),
            ("s", MetricKind::Summary),
            ("s_sum", MetricKind::Summary),
            ("c_total", MetricKind::Counter),
            ("c_created", MetricKind::Other),
        ]
    );
    let mut out = Vec::new();
    openmetrics_values(&exp, &mut KeyIndex::new("e"), None, &mut out);
    assert_eq!(out, vec![("openmetrics.e.c_total.0".to_string(), 7.0)]);
}

/// Both ways of mapping a text, scrape after scrape on two indexes: the same output.
fn assert_same_mapping(scrapes: &[String], cap: usize, filter: Option<&Regex>) {
    let mut slow = KeyIndex::with_cap("e", cap);
    let mut fast = KeyIndex::with_cap("e", cap);
    for (n, text) in scrapes.iter().enumerate() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let cut_a = openmetrics_values(&parse_exposition(text), &mut slow, filter, &mut a);
        let cut_b = openmetrics_values_of_text(text, &mut fast, filter, &mut b);
        assert_eq!(a, b, "scrape {n}");
        assert_eq!(cut_a, cut_b, "scrape {n}");
        assert_eq!(slow.len(), fast.len(), "scrape {n}");
        assert!(fast.series.len() <= 2 * cap);
    }
}

fn device_fixture(name: &str) -> String {
    let path = format!(
        "{}/../../tests/fixtures/devices/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_one_pass_mapping_equals_parse_then_map_on_recorded_pages() {
    let re = Regex::new("node_(cpu|memory)|DCGM_FI_PROF").expect("re");
    for page in [
        "openmetrics-node-exporter-e2e-linux.txt",
        "openmetrics-dcgm-exporter-l4.txt",
    ] {
        let text = device_fixture(page);
        let scrapes = vec![text.clone(), text.clone(), text];
        assert_same_mapping(&scrapes, MAX_SERIES, None);
        assert_same_mapping(&scrapes, MAX_SERIES, Some(&re));
        assert_same_mapping(&scrapes, 300, None);
    }
    let mut out = Vec::new();
    let text = device_fixture("openmetrics-node-exporter-e2e-linux.txt");
    openmetrics_values_of_text(&text, &mut KeyIndex::new("node"), None, &mut out);
    assert!(out.len() > 1000, "{}", out.len());
}

#[test]
fn the_one_pass_mapping_equals_parse_then_map_under_churn_and_odd_lines() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let odd = [
        "bad{x=1} 2",
        "{x=\"1\"} 3",
        "c_total{a=\"un}closed 1",
        "c_total{a=\"x\\\"}\",b=\"2\"} 4",
        "c_total{b=\"2\",a=\"x\"} 5",
        "c_total{a=\"x\",b=\"2\"} 6 1700000000",
        "g{} 7",
        "g 8",
        "g   9",
        "g{a=\"\\\\\"} NaN",
        "g{a=\"1\"} +Inf",
        "g{a=\"1\",} 10",
        "h_bucket{le=\"1\"} 2",
        "g_created 11",
        "c_created 12",
        "late 13",
        "g-1 2",
    ];
    let mut scrapes = Vec::new();
    for scrape in 0..40 {
        let mut t = String::from(
            "# TYPE c counter\n# HELP g a gauge\n# TYPE g gauge\n# TYPE h histogram\n",
        );
        for _ in 0..rng.random_range(5..60) {
            let line = match rng.random_range(0..4) {
                0 => odd[rng.random_range(0..odd.len())].to_string(),
                1 => format!("g{{id=\"{}\"}} {}", rng.random_range(0..30), scrape),
                2 => format!(
                    "c_total{{id=\"{scrape}-{}\",z=\"q\"}} 1",
                    rng.random_range(0..5)
                ),
                _ => format!(
                    "g{{b=\"{}\",a=\"{}\"}} 2.5",
                    rng.random_range(0..3),
                    rng.random_range(0..3)
                ),
            };
            t.push_str(&line);
            t.push('\n');
        }
        if scrape % 7 == 0 {
            t.push_str("# TYPE late gauge\nlate 1\n# EOF\ng{id=\"after\"} 1\n");
        }
        scrapes.push(t);
    }
    assert_same_mapping(&scrapes, MAX_SERIES, None);
    assert_same_mapping(&scrapes, 20, None);
    let re = Regex::new("e\\.(g|c_total)$").expect("re");
    assert_same_mapping(&scrapes, 20, Some(&re));
}

#[test]
fn label_set_indices_are_stable_and_order_free() {
    let mut idx = KeyIndex::new("node");
    let l = |a: &str, b: &str| {
        vec![
            ("a".to_string(), a.to_string()),
            ("b".to_string(), b.to_string()),
        ]
    };
    assert_eq!(
        idx.key("m", &l("1", "x")).as_deref(),
        Some("openmetrics.node.m.0")
    );
    assert_eq!(
        idx.key("m", &l("2", "x")).as_deref(),
        Some("openmetrics.node.m.1")
    );
    assert_eq!(
        idx.key("other", &l("2", "x")).as_deref(),
        Some("openmetrics.node.other.0")
    );
    let reversed = vec![
        ("b".to_string(), "x".to_string()),
        ("a".to_string(), "1".to_string()),
    ];
    assert_eq!(
        idx.key("m", &reversed).as_deref(),
        Some("openmetrics.node.m.0")
    );
    assert_eq!(idx.key("m", &[]).as_deref(), Some("openmetrics.node.m.2"));
}
