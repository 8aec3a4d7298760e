//! How build.rs links the `irqlab` binary for a cheap start: static (no
//! dynamic loader, no `libc.so.6`/`libm.so.6` to map) when the C library's
//! archives are there, and the functions `crates/irqlab/startup.order`
//! matches together in an output section before the rest of the text,
//! most of its patterns matching functions of the binary.
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
    let stem = |name: &str| stem(name).to_string();
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

/// A function name without its legacy mangling's hash (`…17h<16 hex
/// digits>E`), which changes with the profile, features and toolchain;
/// any other name as it is.
fn stem(name: &str) -> &str {
    match name.rfind("17h") {
        Some(at) if name.len() == at + 20 && name.ends_with('E') => &name[..at],
        _ => name,
    }
}

/// The names of `nm --defined-only`'s functions in `nm` (text symbols
/// and indirect functions) that lie in `lo` + `len`, each also without
/// its hash ([`stem`]).
fn functions_in(nm: &str, lo: u64, len: u64) -> std::collections::HashSet<&str> {
    nm.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let hit = f.len() == 3
                && "tTWi".contains(f[1])
                && (lo..lo + len).contains(&u64::from_str_radix(f[0], 16).ok()?);
            hit.then_some(f[2])
        })
        .flat_map(|n| [n, stem(n)])
        .collect()
}

/// The global functions of each member of the C library's archive (`cc
/// -print-file-name=libc.a`, `$CC` as build.rs asks it), from `nm -A`;
/// `None` when either cannot say.
fn libc_members() -> Option<std::collections::HashMap<String, Vec<String>>> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(cc)
        .arg("-print-file-name=libc.a")
        .output()
        .ok()?;
    let libc = String::from_utf8(out.stdout).ok()?.trim().to_string();
    let out = Command::new("nm")
        .args(["-A", "--defined-only", &libc])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut members: std::collections::HashMap<String, Vec<String>> = Default::default();
    // `/…/libc.a:member.o:0000000000000000 T name`
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 3 || !"TWi".contains(f[1]) {
            continue;
        }
        if let Some(member) = f[0].rsplit(':').nth(1) {
            members
                .entry(member.to_string())
                .or_default()
                .push(f[2].to_string());
        }
    }
    Some(members)
}

/// Whether the startup.order `pattern` places a function of the binary
/// in the start-up section, whose functions are `placed`
/// ([`functions_in`]): `*(.text.NAME …)` when a function NAME lies
/// there, any hash standing for the pattern's (an exact-hash pattern and
/// its any-hash twin name one function: the order file was written from
/// a release build, whose hashes a test build does not share);
/// `*libc.a:MEMBER(…)` when one of the member's functions (`libc`) does.
fn places_a_function(
    pattern: &str,
    placed: &std::collections::HashSet<&str>,
    libc: Option<&std::collections::HashMap<String, Vec<String>>>,
) -> bool {
    if let Some(rest) = pattern.strip_prefix("*libc.a:") {
        let member = rest.split('(').next().unwrap_or_default();
        let funcs = libc.and_then(|m| m.get(member));
        return funcs.is_some_and(|f| f.iter().any(|n| placed.contains(n.as_str())));
    }
    let Some(name) = pattern
        .strip_prefix("*(.text.")
        .and_then(|r| r.split(' ').next())
    else {
        return false;
    };
    match name.strip_suffix("17h*E") {
        Some(glob) => placed.contains(glob),
        None => placed.contains(stem(name)),
    }
}

/// Most of startup.order's patterns place a function of this binary in
/// the start-up section. An order file whose names the binary lacks
/// (emptied, written for other code, another mangling, another C
/// library) links without a word and only loses the ordering, while the
/// test above checks only the names it finds. Measured on the order
/// file as committed, in the debug build the tests run linked static:
/// 1542 of the 1584 patterns place one (the misses: a few generics and
/// clones a debug build names or inlines otherwise, libm's functions,
/// which are not in sections of their own, two libc members); 1400 (88 %)
/// when the C library is not linked static or its archive cannot be
/// read, and the 144 `*libc.a:` patterns then count as placing nothing.
/// The rule, three in four (1188), leaves room for code that changes
/// after the order file was written (a renamed function loses its place
/// until tools/startup-order.sh runs again) and fails long before an
/// order file that matches nothing: with every pattern after the
/// per-sample cluster renamed, 305 place one.
#[test]
fn most_of_startup_order_s_patterns_place_a_function_in_the_startup_section() {
    const TEST: &str = "most_of_startup_order_s_patterns_place_a_function_in_the_startup_section";
    if !linked("ordered") {
        visible!("{TEST}: SKIPPED: build.rs passed no linker script (no startup.order)");
        return;
    }
    let elf = std::fs::read(binary()).unwrap();
    let (_, lo, len) = sections(&elf)
        .into_iter()
        .find(|s| s.0 == ".text.irqlab_startup")
        .expect("no .text.irqlab_startup section");
    let Ok(nm) = Command::new("nm")
        .arg("--defined-only")
        .arg(binary())
        .output()
    else {
        visible!("{TEST}: SKIPPED: no nm");
        return;
    };
    let nm = String::from_utf8_lossy(&nm.stdout).into_owned();
    let placed = functions_in(&nm, lo, len);
    let libc = linked("static").then(libc_members).flatten();
    if linked("static") && libc.is_none() {
        visible!("{TEST}: the C library's archive could not be read: its members' patterns count as placing nothing");
    }
    let patterns: Vec<&str> = include_str!("../startup.order")
        .lines()
        .filter(|l| !l.is_empty())
        .collect();
    let missed: Vec<&str> = patterns
        .iter()
        .copied()
        .filter(|p| !places_a_function(p, &placed, libc.as_ref()))
        .collect();
    let held = patterns.len() - missed.len();
    assert!(
        held * 4 >= patterns.len() * 3,
        "only {held} of startup.order's {} patterns place a function of the binary in the start-up section (three in four wanted; run tools/startup-order.sh on a release build): {:?} …",
        patterns.len(),
        &missed[..missed.len().min(5)]
    );
}
