//! `network.sent` / `network.recv` (bytes over all interfaces, loopback included, since
//! the sampler started) and `network.tcpRetransmits` (`RetransSegs` from
//! `/proc/net/snmp`, also counted from the start so all three share one baseline).

use std::path::Path;

use super::procfs;
use super::{Collector, SamplerError};

/// (received, sent) bytes summed over every interface in `/proc/net/dev`.
pub(crate) fn parse_net_dev(text: &str) -> (u64, u64) {
    let mut recv = 0u64;
    let mut sent = 0u64;
    for line in text.lines().skip(2) {
        let Some((_, rest)) = line.split_once(':') else {
            continue;
        };
        let f: Vec<u64> = rest
            .split_ascii_whitespace()
            .filter_map(|s| s.parse().ok())
            .collect();
        if f.len() >= 9 {
            recv += f[0];
            sent += f[8];
        }
    }
    (recv, sent)
}

/// `Tcp: RetransSegs` from `/proc/net/snmp` (a header line followed by a value line).
pub(crate) fn parse_retrans_segs(text: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|l| l.starts_with("Tcp:"));
    let header = lines.next()?;
    let values = lines.next()?;
    let idx = header
        .split_ascii_whitespace()
        .position(|h| h == "RetransSegs")?;
    values.split_ascii_whitespace().nth(idx)?.parse().ok()
}

pub(crate) struct NetworkCollector {
    base: (u64, u64),
    base_retrans: Option<u64>,
    buf: String,
    /// `/proc/net/dev` and `/proc/net/snmp`, kept open.
    dev: procfs::ProcFile,
    snmp: procfs::ProcFile,
}

impl NetworkCollector {
    pub(crate) fn new() -> Result<Self, SamplerError> {
        let mut buf = String::with_capacity(4096);
        procfs::read_into(Path::new("/proc/net/dev"), &mut buf)?;
        let base = parse_net_dev(&buf);
        let base_retrans = procfs::read_into(Path::new("/proc/net/snmp"), &mut buf)
            .ok()
            .and_then(|()| parse_retrans_segs(&buf));
        Ok(Self {
            base,
            base_retrans,
            buf,
            dev: procfs::ProcFile::new("/proc/net/dev"),
            snmp: procfs::ProcFile::new("/proc/net/snmp"),
        })
    }
}

impl Collector for NetworkCollector {
    fn name(&self) -> &'static str {
        "network"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        self.dev.read(&mut self.buf)?;
        let (recv, sent) = parse_net_dev(&self.buf);
        out.push((
            "network.sent".to_string(),
            sent.saturating_sub(self.base.1) as f64,
        ));
        out.push((
            "network.recv".to_string(),
            recv.saturating_sub(self.base.0) as f64,
        ));
        if let Some(base) = self.base_retrans {
            if self.snmp.read(&mut self.buf).is_ok() {
                if let Some(now) = parse_retrans_segs(&self.buf) {
                    out.push((
                        "network.tcpRetransmits".to_string(),
                        now.saturating_sub(base) as f64,
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_dev_sums_all_interfaces() {
        let text = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0\n  eth0: 122773878    4558    0    0    0     0          0         0   350245    2753    0    0    0     0       0          0\n";
        assert_eq!(parse_net_dev(text), (3193 + 122_773_878, 3193 + 350_245));
    }

    #[test]
    fn snmp_retrans() {
        let text = "Ip: Forwarding DefaultTTL\nIp: 2 64\nTcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\nTcp: 1 200 120000 -1 45 2 0 33 0 4497 2718 17 0 39 0\n";
        assert_eq!(parse_retrans_segs(text), Some(17));
    }
}
