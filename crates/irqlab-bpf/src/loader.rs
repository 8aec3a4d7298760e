//! The loader: irqlab's second gateway to the kernel beside HostFs (the
//! `bpf(2)` and `perf_event_open(2)` syscalls, through aya). Loads the
//! object compiled by build.rs, attaches its programs to tracepoints and
//! copies the maps out. Must not read /proc or /sys itself: whether a
//! tracepoint exists is read from the kernel's BTF the caller hands in
//! (its `btf_trace_<name>` types), or asked of the caller's [`Tracefs`]
//! (irqlab's HostFs), which is made ready (mounted) only when it is needed:
//! for presence without such a BTF, and for a perf event program's id.
//!
//! The softirq and vector programs attach as raw tracepoint programs, the
//! hard IRQ ones as BTF tracepoint programs when the caller hands in the
//! kernel's BTF and they load, else as tracepoint (perf event) programs
//! (`Attach`, and `src/bpf/irqlab.bpf.c` for why). The kernel's BTF
//! comes from the caller too: aya would read it from /sys itself.
//!
//! Detaching needs no code path of its own: every link is a perf event or
//! BPF link fd owned by this process, so the kernel detaches the programs
//! when the [`Tracer`] is dropped or the process ends in any way (exit,
//! panic, SIGINT, SIGTERM, even SIGKILL). Nothing is pinned.

use crate::maps::{merge_split_keys, IrqKey, SoftirqStats, Stats, Vector, SOFTIRQ_SLOTS, VECTORS};
use crate::run_stats::RunStats;
use aya::maps::{MapData, PerCpuArray, PerCpuHashMap};
use aya::programs::{BtfTracePoint, RawTracePoint, TracePoint};
use aya::{Btf, Ebpf, EbpfLoader, Endianness};
use aya_obj::btf::BtfKind;
use std::fmt;
use std::os::fd::{AsFd, AsRawFd, RawFd};

#[cfg(not(irqlab_bpf_missing))]
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/irqlab.bpf.o"));
#[cfg(irqlab_bpf_missing)]
static OBJECT: &[u8] = &[];

