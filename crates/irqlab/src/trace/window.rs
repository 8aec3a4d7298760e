//! `bench --trace` over a tracing [`Session`] (feature `trace`): the
//! [`TraceWindow`] a bench trial marks before its timed window and reads
//! after it. The session is started inside the bench's own guard, so the
//! tracefs mount (if irqlab made it) is undone with the bench's other host
//! changes; dropping the window detaches the programs.

use super::interval::{between, Interval, Select};
use super::model::Sample;
use super::session::Session;
use crate::bench::tracing::TraceWindow;
use crate::guard::SystemGuard;
use crate::host::HostFs;
use anyhow::Result;

/// A session and the sample taken at the last mark.
pub struct SessionWindow {
    session: Session,
    start: Sample,
    end: Sample,
}

impl SessionWindow {
    /// Attach (mounting tracefs through `guard` when needed); the notes
    /// (mount, absent tracepoints) are returned for the progress output.
    pub fn start(fs: &HostFs, guard: &mut SystemGuard) -> Result<(Self, Vec<String>)> {
        let session = Session::start_in(fs, guard)?;
        let notes = session.notes.clone();
        Ok((
            SessionWindow {
                session,
                start: Sample::default(),
                end: Sample::default(),
            },
            notes,
        ))
    }
}

impl TraceWindow for SessionWindow {
    fn mark(&mut self) -> Result<()> {
        self.session.read(&mut self.start)
    }

    fn interval(&mut self) -> Result<Interval> {
        self.session.read(&mut self.end)?;
        Ok(between(&self.start, &self.end, &Select::default()))
    }
}
