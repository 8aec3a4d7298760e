//! `irqlab probe --kernel`'s loader: loads src/bpf/probe.bpf.c, attaches
//! fentry/fexit on `seq_read_iter` and a counting fentry on
//! `show_interrupts` (BPF trampolines, resolved against the running
//! kernel's BTF, which its caller reads and hands in), points them at one thread
//! and reads the cumulative counters. Where the kernel refuses the
//! trampoline programs (EPERM at load on kernels that restrict them), it
//! says why as far as it can tell (a `tp_btf` program of the same type is
//! loaded, never attached, to tell a refusal of trampolines from one of
//! tracing programs) and falls back to the thread's read()/pread64()
//! system calls on the `raw_syscalls` raw tracepoints, which time the
//! whole read syscall and cannot count `show_interrupts()`; the sys_exit
//! program also copies kernel memory on request ([`ReadProbe::peek`]).
//! Like [`crate::loader`] it reads no /proc or /sys file itself except
//! the kernel BTF aya parses.
//!
//! Detaching needs no code path: every attachment is a BPF link fd owned
//! by this process, closed when the [`ReadProbe`] is dropped or the
//! process ends in any way (SIGKILL included). Nothing is pinned.

use crate::loader::Error;
use aya::maps::{Array, MapData};
use aya::programs::fentry::FEntryLinkId;
use aya::programs::{BtfTracePoint, FEntry, FExit, RawTracePoint};
use aya::{Btf, Ebpf, EbpfLoader, Endianness};

#[cfg(not(irqlab_bpf_missing))]
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/probe.bpf.o"));
#[cfg(irqlab_bpf_missing)]
static OBJECT: &[u8] = &[];

/// Which attachment the kernel accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// fentry/fexit through BPF trampolines (BTF of the running kernel).
    Trampoline,
    /// raw_syscalls sys_enter/sys_exit around read()/pread64(), when
    /// tracing programs are refused.
    Syscalls,
}

impl Mechanism {
    /// What the outputs print.
    pub fn describe(self) -> &'static str {
        match self {
            Mechanism::Trampoline => {
                "fentry/fexit on seq_read_iter, fentry on show_interrupts (BPF trampolines)"
            }
            Mechanism::Syscalls => {
                "raw_syscalls sys_enter/sys_exit around the thread's read()/pread64() calls \
                 (raw tracepoints; the read syscall's kernel time, seq_read_iter() included; \
                 show_interrupts() not countable)"
            }
        }
    }
}

/// (program, kernel function, exit side) of each mechanism; the last one
/// counts `show_interrupts()` and is attached only on demand.
const TRAMPOLINE: [(&str, &str, bool); 3] = [
    ("probe_read_exit", "seq_read_iter", true),
    ("probe_read_entry", "seq_read_iter", false),
    ("probe_show_interrupts", "show_interrupts", false),
];
/// (program, raw tracepoint) of the fallback, exit first.
const SYSCALLS: [(&str, &str); 2] = [
    ("probe_sys_exit", "sys_exit"),
    ("probe_sys_enter", "sys_enter"),
];

/// `struct probe_cfg` of probe.bpf.c.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct ProbeCfg {
    pid_tgid: u64,
    nr_read: i64,
    nr_pread: i64,
    peek_addr: u64,
}

// SAFETY: plain integers, no padding.
unsafe impl aya::Pod for ProbeCfg {}

/// Bytes one [`ReadProbe::peek`] copies.
pub const PEEK_LEN: usize = 32;

/// `struct probe_peek` of probe.bpf.c.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct ProbePeek {
    addr: u64,
    ret: i64,
    bytes: [u8; PEEK_LEN],
}

// SAFETY: integers and a byte array, no padding (size asserted below).
unsafe impl aya::Pod for ProbePeek {}

const _: () = assert!(std::mem::size_of::<ProbePeek>() == 16 + PEEK_LEN);

/// `struct probe_stats` of probe.bpf.c: cumulative since attach, for the
/// probed thread only.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadCounts {
    /// Completed `seq_read_iter()` calls.
    pub calls: u64,
    /// Their summed duration, fentry to fexit (ns, CLOCK_MONOTONIC).
    pub total_ns: u64,
    /// `show_interrupts()` calls.
    pub show_calls: u64,
    /// Largest position `show_interrupts()` was called with (0 when none).
    pub show_max_pos: i64,
    /// A `seq_read_iter()` in flight (its start), 0 when none.
    pub start_ns: u64,
    /// Exits without a recorded entry.
    pub unpaired: u64,
}

