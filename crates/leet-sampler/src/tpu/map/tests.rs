use super::*;
use proto::attr_value::Attr;

fn attr(a: Attr) -> Option<proto::Attribute> {
    Some(proto::Attribute {
        key: "device-id".into(),
        value: Some(proto::AttrValue { attr: Some(a) }),
    })
}

fn kvl(pairs: &[(&str, Attr)]) -> Option<proto::Attribute> {
    Some(proto::Attribute {
        key: String::new(),
        value: Some(proto::AttrValue {
            attr: Some(Attr::KvlistAttr(proto::KeyValueList {
                attributes: pairs
                    .iter()
                    .map(|(k, v)| proto::Attribute {
                        key: (*k).into(),
                        value: Some(proto::AttrValue {
                            attr: Some(v.clone()),
                        }),
                    })
                    .collect(),
            })),
        }),
    })
}

fn gauge(attribute: Option<proto::Attribute>, v: proto::gauge::Value) -> proto::Metric {
    proto::Metric {
        attribute,
        measure: Some(proto::metric::Measure::Gauge(proto::Gauge {
            value: Some(v),
        })),
        ..Default::default()
    }
}

fn tpu_metric(metrics: Vec<proto::Metric>) -> proto::TpuMetric {
    proto::TpuMetric {
        metrics,
        ..Default::default()
    }
}

fn keys(m: Merged) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    m.finish(&mut out);
    out
}

#[test]
fn labels_are_sanitised_as_the_spec_says() {
    assert_eq!(sanitize_label("tensor_core-0"), "tensor_core_0");
    assert_eq!(
        sanitize_label("  GPU+Memory 100% "),
        "gpu_plus_memory_100pct"
    );
    assert_eq!(sanitize_label("8MB+"), "8mb_plus");
    assert_eq!(sanitize_label("!!!"), "unknown");
    assert_eq!(sanitize_label(""), "unknown");
    assert_eq!(sanitize_label("a--b__c"), "a_b_c");
    assert_eq!(sanitize_label("\u{1b}[31mRED"), "31mred");
    assert_eq!(sanitize_label("Ünïcode"), "n_code");
    let long = sanitize_label(&"ab-".repeat(100));
    assert!(
        long.len() <= MAX_LABEL_LEN && !long.ends_with('_'),
        "{long}"
    );
}

#[test]
fn device_gauges_and_memory_percentage() {
    // tpu-info's v4-8 test response: per-device int gauges and a double duty cycle.
    let mut m = Merged::default();
    let f = Fanout { duty_cycle: 1 };
    let total = 34_088_157_184_i64;
    let usage = [0_i64, 8_522_039_296, 17_044_078_592, 34_088_157_184];
    m.add(
        Shape::Device("hbmCapacityTotal"),
        &tpu_metric(
            (0..4)
                .map(|i| gauge(attr(Attr::IntAttr(i)), proto::gauge::Value::AsInt(total)))
                .collect(),
        ),
        f,
    );
    m.add(
        Shape::Device("hbmCapacityUsage"),
        &tpu_metric(
            (0..4)
                .map(|i| {
                    gauge(
                        attr(Attr::IntAttr(i)),
                        proto::gauge::Value::AsInt(usage[i as usize]),
                    )
                })
                .collect(),
        ),
        f,
    );
    m.add(
        Shape::DutyCycle,
        &tpu_metric(vec![gauge(
            attr(Attr::IntAttr(1)),
            proto::gauge::Value::AsDouble(25.0),
        )]),
        f,
    );
    let out = keys(m);
    let get = |k: &str| out.iter().find(|(x, _)| x == k).map(|(_, v)| *v);
    assert_eq!(get("tpu.1.hbmCapacityTotal"), Some(total as f64));
    assert_eq!(get("tpu.1.hbmCapacityUsage"), Some(8_522_039_296.0));
    assert_eq!(get("tpu.1.memoryUsageBytes"), Some(8_522_039_296.0));
    assert_eq!(get("tpu.1.memoryUsage"), Some(25.0));
    assert_eq!(get("tpu.3.memoryUsage"), Some(100.0));
    assert_eq!(get("tpu.0.memoryUsage"), Some(0.0));
    assert_eq!(get("tpu.1.dutyCycle"), Some(25.0));
    assert_eq!(get("tpu.0.dutyCycle"), None);
    // Per device, in device order.
    assert_eq!(out[0].0, "tpu.0.hbmCapacityTotal");
    assert_eq!(out.len(), 4 * 4 + 1);
}

