//! The `net` workload's path when `--loss` or `--rate` is given: a veth
//! pair between two network namespaces irqlab creates (`irqlab-PID-N-tx`
//! holding the sender's end, `…-rx` the receiver's), each journaled
//! through the guard's [`Tracker`] before it exists and removed when the
//! workload ends, on every error path, by the guard on panic/signal and by
//! `irqlab restore` after a SIGKILL. Removing a namespace removes what is
//! inside it: its veth end, the loss rule and the rate limiter.
//!
//! Loss is an nftables rule in the receiving namespace's `prerouting`
//! hook, `numgen random mod 1000000 < PPM drop`: this kernel has no netem,
//! nft is one packaged tool with nothing to compile or load (a tc BPF
//! program would need the eBPF toolchain and a detach path of its own), and
//! a rule inside the namespace cannot outlive it. It drops arriving data
//! segments at random, so the sender retransmits. Rate is a `tc tbf`
//! qdisc on the sender's veth end.
//!
//! Owns option parsing ([`Loss`], [`Rate`]), the namespaces' setup and
//! removal (through `ip`, `nft` and `tc`), sockets made inside a
//! namespace ([`Veth::in_ns`]), RPS steering of each veth end to one CPU
//! ([`Veth::steer`]) and both namespaces' TCP and device counters (their
//! own `/proc/thread-self/net/{snmp,netstat,dev}`: a fresh namespace
//! counts only this workload's segments).

use crate::guard::{self, Tracked, Tracker};
use anyhow::{anyhow, bail, Context, Result};
use nix::sched::CloneFlags;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// Sender's address (namespace `…-tx`, device `irqlab-tx`).
pub const TX_ADDR: &str = "10.213.0.1";
/// Receiver's address (namespace `…-rx`, device `irqlab-rx`).
pub const RX_ADDR: &str = "10.213.0.2";
const TX_DEV: &str = "irqlab-tx";
const RX_DEV: &str = "irqlab-rx";

/// Packet loss in parts per million (`--loss 0.01%` is 100).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loss {
    pub ppm: u32,
}

impl std::str::FromStr for Loss {
    type Err = String;
    /// A percentage with its `%`: `0%`, `0.01%`, `2%` (0 to 100, in steps
    /// of 0.0001 %).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("{s:?}: {why} (e.g. 0.01%, 2%, 0%)");
        let num = s
            .trim()
            .strip_suffix('%')
            .ok_or_else(|| bad("expected a percentage ending in %"))?;
        let v: f64 = num
            .trim()
            .parse()
            .map_err(|_| bad("not a number before the %"))?;
        if !v.is_finite() || !(0.0..=100.0).contains(&v) {
            return Err(bad("loss must be between 0% and 100%"));
        }
        let ppm = v * 10_000.0;
        if (ppm - ppm.round()).abs() > 1e-6 {
            return Err(bad("finest step is 0.0001%"));
        }
        Ok(Loss {
            ppm: ppm.round() as u32,
        })
    }
}

impl std::fmt::Display for Loss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}%", f64::from(self.ppm) / 10_000.0)
    }
}

/// A rate limit in bits per second (`--rate 200mbit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub bits_per_sec: u64,
}

impl std::str::FromStr for Rate {
    type Err = String;
    /// A number and `bit`, `kbit`, `mbit` or `gbit` (decimal, as tc).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("{s:?}: {why} (e.g. 200mbit, 1gbit)");
        let t = s.trim().to_ascii_lowercase();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| bad("expected a unit: bit, kbit, mbit or gbit"))?;
        let (num, unit) = t.split_at(split);
        let mult = match unit {
            "bit" => 1.0,
            "kbit" => 1e3,
            "mbit" => 1e6,
            "gbit" => 1e9,
            _ => return Err(bad("unknown unit (bit, kbit, mbit, gbit)")),
        };
        let v: f64 = num.parse().map_err(|_| bad("not a number"))?;
        let bps = v * mult;
        if !bps.is_finite() || !(8_000.0..=1e12).contains(&bps) {
            return Err(bad("rate must be between 8kbit and 1000gbit"));
        }
        Ok(Rate {
            bits_per_sec: bps.round() as u64,
        })
    }
}

/// What the veth path applies (both optional: `--loss 0%` alone is the
/// loss-free baseline on the same path).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetPath {
    pub loss: Option<Loss>,
    pub rate: Option<Rate>,
}

