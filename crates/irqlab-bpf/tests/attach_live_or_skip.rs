//! Live: attach, see events counted, drop, see the programs gone. Needs
//! root, BTF, a mounted tracefs and a built object; prints why it skips.

use irqlab_bpf::{Counters, Error, Tracer};
use std::path::Path;

const TRACEFS: &str = "/sys/kernel/tracing";

fn skip_reason() -> Option<String> {
    if !nix_is_root() {
        return Some("not root".into());
    }
    if !Path::new(TRACEFS).join("events/irq").is_dir() {
        return Some(format!(
            "tracefs not mounted at {TRACEFS} (irqlab's own tests mount it)"
        ));
    }
    None
}

fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

fn present(group: &str, name: &str) -> bool {
    Path::new(TRACEFS)
        .join("events")
        .join(group)
        .join(name)
        .is_dir()
}

fn prog_exists(id: u32) -> bool {
    // /proc/self/fdinfo of our own fds is what holds them; after drop the
    // kernel frees the program: `bpftool prog show id N` fails.
    std::process::Command::new("bpftool")
        .args(["prog", "show", "id", &id.to_string()])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn attach_count_and_detach_on_drop_or_skip() {
    if let Some(why) = skip_reason() {
        eprintln!("irqlab-bpf: attach_count_and_detach_on_drop_or_skip: SKIPPED: {why}");
        return;
    }
    let tracer = match Tracer::attach(present) {
        Err(Error::NotBuilt) => {
            eprintln!("irqlab-bpf: SKIPPED: built without clang");
            return;
        }
        r => r.unwrap(),
    };
    assert!(tracer.attached().tracepoints.len() >= 5);
    let ids = tracer.program_ids();
    assert!(!ids.is_empty());
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut c = Counters::default();
    tracer.read(&mut c).unwrap();
    let timer: u64 = c.softirqs[1].1.iter().map(|s| s.run.count).sum();
    let loc: u64 = c.vectors[0].1.iter().map(|s| s.count).sum();
    assert!(
        timer + loc > 0,
        "no TIMER softirq nor LOC vector in 300 ms: {c:?}"
    );
    let with_bpftool = which_bpftool();
    if with_bpftool {
        assert!(ids.iter().all(|&id| prog_exists(id)));
    }
    drop(tracer);
    if with_bpftool {
        // freeing is deferred to an RCU grace period
        let gone = (0..50).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            ids.iter().all(|&id| !prog_exists(id))
        });
        assert!(gone, "programs {ids:?} still loaded after drop");
    } else {
        eprintln!("irqlab-bpf: bpftool absent: detach not checked here");
    }
}

fn which_bpftool() -> bool {
    std::process::Command::new("bpftool")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}