#[test]
fn duty_cycle_is_copied_to_both_cores_of_a_v3_chip() {
    let mut m = Merged::default();
    m.add(
        Shape::DutyCycle,
        &tpu_metric(vec![
            gauge(attr(Attr::IntAttr(0)), proto::gauge::Value::AsDouble(100.0)),
            gauge(attr(Attr::IntAttr(1)), proto::gauge::Value::AsDouble(50.0)),
        ]),
        Fanout { duty_cycle: 2 },
    );
    let out = keys(m);
    assert_eq!(
        out,
        vec![
            ("tpu.0.dutyCycle".to_string(), 100.0),
            ("tpu.1.dutyCycle".to_string(), 100.0),
            ("tpu.2.dutyCycle".to_string(), 50.0),
            ("tpu.3.dutyCycle".to_string(), 50.0),
        ]
    );
}

#[test]
fn first_port_wins_and_devices_are_unioned() {
    let mut m = Merged::default();
    let f = Fanout { duty_cycle: 1 };
    let shape = Shape::Device("hbmCapacityUsage");
    m.add(
        shape,
        &tpu_metric(vec![gauge(
            attr(Attr::IntAttr(0)),
            proto::gauge::Value::AsInt(10),
        )]),
        f,
    );
    m.add(
        shape,
        &tpu_metric(vec![
            gauge(attr(Attr::IntAttr(0)), proto::gauge::Value::AsInt(99)),
            gauge(attr(Attr::IntAttr(1)), proto::gauge::Value::AsInt(20)),
        ]),
        f,
    );
    let out = keys(m);
    let get = |k: &str| out.iter().find(|(x, _)| x == k).map(|(_, v)| *v);
    assert_eq!(get("tpu.0.hbmCapacityUsage"), Some(10.0));
    assert_eq!(get("tpu.1.hbmCapacityUsage"), Some(20.0));
}

#[test]
fn bad_devices_and_values_are_dropped() {
    let mut m = Merged::default();
    m.add(
        Shape::Device("tensorcoreIdleDuration"),
        &tpu_metric(vec![
            gauge(attr(Attr::IntAttr(-1)), proto::gauge::Value::AsDouble(1.0)),
            gauge(
                attr(Attr::IntAttr(1 << 40)),
                proto::gauge::Value::AsDouble(1.0),
            ),
            gauge(
                attr(Attr::IntAttr(0)),
                proto::gauge::Value::AsDouble(f64::NAN),
            ),
            gauge(
                attr(Attr::IntAttr(0)),
                proto::gauge::Value::AsString("x".into()),
            ),
            gauge(None, proto::gauge::Value::AsDouble(1.0)),
            gauge(
                attr(Attr::StringAttr("2".into())),
                proto::gauge::Value::AsDouble(0.5),
            ),
        ]),
        Fanout { duty_cycle: 1 },
    );
    assert_eq!(
        keys(m),
        vec![("tpu.2.tensorcoreIdleDuration".to_string(), 0.5)]
    );
}

#[test]
fn summaries_give_mean_and_quantiles() {
    let s = proto::Summary {
        sample_count: 4,
        sample_sum: 100.0,
        quantile: [
            (0.5, 20.0),
            (0.9, 30.0),
            (0.95, 35.0),
            (0.99, 38.0),
            (0.999, 40.0),
        ]
        .iter()
        .map(|&(quantile, value)| proto::Quantile { quantile, value })
        .collect(),
    };
    let mut m = Merged::default();
    m.add(
        Shape::Dist {
            base: "tpu.grpcTcpMinRtt",
            unit: "Us",
        },
        &tpu_metric(vec![proto::Metric {
            measure: Some(proto::metric::Measure::Summary(s)),
            ..Default::default()
        }]),
        Fanout { duty_cycle: 1 },
    );
    assert_eq!(
        keys(m),
        vec![
            ("tpu.grpcTcpMinRtt.meanUs".to_string(), 25.0),
            ("tpu.grpcTcpMinRtt.p50Us".to_string(), 20.0),
            ("tpu.grpcTcpMinRtt.p90Us".to_string(), 30.0),
            ("tpu.grpcTcpMinRtt.p95Us".to_string(), 35.0),
            ("tpu.grpcTcpMinRtt.p999Us".to_string(), 40.0),
        ]
    );
}

