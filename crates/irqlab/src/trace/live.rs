//! `top --trace`'s tracing (feature `trace`): a [`Session`] read once per
//! sampler tick, right after the live sampler's /proc read, so both
//! describe the same interval. Dropping it detaches and unmounts (see
//! `session`).

use super::interval::{between, Interval, Select};
use super::model::Sample;
use super::session::Session;
use super::top::TraceTick;
use crate::host::HostFs;
use anyhow::Result;

/// A session and its last sample.
pub struct LiveTrace {
    session: Session,
    /// The baseline (the first tick's read).
    first: Option<Sample>,
    prev: Sample,
    cur: Sample,
    sel: Select,
}

impl LiveTrace {
    /// Attach (mounting tracefs through a guard of the session's own when
    /// needed) and take the baseline; `cpus` keeps only those CPUs. The
    /// session's notes are returned for stderr / the status line.
    pub fn start(fs: &HostFs, cpus: Option<Vec<u32>>) -> Result<(Self, Vec<String>)> {
        let mut session = Session::start(fs)?;
        let notes = session.notes.clone();
        let mut prev = Sample::default();
        session.read(&mut prev)?;
        let sel = Select::of_cpus(cpus);
        Ok((
            LiveTrace {
                session,
                first: None,
                prev,
                cur: Sample::default(),
                sel,
            },
            notes,
        ))
    }
}

impl TraceTick for LiveTrace {
    fn tick(&mut self) -> Result<Interval> {
        self.session.read(&mut self.cur)?;
        let iv = between(&self.prev, &self.cur, &self.sel);
        std::mem::swap(&mut self.prev, &mut self.cur);
        if self.first.is_none() {
            self.first = Some(self.prev.clone());
        }
        Ok(iv)
    }

    fn whole_run(&self) -> Interval {
        let first = self.first.as_ref().unwrap_or(&self.prev);
        between(first, &self.prev, &self.sel)
    }
}
