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
