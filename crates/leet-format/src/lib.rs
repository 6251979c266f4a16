//! Bytes → records → run events. Knows no files or threads.
//!
//! Reads the `.wandb` files that W&B writes for a run: a LevelDB-style log of
//! 32 KiB blocks with CRC-checked chunks ([`leveldb`]), each record a protobuf
//! `Record` of the schema in `proto/wandb_record.proto` ([`pb`], generated at build
//! time without a system `protoc`). [`record::record_kind`] names a record without
//! decoding it, [`json::record_json`] prints any record as JSON, and a
//! [`decoder::Decoder`] turns records into run events ([`event`]: history rows,
//! summary and config changes, system metrics, console lines). Damage never stops a
//! read: a bad span is handed on as a [`leveldb::Frame::Skip`] and reading goes on
//! at the next good record. A growing file is read in pieces with a
//! [`leveldb::Scanner`].
//!
//! Every record of a file, with its type:
//!
//! ```
//! use leet_format::leveldb::{scan, Frame};
//! use leet_format::record::{record_kind, record_type_name};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = std::env::temp_dir().join(format!("leet-format-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let path = dir.join("run-example.wandb");
//! # let spec = leet_format::synth::SynthSpec { steps: 3, ..Default::default() };
//! # std::fs::write(&path, leet_format::synth::file_bytes(&spec))?;
//! let bytes = std::fs::read(&path)?;
//! let mut kinds = Vec::new();
//! scan(&bytes, 0, |frame| match frame {
//!     Frame::Record { offset, payload } => {
//!         if let Some((number, kind, _body)) = record_kind(&payload) {
//!             println!("{offset}: record {number}, {}", record_type_name(kind));
//!             kinds.push(record_type_name(kind));
//!         }
//!     }
//!     Frame::Skip(skip) => println!("{}: {} bytes lost ({})", skip.offset, skip.len, skip.reason),
//! })
//! .map_err(|e| e.to_string())?;
//! assert!(kinds.contains(&"history"));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
pub(crate) mod coalesce;
pub mod decoder;
pub mod event;
pub mod json;
pub mod json_fast;
pub mod leveldb;
pub mod pb;
pub mod record;
pub mod synth;
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod test_rng;
pub mod value;
pub mod wire;