fn explicit(bounds: &[f64], counts: &[i64], mean: f64) -> proto::Distribution {
    proto::Distribution {
        count: counts.iter().sum(),
        mean,
        bucket_options: Some(proto::distribution::BucketOptions {
            options: Some(Options::ExplicitBuckets(
                proto::distribution::bucket_options::Explicit {
                    bounds: bounds.to_vec(),
                },
            )),
        }),
        bucket_counts: counts.to_vec(),
        ..Default::default()
    }
}

#[test]
fn quantiles_interpolate_inside_buckets() {
    // Buckets (-inf,100) [100,200) [200,400) [400,inf) holding 0, 10, 10, 0.
    let d = explicit(&[100.0, 200.0, 400.0], &[0, 10, 10, 0], 250.0);
    let s = distribution_stats(&d);
    let close = |name: &str, want: f64| {
        let got = s.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        assert!(
            got.is_some_and(|g| (g - want).abs() < 1e-9),
            "{name}: {got:?}"
        );
    };
    close("mean", 250.0);
    close("p50", 200.0);
    close("p90", 360.0);
    close("p95", 380.0);
    close("p999", 399.6);
}

#[test]
fn exponential_and_linear_layouts() {
    // scale 1, growth 2: bucket 5 is [16,32), bucket 6 is [32,64).
    let mut counts = vec![0_i64; 12];
    counts[5] = 4;
    counts[6] = 4;
    let d = proto::Distribution {
        count: 8,
        mean: 33.0,
        min: 20.0,
        max: 63.99,
        bucket_options: Some(proto::distribution::BucketOptions {
            options: Some(Options::ExponentialBuckets(
                proto::distribution::bucket_options::Exponential {
                    num_finite_buckets: 10,
                    growth_factor: 2.0,
                    scale: 1.0,
                },
            )),
        }),
        bucket_counts: counts,
        ..Default::default()
    };
    let b = bucket_bounds(&d).expect("bounds");
    assert_eq!(b.len(), 11);
    assert_eq!(b[5], 32.0);
    let q = |x| bucket_quantile(&d, &b, x).expect("q");
    assert!((q(0.5) - 32.0).abs() < 1e-9);
    assert!((q(0.9) - 57.6).abs() < 1e-9);
    assert!((q(0.999) - 63.936).abs() < 1e-9);
    // Overflow bucket ends at max; underflow starts at min.
    let over = explicit(&[10.0], &[0, 2], 15.0);
    let over = proto::Distribution {
        min: 10.0,
        max: 20.0,
        ..over
    };
    let b = bucket_bounds(&over).expect("bounds");
    assert_eq!(bucket_quantile(&over, &b, 0.5), Some(15.0));
    let lin = proto::Distribution {
        bucket_options: Some(proto::distribution::BucketOptions {
            options: Some(Options::LinearBuckets(
                proto::distribution::bucket_options::Linear {
                    num_finite_buckets: 2,
                    width: 10.0,
                    offset: 0.0,
                },
            )),
        }),
        ..explicit(&[], &[0, 0, 4, 0], 15.0)
    };
    let b = bucket_bounds(&lin).expect("bounds");
    assert_eq!(b, vec![0.0, 10.0, 20.0]);
    assert_eq!(bucket_quantile(&lin, &b, 0.5), Some(15.0));
}

#[test]
fn broken_distributions_give_no_quantiles() {
    let empty = explicit(&[1.0], &[0, 0], 0.0);
    assert!(distribution_stats(&empty).is_empty());
    let unsorted = explicit(&[5.0, 1.0], &[1, 1, 1], 2.0);
    assert_eq!(distribution_stats(&unsorted), vec![("mean", 2.0)]);
    let mut no_layout = explicit(&[1.0], &[1, 1], 1.0);
    no_layout.bucket_options = None;
    assert_eq!(distribution_stats(&no_layout), vec![("mean", 1.0)]);
    let bad_growth = proto::Distribution {
        bucket_options: Some(proto::distribution::BucketOptions {
            options: Some(Options::ExponentialBuckets(
                proto::distribution::bucket_options::Exponential {
                    num_finite_buckets: i32::MAX,
                    growth_factor: 1.0,
                    scale: 1.0,
                },
            )),
        }),
        ..explicit(&[], &[1], 1.0)
    };
    assert!(bucket_bounds(&bad_growth).is_none());
}

