//! The whole `show --root` path on a tree built from the fuzz input: files
//! (some made FIFOs, directories, sockets or symlinks to /dev/zero by the
//! first byte) under a temp dir, sampled through HostFs and the live
//! sampler (`LiveSampler`: its baseline, then one frame), reported once and
//! as a delta against a second tree, and written in every format. Must never panic, hang or grow without bound; errors are fine.
#![no_main]
use irqlab::export;
use irqlab::filter::Filter;
use irqlab::report;
use irqlab::sampler::strategy::Choice;
use irqlab::sampler::{LivePlan, LiveSampler};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

/// Files of the first sample, then those rewritten for the second.
const FIRST: [&str; 6] = [
    "proc/interrupts",
    "proc/softirqs",
    "proc/stat",
    "proc/irq/24/smp_affinity_list",
    "proc/irq/1/effective_affinity_list",
    "sys/devices/system/cpu/online",
];
const SECOND: [&str; 3] = ["proc/interrupts", "proc/softirqs", "proc/stat"];

fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    if let Some(d) = p.parent() {
        let _ = std::fs::create_dir_all(d);
    }
    let _ = std::fs::remove_file(&p);
    let _ = std::fs::write(&p, bytes);
}

/// Replace `rel` by a special file of kind `k` (0 FIFO, 1 directory,
/// 2 socket, 3 symlink to /dev/zero).
fn special(root: &Path, rel: &str, k: u8) {
    let p = root.join(rel);
    let _ = std::fs::remove_file(&p);
    let _ = match k % 4 {
        0 => nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .map_err(std::io::Error::from),
        1 => std::fs::create_dir(&p),
        2 => std::os::unix::net::UnixListener::bind(&p).map(drop),
        _ => std::os::unix::fs::symlink("/dev/zero", &p),
    };
}

fn open(root: &Path) -> Option<LiveSampler> {
    LiveSampler::open(&LivePlan {
        root: root.to_path_buf(),
        filter: Filter::default(),
        strategy: Choice::ProcInterrupts,
    })
    .ok()
}

fn write_all(r: report::Report) {
    let mut out = Vec::new();
    let _ = export::table::write(&r, &mut out);
    let _ = export::report_json::write(&r, &mut out, false);
    let _ = export::report_json::write(&r, &mut out, true);
    let _ = export::csv::write(&r, &mut out);
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let root = dir.path();
    let mut parts = rest.split(|&b| b == 0xff);
    for rel in FIRST {
        put(root, rel, parts.next().unwrap_or_default());
    }
    // bits 0-2: which of the three stats files is special; bits 3-4: kind
    for (i, rel) in SECOND.iter().enumerate() {
        if flags & (1 << i) != 0 {
            special(root, rel, flags >> 3);
        }
    }
    let filter = Filter::default();
    let Some(mut live) = open(root) else {
        return;
    };
    let mut base = live.latest_frame();
    let mut once = report::counts(base.cur.clone(), &filter);
    report::annotate_affinity(&mut once, &mut base);
    write_all(once);
    for rel in SECOND {
        if let Some(p) = parts.next() {
            put(root, rel, p);
        }
    }
    if let Ok(mut frame) = live.next_frame() {
        let (prev, cur) = (frame.prev, frame.cur);
        let deltas = report::RateOpts {
            deltas: true,
            ..report::RateOpts::default()
        };
        let mut counts = report::rates(prev, cur, frame.filter(), deltas);
        report::annotate_affinity(&mut counts, &mut frame);
        write_all(counts);
        let mut rates = report::rates(prev, cur, frame.filter(), report::RateOpts::default());
        report::annotate_affinity(&mut rates, &mut frame);
        write_all(rates);
    }
});