// SAFETY: plain integers, no padding (size asserted below and in the C).
unsafe impl aya::Pod for ReadCounts {}

const _: () = assert!(std::mem::size_of::<ReadCounts>() == 48);

/// Load the fentry/fexit programs and attach the `seq_read_iter()` pair;
/// on failure, whether the kernel answered EPERM.
fn attach_trampolines(ebpf: &mut Ebpf, btf: &Btf) -> Result<(), (Error, bool)> {
    for (func, target, exit) in TRAMPOLINE {
        let prog = ebpf.program_mut(func).ok_or_else(|| {
            (
                Error::Kernel(format!("program {func} missing from the BPF object")),
                false,
            )
        })?;
        let side = if exit { "fexit" } else { "fentry" };
        let what = |e: &(dyn std::error::Error + 'static)| {
            (kernel(&format!("loading {side}/{target}"), e), is_eperm(e))
        };
        if exit {
            let p: &mut FExit = prog.try_into().map_err(|e| what(&e))?;
            p.load(target, btf).map_err(|e| what(&e))?;
            p.attach().map_err(|e| what(&e))?;
        } else {
            let p: &mut FEntry = prog.try_into().map_err(|e| what(&e))?;
            p.load(target, btf).map_err(|e| what(&e))?;
            if func != TRAMPOLINE[2].0 {
                p.attach().map_err(|e| what(&e))?;
            }
        }
    }
    Ok(())
}

/// Whether `e` or one of its causes is an EPERM from the kernel.
fn is_eperm(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            if io.raw_os_error() == Some(EPERM) {
                return true;
            }
        }
        cur = c.source();
    }
    false
}

/// EPERM on Linux (every architecture).
const EPERM: i32 = 1;

/// Why the trampoline programs were refused, after an EPERM at load:
/// whether a tracing program that needs no trampoline (`tp_btf`, same
/// program type) loads here. docs/probe.md has the experiments behind
/// the wording.
fn why_refused(ebpf: &mut Ebpf, btf: &Btf) -> String {
    let check = (|| -> Result<(), Error> {
        let name = "probe_tp_btf_check";
        let p: &mut BtfTracePoint = ebpf
            .program_mut(name)
            .ok_or_else(|| Error::Kernel(format!("program {name} missing from the BPF object")))?
            .try_into()
            .map_err(|e| kernel(&format!("program {name}"), &e))?;
        let loaded = p
            .load("sys_exit", btf)
            .map_err(|e| kernel("loading tp_btf/sys_exit", &e));
        let _ = p.unload();
        loaded
    })();
    match check {
        Ok(()) => "EPERM at BPF_PROG_LOAD with an empty verifier log, while a tp_btf program \
                   of the same type (tracing, no trampoline) loads: the kernel refuses BPF \
                   trampolines without a word in the verifier log. Not the lockdown LSM \
                   (security/lockdown/lockdown.c hooks no program load; integrity lockdown \
                   removes only bpf_probe_write_user, kernel/trace/bpf_trace.c:\
                   bpf_tracing_func_proto, a verifier error), not a capability \
                   (kernel/bpf/syscall.c:bpf_prog_load checks CAP_BPF/CAP_PERFMON per program \
                   type, which tp_btf passes): a restriction of this kernel build on \
                   trampolines, which attach through ftrace (kernel/bpf/trampoline.c:\
                   register_fentry -> register_ftrace_direct); docs/probe.md"
            .to_string(),
        Err(e) => format!(
            "EPERM at BPF_PROG_LOAD, and a tp_btf program of the same type (tracing, no \
             trampoline) is refused too ({e}): this kernel refuses tracing programs; see \
             docs/probe.md"
        ),
    }
}

/// `what: error: cause: cause …`.
fn kernel(what: &str, e: &dyn std::error::Error) -> Error {
    let mut msg = format!("{what}: {e}");
    let mut src = e.source();
    while let Some(s) = src {
        msg.push_str(&format!(": {s}"));
        src = s.source();
    }
    Error::Kernel(msg)
}

/// The loaded and attached programs; dropping it detaches them.
pub struct ReadProbe {
    ebpf: Ebpf,
    mechanism: Mechanism,
    /// Why fentry/fexit was not used, when it was not.
    refused: Option<String>,
    show_link: Option<FEntryLinkId>,
}

