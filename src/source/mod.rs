//! Where data comes from: `.wandb` files (read and followed, decoded into events on
//! the reading thread), the live host.
pub mod file;
pub mod follow;
pub mod http;
pub mod index;
pub mod nodes;
pub mod parallel;
pub mod prometheus;
pub mod reader;
pub mod records;
pub mod remote;
pub mod resolve;
pub use leet_sampler as sampler;
pub mod settings;
pub mod small_file;
pub mod state;
pub mod tail;
