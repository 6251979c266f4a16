//! Prometheus: the W&B key ↔ series mapping that `leet serve` exports with and the
//! cluster view reads back by.
pub mod names;
