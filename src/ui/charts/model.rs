//! A metric chart's view-model: what one chart draws, decided from the state.

pub(crate) mod gaps;
pub(crate) mod smooth;
