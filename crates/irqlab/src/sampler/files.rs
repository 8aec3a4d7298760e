//! [`StatFiles`]: the low-level reader of `/proc/interrupts`,
//! `/proc/softirqs` and `/proc/stat` (or, with a [`Targeted`] reader, the
//! selected IRQs' `per_cpu_count`) through [`HostFs`] into a reused
//! [`Snapshot`], with both timestamps. A private detail of the live
//! sampler's [`HostSource`](super::HostSource): every consumer samples
//! through `LiveSampler`. Parse errors name the real path, line and what
//! was expected.

use super::{clock, located, Strategy, Targeted};
use crate::host::HostFs;
use anyhow::anyhow;
use irqlab_core::{paths, Interrupts, ParseError, Snapshot};

/// A statistics file the sampler can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Interrupts,
    Softirqs,
    Stat,
}

impl Source {
    /// Root-relative path.
    pub fn rel(self) -> &'static str {
        match self {
            Source::Interrupts => paths::PROC_INTERRUPTS,
            Source::Softirqs => paths::PROC_SOFTIRQS,
            Source::Stat => paths::PROC_STAT,
        }
    }

    pub const ALL: [Source; 3] = [Source::Interrupts, Source::Softirqs, Source::Stat];
}

/// Reads the statistics files of one root into a reused snapshot.
pub struct StatFiles {
    fs: HostFs,
    sources: Vec<Source>,
    /// Reads the interrupt counts instead of `/proc/interrupts` when set.
    targeted: Option<Targeted>,
    /// Files that could not be opened, with the reason (reported once).
    pub missing: Vec<(Source, String)>,
}

impl StatFiles {
    /// A sampler for `sources` under `fs`'s root.
    pub fn new(fs: HostFs, sources: &[Source]) -> Self {
        StatFiles {
            fs,
            sources: sources.to_vec(),
            targeted: None,
            missing: Vec::new(),
        }
    }

    /// Read interrupt counts through `t` (`Some`) or the full file (`None`).
    pub fn set_targeted(&mut self, t: Option<Targeted>) {
        self.targeted = t;
    }

    /// The targeted reader, if installed.
    pub fn targeted(&self) -> Option<&Targeted> {
        self.targeted.as_ref()
    }

    /// The strategy [`StatFiles::sample`] uses for interrupt counts.
    pub fn strategy(&self) -> Strategy {
        match self.targeted {
            Some(_) => Strategy::PerCpuCount,
            None => Strategy::ProcInterrupts,
        }
    }

    /// Mutable access to the gateway (kept-descriptor reads by callers).
    pub fn fs_mut(&mut self) -> &mut HostFs {
        &mut self.fs
    }

    /// The gateway (for metadata reads by callers).
    pub fn fs(&self) -> &HostFs {
        &self.fs
    }

    /// Read every source into `snap`, reusing its models. A file that cannot
    /// be opened is recorded in `missing` and left `None`; a file that does
    /// not parse is an error. Fails when no source at all is readable.
    pub fn sample(&mut self, snap: &mut Snapshot) -> anyhow::Result<()> {
        let stamp = clock::now()?;
        snap.mono_ns = stamp.mono_ns;
        snap.wall_ns = stamp.wall_ns;
        self.read_all(snap)
    }

    fn read_all(&mut self, snap: &mut Snapshot) -> anyhow::Result<()> {
        let mut any = false;
        for i in 0..self.sources.len() {
            let Some(&src) = self.sources.get(i) else {
                break;
            };
            if let (Source::Interrupts, Some(t)) = (src, self.targeted.as_mut()) {
                let model = snap.interrupts.get_or_insert_with(Interrupts::default);
                t.read_into(&mut self.fs, model)?;
                any = true;
                continue;
            }
            let path = self.fs.path(src.rel());
            if src == Source::Interrupts {
                // streamed: a 1152-CPU file never needs a 13 MB buffer
                let model = snap.interrupts.get_or_insert_with(Interrupts::default);
                match read_interrupts(&mut self.fs, model) {
                    Ok(()) => any = true,
                    Err(ReadStop::Parse(e)) => return Err(located(&path, &e)),
                    Err(ReadStop::Io(e)) if crate::host::is_refusal(&e) => return Err(e.into()),
                    Err(ReadStop::Io(e)) => {
                        if !self.missing.iter().any(|(s, _)| *s == src) {
                            self.missing.push((src, e.to_string()));
                        }
                        clear(snap, src);
                    }
                }
                continue;
            }
            // softirqs and stat are one record each: no EOF read
            let bytes = match self.fs.read_record(src.rel()) {
                Ok(b) => b,
                // a special file or an endless one is a broken tree, not an
                // absent source
                Err(e) if crate::host::is_refusal(&e) => return Err(e.into()),
                Err(e) => {
                    if !self.missing.iter().any(|(s, _)| *s == src) {
                        self.missing.push((src, e.to_string()));
                    }
                    clear(snap, src);
                    continue;
                }
            };
            parse_source(src, bytes, snap).map_err(|e| located(&path, &e))?;
            any = true;
        }
        if any {
            Ok(())
        } else {
            Err(anyhow!(
                "nothing readable under {}: no proc/interrupts, proc/softirqs or proc/stat",
                self.fs.root().display()
            ))
        }
    }
}

/// Why a streamed read of `/proc/interrupts` stopped.
enum ReadStop {
    Io(std::io::Error),
    Parse(ParseError),
}

impl From<std::io::Error> for ReadStop {
    fn from(e: std::io::Error) -> Self {
        ReadStop::Io(e)
    }
}

/// Re-parse `/proc/interrupts` into `model` line by line as it is read
/// (kept descriptor, buffer of about `host::STREAM_CHUNK`).
fn read_interrupts(fs: &mut HostFs, model: &mut Interrupts) -> Result<(), ReadStop> {
    let mut refill = model.refill();
    fs.read_lines(Source::Interrupts.rel(), |line| {
        refill.line(line).map_err(ReadStop::Parse)
    })?;
    refill.finish().map_err(ReadStop::Parse)
}

fn clear(snap: &mut Snapshot, src: Source) {
    match src {
        Source::Interrupts => snap.interrupts = None,
        Source::Softirqs => snap.softirqs = None,
        Source::Stat => snap.stat = None,
    }
}

fn parse_source(src: Source, bytes: &[u8], snap: &mut Snapshot) -> Result<(), ParseError> {
    match src {
        Source::Interrupts => snap
            .interrupts
            .get_or_insert_with(Interrupts::default)
            .parse_into(bytes),
        Source::Softirqs => snap
            .softirqs
            .get_or_insert_with(Default::default)
            .parse_into(bytes),
        Source::Stat => snap
            .stat
            .get_or_insert_with(Default::default)
            .parse_into(bytes),
    }
}
