//! The kernel threads' name cache (`$XDG_CACHE_HOME/irqlab/threads`: boot
//! id and tick, then kthreadd's children with their marks): the input is
//! the file, read by `threads::cache::load`; a cache it gives is stored
//! by `threads::cache::store` and read again. Must never panic, hang or
//! grow without bound; a cache read from a file is the one read back after
//! storing it.
#![no_main]
use irqlab::threads::cache::{load, store};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let path = dir.path().join("threads");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let Some(cache) = load(&path) else {
        return;
    };
    if store(&path, &cache).is_err() {
        return;
    }
    assert_eq!(load(&path), Some(cache), "the cache read back differs");
});
