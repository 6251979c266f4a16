//! Which certificate authorities an HTTPS client trusts: the public roots, or the
//! CA file that W&B's tools and Python's `requests` read from the environment
//! (`SSL_CERT_FILE`, else `REQUESTS_CA_BUNDLE`), for servers behind a private CA.
//! Shared by the scrapes here and the app crate's clients, so every HTTPS request
//! of leet trusts the same roots.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ureq::tls::{parse_pem, Certificate, PemItem, RootCerts, TlsConfig};

/// The CA file named by `SSL_CERT_FILE`, else `REQUESTS_CA_BUNDLE` (empty means unset).
pub fn ca_file_from_env() -> Option<PathBuf> {
    ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"]
        .into_iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The certificates of the PEM file at `path`; an error (sanitised, naming no
/// more than the cause) when it cannot be read or holds none.
pub fn certificates(path: &Path) -> Result<Vec<Certificate<'static>>, String> {
    let pem = std::fs::read(path).map_err(|e| leet_text::sanitize(&e.to_string()))?;
    let certs: Vec<Certificate<'static>> = parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(PemItem::Certificate(c)) => Some(c),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err("no PEM certificate in it".to_owned());
    }
    Ok(certs)
}

/// TLS settings trusting only the certificates of `ca_file` when given, else the
/// public roots.
pub fn config(ca_file: Option<&Path>) -> Result<TlsConfig, String> {
    let Some(path) = ca_file else {
        return Ok(TlsConfig::default());
    };
    let roots = RootCerts::Specific(Arc::new(certificates(path)?));
    Ok(TlsConfig::builder().root_certs(roots).build())
}