/// Why tracing could not start or a read failed.
#[derive(Debug)]
pub enum Error {
    /// The crate was built without clang: no BPF object inside.
    NotBuilt,
    /// A required tracepoint is not in tracefs.
    TracepointAbsent(String),
    /// The kernel refused the object, a program or an attach.
    Kernel(String),
    /// tracefs was needed and could not be made ready (the caller's reason).
    Tracefs(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotBuilt => write!(
                f,
                "the BPF objects were not built (clang was missing when irqlab-bpf was compiled); \
                 install clang (tools/install-trace-deps.sh) and rebuild with \
                 `cargo build --release -p irqlab --features trace`"
            ),
            Error::TracepointAbsent(tp) => write!(
                f,
                "tracepoint {tp} is absent from this kernel (no events/{} in tracefs)",
                tp.replace(':', "/")
            ),
            Error::Kernel(msg) | Error::Tracefs(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for Error {}

/// `what: error: cause: cause …` (aya's errors keep the errno in sources).
fn kernel(what: &str, e: &dyn std::error::Error) -> Error {
    let mut msg = format!("{what}: {e}");
    let mut src = e.source();
    while let Some(s) = src {
        msg.push_str(&format!(": {s}"));
        src = s.source();
    }
    Error::Kernel(msg)
}

/// What [`Tracer::attach`] attached and what it left out.
#[derive(Debug, Default, Clone)]
pub struct Attached {
    /// `group:name` of every attached tracepoint.
    pub tracepoints: Vec<String>,
    /// Optional tracepoints this kernel does not have (`irq_vectors:thermal_apic_entry`).
    pub absent: Vec<String>,
    /// The hard IRQ programs run as BTF tracepoint programs (else as perf
    /// event programs, which the kernel skips while another BPF program or
    /// a map system call runs on the CPU).
    pub hardirq_btf: bool,
    /// Why the hard IRQ programs are perf event programs, when the
    /// kernel's BTF was given but could not be used.
    pub notes: Vec<String>,
}

/// How a program attaches to its tracepoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attach {
    /// A raw tracepoint program, given the tracepoint's arguments: the
    /// kernel skips it only while the same program runs on that CPU.
    Raw,
    /// The BTF tracepoint program `<name>_btf` (given the arguments,
    /// skipped as a raw one) when the kernel's BTF is there and it loads;
    /// else the tracepoint (perf event) program `<name>`, given the
    /// event's record, which the kernel skips while any kprobe or
    /// tracepoint BPF program runs on that CPU, or a map system call does.
    BtfOrPerf,
}

/// One program of the object, named by its tracepoint.
struct Program {
    name: String,
    group: &'static str,
    attach: Attach,
    /// An absent tracepoint is an error (else it is left out).
    required: bool,
}

/// Every program of the object, in the order they are attached.
fn programs() -> Vec<Program> {
    let mut v = Vec::new();
    // exits before entries: an exit without its entry is ignored, an entry
    // without its exit would leave a stale start time
    for (name, attach) in [
        ("irq_handler_exit", Attach::BtfOrPerf),
        ("softirq_exit", Attach::Raw),
        ("irq_handler_entry", Attach::BtfOrPerf),
        ("softirq_entry", Attach::Raw),
        ("softirq_raise", Attach::Raw),
    ] {
        v.push(Program {
            name: name.to_string(),
            group: "irq",
            attach,
            required: true,
        });
    }
    for side in ["exit", "entry"] {
        for Vector { tracepoint, .. } in VECTORS {
            v.push(Program {
                name: format!("{tracepoint}_{side}"),
                group: "irq_vectors",
                attach: Attach::Raw,
                required: false,
            });
        }
    }
    v
}

/// Errors of loading and attaching program `func` to `full`.
struct Steps<'a> {
    func: &'a str,
    full: &'a str,
}

impl Steps<'_> {
    fn missing(&self) -> Error {
        Error::Kernel(format!("program {} missing from the BPF object", self.func))
    }
    fn kind(&self, e: &dyn std::error::Error) -> Error {
        kernel(&format!("program {}", self.func), e)
    }
    fn verifier(&self, e: &dyn std::error::Error) -> Error {
        kernel(&format!("loading program {} (verifier)", self.func), e)
    }
    fn attaching(&self, e: &dyn std::error::Error) -> Error {
        kernel(&format!("attaching to tracepoint {}", self.full), e)
    }
}

/// Load `p` (already in `ebpf`) and attach it; `btf`: the kernel's, for
/// [`Attach::BtfOrPerf`]. Returns whether the BTF program was attached,
/// and why not when it was tried and failed.
fn load_and_attach(
    ebpf: &mut Ebpf,
    p: &Program,
    full: &str,
    btf: Option<&Btf>,
    tracefs: &mut dyn Tracefs,
) -> Result<(bool, Option<Error>), Error> {
    let mut failed = None;
    if let (Attach::BtfOrPerf, Some(btf)) = (p.attach, btf) {
        match attach_btf(ebpf, &p.name, full, btf) {
            Ok(()) => return Ok((true, None)),
            Err(e) => failed = Some(e),
        }
    }
    let func = &p.name;
    let at = Steps { func, full };
    let prog = ebpf.program_mut(func).ok_or_else(|| at.missing())?;
    match p.attach {
        Attach::BtfOrPerf => {
            let prog: &mut TracePoint = prog.try_into().map_err(|e| at.kind(&e))?;
            prog.load().map_err(|e| at.verifier(&e))?;
            // aya reads the event's id from tracefs
            tracefs.ready().map_err(Error::Tracefs)?;
            prog.attach(p.group, func).map_err(|e| at.attaching(&e))?;
        }
        Attach::Raw => {
            let prog: &mut RawTracePoint = prog.try_into().map_err(|e| at.kind(&e))?;
            prog.load().map_err(|e| at.verifier(&e))?;
            prog.attach(func).map_err(|e| at.attaching(&e))?;
        }
    }
    Ok((false, failed))
}

