//! The unit a chart's values are in, and how its titles and labels name it.

/// How a chart's values are formatted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Plain,
    Percent,
    /// Mebibytes.
    MiB,
    /// Gibibytes.
    GiB,
    Bytes,
    Celsius,
    Watts,
    Joules,
    /// Millijoules (dcgm-exporter's `totalEnergyConsumption`), written in joules.
    MilliJoules,
    /// Microseconds (TPU latencies `…Us`), written as µs, ms or s.
    Micros,
    Seconds,
    MHz,
    BytesPerSec,
    /// Megabits per second (TPU `…Mbps`), written as kbps, Mbps or Gbps.
    Mbps,
}

impl Unit {
    /// The unit as a title writes it in brackets: only a unit that every label
    /// writes as it is, never with a prefix. Byte sizes and rates, energy, power
    /// and clocks are labelled `23.2GiB`, `1.2MiB/s`, `3kJ`, `1.2kW`, `1.98GHz`,
    /// so their titles name none; a plain number has none either.
    #[must_use]
    pub fn title_unit(self) -> Option<&'static str> {
        match self {
            Unit::Percent | Unit::Celsius => Some(self.suffix()),
            Unit::Plain
            | Unit::MiB
            | Unit::GiB
            | Unit::Bytes
            | Unit::Watts
            | Unit::Joules
            | Unit::MilliJoules
            | Unit::Micros
            | Unit::Seconds
            | Unit::MHz
            | Unit::BytesPerSec
            | Unit::Mbps => None,
        }
    }

    /// A short name of the unit.
    #[must_use]
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Plain => "",
            Unit::Percent => "%",
            Unit::MiB => "MiB",
            Unit::GiB => "GiB",
            Unit::Bytes => "bytes",
            Unit::Celsius => "°C",
            Unit::Watts => "W",
            Unit::Joules => "J",
            Unit::MilliJoules => "mJ",
            Unit::Micros => "µs",
            Unit::Seconds => "s",
            Unit::MHz => "MHz",
            Unit::BytesPerSec => "B/s",
            Unit::Mbps => "Mbps",
        }
    }
}
