//! Bytes → records → run events. Knows no files or threads.
#![doc = include_str!("../README.md")]
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
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod tier;
pub mod value;
pub mod wire;
