//! How build.rs links the `irqlab` binary for a cheap start: static (no
//! dynamic loader, no `libc.so.6`/`libm.so.6` to map) when the C library's
//! archives are there, and the functions `crates/irqlab/startup.order`
//! matches together in an output section before the rest of the text.
//! build.rs says what it chose in `IRQLAB_LINKED`; these tests hold the
//! binary to it.

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

/// (name, address, size) of every section of a 64-bit little-endian ELF
/// file.
fn sections(elf: &[u8]) -> Vec<(String, u64, u64)> {
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    let shoff = u64_at(0x28) as usize;
    let (size, count, names) = (u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
    let header = |i: usize| shoff + i * size;
    let strtab = u64_at(header(names) + 0x18) as usize;
    (0..count)
        .map(|i| {
            let h = header(i);
            let at = strtab + u32_at(h);
            let len = elf[at..].iter().position(|&b| b == 0).unwrap();
            let name = String::from_utf8_lossy(&elf[at..at + len]).into_owned();
            (name, u64_at(h + 0x10), u64_at(h + 0x20))
        })
        .collect()
}

/// The functions a start runs (startup.order's patterns) sit in an output
/// section of their own before the rest of the text, a small part of it:
/// a run then faults in a few 64-KiB windows of code instead of some
/// fifty spread over the 7 MB.
#[test]
fn the_startup_functions_lie_together_before_the_rest_of_the_text() {
    if !linked("ordered") {
        visible!(
            "the_startup_functions_lie_together_before_the_rest_of_the_text: SKIPPED: \
             build.rs passed no linker script (no startup.order)"
        );
        return;
    }
    let elf = std::fs::read(binary()).unwrap();
    let all = sections(&elf);
    let find = |n: &str| all.iter().find(|s| s.0 == n).cloned();
    let (_, lo, len) = find(".text.irqlab_startup").expect("no .text.irqlab_startup section");
    let (_, text, text_len) = find(".text").expect("no .text section");
    assert!(lo < text, "the start-up section is not before .text");
    // the patterns with any hash gather every instance of a generic the
    // order file names (sorts, hash tables, parquet's writers), so in a
    // release build the section holds about a third of all code; what a
    // start and a sample touch inside it is checked below
    assert!(
        len > 0 && len < text_len,
        "start-up section of {len} bytes against {text_len} of .text"
    );
    let Ok(nm) = Command::new("nm")
        .arg("--defined-only")
        .arg(binary())
        .output()
    else {
        visible!("the_startup_functions_lie_together_before_the_rest_of_the_text: SKIPPED: no nm");
        return;
    };
    let nm = String::from_utf8_lossy(&nm.stdout).into_owned();
    per_sample_functions_lie_in(&nm, lo, len);
    // the C `main` and the top --batch path, as named in any build
    for wanted in ["main", "6irqlab3cmd3top3run17h", "6irqlab3cmd8dispatch17h"] {
        let at = nm
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let hit = f.len() == 3
                    && "tT".contains(f[1])
                    && (f[2] == wanted || (wanted != "main" && f[2].contains(wanted)));
                hit.then(|| u64::from_str_radix(f[0], 16).unwrap())
            })
            .next()
            .unwrap_or_else(|| panic!("no function {wanted} in the binary"));
        assert!(
            (lo..lo + len).contains(&at),
            "{wanted} at {at:#x}, outside the start-up section {lo:#x}+{len:#x}"
        );
    }
}

/// The per-sample functions startup.order names first (the names before
/// its first pattern with any hash) lie in the start-up section, `lo` +
/// `len`: a sample after a second of other work touches a few pages of
/// code there. Names are compared without their hash (another profile or
/// feature set gives other hashes; the patterns with any hash still
/// gather those functions), each at its lowest address.
fn per_sample_functions_lie_in(nm: &str, lo: u64, len: u64) {
    let stem = |name: &str| -> String {
        match name.rfind("17h") {
            Some(at) if name.len() == at + 20 && name.ends_with('E') => name[..at].to_string(),
            _ => name.to_string(),
        }
    };
    let order = include_str!("../startup.order");
    let first: std::collections::HashSet<String> = order
        .lines()
        .take_while(|l| !l.contains("17h*E"))
        .filter_map(|l| l.strip_prefix("*(.text.")?.split(' ').next())
        .map(stem)
        .collect();
    let mut at = std::collections::HashMap::new();
    for l in nm.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() == 3 && "tT".contains(f[1]) && first.contains(&stem(f[2])) {
            let a = u64::from_str_radix(f[0], 16).unwrap();
            let e = at.entry(stem(f[2])).or_insert(a);
            *e = (*e).min(a);
        }
    }
    assert!(
        at.len() * 2 >= first.len(),
        "only {} of startup.order's {} per-sample functions are in the binary",
        at.len(),
        first.len()
    );
    let outside: Vec<_> = at
        .iter()
        .filter(|(_, a)| !(lo..lo + len).contains(*a))
        .collect();
    assert!(
        outside.is_empty(),
        "per-sample functions outside the start-up section: {outside:?}"
    );
}
