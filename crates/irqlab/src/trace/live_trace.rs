//! A tracing session as its readers see it. [`TraceSession`] is the one
//! interface to a session: its maps read as cumulative [`Sample`]s
//! (implemented by `session::Session`, feature `trace`, and by the tests'
//! fakes). `record --trace` stores those samples as they are;
//! [`LiveTrace`] turns consecutive reads into [`Interval`]s: `top
//! --trace` reads once per sampler tick, right after the live sampler's
//! /proc read, so both describe the same interval; `bench --trace` marks
//! before a trial's timed window and reads after it. Dropping a
//! `LiveTrace` drops its session (detach, unmount: see `session`).

use super::interval::{between, Interval, IntervalView};
use super::sample::Sample;
use anyhow::Result;

/// A source of the tracing maps' cumulative counters.
pub trait TraceSession: Send {
    /// The maps' cumulative counters now, into `out` (replaced).
    fn read(&mut self, out: &mut Sample) -> Result<()>;

    /// [`TraceSession::read`] for a read whose runs no program saw must
    /// all be counted by now: a run's last read, a bench trial's bounds
    /// (`session` reads every kernel file then, whatever its budget
    /// says). Default: [`TraceSession::read`].
    fn read_closing(&mut self, out: &mut Sample) -> Result<()> {
        self.read(out)
    }

    /// [`TraceSession::read_closing`] when `closing`, else
    /// [`TraceSession::read`].
    fn read_closing_if(&mut self, out: &mut Sample, closing: bool) -> Result<()> {
        match closing {
            true => self.read_closing(out),
            false => self.read(out),
        }
    }
}

/// A session and its last reads: one traced interval per read.
pub struct LiveTrace {
    session: Box<dyn TraceSession>,
    /// The first tick's read: the start of [`LiveTrace::whole_run`].
    first: Option<Sample>,
    prev: Sample,
    cur: Sample,
    sel: IntervalView,
}

impl LiveTrace {
    /// Take `session`'s baseline now; intervals keep what `sel` selects.
    pub fn new(mut session: Box<dyn TraceSession>, sel: IntervalView) -> Result<Self> {
        let mut prev = Sample::default();
        session.read(&mut prev)?;
        Ok(LiveTrace {
            session,
            first: None,
            prev,
            cur: Sample::default(),
            sel,
        })
    }

    /// `top --trace`: attach (mounting tracefs through a guard of the
    /// session's own when needed) and take the baseline; `cpus` keeps
    /// only those CPUs. The session's notes are returned for stderr / the
    /// status line.
    #[cfg(feature = "trace")]
    pub fn start(fs: &crate::host::HostFs, cpus: Option<Vec<u32>>) -> Result<(Self, Vec<String>)> {
        let session = super::session::Session::start(fs)?;
        let notes = session.notes.clone();
        let sel = IntervalView::of_cpus(cpus);
        Ok((LiveTrace::new(Box::new(session), sel)?, notes))
    }

    /// `bench --trace`: attach inside the bench's own guard, so the
    /// tracefs mount (if irqlab made it) is undone with the bench's other
    /// host changes; the notes (mount, absent tracepoints) are returned
    /// for the progress output.
    #[cfg(feature = "trace")]
    pub fn start_in(
        fs: &crate::host::HostFs,
        guard: &mut crate::guard::SystemGuard,
    ) -> Result<(Self, Vec<String>)> {
        let session = super::session::Session::start_in(fs, guard)?;
        let notes = session.notes.clone();
        Ok((
            LiveTrace::new(Box::new(session), IntervalView::default())?,
            notes,
        ))
    }

    /// Start the next interval now (`bench`: just before a trial's timed
    /// window), with a closing read ([`TraceSession::read_closing`]): a
    /// run missed before it is not said in the interval after.
    pub fn mark(&mut self) -> Result<()> {
        self.session.read_closing(&mut self.prev)
    }

    /// Read the maps now: the interval since the previous tick, mark or
    /// the start.
    pub fn tick(&mut self) -> Result<Interval> {
        self.tick_closing_if(false)
    }

    /// [`LiveTrace::tick`] with a closing read: the last tick of a run,
    /// or the end of a bench trial, whose interval holds every run no
    /// program saw in it.
    pub fn closing_tick(&mut self) -> Result<Interval> {
        self.tick_closing_if(true)
    }

