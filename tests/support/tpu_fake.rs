//! The fake libtpu runtime metrics service, shared by `tests/sampler_tpu.rs` and
//! `examples/fake_tpu_runtime.rs` (which `scripts/sampler-overhead.sh --fakes` runs):
//! the fixture JSON of `tests/fixtures/tpu/` turned into protobuf responses, a tonic
//! server for them on 127.0.0.1, and the fake sysfs PCI tree a fixture describes.
//! Used through `#[path = ...] mod tpu_fake;`; not every user needs every item.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::Value;

#[allow(clippy::all, clippy::pedantic, missing_docs, unreachable_pub)]
pub mod pb {
    include!(concat!(
        env!("OUT_DIR"),
        "/tpu_server/tpu.monitoring.runtime.rs"
    ));
}

pub use pb::runtime_metric_service_server::{RuntimeMetricService, RuntimeMetricServiceServer};

// ---- fixture JSON → protobuf ----

pub fn attr_value(v: &Value) -> pb::AttrValue {
    use pb::attr_value::Attr;
    let attr = match v {
        Value::String(s) => Attr::StringAttr(s.clone()),
        Value::Number(n) => Attr::IntAttr(n.as_i64().expect("int attr")),
        Value::Bool(b) => Attr::BoolAttr(*b),
        other => panic!("attr {other}"),
    };
    pb::AttrValue { attr: Some(attr) }
}

pub fn metric(m: &Value) -> pb::Metric {
    use pb::metric::Measure;
    let attribute = if let Some(d) = m.get("device") {
        Some(pb::Attribute {
            key: "device-id".into(),
            value: Some(attr_value(d)),
        })
    } else {
        m.get("kv").map(|kv| pb::Attribute {
            key: String::new(),
            value: Some(pb::AttrValue {
                attr: Some(pb::attr_value::Attr::KvlistAttr(pb::KeyValueList {
                    attributes: kv
                        .as_object()
                        .expect("kv")
                        .iter()
                        .map(|(k, v)| pb::Attribute {
                            key: k.clone(),
                            value: Some(attr_value(v)),
                        })
                        .collect(),
                })),
            }),
        })
    };
    let measure = if let Some(i) = m.get("int") {
        Measure::Gauge(pb::Gauge {
            value: Some(pb::gauge::Value::AsInt(i.as_i64().expect("int"))),
        })
    } else if let Some(d) = m.get("double") {
        Measure::Gauge(pb::Gauge {
            value: Some(pb::gauge::Value::AsDouble(d.as_f64().expect("double"))),
        })
    } else if let Some(s) = m.get("summary") {
        Measure::Summary(pb::Summary {
            sample_count: s["count"].as_u64().expect("count"),
            sample_sum: s["sum"].as_f64().expect("sum"),
            quantile: s["quantiles"]
                .as_array()
                .expect("quantiles")
                .iter()
                .map(|q| pb::Quantile {
                    quantile: q[0].as_f64().expect("q"),
                    value: q[1].as_f64().expect("v"),
                })
                .collect(),
        })
    } else if let Some(d) = m.get("distribution") {
        use pb::distribution::bucket_options::{Explicit, Exponential, Options};
        let options = if let Some(b) = d.get("explicit") {
            Options::ExplicitBuckets(Explicit {
                bounds: b
                    .as_array()
                    .expect("bounds")
                    .iter()
                    .map(|x| x.as_f64().expect("bound"))
                    .collect(),
            })
        } else {
            let e = &d["exponential"];
            Options::ExponentialBuckets(Exponential {
                num_finite_buckets: e["num_finite_buckets"].as_i64().expect("n") as i32,
                growth_factor: e["growth_factor"].as_f64().expect("g"),
                scale: e["scale"].as_f64().expect("s"),
            })
        };
        Measure::Distribution(pb::Distribution {
            count: d["count"].as_i64().expect("count"),
            mean: d["mean"].as_f64().expect("mean"),
            min: d["min"].as_f64().expect("min"),
            max: d["max"].as_f64().expect("max"),
            sum_of_squared_deviation: 0.0,
            bucket_options: Some(pb::distribution::BucketOptions {
                options: Some(options),
            }),
            bucket_counts: d["buckets"]
                .as_array()
                .expect("buckets")
                .iter()
                .map(|x| x.as_i64().expect("bucket"))
                .collect(),
        })
    } else {
        panic!("metric without a value: {m}");
    };
    pb::Metric {
        attribute,
        measure: Some(measure),
        ..Default::default()
    }
}