/// Load and attach the BTF tracepoint program `<name>_btf` to `name`; on
/// failure it is unloaded again.
fn attach_btf(ebpf: &mut Ebpf, name: &str, full: &str, btf: &Btf) -> Result<(), Error> {
    let func = format!("{name}_btf");
    let at = Steps { func: &func, full };
    let prog = ebpf.program_mut(&func).ok_or_else(|| at.missing())?;
    let prog: &mut BtfTracePoint = prog.try_into().map_err(|e| at.kind(&e))?;
    prog.load(name, btf).map_err(|e| at.verifier(&e))?;
    if let Err(e) = prog.attach() {
        let err = at.attaching(&e);
        // leaves nothing loaded for the perf event program beside it
        let _ = prog.unload();
        return Err(err);
    }
    Ok(())
}

/// tracefs as the loader needs it: to know which tracepoints the kernel
/// has when its BTF cannot say, and for a perf event program's id (aya
/// reads that from the mounted tracefs).
pub trait Tracefs {
    /// Make tracefs usable, mounting it if it is not; called before every
    /// use, so it must be cheap once done. `Err`: why it cannot be.
    fn ready(&mut self) -> Result<(), String>;
    /// Whether tracefs has the tracepoint `group/name`; asked after `ready`.
    fn has(&self, group: &str, name: &str) -> bool;
}

/// A tracefs that is mounted already: `has` is the closure.
impl<F: Fn(&str, &str) -> bool> Tracefs for F {
    fn ready(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn has(&self, group: &str, name: &str) -> bool {
        self(group, name)
    }
}

/// Whether the kernel's BTF has the tracepoint `name`: the kernel defines
/// a type `btf_trace_<name>` for each (what BTF tracepoint programs attach
/// by).
fn btf_has_tracepoint(btf: &Btf, name: &str) -> bool {
    btf.id_by_type_name_kind(&format!("btf_trace_{name}"), BtfKind::Typedef)
        .is_ok()
}

/// Whether `btf` can say which tracepoints the kernel has: it names every
/// required one (a kernel without BTF tracepoint types, or a stripped
/// BTF, names none).
fn btf_knows_tracepoints(btf: &Btf) -> bool {
    programs()
        .iter()
        .filter(|p| p.required)
        .all(|p| btf_has_tracepoint(btf, &p.name))
}

/// Loaded and attached programs; dropping it detaches them.
pub struct Tracer {
    ebpf: Ebpf,
    attached: Attached,
}

impl Tracer {
    /// Load the object and attach every program. Whether the kernel has
    /// a tracepoint comes from `kernel_btf` when it names every required
    /// one (its `btf_trace_<name>` types), else from `tracefs`: an absent
    /// `irq:*` one is an error, an absent `irq_vectors:*` pair is left out
    /// (non-x86 kernels have none; older ones lack some). `kernel_btf`: the
    /// bytes of the running kernel's BTF (`/sys/kernel/btf/vmlinux`), if it
    /// has one: the hard IRQ programs then run as BTF tracepoint programs.
    /// `tracefs` is made ready only before its first use: presence without
    /// such a BTF, or a perf event program.
    pub fn attach(tracefs: &mut dyn Tracefs, kernel_btf: Option<&[u8]>) -> Result<Tracer, Error> {
        if OBJECT.is_empty() {
            return Err(Error::NotBuilt);
        }
        let mut attached = Attached::default();
        let btf = kernel_btf.and_then(|b| match Btf::parse(b, Endianness::default()) {
            Ok(btf) => Some(btf),
            Err(e) => {
                attached.notes.push(format!(
                    "the kernel's BTF could not be parsed, so the hard IRQ programs run as \
                     perf event programs: {}",
                    kernel("BTF", &e)
                ));
                None
            }
        });
        // aya's new() reads /sys/kernel/btf/vmlinux itself (0.13, no other
        // constructor): `.btf()` replaces that with the BTF handed in
        let mut ebpf = EbpfLoader::new()
            .btf(btf.as_ref())
            .load(OBJECT)
            .map_err(|e| kernel("loading the BPF object", &e))?;
        let (mut hard, mut hard_btf) = (0usize, 0usize);
        let presence = btf.as_ref().filter(|b| btf_knows_tracepoints(b));
        for p in programs() {
            let full = format!("{}:{}", p.group, p.name);
            let present = match presence {
                Some(b) => btf_has_tracepoint(b, &p.name),
                None => {
                    tracefs.ready().map_err(Error::Tracefs)?;
                    tracefs.has(p.group, &p.name)
                }
            };
            if !present {
                if p.required {
                    return Err(Error::TracepointAbsent(full));
                }
                attached.absent.push(full);
                continue;
            }
            let (via_btf, failed) = load_and_attach(&mut ebpf, &p, &full, btf.as_ref(), tracefs)?;
            if p.attach == Attach::BtfOrPerf {
                hard += 1;
                hard_btf += usize::from(via_btf);
            }
            if let Some(e) = failed {
                attached.notes.push(format!(
                    "{full} runs as a perf event program, which the kernel skips while another \
                     BPF program or a map read runs on the CPU: {e}"
                ));
            }
            attached.tracepoints.push(full);
        }
        attached.hardirq_btf = hard > 0 && hard_btf == hard;
        Ok(Tracer { ebpf, attached })
    }