    /// [`LiveTrace::closing_tick`] when `closing`, else [`LiveTrace::tick`].
    pub fn tick_closing_if(&mut self, closing: bool) -> Result<Interval> {
        self.session.read_closing_if(&mut self.cur, closing)?;
        let iv = between(&self.prev, &self.cur, &self.sel);
        std::mem::swap(&mut self.prev, &mut self.cur);
        if self.first.is_none() {
            self.first = Some(self.prev.clone());
        }
        Ok(iv)
    }

    /// From the first tick to the latest one, without reading again (the
    /// `Average:` of `top --batch`).
    pub fn whole_run(&self) -> Interval {
        let first = self.first.as_ref().unwrap_or(&self.prev);
        between(first, &self.prev, &self.sel)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use crate::record::trace_cells::tests::sample;

    /// Reads `sample(1)`, `sample(2)` …: the same counts every interval.
    struct Growing(u64);

    impl TraceSession for Growing {
        fn read(&mut self, out: &mut Sample) -> Result<()> {
            self.0 += 1;
            *out = sample(self.0);
            Ok(())
        }
    }

    #[test]
    fn ticks_marks_and_the_whole_run_are_intervals_between_reads() {
        let mut t = LiveTrace::new(Box::new(Growing(0)), IntervalView::default()).unwrap();
        let one = between(&sample(1), &sample(2), &IntervalView::default());
        assert_eq!(t.tick().unwrap(), one, "baseline to the first tick");
        let two = t.tick().unwrap();
        assert_eq!(
            two,
            between(&sample(2), &sample(3), &IntervalView::default())
        );
        assert_eq!(t.whole_run(), two, "from the first tick on");
        t.mark().unwrap(); // reads sample(4)
        let marked = t.tick().unwrap();
        assert_eq!(
            marked,
            between(&sample(4), &sample(5), &IntervalView::default())
        );
        assert_eq!(
            t.whole_run(),
            between(&sample(2), &sample(5), &IntervalView::default())
        );
    }

    /// Which reads of a session were closing, in order.
    #[derive(Clone, Default)]
    pub struct Closing(pub std::sync::Arc<std::sync::Mutex<Vec<bool>>>);

    impl Closing {
        pub fn reads(&self) -> Vec<bool> {
            self.0.lock().unwrap().clone()
        }
    }

    impl TraceSession for Closing {
        fn read(&mut self, out: &mut Sample) -> Result<()> {
            self.0.lock().unwrap().push(false);
            *out = sample(self.0.lock().unwrap().len() as u64);
            Ok(())
        }
        fn read_closing(&mut self, out: &mut Sample) -> Result<()> {
            self.read(out)?;
            if let Some(last) = self.0.lock().unwrap().last_mut() {
                *last = true;
            }
            Ok(())
        }
    }

    /// A [`Closing`] log that catches SIGINT on `stop` right after the
    /// read after which `when` (the reads so far) holds: a signal caught
    /// between that read and the run's next tick.
    pub struct SignalAfter {
        pub log: Closing,
        pub stop: crate::sampler::Stop,
        pub when: fn(&[bool]) -> bool,
    }

    impl SignalAfter {
        fn after_read(&self) {
            if (self.when)(&self.log.reads()) {
                self.stop.catch(signal_hook::consts::SIGINT);
            }
        }
    }

    impl TraceSession for SignalAfter {
        fn read(&mut self, out: &mut Sample) -> Result<()> {
            self.log.read(out)?;
            self.after_read();
            Ok(())
        }
        fn read_closing(&mut self, out: &mut Sample) -> Result<()> {
            self.log.read_closing(out)?;
            self.after_read();
            Ok(())
        }
    }

    #[test]
    fn marks_and_closing_ticks_read_closing() {
        let log = Closing::default();
        let mut t = LiveTrace::new(Box::new(log.clone()), IntervalView::default()).unwrap();
        t.tick().unwrap();
        t.mark().unwrap();
        t.closing_tick().unwrap();
        t.tick().unwrap();
        assert_eq!(log.reads(), [false, false, true, true, false]);
    }

    #[test]
    fn only_the_selected_cpus_are_kept() {
        let sel = IntervalView::of_cpus(Some(vec![0]));
        let mut t = LiveTrace::new(Box::new(Growing(0)), sel.clone()).unwrap();
        let iv = t.tick().unwrap();
        assert_eq!(iv, between(&sample(1), &sample(2), &sel));
        assert!(iv.cpus.iter().all(|c| c.cpu == 0), "{:?}", iv.cpus);
    }
}