// ---- fake runtime ----

/// What one fake port serves: metric name → response, and the supported list (`None`:
/// ListSupportedMetrics is unimplemented, as on older libtpu).
#[derive(Clone)]
pub struct Served {
    pub metrics: BTreeMap<String, pb::TpuMetric>,
    pub supported: Option<Vec<String>>,
}

pub fn served(port: &Value) -> Served {
    let metrics = port["metrics"]
        .as_object()
        .expect("metrics")
        .iter()
        .map(|(name, list)| {
            (
                name.clone(),
                pb::TpuMetric {
                    name: name.clone(),
                    description: String::new(),
                    metrics: list.as_array().expect("list").iter().map(metric).collect(),
                },
            )
        })
        .collect();
    let supported = port["supported"].as_array().map(|l| {
        l.iter()
            .map(|n| n.as_str().expect("name").to_string())
            .collect()
    });
    Served { metrics, supported }
}

#[derive(Clone)]
pub struct Fake {
    pub served: Arc<Served>,
    /// When set, every call waits forever (the connection stays open).
    pub hang: Arc<AtomicBool>,
    pub calls: Arc<AtomicUsize>,
}

impl Fake {
    async fn maybe_hang(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.hang.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
    }
}

#[tonic::async_trait]
impl RuntimeMetricService for Fake {
    async fn get_runtime_metric(
        &self,
        request: tonic::Request<pb::MetricRequest>,
    ) -> Result<tonic::Response<pb::MetricResponse>, tonic::Status> {
        self.maybe_hang().await;
        let name = request.into_inner().metric_name;
        match self.served.metrics.get(&name) {
            Some(m) => Ok(tonic::Response::new(pb::MetricResponse {
                metric: Some(m.clone()),
            })),
            None => Err(tonic::Status::not_found(format!("metric {name} not found"))),
        }
    }

    async fn list_supported_metrics(
        &self,
        _request: tonic::Request<pb::ListSupportedMetricsRequest>,
    ) -> Result<tonic::Response<pb::ListSupportedMetricsResponse>, tonic::Status> {
        self.maybe_hang().await;
        match &self.served.supported {
            Some(list) => Ok(tonic::Response::new(pb::ListSupportedMetricsResponse {
                supported_metric: list
                    .iter()
                    .map(|n| pb::SupportedMetric {
                        metric_name: n.clone(),
                    })
                    .collect(),
            })),
            None => Err(tonic::Status::unimplemented("ListSupportedMetrics")),
        }
    }
}

/// gRPC servers on 127.0.0.1 ephemeral ports, on a runtime of their own.
pub struct Runtime {
    pub rt: tokio::runtime::Runtime,
}

impl Runtime {
    pub fn new() -> Self {
        Self {
            rt: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("tokio"),
        }
    }

    pub fn serve(&self, served: Served) -> (u16, Fake) {
        let fake = Fake {
            served: Arc::new(served),
            hang: Arc::new(AtomicBool::new(false)),
            calls: Arc::new(AtomicUsize::new(0)),
        };
        let listener = self
            .rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let svc = RuntimeMetricServiceServer::new(fake.clone());
        self.rt.spawn(async move {
            tonic::transport::Server::builder()
                .add_service(svc)
                .serve_with_incoming(
                    // As gRPC servers do (libtpu's included): no Nagle delay.
                    tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true)),
                )
                .await
                .expect("serve");
        });
        (port, fake)
    }
}

pub fn fake_pci(root: &Path, fx: &Value) {
    let write = |addr: &str, vendor: &str, device: &str, sub: &str| {
        let d = root.join("bus/pci/devices").join(addr);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join("vendor"), format!("{vendor}\n")).expect("vendor");
        std::fs::write(d.join("device"), format!("{device}\n")).expect("device");
        std::fs::write(d.join("subsystem_device"), format!("{sub}\n")).expect("sub");
    };
    // A host bridge and a gVNIC NIC (Google's vendor id, not a TPU) on every host.
    write("0000:00:00.0", "0x8086", "0x1237", "0x1100");
    write("0000:00:03.0", "0x1ae0", "0x0042", "0x0058");
    for c in fx["pci"].as_array().expect("pci") {
        write(
            c["address"].as_str().expect("address"),
            "0x1ae0",
            c["device"].as_str().expect("device"),
            c["subsystem_device"].as_str().expect("sub"),
        );
    }
}
