//! `irqlab trace`: per-interval hard IRQ, vector and softirq durations,
//! raise-to-entry latency and exact irq/softirq CPU % from eBPF programs on
//! the irq tracepoints (see `crate::trace`). Without the `trace` feature it
//! says how to get it and exits 1.

use crate::cmd::args::RootArgs;
use crate::trace::interval::Select;
use std::process::ExitCode;
use std::time::Duration;

/// Output of `irqlab trace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// bcc hardirqs/softirqs-like tables.
    Text,
    /// One JSON object per interval (JSON Lines).
    Json,
}

/// Flags of `irqlab trace`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one report per interval.
    #[arg(long, short = 'i', default_value = "1s", value_parser = crate::cmd::parse_duration)]
    pub interval: Duration,
    /// Stop after this long [default: until Ctrl-C].
    #[arg(long, short = 'd', value_parser = crate::cmd::parse_duration)]
    pub duration: Option<Duration>,
    /// Keep only rows whose label or name matches (regex: `^24$`, `virtio`, `RES|CAL`, `NET_RX`).
    #[arg(long)]
    pub irq: Option<String>,
    /// Keep only these CPUs (e.g. `0-3,8`).
    #[arg(long)]
    pub cpus: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TraceFormat,
    /// Add log2 histograms (durations, softirq latency).
    #[arg(long)]
    pub hist: bool,
    #[command(flatten)]
    pub root: RootArgs,
}

impl Args {
    /// The `--irq` / `--cpus` / `--hist` selection.
    pub fn select(&self) -> anyhow::Result<Select> {
        use anyhow::Context;
        let irq = self
            .irq
            .as_deref()
            .map(regex::Regex::new)
            .transpose()
            .context("--irq is not a valid regular expression")?;
        let cpus = self
            .cpus
            .as_deref()
            .map(|s| {
                irqlab_core::CpuList::parse_list(s.as_bytes(), "--cpus")
                    .map(|l| l.iter().collect::<Vec<u32>>())
                    .map_err(|e| anyhow::anyhow!("--cpus {s:?}: {}", e.kind))
            })
            .transpose()?;
        Ok(Select {
            irq,
            cpus,
            hist: self.hist,
        })
    }

    /// Interval lengths: `-d` cut into `-i` pieces (the last may be shorter).
    pub fn intervals(&self) -> impl Iterator<Item = Duration> {
        let (iv, total) = (self.interval.max(Duration::from_millis(1)), self.duration);
        let mut left = total;
        std::iter::from_fn(move || match left {
            None => Some(iv),
            Some(l) if l.is_zero() => None,
            Some(l) => {
                let step = l.min(iv);
                left = Some(l - step);
                Some(step)
            }
        })
    }
}

#[cfg(not(feature = "trace"))]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.select()?;
    anyhow::bail!("trace: {}", crate::trace::NOT_BUILT)
}

#[cfg(feature = "trace")]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    use crate::host::HostFs;
    use crate::trace::{interval, model::Sample, render, session::Session};
    use std::io::Write;

    let sel = args.select()?;
    let session = Session::start(&HostFs::new(args.root.path()))?;
    for n in &session.notes {
        eprintln!("irqlab: note: {n}");
    }
    eprintln!(
        "irqlab: tracing {} tracepoints; Ctrl-C to stop",
        session.attached().tracepoints.len()
    );
    let result = (|| -> anyhow::Result<()> {
        let mut session = session;
        let (mut prev, mut cur) = (Sample::default(), Sample::default());
        session.read(&mut prev)?;
        let stdout = std::io::stdout();
        let mut start = std::time::Instant::now();
        for (n, step) in (1u64..).zip(args.intervals()) {
            let due = start + step;
            std::thread::sleep(due.saturating_duration_since(std::time::Instant::now()));
            start = due;
            session.read(&mut cur)?;
            let iv = interval::between(&prev, &cur, &sel);
            let mut out = stdout.lock();
            match args.format {
                TraceFormat::Text => render::text(&iv, n, &mut out)?,
                TraceFormat::Json => render::json(&iv, n, &mut out)?,
            }
            out.flush()?;
            drop(out);
            std::mem::swap(&mut prev, &mut cur);
            // tests/trace_detach.rs: the panic path must detach and unmount too
            if std::env::var_os("IRQLAB_TRACE_TEST_PANIC").is_some() {
                panic!("irqlab: trace: test panic (IRQLAB_TRACE_TEST_PANIC is set)");
            }
        }
        session.stop()
    })();
    result.map(|()| ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: Args,
    }

    fn args(v: &[&str]) -> Args {
        T::parse_from(std::iter::once("t").chain(v.iter().copied())).a
    }

    #[test]
    fn duration_is_cut_into_intervals() {
        let a = args(&["-i", "1s", "-d", "2.5s"]);
        let v: Vec<_> = a.intervals().collect();
        assert_eq!(
            v,
            [
                Duration::from_secs(1),
                Duration::from_secs(1),
                Duration::from_millis(500)
            ]
        );
        assert_eq!(args(&[]).intervals().take(3).count(), 3);
    }

    #[test]
    fn bad_selectors_are_named() {
        let e = args(&["--irq", "("]).select().unwrap_err().to_string();
        assert!(e.contains("--irq"), "{e}");
        let e = args(&["--cpus", "x"]).select().unwrap_err().to_string();
        assert!(e.contains("--cpus"), "{e}");
    }
}
