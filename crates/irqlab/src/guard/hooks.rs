//! Process-wide restore triggers: a panic hook and a SIGINT/SIGTERM thread
//! (signal-hook), installed once, that undo the live guards' changes.
//!
//! Guards register their shared state here as a `Weak`; the state's mutex
//! and its taken-once entry list make every restore happen exactly once,
//! whichever of Drop, an explicit call, the panic hook or a signal comes
//! first. Like Drop (newest guard first, each newest change first), the
//! hooks undo the newest guard first: a later change may rest on an
//! earlier one (a file under a mount). Must not know what a change is.

use super::State;
use signal_hook::consts::signal::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, TryLockError, Weak};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// One live guard and the thread that owns it.
struct Registered {
    owner: ThreadId,
    state: Weak<Mutex<State>>,
}

static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
/// Grace (ms) given to owners that handle SIGINT/SIGTERM themselves; 0 = none.
static DEFER_MS: AtomicU64 = AtomicU64::new(0);

/// The run handles SIGINT/SIGTERM itself (a `sampler::Stop` flag) and
/// restores its guards on the way out (`trace`, `top --trace`: they still
/// print what they measured). A signal then gives the owners `grace` to
/// drop every live guard; only guards still alive after it are restored
/// here and the process exits 128 + signal, as without this call.
pub fn defer_signals(grace: Duration) {
    let ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX).max(1);
    DEFER_MS.store(ms, Ordering::SeqCst);
}

/// After a signal: wait up to the deferral grace for the owners to drop
/// their guards; true when none is left (the run ends by itself).
fn owners_finished() -> bool {
    let ms = DEFER_MS.load(Ordering::SeqCst);
    if ms == 0 {
        return false;
    }
    let deadline = Instant::now() + Duration::from_millis(ms);
    loop {
        if live(|_| true).is_empty() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Install the hooks once per process (also before any guard exists: a
/// held run lock is released on SIGINT/SIGTERM too).
pub fn install_once() -> anyhow::Result<()> {
    INSTALLED
        .get_or_init(install)
        .clone()
        .map_err(|e| anyhow::anyhow!("installing the SIGINT/SIGTERM handler: {e}"))
}

/// Install the hooks (once per process) and register `state`. Refused
/// when another live guard of this process journals to the same file: a
/// guard rewrites and removes its journal as its own.
pub fn register(state: &Arc<Mutex<State>>) -> anyhow::Result<()> {
    install_once()?;
    let journal = lock(state).journal.path().to_path_buf();
    let mut reg = lock(&REGISTRY);
    reg.retain(|r| r.state.strong_count() > 0);
    for other in reg.iter().filter_map(|r| r.state.upgrade()) {
        let busy = match other.try_lock() {
            Ok(st) => st.closed.is_none() && st.journal.path() == journal,
            Err(TryLockError::Poisoned(p)) => {
                let st = p.into_inner();
                st.closed.is_none() && st.journal.path() == journal
            }
            Err(TryLockError::WouldBlock) => false,
        };
        if busy {
            anyhow::bail!(
                "journal {} is already used by another guard of this run",
                journal.display()
            );
        }
    }
    reg.push(Registered {
        owner: std::thread::current().id(),
        state: Arc::downgrade(state),
    });
    Ok(())
}

fn install() -> Result<(), String> {
    let signals = Signals::new([SIGINT, SIGTERM]).map_err(|e| e.to_string())?;
    std::thread::Builder::new()
        .name("irqlab-signals".into())
        .spawn(move || signal_loop(signals))
        .map_err(|e| e.to_string())?;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        on_panic();
    }));
    Ok(())
}

/// Wait for SIGINT/SIGTERM, undo every live guard, exit 128 + signal.
/// The guards stay locked until the exit, so no other thread can finish
/// the run first (with another exit code) once the signal is handled.
/// With [`defer_signals`], owners that dropped their guards in time end
/// the run themselves and this thread waits for the next signal.
fn signal_loop(mut signals: Signals) {
    for sig in signals.forever() {
        if owners_finished() {
            continue;
        }
        let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
        let states = live(|_| true);
        let mut held = Vec::new();
        for state in &states {
            let mut st = lock(state);
            st.closed = Some(name);
            report_to_stderr(&mut st, name);
            held.push(st);
        }
        super::lock::release_held();
        std::process::exit(128 + sig);
    }
}

/// Undo the guards of the panicking thread (all guards when panics abort,
/// because no Drop will run). Never blocks: a guard whose lock is held
/// (the panic came from inside it) is left to its Drop.
fn on_panic() {
    let me = std::thread::current().id();
    let all = cfg!(panic = "abort");
    let states = match REGISTRY.try_lock() {
        Ok(reg) => collect(&reg, |r| all || r.owner == me),
        Err(TryLockError::Poisoned(p)) => collect(&p.into_inner(), |r| all || r.owner == me),
        Err(TryLockError::WouldBlock) => return,
    };
    for state in states {
        let mut st = match state.try_lock() {
            Ok(st) => st,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => continue,
        };
        report_to_stderr(&mut st, "panic");
    }
}

fn live(keep: impl Fn(&Registered) -> bool) -> Vec<Arc<Mutex<State>>> {
    collect(&lock(&REGISTRY), keep)
}

/// The live guards `keep` selects, newest first: the order every restore
/// of more than one guard follows.
fn collect(reg: &[Registered], keep: impl Fn(&Registered) -> bool) -> Vec<Arc<Mutex<State>>> {
    reg.iter()
        .rev()
        .filter(|r| keep(r))
        .filter_map(|r| r.state.upgrade())
        .collect()
}

/// Restore and say so on stderr (nothing when there was nothing to undo).
fn report_to_stderr(st: &mut State, why: &str) {
    let report = st.restore();
    if !report.is_empty() || !report.is_ok() {
        eprint!(
            "irqlab: {why}: restoring host changes\n{}",
            report.prefixed("irqlab: ")
        );
    }
}

/// Lock, ignoring poisoning: restoring the host matters more than a panic
/// elsewhere.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
