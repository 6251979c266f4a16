//! Helpers of the sampler's integration tests.
// `pub` for the application's tests, which include `sampler.rs` and re-export it.
#![allow(unreachable_pub)]

pub mod sampler;
