//! Clocks for the sampler: CLOCK_MONOTONIC / CLOCK_REALTIME timestamps and
//! the calling thread's own CPU time (self-cost accounting), through the
//! `nix` crate's safe wrappers. Also formats wall time as RFC 3339 (UTC).
//!
//! Must not read files or know about output formats.

use anyhow::Context;
use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeValLike;
use nix::time::{clock_gettime, ClockId};
use serde::Serialize;

/// One instant on both clocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    /// CLOCK_MONOTONIC, ns.
    pub mono_ns: u64,
    /// CLOCK_REALTIME, ns since the Unix epoch.
    pub wall_ns: u64,
}

fn ns(clock: ClockId) -> anyhow::Result<u64> {
    let ts = clock_gettime(clock).with_context(|| format!("clock_gettime({clock})"))?;
    Ok(u64::try_from(ts.num_nanoseconds()).unwrap_or(0))
}

/// Read CLOCK_MONOTONIC, then CLOCK_REALTIME.
pub fn now() -> anyhow::Result<Stamp> {
    Ok(Stamp {
        mono_ns: ns(ClockId::CLOCK_MONOTONIC)?,
        wall_ns: ns(ClockId::CLOCK_REALTIME)?,
    })
}

/// CLOCK_MONOTONIC in ns (0 if the clock cannot be read, which Linux never does).
pub fn mono_ns() -> u64 {
    ns(ClockId::CLOCK_MONOTONIC).unwrap_or(0)
}

/// CPU time consumed so far by the calling thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadTimes {
    /// From `getrusage(RUSAGE_THREAD)` (µs resolution, split by ticks).
    pub user_ns: u64,
    pub system_ns: u64,
    /// CLOCK_THREAD_CPUTIME_ID: precise user + system.
    pub cpu_ns: u64,
}

