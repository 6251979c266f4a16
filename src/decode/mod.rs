//! Bytes → records → run events. Knows no files or threads.
pub mod json;
pub mod json_fast;
pub mod leveldb;
pub mod pb;
pub mod synth;
pub mod value;
pub mod wire;