    /// What was attached.
    pub fn attached(&self) -> &Attached {
        &self.attached
    }

    /// Kernel ids of the loaded programs (for detach checks).
    pub fn program_ids(&self) -> Vec<u32> {
        self.ebpf
            .programs()
            .filter_map(|(_, p)| p.info().ok().map(|i| i.id()))
            .collect()
    }

    /// Each loaded program's name (its tracepoint: `reschedule_entry`)
    /// and descriptor, whose `/proc/self/fdinfo/<fd>` holds the runs the
    /// kernel skipped (`recursion_misses`). The descriptors live as long
    /// as the tracer.
    pub fn program_fds(&self) -> Vec<(&str, RawFd)> {
        self.ebpf
            .programs()
            .filter_map(|(name, p)| Some((name, p.fd().ok()?.as_fd().as_raw_fd())))
            .collect()
    }

    /// Copy every map into `out` (cumulative since attach, per possible CPU).
    pub fn read(&self, out: &mut Counters) -> Result<(), Error> {
        out.clear();
        let hard: PerCpuHashMap<&MapData, IrqKey, Stats> = self.map("HARDIRQ")?;
        for item in hard.iter() {
            let (key, values) = item.map_err(|e| kernel("reading map HARDIRQ", &e))?;
            out.hardirq.push((key, values.to_vec()));
        }
        merge_split_keys(&mut out.hardirq);
        let drops: PerCpuArray<&MapData, u64> = self.map("DROPS")?;
        let values = drops
            .get(&0, 0)
            .map_err(|e| kernel("reading map DROPS", &e))?;
        out.drops = values.to_vec();
        let vectors: PerCpuArray<&MapData, Stats> = self.map("VECTORS")?;
        for v in VECTORS {
            let values = vectors
                .get(&v.id, 0)
                .map_err(|e| kernel("reading map VECTORS", &e))?;
            out.vectors.push((*v, values.to_vec()));
        }
        let soft: PerCpuArray<&MapData, SoftirqStats> = self.map("SOFTIRQS")?;
        for vec in 0..SOFTIRQ_SLOTS {
            let values = soft
                .get(&vec, 0)
                .map_err(|e| kernel("reading map SOFTIRQS", &e))?;
            out.softirqs.push((vec, values.to_vec()));
        }
        Ok(())
    }