/// CPU time (user + system) of the calling thread in ns, from
/// CLOCK_THREAD_CPUTIME_ID (precise; getrusage is tick-granular here); 0
/// if it cannot be read.
pub fn thread_cpu_ns() -> u64 {
    ns(ClockId::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

/// The calling thread's CPU times (zeros for what cannot be read).
pub fn thread_times() -> ThreadTimes {
    let cpu_ns = thread_cpu_ns();
    let (user_ns, system_ns) = thread_user_system();
    ThreadTimes {
        user_ns,
        system_ns,
        cpu_ns,
    }
}

/// User and system ns of the calling thread from `getrusage(RUSAGE_THREAD)`
/// (zeros if it cannot be read).
fn thread_user_system() -> (u64, u64) {
    match getrusage(UsageWho::RUSAGE_THREAD) {
        Ok(u) => (
            u64::try_from(u.user_time().num_nanoseconds()).unwrap_or(0),
            u64::try_from(u.system_time().num_nanoseconds()).unwrap_or(0),
        ),
        Err(_) => (0, 0),
    }
}

/// Most CPU (ns) the thread may have used since its latest
/// [`CostMeter::stop`] for a new meter to start from that stop's user and
/// system times instead of asking `getrusage` again: one millisecond, the
/// shortest tick (HZ=1000), below the granularity of the tick-based split
/// itself. A sampler that stops its meter, writes and sleeps (a few µs of
/// CPU) so makes one `getrusage` call per sample instead of two.
const REUSE_STOP_NS: u64 = 1_000_000;

thread_local! {
    /// The calling thread's times at its latest [`CostMeter::stop`].
    static LAST_STOP: std::cell::Cell<Option<ThreadTimes>> =
        const { std::cell::Cell::new(None) };
}

/// The start times of a meter whose thread CPU now is `cpu_ns`: user and
/// system from `last` (the latest stop on this thread) when at most
/// [`REUSE_STOP_NS`] of CPU was used since, else from `fresh`.
fn start_times(
    cpu_ns: u64,
    last: Option<ThreadTimes>,
    fresh: impl FnOnce() -> (u64, u64),
) -> ThreadTimes {
    let (user_ns, system_ns) = match last {
        Some(l) if cpu_ns >= l.cpu_ns && cpu_ns - l.cpu_ns <= REUSE_STOP_NS => {
            (l.user_ns, l.system_ns)
        }
        _ => fresh(),
    };
    ThreadTimes {
        user_ns,
        system_ns,
        cpu_ns,
    }
}

/// What one sample cost irqlab itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SelfCost {
    /// User CPU time of the sampling thread, ns (µs resolution).
    pub user_ns: u64,
    /// System CPU time of the sampling thread, ns (µs resolution).
    pub system_ns: u64,
    /// Total CPU time of the sampling thread, ns (CLOCK_THREAD_CPUTIME_ID;
    /// precise, while the user/system split is the kernel's tick-based one).
    pub cpu_ns: u64,
    /// Wall time of the measured work, ns.
    pub wall_ns: u64,
}

/// Measures one stretch of work on the calling thread.
#[derive(Debug, Clone, Copy)]
pub struct CostMeter {
    cpu: ThreadTimes,
    mono_ns: u64,
}

impl CostMeter {
    /// Start measuring now. CPU time is read now (CLOCK_THREAD_CPUTIME_ID);
    /// the user/system split (tick-based) is the latest stop's on this
    /// thread when the thread has used under 1 ms of CPU since.
    pub fn start() -> Self {
        let cpu_ns = thread_cpu_ns();
        CostMeter {
            cpu: start_times(cpu_ns, LAST_STOP.get(), thread_user_system),
            mono_ns: mono_ns(),
        }
    }

    /// A meter whose CPU starts at the latest [`CostMeter::stop`] on this
    /// thread, without reading the thread's clock again (wall time starts
    /// now, from the vDSO's CLOCK_MONOTONIC: no system call); like
    /// [`CostMeter::start`] when the thread has not stopped a meter yet.
    /// For a loop whose thread does nothing but sample, write and sleep:
    /// each sample's cost then also holds the previous one's write and the
    /// sleep's system calls, and the costs of consecutive samples add up
    /// to the thread's CPU time with nothing lost or counted twice (each
    /// stop ends one stretch and begins the next). One thread-clock read
    /// per sample instead of two.
    pub fn since_last_stop() -> Self {
        Self::since(LAST_STOP.get())
    }

    fn since(last: Option<ThreadTimes>) -> Self {
        match last {
            Some(cpu) => CostMeter {
                cpu,
                mono_ns: mono_ns(),
            },
            None => CostMeter::start(),
        }
    }

    /// The cost from `start` until now.
    pub fn stop(&self) -> SelfCost {
        let cpu = thread_times();
        LAST_STOP.set(Some(cpu));
        SelfCost {
            user_ns: cpu.user_ns.saturating_sub(self.cpu.user_ns),
            system_ns: cpu.system_ns.saturating_sub(self.cpu.system_ns),
            cpu_ns: cpu.cpu_ns.saturating_sub(self.cpu.cpu_ns),
            wall_ns: mono_ns().saturating_sub(self.mono_ns),
        }
    }
}

impl std::ops::AddAssign for SelfCost {
    fn add_assign(&mut self, o: SelfCost) {
        self.user_ns = self.user_ns.saturating_add(o.user_ns);
        self.system_ns = self.system_ns.saturating_add(o.system_ns);
        self.cpu_ns = self.cpu_ns.saturating_add(o.cpu_ns);
        self.wall_ns = self.wall_ns.saturating_add(o.wall_ns);
    }
}

/// `wall_ns` as RFC 3339 UTC with milliseconds: `2026-11-29T19:30:01.123Z`
/// (the one formatter, `crate::timestamp`).
pub fn rfc3339_utc(wall_ns: u64) -> String {
    crate::timestamp::rfc3339_ns(wall_ns, crate::timestamp::Precision::Millis)
}

/// [`rfc3339_utc`]'s text on the stack, for the per-sample paths (the
/// `timestamp` of every JSON line, the time column of every text line):
/// the same bytes (milliseconds truncated, as `humantime` does; a unit
/// test compares the two), no allocation and no formatting machinery.
#[derive(Clone, Copy)]
pub struct MillisStamp([u8; 24]);

impl MillisStamp {
    /// `2026-11-29T19:30:01.123Z` of `wall_ns` (every u64 is a year
    /// before 2555: always 24 bytes).
    pub fn of(wall_ns: u64) -> MillisStamp {
        let secs = wall_ns / 1_000_000_000;
        let millis = (wall_ns % 1_000_000_000) / 1_000_000;
        let (days, sod) = (secs / 86_400, secs % 86_400);
        let (y, m, d) = civil_from_days(days);
        let mut b = *b"0000-00-00T00:00:00.000Z";
        let put = |b: &mut [u8; 24], at: usize, width: usize, mut v: u64| {
            for i in (at..at + width).rev() {
                if let Some(c) = b.get_mut(i) {
                    *c = b'0' + (v % 10) as u8;
                }
                v /= 10;
            }
        };
        put(&mut b, 0, 4, y);
        put(&mut b, 5, 2, m);
        put(&mut b, 8, 2, d);
        put(&mut b, 11, 2, sod / 3600);
        put(&mut b, 14, 2, sod / 60 % 60);
        put(&mut b, 17, 2, sod % 60);
        put(&mut b, 20, 3, millis);
        MillisStamp(b)
    }

    /// The text (ASCII).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("1970-01-01T00:00:00.000Z")
    }

    /// The text as bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// (year, month, day) of day `days` since 1970-01-01, proleptic
/// Gregorian (H. Hinnant's `civil_from_days`, for days ≥ 0).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            rfc3339_utc(951_782_400_123_000_000),
            "2000-02-29T00:00:00.123Z"
        );
        assert_eq!(
            rfc3339_utc(1_795_462_201_999_999_999),
            "2026-11-23T19:30:01.999Z"
        );
    }

    /// The stack stamp of every per-sample line is byte for byte the
    /// crate's one formatter, across leap days, century rules, the epoch
    /// and the last instant a u64 holds.
    #[test]
    fn millis_stamp_matches_the_one_formatter() {
        let mut probes = vec![
            0,
            999_999,
            951_782_400_123_000_000,
            951_868_799_999_999_999,
            1_795_462_201_999_999_999,
            4_107_542_400_000_000_000, // 2100-03-01
            u64::MAX,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            probes.push(x);
            probes.push(x % 4_102_444_800_000_000_000);
        }
        for v in probes {
            assert_eq!(MillisStamp::of(v).as_str(), rfc3339_utc(v), "{v}");
        }
    }

    #[test]
    fn meter_start_reuses_the_latest_stop_split_only_after_little_cpu() {
        let last = ThreadTimes {
            user_ns: 7_000,
            system_ns: 9_000,
            cpu_ns: 50_000_000,
        };
        let fresh = || (1, 2);
        let split = |t: ThreadTimes| (t.user_ns, t.system_ns, t.cpu_ns);
        // a sampler's next start: a few µs of CPU since its stop
        let t = start_times(50_020_000, Some(last), || panic!("getrusage asked again"));
        assert_eq!(split(t), (7_000, 9_000, 50_020_000));
        // no stop yet on this thread, too much CPU since, or a clock that
        // went back: asked now
        assert_eq!(split(start_times(10, None, fresh)), (1, 2, 10));
        let later = 50_000_000 + REUSE_STOP_NS + 1;
        assert_eq!(split(start_times(later, Some(last), fresh)), (1, 2, later));
        assert_eq!(split(start_times(1, Some(last), fresh)), (1, 2, 1));
    }

    /// Chained meters (one thread-clock read per sample) lose no CPU
    /// between samples and count none twice: their costs add up to the
    /// thread's CPU from the first start to the last stop, while each
    /// sample's wall time is still its own.
    #[test]
    fn chained_meters_add_up_to_the_threads_cpu_without_gaps() {
        std::thread::spawn(|| {
            let spin = |n: u64| {
                let mut x = 0u64;
                for i in 0..n {
                    x = x.wrapping_mul(31).wrapping_add(i);
                }
                std::hint::black_box(x);
            };
            // no stop yet on this thread: the clock is read now
            let first = CostMeter::since_last_stop();
            let t0 = first.cpu.cpu_ns;
            assert!(t0 > 0);
            let mut sum = first.stop().cpu_ns;
            for _ in 0..5 {
                // the work between a stop and the next sample (a line's
                // write, the sleep) belongs to the next sample
                spin(200_000);
                let m = CostMeter::since_last_stop();
                assert_eq!(Some(m.cpu), LAST_STOP.get(), "no clock read at start");
                spin(200_000);
                let c = m.stop();
                assert!(c.cpu_ns > 0);
                sum += c.cpu_ns;
            }
            let end = LAST_STOP.get().unwrap().cpu_ns;
            assert_eq!(sum, end - t0);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn clocks_advance_and_cost_is_measured() {
        let a = now().unwrap();
        let m = CostMeter::start();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let c = m.stop();
        let b = now().unwrap();
        assert!(b.mono_ns >= a.mono_ns);
        assert!(a.wall_ns > 1_600_000_000_000_000_000);
        assert!(c.wall_ns > 0);
        assert!(c.cpu_ns > 0 && c.cpu_ns <= c.wall_ns + 1_000_000);
        assert!(c.user_ns + c.system_ns <= c.wall_ns + 10_000_000);
    }
}
