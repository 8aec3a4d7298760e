//! The strategy cache file (`$XDG_CACHE_HOME/irqlab/strategy`, one line
//! per boot, kernel, root, CPU count and IRQ set): the input is the file
//! (after its first line, which gives the key looked up: boot id, kernel,
//! root, IRQs, tab-separated), read by `strategy_cache::lookup`, then a
//! decision stored for that key by `strategy_cache::store` (which rewrites
//! the file from the lines it keeps). Must never panic, hang or grow
//! without bound; and a decision just stored for a key a live root can
//! have (`Key::of`: no tab, newline or carriage return, boot id and
//! kernel not empty; an IRQ set is never empty) is the one looked up.
#![no_main]
use irqlab::sampler::strategy::{Decision, Strategy};
use irqlab::sampler::strategy_cache::{lookup, store, Key};
use libfuzzer_sys::fuzz_target;

fn key_of(line: &[u8], cpus: usize) -> Option<Key> {
    let line = std::str::from_utf8(line).ok()?;
    let mut f = line.split('\t');
    let key = Key {
        boot_id: f.next()?.to_string(),
        kernel: f.next()?.to_string(),
        root: f.next()?.to_string(),
        cpus,
        irqs: f.next()?.to_string(),
    };
    let plain = |s: &str| !s.contains(['\t', '\n', '\r']);
    let ok = plain(&key.boot_id)
        && plain(&key.kernel)
        && plain(&key.root)
        && plain(&key.irqs)
        && !key.boot_id.is_empty()
        && !key.kernel.is_empty()
        && !key.irqs.is_empty();
    ok.then_some(key)
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let (first, file) = match rest.iter().position(|&b| b == b'\n') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let Some(key) = key_of(first, usize::from(n)) else {
        return;
    };
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let path = dir.path().join("irqlab").join("strategy");
    let _ = std::fs::create_dir_all(dir.path().join("irqlab"));
    if std::fs::write(&path, file).is_err() {
        return;
    }
    let _ = lookup(&path, &key);
    let (full_ns, targeted_ns) = (u64::from(n) * 1000, 5000);
    let decision = Decision {
        strategy: if targeted_ns < full_ns {
            Strategy::PerCpuCount
        } else {
            Strategy::ProcInterrupts
        },
        full_ns,
        targeted_ns,
        rounds: 20,
    };
    if store(&path, &key, &decision).is_err() {
        return;
    }
    assert_eq!(
        lookup(&path, &key),
        Some(decision),
        "the decision just stored is not the one looked up"
    );
});