impl ReadProbe {
    /// Load and attach the `seq_read_iter()` pair, counting only the
    /// thread `tid` of process `tgid`: fentry/fexit first, the
    /// raw_syscalls pair when the kernel refuses them (the refusal is
    /// kept, see [`ReadProbe::refused`]). `show_interrupts()` is counted
    /// only between [`ReadProbe::count_shows`] calls.
    /// `syscalls` = the numbers of read() and pread64() on this arch.
    /// `kernel_btf` is the kernel's BTF as its caller read it (`None`:
    /// none to be had): the trampolines need it, and nothing here reads
    /// /sys.
    pub fn attach(
        tgid: u32,
        tid: u32,
        syscalls: (i64, i64),
        kernel_btf: Option<&[u8]>,
    ) -> Result<ReadProbe, Error> {
        if OBJECT.is_empty() {
            return Err(Error::NotBuilt);
        }
        let btf = kernel_btf.map(|b| Btf::parse(b, Endianness::default()));
        // aya's new() reads /sys/kernel/btf/vmlinux itself (0.13, no other
        // constructor): `.btf()` replaces that with the BTF handed in
        let mut ebpf = EbpfLoader::new()
            .btf(btf.as_ref().and_then(|b| b.as_ref().ok()))
            .load(OBJECT)
            .map_err(|e| kernel("loading the probe BPF object", &e))?;
        {
            let mut cfg: Array<&mut MapData, ProbeCfg> =
                Array::try_from(ebpf.map_mut("PROBE_CFG").ok_or_else(|| {
                    Error::Kernel("map PROBE_CFG missing from the BPF object".into())
                })?)
                .map_err(|e| kernel("map PROBE_CFG", &e))?;
            let pid_tgid = (u64::from(tgid) << 32) | u64::from(tid);
            let v = ProbeCfg {
                pid_tgid,
                nr_read: syscalls.0,
                nr_pread: syscalls.1,
                peek_addr: 0,
            };
            cfg.set(0, v, 0)
                .map_err(|e| kernel("writing map PROBE_CFG", &e))?;
        }
        let refused = match btf {
            Some(Ok(btf)) => match attach_trampolines(&mut ebpf, &btf) {
                Ok(()) => {
                    return Ok(ReadProbe {
                        ebpf,
                        mechanism: Mechanism::Trampoline,
                        refused: None,
                        show_link: None,
                    })
                }
                Err((e, false)) => e.to_string(),
                Err((e, true)) => format!("{e}; why: {}", why_refused(&mut ebpf, &btf)),
            },
            Some(Err(e)) => kernel("parsing the kernel BTF", &e).to_string(),
            None => "no kernel BTF (/sys/kernel/btf/vmlinux absent or unreadable)".to_string(),
        };
        // a half-attached trampoline pair must not run beside the kprobes
        let mut ebpf = ebpf;
        for (func, _, exit) in TRAMPOLINE {
            if let Some(prog) = ebpf.program_mut(func) {
                let _ = if exit {
                    <&mut FExit>::try_from(prog).map(|p| p.unload())
                } else {
                    <&mut FEntry>::try_from(prog).map(|p| p.unload())
                };
            }
        }
        for (func, tp) in SYSCALLS {
            let p: &mut RawTracePoint = ebpf
                .program_mut(func)
                .ok_or_else(|| {
                    Error::Kernel(format!("program {func} missing from the BPF object"))
                })?
                .try_into()
                .map_err(|e| kernel(&format!("program {func}"), &e))?;
            p.load()
                .map_err(|e| kernel(&format!("loading {func} (verifier)"), &e))?;
            p.attach(tp)
                .map_err(|e| kernel(&format!("attaching raw tracepoint {tp}"), &e))?;
        }
        Ok(ReadProbe {
            ebpf,
            mechanism: Mechanism::Syscalls,
            refused: Some(refused),
            show_link: None,
        })
    }

    /// Which attachment is in use.
    pub fn mechanism(&self) -> Mechanism {
        self.mechanism
    }

    /// Why fentry/fexit was refused, when the kprobe pair is in use.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// Whether `show_interrupts()` can be counted (fentry only).
    pub fn can_count_shows(&self) -> bool {
        self.mechanism == Mechanism::Trampoline
    }