    fn map<'a, M>(&'a self, name: &str) -> Result<M, Error>
    where
        M: TryFrom<&'a aya::maps::Map, Error = aya::maps::MapError>,
    {
        let map = self
            .ebpf
            .map(name)
            .ok_or_else(|| Error::Kernel(format!("map {name} missing from the BPF object")))?;
        M::try_from(map).map_err(|e| kernel(&format!("map {name}"), &e))
    }
}

/// Turn on the kernel's run-time accounting of BPF programs
/// (`BPF_ENABLE_STATS`, Linux 5.8): on while the returned descriptor is
/// open, off again when it closes — however the process ends, so nothing
/// needs restoring. The accounting itself costs two clock reads per
/// program run; it is on only when asked for.
pub fn enable_run_stats() -> Result<std::os::fd::OwnedFd, Error> {
    aya::sys::enable_stats(aya::sys::Stats::RunTime)
        .map_err(|e| kernel("enabling BPF run-time statistics (BPF_ENABLE_STATS)", &e))
}

impl Tracer {
    /// Run time and count summed over every loaded program (zero unless
    /// [`enable_run_stats`] is held).
    pub fn run_stats(&self) -> RunStats {
        let mut sum = RunStats::default();
        for (_, p) in self.ebpf.programs() {
            if let Ok(info) = p.info() {
                sum.ns += info.run_time().as_nanos() as u64;
                sum.runs += info.run_count();
            }
        }
        sum
    }
}

/// The maps' content at one instant; index of each `Vec` = CPU id.
#[derive(Debug, Default, Clone)]
pub struct Counters {
    /// Per (IRQ, action name).
    pub hardirq: Vec<(IrqKey, Vec<Stats>)>,
    /// Per x86 system vector (all of [`VECTORS`], zero when not attached).
    pub vectors: Vec<(Vector, Vec<Stats>)>,
    /// Per softirq vector number.
    pub softirqs: Vec<(u32, Vec<SoftirqStats>)>,
    /// Hard IRQ runs not counted per CPU: the (IRQ, action) map was full.
    pub drops: Vec<u64>,
}

impl Counters {
    fn clear(&mut self) {
        self.hardirq.clear();
        self.vectors.clear();
        self.softirqs.clear();
        self.drops.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_is_in_the_object_when_built() {
        if OBJECT.is_empty() {
            eprintln!("irqlab-bpf: skipped: built without clang");
            return;
        }
        let text = String::from_utf8_lossy(OBJECT);
        for p in programs() {
            let perf = format!("tracepoint/{}/{}", p.group, p.name);
            let sections = match p.attach {
                Attach::Raw => vec![format!("raw_tp/{}", p.name)],
                Attach::BtfOrPerf => vec![perf, format!("tp_btf/{}", p.name)],
            };
            for section in sections {
                assert!(text.contains(&section), "{}: no section {section}", p.name);
            }
        }
    }

    #[test]
    fn only_the_hard_irq_programs_may_be_perf_event_programs() {
        // they alone need the action name: from the kernel's struct with
        // BTF, else from the tracepoint's record; every other program runs
        // raw, so the kernel never skips it for another program or a map
        // read (docs/trace.md)
        let perf: Vec<String> = programs()
            .into_iter()
            .filter(|p| p.attach != Attach::Raw)
            .map(|p| p.name)
            .collect();
        assert_eq!(perf, ["irq_handler_exit", "irq_handler_entry"]);
    }

    #[test]
    fn not_built_says_how_to_get_it() {
        let msg = Error::NotBuilt.to_string();
        assert!(
            msg.contains("--features trace") && msg.contains("clang"),
            "{msg}"
        );
    }
}
