//! How build.rs links the `irqlab` binary for a cheap start: static (no
//! dynamic loader, no `libc.so.6`/`libm.so.6` to map) when the C library's
//! archives are there, and the functions of `crates/irqlab/startup.order`
//! together in the text when rustc links with its own lld. build.rs says
//! what it chose in `IRQLAB_LINKED`; these tests hold the binary to it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod common;

use std::path::PathBuf;
use std::process::Command;

/// What build.rs chose ("static", "ordered", comma-separated).
fn linked(what: &str) -> bool {
    env!("IRQLAB_LINKED").split(',').any(|w| w == what)
}

fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("irqlab")
}

/// The program header types of a 64-bit little-endian ELF file.
fn program_headers(elf: &[u8]) -> Vec<u32> {
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(elf[4], 2, "not a 64-bit ELF file");
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count)
        .map(|i| {
            let at = phoff + i * size;
            u32::from_le_bytes(elf[at..at + 4].try_into().unwrap())
        })
        .collect()
}

/// A static binary has no interpreter (PT_INTERP) and no dynamic section
/// (PT_DYNAMIC): exec runs it without ld.so, which spent ~25 system calls
/// and ~25 page faults per start opening and mapping libc and libm.
#[test]
fn the_binary_starts_without_the_dynamic_loader_when_linked_static() {
    if !linked("static") {
        visible!(
            "the_binary_starts_without_the_dynamic_loader_when_linked_static: SKIPPED: \
             build.rs linked dynamically (no static C library archives, or IRQLAB_LINK=dynamic)"
        );
        return;
    }
    let elf = std::fs::read(binary()).unwrap();
    let types = program_headers(&elf);
    const PT_DYNAMIC: u32 = 2;
    const PT_INTERP: u32 = 3;
    assert!(
        !types.contains(&PT_INTERP),
        "the binary names a dynamic loader: {types:?}"
    );
    assert!(
        !types.contains(&PT_DYNAMIC),
        "the binary has a dynamic section: {types:?}"
    );
    // and it runs: parsing, output, exit status
    let out = Command::new(binary()).arg("--version").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("irqlab "));
}

/// The functions a start runs (startup.order) lie together: the span of
/// their addresses in the text is at most twice their total size plus
/// 256 KiB, instead of spread over the 7 MB of code (a page fault per
/// 64-KiB window reached).
#[test]
fn the_startup_functions_lie_together_in_the_text() {
    if !linked("ordered") {
        visible!(
            "the_startup_functions_lie_together_in_the_text: SKIPPED: \
             build.rs passed no ordering (rustc does not link with its own lld here)"
        );
        return;
    }
    let Ok(nm) = Command::new("nm")
        .args(["-S", "--defined-only"])
        .arg(binary())
        .output()
    else {
        visible!("the_startup_functions_lie_together_in_the_text: SKIPPED: no nm");
        return;
    };
    let order =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/startup.order")).unwrap();
    let wanted: std::collections::HashSet<&str> = order.lines().collect();
    let mut spans = Vec::new();
    for line in String::from_utf8_lossy(&nm.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 4 && "tTwW".contains(f[2]) && wanted.contains(f[3]) {
            let at = u64::from_str_radix(f[0], 16).unwrap();
            let size = u64::from_str_radix(f[1], 16).unwrap();
            spans.push((at, at + size));
        }
    }
    // a debug build shares few names with the release build the file
    // was written from; the libc and C-main names are in both
    assert!(
        spans.len() >= 20,
        "only {} of startup.order's functions are in the binary: run tools/startup-order.sh",
        spans.len()
    );
    let lo = spans.iter().map(|s| s.0).min().unwrap();
    let hi = spans.iter().map(|s| s.1).max().unwrap();
    let total: u64 = spans.iter().map(|s| s.1 - s.0).sum();
    assert!(
        hi - lo <= 2 * total + (256 << 10),
        "{} start-up functions ({total} bytes) spread over {} bytes of text",
        spans.len(),
        hi - lo
    );
}