    /// Start or stop counting `show_interrupts()` (attach / detach its
    /// fentry program: detached, it costs the reads nothing). An error
    /// when [`ReadProbe::can_count_shows`] is false.
    pub fn count_shows(&mut self, on: bool) -> Result<(), Error> {
        let name = TRAMPOLINE[2].0;
        if !self.can_count_shows() {
            return Err(Error::Kernel(
                "show_interrupts() cannot be counted without fentry".into(),
            ));
        }
        let prog = self
            .ebpf
            .program_mut(name)
            .ok_or_else(|| Error::Kernel(format!("program {name} missing from the BPF object")))?;
        let what =
            |e: &dyn std::error::Error| kernel(&format!("show_interrupts counter {name}"), e);
        let p: &mut FEntry = prog.try_into().map_err(|e| what(&e))?;
        match (on, self.show_link.take()) {
            (true, Some(link)) => self.show_link = Some(link),
            (true, None) => self.show_link = Some(p.attach().map_err(|e| what(&e))?),
            (false, None) => {}
            (false, Some(id)) => p.detach(id).map_err(|e| what(&e))?,
        }
        Ok(())
    }

    /// Copy [`PEEK_LEN`] bytes of kernel memory at `addr`
    /// (bpf_probe_read_kernel in the sys_exit program, at the calling
    /// thread's next system call: call it from the probed thread).
    /// `Ok(None)` when the mechanism has no sys_exit program or the copy
    /// failed or did not happen.
    pub fn peek(&mut self, addr: u64) -> Result<Option<[u8; PEEK_LEN]>, Error> {
        if self.mechanism != Mechanism::Syscalls || addr == 0 {
            return Ok(None);
        }
        self.set_peek(addr)?;
        // any system call of this thread: its sys_exit makes the copy
        std::thread::yield_now();
        let got = {
            let map = self.ebpf.map("PROBE_PEEK").ok_or_else(|| {
                Error::Kernel("map PROBE_PEEK missing from the BPF object".into())
            })?;
            let peek: Array<&MapData, ProbePeek> =
                Array::try_from(map).map_err(|e| kernel("map PROBE_PEEK", &e))?;
            peek.get(&0, 0)
                .map_err(|e| kernel("reading map PROBE_PEEK", &e))?
        };
        self.set_peek(0)?;
        Ok((got.addr == addr && got.ret == 0).then_some(got.bytes))
    }

    fn set_peek(&mut self, addr: u64) -> Result<(), Error> {
        let mut cfg: Array<&mut MapData, ProbeCfg> =
            Array::try_from(self.ebpf.map_mut("PROBE_CFG").ok_or_else(|| {
                Error::Kernel("map PROBE_CFG missing from the BPF object".into())
            })?)
            .map_err(|e| kernel("map PROBE_CFG", &e))?;
        let mut v = cfg
            .get(&0, 0)
            .map_err(|e| kernel("reading map PROBE_CFG", &e))?;
        v.peek_addr = addr;
        cfg.set(0, v, 0)
            .map_err(|e| kernel("writing map PROBE_CFG", &e))
    }

    /// The counters now (cumulative since attach).
    pub fn counts(&self) -> Result<ReadCounts, Error> {
        let map = self
            .ebpf
            .map("PROBE_STATS")
            .ok_or_else(|| Error::Kernel("map PROBE_STATS missing from the BPF object".into()))?;
        let stats: Array<&MapData, ReadCounts> =
            Array::try_from(map).map_err(|e| kernel("map PROBE_STATS", &e))?;
        stats
            .get(&0, 0)
            .map_err(|e| kernel("reading map PROBE_STATS", &e))
    }

    /// Kernel ids of the loaded programs (for detach checks).
    pub fn program_ids(&self) -> Vec<u32> {
        self.ebpf
            .programs()
            .filter_map(|(_, p)| p.info().ok().map(|i| i.id()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_probe_program_is_in_the_object_when_built() {
        if OBJECT.is_empty() {
            eprintln!("irqlab-bpf: skipped: built without clang");
            return;
        }
        let text = String::from_utf8_lossy(OBJECT);
        for (func, target, exit) in TRAMPOLINE {
            let side = if exit { "fexit" } else { "fentry" };
            assert!(text.contains(&format!("{side}/{target}")), "{func}");
            assert!(text.contains(func), "{func}");
        }
        for (func, tp) in SYSCALLS {
            assert!(text.contains(&format!("raw_tracepoint/{tp}")), "{func}");
            assert!(text.contains(func), "{func}");
        }
        assert!(text.contains("tp_btf/sys_exit") && text.contains("probe_tp_btf_check"));
        assert!(text.contains("PROBE_PEEK"));
    }

    #[test]
    fn is_eperm_finds_the_errno_in_the_cause_chain() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("BPF_PROG_LOAD failed")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        assert!(is_eperm(&Outer(std::io::Error::from_raw_os_error(1))));
        assert!(!is_eperm(&Outer(std::io::Error::from_raw_os_error(22))));
    }
}