/// The two namespaces and the veth pair between them; removed by
/// [`Veth::remove`] or on drop.
pub struct Veth {
    tx: String,
    rx: String,
    /// Namespaces created (names) with their journal entries.
    made: Vec<(String, Tracked)>,
}

static SEQ: AtomicU32 = AtomicU32::new(0);

/// Run a command; an error names it and carries its stderr.
fn run(cmd: &[&str], stdin: Option<&str>) -> Result<()> {
    let (prog, args) = cmd.split_first().ok_or_else(|| anyhow!("empty command"))?;
    let mut c = Command::new(prog);
    c.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c
        .spawn()
        .with_context(|| format!("running `{}` (is it installed?)", cmd.join(" ")))?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write as _;
        pipe.write_all(text.as_bytes())
            .with_context(|| format!("writing to `{}`", cmd.join(" ")))?;
    }
    let out = child
        .wait_with_output()
        .with_context(|| format!("waiting for `{}`", cmd.join(" ")))?;
    if !out.status.success() {
        bail!(
            "`{}` failed ({}): {}",
            cmd.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The nftables ruleset that drops `ppm` in a million arriving packets.
fn loss_ruleset(ppm: u32) -> String {
    format!(
        "table inet irqlab_loss {{\n  chain prerouting {{\n    type filter hook prerouting priority raw; policy accept;\n    numgen random mod 1000000 < {ppm} drop\n  }}\n}}\n"
    )
}

/// An `rps_cpus` mask naming one CPU: hex words of 32 CPUs, comma
/// separated, most significant first.
fn rps_mask(cpu: u32) -> String {
    let words = cpu / 32 + 1;
    (0..words)
        .rev()
        .map(|w| {
            let bits = if w == cpu / 32 { 1u32 << (cpu % 32) } else { 0 };
            format!("{bits:08x}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// tbf's bucket: 10 ms at the rate, at least 64 KiB (one GSO segment).
fn tbf_burst(rate: Rate) -> u64 {
    (rate.bits_per_sec / 8 / 100).max(64 * 1024)
}

impl Veth {
    /// Create both namespaces (journaled first), the veth pair, addresses,
    /// the loss rule and the rate limiter. On error everything made so far
    /// is removed.
    pub fn create(tracker: &Tracker, path: NetPath) -> Result<Veth> {
        let base = format!(
            "irqlab-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let mut v = Veth {
            tx: format!("{base}-tx"),
            rx: format!("{base}-rx"),
            made: Vec::new(),
        };
        let built = v.build(tracker, path);
        if let Err(e) = built {
            let removed = v.remove_all();
            return Err(match removed {
                Ok(()) => e,
                Err(r) => e.context(format!("and removing the namespaces failed: {r:#}")),
            });
        }
        Ok(v)
    }

    fn build(&mut self, tracker: &Tracker, path: NetPath) -> Result<()> {
        for name in [self.tx.clone(), self.rx.clone()] {
            let t = tracker.net_namespace(&name)?;
            self.made.push((name.clone(), t));
            guard::create_netns(&name)?;
        }
        let (tx, rx) = (self.tx.as_str(), self.rx.as_str());
        run(
            &[
                "ip", "link", "add", TX_DEV, "netns", tx, "type", "veth", "peer", "name", RX_DEV,
                "netns", rx,
            ],
            None,
        )?;
        for (ns, dev, addr) in [(tx, TX_DEV, TX_ADDR), (rx, RX_DEV, RX_ADDR)] {
            let cidr = format!("{addr}/30");
            run(&["ip", "-n", ns, "addr", "add", &cidr, "dev", dev], None)?;
            run(&["ip", "-n", ns, "link", "set", dev, "up"], None)?;
            run(&["ip", "-n", ns, "link", "set", "lo", "up"], None)?;
        }
        if let Some(loss) = path.loss.filter(|l| l.ppm > 0) {
            run(
                &["ip", "netns", "exec", rx, "nft", "-f", "-"],
                Some(&loss_ruleset(loss.ppm)),
            )
            .context("adding the packet-loss rule (nftables: apt-get install nftables)")?;
        }
        if let Some(rate) = path.rate {
            let r = format!("{}bit", rate.bits_per_sec);
            let burst = tbf_burst(rate).to_string();
            run(
                &[
                    "tc", "-n", tx, "qdisc", "add", "dev", TX_DEV, "root", "tbf", "rate", &r,
                    "burst", &burst, "latency", "50ms",
                ],
                None,
            )
            .context("adding the rate limit (tc tbf)")?;
        }
        Ok(())
    }

    /// Steer the packets arriving on each veth end to one CPU by RPS:
    /// those for the receiver (`irqlab-rx`) to `rx_cpu`, those for the
    /// sender (its ACKs, `irqlab-tx`) to `tx_cpu`. Written with `ip netns
    /// exec`, whose /sys is the namespace's.
    pub fn steer(&self, rx_cpu: u32, tx_cpu: u32) -> Result<()> {
        for (ns, dev, cpu) in [(&self.rx, RX_DEV, rx_cpu), (&self.tx, TX_DEV, tx_cpu)] {
            let path = irqlab_core::paths::netns_rps_cpus(dev);
            run(
                &["ip", "netns", "exec", ns, "tee", &path],
                Some(&rps_mask(cpu)),
            )
            .with_context(|| format!("steering {dev} to CPU {cpu} (RPS)"))?;
        }
        Ok(())
    }

    /// The sender's and receiver's namespace names.
    pub fn names(&self) -> (&str, &str) {
        (&self.tx, &self.rx)
    }

    /// Run `f` on a thread that entered namespace `ns` (sockets it makes
    /// stay in `ns`).
    pub fn in_ns<T: Send>(ns: &str, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
        let path = guard::netns_path(ns);
        std::thread::scope(|s| {
            super::spawn_scoped(s, 0, 1, || {
                let file = std::fs::File::open(&path)
                    .with_context(|| format!("opening {}", path.display()))?;
                nix::sched::setns(&file, CloneFlags::CLONE_NEWNET)
                    .map_err(|e| anyhow!("entering network namespace {ns}: {e}"))?;
                f()
            })?
            .join()
            .map_err(|_| anyhow!("thread in network namespace {ns} panicked"))?
        })
    }

    /// Every counter of both namespaces' `snmp` and `netstat` files
    /// (`tx.Tcp.RetransSegs`, `rx.TcpExt.TCPRcvQDrop`, …) and of their
    /// veth ends in `net/dev` (`tx.dev.tx_drop`, `rx.dev.rx_drop`, …).
    pub fn counters(&self) -> Result<Counters> {
        let mut all = Counters::new();
        for (side, ns, dev) in [("tx", &self.tx, TX_DEV), ("rx", &self.rx, RX_DEV)] {
            let got = Self::in_ns(ns, || {
                let mut m = Counters::new();
                for p in [
                    irqlab_core::paths::THREAD_NET_SNMP,
                    irqlab_core::paths::THREAD_NET_NETSTAT,
                ] {
                    let text =
                        std::fs::read_to_string(p).with_context(|| format!("reading {p}"))?;
                    m.extend(parse_pairs(&text));
                }
                let p = irqlab_core::paths::THREAD_NET_DEV;
                let text = std::fs::read_to_string(p).with_context(|| format!("reading {p}"))?;
                m.extend(
                    parse_net_dev(&text, dev).with_context(|| format!("{p}: no line for {dev}"))?,
                );
                Ok(m)
            })?;
            all.extend(got.into_iter().map(|(k, v)| (format!("{side}.{k}"), v)));
        }
        Ok(all)
    }

    fn remove_all(&mut self) -> Result<()> {
        let mut errs = Vec::new();
        for (name, tracked) in self.made.drain(..).rev() {
            match guard::remove_netns(&name) {
                Ok(_) => {
                    if let Err(e) = tracked.release() {
                        errs.push(format!("{e:#}"));
                    }
                }
                Err(e) => errs.push(format!("{e:#}")),
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            bail!("removing network namespaces: {}", errs.join("; "))
        }
    }

    /// Remove both namespaces (and everything inside them).
    pub fn remove(mut self) -> Result<()> {
        self.remove_all()
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        if let Err(e) = self.remove_all() {
            eprintln!("irqlab: {e:#}");
        }
    }
}

/// Named counters (`Tcp.OutSegs`, `dev.rx_drop`).
pub type Counters = std::collections::BTreeMap<String, u64>;

/// The counters of a `/proc/net/snmp` or `/proc/net/netstat` text: pairs
/// of lines with the same `Group:` prefix, names then values, as
/// `Group.Name` (a line that does not pair with the next is skipped).
fn parse_pairs(text: &str) -> Counters {
    let mut out = Counters::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i + 1 < lines.len() {
        let (Some((g, names)), Some((g2, vals))) =
            (lines[i].split_once(':'), lines[i + 1].split_once(':'))
        else {
            i += 1;
            continue;
        };
        if g != g2 {
            i += 1;
            continue;
        }
        for (n, v) in names.split_whitespace().zip(vals.split_whitespace()) {
            if let Ok(v) = v.parse::<u64>() {
                out.insert(format!("{g}.{n}"), v);
            }
        }
        i += 2;
    }
    out
}

/// Packets, drops and errors of device `dev` in a `/proc/net/dev` text
/// (`dev.rx_packets`, `dev.rx_drop`, `dev.tx_drop`, …).
fn parse_net_dev(text: &str, dev: &str) -> Option<Counters> {
    let line = text.lines().find_map(|l| {
        let (name, rest) = l.split_once(':')?;
        (name.trim() == dev).then_some(rest)
    })?;
    let v: Vec<u64> = line
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let names = [
        (0, "rx_bytes"),
        (1, "rx_packets"),
        (2, "rx_errs"),
        (3, "rx_drop"),
        (8, "tx_bytes"),
        (9, "tx_packets"),
        (10, "tx_errs"),
        (11, "tx_drop"),
    ];
    names
        .iter()
        .map(|(i, n)| Some((format!("dev.{n}"), *v.get(*i)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_a_percentage_in_ppm() {
        assert_eq!("0.01%".parse::<Loss>().unwrap().ppm, 100);
        assert_eq!("2%".parse::<Loss>().unwrap().ppm, 20_000);
        assert_eq!("0%".parse::<Loss>().unwrap().ppm, 0);
        assert_eq!("100%".parse::<Loss>().unwrap().ppm, 1_000_000);
        assert_eq!("0.01%".parse::<Loss>().unwrap().to_string(), "0.01%");
        for bad in [
            "", "1", "0.01", "-1%", "101%", "nan%", "x%", "0.00001%", "inf%",
        ] {
            assert!(bad.parse::<Loss>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rate_takes_tc_units() {
        assert_eq!("200mbit".parse::<Rate>().unwrap().bits_per_sec, 200_000_000);
        assert_eq!("1Gbit".parse::<Rate>().unwrap().bits_per_sec, 1_000_000_000);
        for bad in ["", "100", "1mb", "0mbit", "1e3mbit", "mbit"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad:?}");
        }
        assert_eq!(
            tbf_burst(Rate {
                bits_per_sec: 8_000
            }),
            65_536
        );
    }

    #[test]
    fn loss_rule_drops_ppm_per_million() {
        let r = loss_ruleset(100);
        assert!(r.contains("numgen random mod 1000000 < 100 drop"), "{r}");
        assert!(r.contains("hook prerouting"), "{r}");
    }

    #[test]
    fn snmp_tcp_counters_are_read_by_name() {
        let text = "Ip: Forwarding\nIp: 1\nTcp: RtoAlgorithm OutSegs RetransSegs InErrs\nTcp: 1 500 7 0\nUdp: InDatagrams\nUdp: 3\n";
        let c = parse_pairs(text);
        assert_eq!(c.get("Tcp.OutSegs"), Some(&500));
        assert_eq!(c.get("Tcp.RetransSegs"), Some(&7));
        assert_eq!(c.get("Udp.InDatagrams"), Some(&3));
        assert!(!parse_pairs("Ip: a\nIp: 1\n").contains_key("Tcp.OutSegs"));
        // netstat's layout is the same; a group whose value line is missing
        // does not pair with the next group's names
        let net = "IpExt: InOctets\nTcpExt: TCPDSACKRecvSegs TCPTimeouts\nTcpExt: 40 2\n";
        let c = parse_pairs(net);
        assert_eq!(c.get("TcpExt.TCPDSACKRecvSegs"), Some(&40));
        assert_eq!(c.get("TcpExt.TCPTimeouts"), Some(&2));
        assert!(!c.keys().any(|k| k.starts_with("IpExt")), "{c:?}");
    }

    #[test]
    fn net_dev_drops_are_read_for_the_veth_end() {
        let text = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0\nirqlab-rx: 843071666   13977    0    5    0     0          0         0   274086    4115    0    9    0     0       0          0\n";
        let c = parse_net_dev(text, "irqlab-rx").unwrap();
        assert_eq!(c["dev.rx_packets"], 13977);
        assert_eq!(c["dev.rx_drop"], 5);
        assert_eq!(c["dev.tx_drop"], 9);
        assert!(parse_net_dev(text, "irqlab-tx").is_none());
    }

    #[test]
    fn rps_mask_names_one_cpu() {
        assert_eq!(rps_mask(0), "00000001");
        assert_eq!(rps_mask(1), "00000002");
        assert_eq!(rps_mask(33), "00000002,00000000");
    }
}
