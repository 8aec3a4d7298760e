//! The strategy cache file (`$XDG_CACHE_HOME/irqlab/strategy`, one line
//! per boot, kernel, root, CPU count and IRQ set), without file I/O: the
//! input is the file (after its first line, which gives the key looked
//! up: boot id, kernel, root, IRQs, tab-separated), parsed by
//! `strategy_cache::parse` as `lookup` and `store` read it, searched by
//! `find` (what `lookup` does), then a decision stored for that key by
//! `with_stored` (the text `store` writes). Must never panic; and a
//! decision just stored for a key a live root can have (`Key::of`: no
//! tab, newline or carriage return, boot id and kernel not empty; an IRQ
//! set is never empty) is the one found in the text written, which keeps
//! every other entry it keeps unchanged.
#![no_main]
use irqlab::sampler::strategy::{Decision, Strategy};
use irqlab::sampler::strategy_cache::{find, parse, with_stored, Key, MAX_AGE_S};
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
    let Ok(entries) = parse(file) else {
        return;
    };
    let Some(key) = key_of(first, usize::from(n)) else {
        return;
    };
    // "now": the newest stamp in the file, or one from the first byte
    let now = entries
        .iter()
        .map(|e| e.stamp_s)
        .max()
        .unwrap_or(u64::from(n) * MAX_AGE_S);
    let _ = find(entries.clone(), &key, now);
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
    let text = with_stored(entries.clone(), &key, &decision, now);
    let Ok(after) = parse(text.as_bytes()) else {
        panic!("the text written does not parse ({} bytes)", text.len());
    };
    assert_eq!(
        find(after.clone(), &key, now),
        Some(decision),
        "the decision just stored is not the one found"
    );
    for e in after.iter().filter(|e| e.key != key) {
        assert!(entries.contains(e), "an entry changed on store: {e:?}");
    }
});