#[test]
fn labelled_distributions_merge_same_label_buckets() {
    let size = |s: &str| kvl(&[("buffer-size", Attr::StringAttr(s.into()))]);
    let dist = |a, d| proto::Metric {
        attribute: a,
        measure: Some(proto::metric::Measure::Distribution(d)),
        ..Default::default()
    };
    let mut m = Merged::default();
    m.add(
        Shape::Dist {
            base: "tpu.bufferTransferLatency",
            unit: "Us",
        },
        &tpu_metric(vec![
            dist(size("8MB+"), explicit(&[100.0, 200.0], &[0, 10, 0], 150.0)),
            dist(size("8MB+"), explicit(&[100.0, 200.0], &[0, 0, 10], 250.0)),
            dist(size("1KB"), explicit(&[100.0, 200.0], &[4, 0, 0], 50.0)),
        ]),
        Fanout { duty_cycle: 1 },
    );
    let out = keys(m);
    let get = |k: &str| out.iter().find(|(x, _)| x == k).map(|(_, v)| *v);
    assert_eq!(
        get("tpu.bufferTransferLatency.8mb_plus.meanUs"),
        Some(200.0)
    );
    assert_eq!(get("tpu.bufferTransferLatency.8mb_plus.p50Us"), Some(200.0));
    assert_eq!(get("tpu.bufferTransferLatency.1kb.meanUs"), Some(50.0));
    assert_eq!(get("tpu.bufferTransferLatency.1kb.p50Us"), Some(50.0));
    assert_eq!(out.len(), 10);
}

#[test]
fn hlo_labels_and_queue_sizes() {
    let core = |ord: Attr| {
        kvl(&[
            ("device_ordinal", ord),
            ("core_type", Attr::StringAttr("tensor_core".into())),
        ])
    };
    let mut m = Merged::default();
    m.add(
        Shape::Labeled("tpu.hloQueueSize"),
        &tpu_metric(vec![
            gauge(
                core(Attr::StringAttr("0".into())),
                proto::gauge::Value::AsInt(5),
            ),
            gauge(core(Attr::IntAttr(1)), proto::gauge::Value::AsInt(12)),
        ]),
        Fanout { duty_cycle: 1 },
    );
    assert_eq!(
        keys(m),
        vec![
            ("tpu.hloQueueSize.tensor_core_0".to_string(), 5.0),
            ("tpu.hloQueueSize.tensor_core_1".to_string(), 12.0),
        ]
    );
    assert_eq!(
        device_of(&gauge(
            core(Attr::IntAttr(3)),
            proto::gauge::Value::AsInt(0)
        )),
        Some(3)
    );
}

#[test]
fn labels_per_base_are_capped() {
    let mut m = Merged::default();
    let metrics = (0..(MAX_LABELS_PER_BASE + 50))
        .map(|i| {
            gauge(
                Some(proto::Attribute {
                    key: "x".into(),
                    value: Some(proto::AttrValue {
                        attr: Some(Attr::StringAttr(format!("l{i}"))),
                    }),
                }),
                proto::gauge::Value::AsInt(1),
            )
        })
        .collect();
    m.add(
        Shape::Labeled("tpu.hloQueueSize"),
        &tpu_metric(metrics),
        Fanout { duty_cycle: 1 },
    );
    assert_eq!(keys(m).len(), MAX_LABELS_PER_BASE);
}

#[test]
fn tensorcore_utilization_is_found_by_name() {
    let names: Vec<String> = [
        "tpu.runtime.tensorcore.dutycycle.percent",
        "tpu.runtime.hbm.memory.usage.bytes",
        "tpu.runtime.tensorcore.utilization.percent",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect();
    assert_eq!(
        find_tensorcore_utilization(&names),
        Some("tpu.runtime.tensorcore.utilization.percent")
    );
    assert_eq!(find_tensorcore_utilization(&names[..2]), None);
}
