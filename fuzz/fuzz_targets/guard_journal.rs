//! The guard's journal (`journal.jsonl`, what `irqlab restore` reads after
//! a crash): `guard::journal::parse` on arbitrary bytes, each entry shown
//! as restore reports it. Must never panic, hang or grow without bound;
//! errors are fine. A journal that loads and ends with its newline, cut
//! anywhere (a crash in the middle of an append), must load too: the
//! entries before the cut, the cut line as the torn tail.
#![no_main]
use irqlab::guard::journal;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, bytes)) = data.split_first() else {
        return;
    };
    let path = Path::new("journal.jsonl");
    let Ok(whole) = journal::parse(path, bytes) else {
        return;
    };
    for e in &whole.entries {
        let _ = e.to_string();
    }
    if !bytes.ends_with(b"\n") {
        return;
    }
    // cut inside the last line: the one the next append would have made
    let start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let line_len = bytes.len() - 1 - start;
    if line_len == 0 {
        return;
    }
    let at = start + 1 + usize::from(cut) % line_len;
    let torn = &bytes[..at];
    let part = match journal::parse(path, torn) {
        Ok(p) => p,
        Err(e) => panic!("a journal cut at byte {at} does not load: {e:#}"),
    };
    assert!(
        whole.entries.starts_with(&part.entries),
        "a cut journal loads other entries"
    );
});
