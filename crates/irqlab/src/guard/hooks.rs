//! Process-wide restore triggers: a panic hook and a SIGINT/SIGTERM thread
//! (signal-hook), installed once, that undo the live guards' changes.
//!
//! Guards register their shared state here as a `Weak`; the state's mutex
//! and its taken-once entry list make every restore happen exactly once,
//! whichever of Drop, an explicit call, the panic hook or a signal comes
//! first. Must not know what a change is.

use super::State;
use signal_hook::consts::signal::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, TryLockError, Weak};
use std::thread::ThreadId;

/// One live guard and the thread that owns it.
struct Registered {
    owner: ThreadId,
    state: Weak<Mutex<State>>,
}

static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

/// Install the hooks (once per process) and register `state`.
pub fn register(state: &Arc<Mutex<State>>) -> anyhow::Result<()> {
    INSTALLED
        .get_or_init(install)
        .clone()
        .map_err(|e| anyhow::anyhow!("installing the SIGINT/SIGTERM handler: {e}"))?;
    let mut reg = lock(&REGISTRY);
    reg.retain(|r| r.state.strong_count() > 0);
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
fn signal_loop(mut signals: Signals) {
    if let Some(sig) = signals.forever().next() {
        let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
        let states = live(|_| true);
        let mut held = Vec::new();
        for state in &states {
            let mut st = lock(state);
            st.closed = Some(name);
            report_to_stderr(&mut st, name);
            held.push(st);
        }
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

fn collect(reg: &[Registered], keep: impl Fn(&Registered) -> bool) -> Vec<Arc<Mutex<State>>> {
    reg.iter()
        .filter(|r| keep(r))
        .filter_map(|r| r.state.upgrade())
        .collect()
}

/// Restore and say so on stderr (nothing when there was nothing to undo).
fn report_to_stderr(st: &mut State, why: &str) {
    let report = st.restore();
    if !report.is_empty() || !report.is_ok() {
        eprint!("irqlab: {why}: restoring host changes\n{report}");
    }
}

/// Lock, ignoring poisoning: restoring the host matters more than a panic
/// elsewhere.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
