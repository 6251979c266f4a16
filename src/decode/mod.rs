//! Bytes → records → run events. Knows no files or threads.
pub mod json;
pub mod leveldb;
pub mod pb;
pub mod value;
pub mod wire;
