//! Helpers of the live tracing tests (`trace_*`, `top_trace_live`,
//! `top_tui_trace`): why a test must skip, the tracefs mount state, the
//! BPF programs a child holds and whether they are still loaded after it,
//! a child reaped even when the test fails, timer interrupts on demand,
//! one tracing run at a time per test binary, and the Python tools that
//! hold irqlab against another tracer.

use std::path::Path;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Where tracefs is mounted (by irqlab when absent and needed, or by
/// [`TracefsForAnotherTracer`]).
pub const TRACING: &str = "/sys/kernel/tracing";

/// What a live tracing test needs besides root and the tracefs directory.
#[derive(Clone, Copy, Default)]
pub struct Needs {
    /// The kernel's BTF (`/sys/kernel/btf/vmlinux`).
    pub btf: bool,
    /// bpftool, to ask whether program ids are still loaded.
    pub bpftool: bool,
    /// The test's runs take no run lock (`probe --kernel` mounts
    /// nothing): another irqlab run holding the host is no reason to skip.
    pub lock_free: bool,
}

/// Why the test cannot run here, if it cannot (another irqlab run holding
/// the host too, unless `needs.lock_free`: see `host_lock_skip_reason`).
pub fn skip_reason(needs: Needs) -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root".into());
    }
    if needs.btf && !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some("no BTF at /sys/kernel/btf/vmlinux".into());
    }
    if !Path::new(TRACING).is_dir() {
        return Some(format!("{TRACING} does not exist"));
    }
    if needs.bpftool && !runs("bpftool", "version") {
        return Some("bpftool not installed (tools/install-trace-deps.sh)".into());
    }
    if needs.lock_free {
        return None;
    }
    // a run that mounts tracefs takes the run lock (and another run's
    // mount refuses it)
    super::host_lock_skip_reason()
}

/// Whether `test` (`file: test name`) must skip for `why`; says so
/// visibly when it must.
pub fn skipped(test: &str, why: Option<String>) -> bool {
    if let Some(why) = &why {
        crate::visible!("{test}: SKIPPED: {why}");
    }
    why.is_some()
}

/// Does `cmd arg` run and succeed?
pub fn runs(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Is tracefs mounted at [`TRACING`]?
pub fn mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(TRACING))
}

/// BPF program ids held by process `pid` (fdinfo `prog_id:` lines).
pub fn prog_ids(pid: u32) -> Vec<u32> {
    let mut ids = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .unwrap()
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for l in text.lines() {
            if let Some(id) = l.strip_prefix("prog_id:") {
                ids.push(id.trim().parse().unwrap());
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Is program `id` loaded (bpftool)?
pub fn loaded(id: u32) -> bool {
    Command::new("bpftool")
        .args(["prog", "show", "id", &id.to_string()])
        .output()
        .unwrap()
        .status
        .success()
}

/// Ids still loaded after a grace period (freeing waits for RCU).
pub fn still_loaded(ids: &[u32]) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left: Vec<u32> = ids.iter().copied().filter(|&id| loaded(id)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Send `sig` to process `pid`.
pub fn signal(pid: u32, sig: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap());
    nix::sys::signal::kill(pid, sig).unwrap();
}

/// A child killed and reaped on drop if the test failed before it ended.
pub struct Reap(pub Child);

impl Reap {
    /// Wait for the end; the exit status and all of stderr.
    pub fn finish(&mut self) -> (std::process::ExitStatus, String) {
        let status = self.0.wait().unwrap();
        let mut err = String::new();
        if let Some(mut e) = self.0.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err).unwrap();
        }
        (status, err)
    }
}

impl Drop for Reap {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// A thread sleeping 1 ms at a time until dropped: local timer
/// interrupts, also on an idle tickless machine.
pub struct Ticker(Arc<AtomicBool>, Option<std::thread::JoinHandle<()>>);

impl Ticker {
    pub fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let h = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        Ticker(stop, Some(h))
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        if let Some(h) = self.1.take() {
            let _ = h.join();
        }
    }
}

/// tracefs mounted at [`TRACING`] for another tracer beside irqlab
/// (bpftrace reads its tracepoints' formats there) when it is not: on a
/// kernel with BTF irqlab mounts none. Unmounted on drop when mounted here.
pub struct TracefsForAnotherTracer(bool);

impl TracefsForAnotherTracer {
    pub fn mount() -> Self {
        if mounted() {
            return TracefsForAnotherTracer(false);
        }
        let ok = Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACING])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mounting tracefs on {TRACING} for the other tracer");
        TracefsForAnotherTracer(true)
    }
}

impl Drop for TracefsForAnotherTracer {
    fn drop(&mut self) {
        if self.0 {
            let _ = Command::new("umount").arg(TRACING).status();
        }
    }
}

static ONE: Mutex<()> = Mutex::new(());

/// One tracing run at a time in this test binary: two runs racing to
/// mount tracefs collide, and the mount state is shared.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run `tools/<tool>` with python3, `args`, then `--json --irqlab` and
/// the test's irqlab: its JSON (a panic with both outputs when there is
/// none), its stderr, and whether it exited 0.
pub fn python_tool(tool: &str, args: &[&str]) -> (serde_json::Value, String, bool) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tools")
        .join(tool);
    let out = Command::new("python3")
        .arg(path)
        .args(args)
        .args(["--json", "--irqlab", env!("CARGO_BIN_EXE_irqlab")])
        .output()
        .unwrap_or_else(|e| panic!("running {tool}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{tool}: {e}: {stderr}\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (v, stderr, out.status.success())
}
