//! Protobuf message types of the `.wandb` record stream, generated at build time from
//! `proto/wandb_record.proto` (see `build.rs`). No system `protoc` is involved.
#![allow(clippy::all, clippy::pedantic, missing_docs)]

include!(concat!(env!("OUT_DIR"), "/wandb_internal.rs"));

/// Encoded `FileDescriptorSet` of the same schema, for reflection (`inspect --json`).
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/wandb_record.fds.bin"));
