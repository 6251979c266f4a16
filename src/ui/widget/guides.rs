//! Guides drawn across a chart at its y ticks.

/// Horizontal guides at the y ticks (`g` cycles off → dots → lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Guides {
    #[default]
    Off,
    /// A dotted row (`·`) at each tick.
    Dots,
    /// A light line (`─`) at each tick.
    Lines,
}

impl Guides {
    /// The next setting: off → dots → lines → off.
    #[must_use]
    pub fn next(self) -> Guides {
        match self {
            Guides::Off => Guides::Dots,
            Guides::Dots => Guides::Lines,
            Guides::Lines => Guides::Off,
        }
    }
}
