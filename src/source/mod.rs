//! Where data comes from: `.wandb` files (read and followed), the live host.
pub mod file;
pub mod sampler;
pub mod tail;
