//! HTTPS: the fake server behind TLS with a certificate of the test CA
//! (`tests/fixtures/tls/`, see its README). Trusted through the CA file (as
//! `SSL_CERT_FILE` names it), the run is the same; untrusted, one line says so.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use leet::source::remote::fetch::{self, Options};
use leet::source::remote::RemoteError;
use leet_format::event::Sink as _;

use super::server::Fake;
use super::{fixture, local_points, opts, parquet_of, run_object, url_of, Points, KEY};

fn ca() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls/ca.pem")
}

fn open_with(fake: &Fake, o: &Options) -> Result<Points, RemoteError> {
    let (_, batches) = fetch::open(&url_of(fake), o, &AtomicBool::new(false), &mut |_| {})?;
    let mut p = Points::default();
    for b in &batches {
        p.fold(b);
    }
    Ok(p)
}

#[test]
fn over_https_with_the_ca_trusted_the_run_is_the_same() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start_tls(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    assert!(fake.addr.starts_with("https://"));
    let o = Options {
        ca_file: Some(ca()),
        ..opts(None)
    };
    let remote = open_with(&fake, &o).expect("open");
    assert_eq!(local_points(&file).0, remote.0);
}

#[test]
fn over_https_an_untrusted_certificate_or_a_bad_ca_file_is_one_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start_tls(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    // The public roots do not know the test CA.
    let msg = open_with(&fake, &opts(None))
        .err()
        .expect("untrusted")
        .to_string();
    assert!(msg.to_lowercase().contains("certificate"), "{msg}");
    assert!(!msg.contains('\n') && !msg.contains(KEY), "{msg}");
    let not_pem = tmp.path().join("ca.pem");
    std::fs::write(&not_pem, "not a certificate").expect("write");
    for f in [not_pem, tmp.path().join("missing.pem")] {
        let o = Options {
            ca_file: Some(f),
            ..opts(None)
        };
        let msg = open_with(&fake, &o).err().expect("bad ca").to_string();
        assert!(msg.contains("no CA certificates to trust"), "{msg}");
    }
}

#[test]
fn leet_reads_the_ca_file_from_ssl_cert_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start_tls(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    let url = format!("{}/ent/proj/runs/tiny0001", fake.addr);
    let run = |ca: Option<&Path>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_leet"));
        c.args(["inspect", "--summary", "--json", &url])
            .env("WANDB_API_KEY", KEY)
            .env("HOME", tmp.path())
            .env("XDG_CACHE_HOME", tmp.path().join("cache"))
            .env_remove("SSL_CERT_FILE")
            .env_remove("REQUESTS_CA_BUNDLE");
        if let Some(ca) = ca {
            c.env("SSL_CERT_FILE", ca);
        }
        c.output().expect("leet")
    };
    let out = run(Some(&ca()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["step"], serde_json::json!(49));
    let out = run(None);
    assert!(!out.status.success());
}

/// The sampler's scrapes go through the same client: an OpenMetrics endpoint over
/// HTTPS is read when `SSL_CERT_FILE` trusts its CA, and one error line says why not
/// when nothing does.
#[test]
fn an_openmetrics_endpoint_over_https_is_scraped_with_the_ca_of_ssl_cert_file() {
    let fake = Fake::start_tls(run_object("finished"), Vec::new());
    fake.state.lock().expect("lock").metadata = Some(b"# TYPE up gauge\nup 1\n".to_vec());
    let endpoint = format!("tls={}/meta/metrics", fake.addr);
    let sample = |ca: Option<&Path>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_leet"));
        c.args([
            "sample",
            "--json",
            "--count",
            "1",
            "--openmetrics",
            &endpoint,
        ])
        .env_remove("SSL_CERT_FILE")
        .env_remove("REQUESTS_CA_BUNDLE")
        .stdin(std::process::Stdio::null());
        if let Some(ca) = ca {
            c.env("SSL_CERT_FILE", ca);
        }
        let out = c.output().expect("leet sample");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .map(str::to_owned);
        let v: serde_json::Value = serde_json::from_str(&line.expect("one sample")).expect("json");
        (v, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (v, stderr) = sample(Some(&ca()));
    assert_eq!(
        v["openmetrics.tls.up.0"].as_f64(),
        Some(1.0),
        "{v}\n{stderr}"
    );
    let (v, stderr) = sample(None);
    assert!(v.get("openmetrics.tls.up.0").is_none(), "{v}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("openmetrics:tls: error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].to_lowercase().contains("certificate"),
        "{}",
        errors[0]
    );
}
