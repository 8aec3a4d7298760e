//! Link the `irqlab` executable for a cheap start, which matters for an
//! observer started once per second by scripts and measured against
//! `mpstat` (BENCHMARKS.md). Only the binaries are affected; the library,
//! tests and benches link as usual.
//!
//! - Non-PIE: the dynamic loader then has no relative relocations to
//!   apply at start (a PIE build has ~16 000, about 0.3 ms and a hundred
//!   copy-on-write page faults per run).
//! - GCC's unwinder linked in (`libgcc_eh.a`) instead of `libgcc_s.so.1`:
//!   one shared library fewer to map and initialise at every start (8
//!   page faults, ~20 000 instructions, the CPUID probes of its
//!   constructor). Rust asks for `-lgcc_s` itself, so the build script
//!   puts first in the binaries' library path a `libgcc_s.so` that is a
//!   linker script naming the static archives, found with `cc
//!   -print-file-name`. Without them (another C compiler, another libc)
//!   the binary links `libgcc_s.so.1` as before.
//! - Static, when the C library's archives are there (`libc.a`, `libm.a`
//!   and the empty `libpthread.a`, `libdl.a`, `librt.a`, `libutil.a` of
//!   glibc ≥ 2.34): no dynamic loader at all, so no `libc.so.6` and
//!   `libm.so.6` to open and map, no symbol lookups, ~25 system calls and
//!   ~25 page faults fewer per start. Rust's `-lc`, `-lm`, … meet the same
//!   kind of linker script as `-lgcc_s`, naming the archives, and
//!   `-static` makes the C compiler use the static start files. irqlab
//!   resolves no host or user names (`--listen` takes an address), so
//!   glibc's NSS modules are never loaded. `IRQLAB_LINK=dynamic` at build
//!   time keeps the dynamic link.
//! - Start-up code first: `crates/irqlab/startup.order` matches the
//!   functions a `top --batch`, `serve` or `--version` run executes
//!   (`tools/startup-order.sh` writes it from callgrind, as linker-script
//!   patterns that survive the hash changes of a rebuild with other
//!   features or toolchain), and a linker script puts them together
//!   before the rest of the text: a run then touches ~12 64-KiB windows
//!   of its 7 MB of code instead of ~48, one page fault each. Patterns
//!   that match nothing only lose their ordering.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let gnu = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "gnu");
    // what was chosen, for tests/startup_link.rs: "static", "ordered"
    let mut chosen = Vec::new();
    if linux {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    if linux && gnu {
        if let Some(dir) = link_dir() {
            if let Some(libgcc) = static_libgcc(&dir) {
                println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
                let dynamic = std::env::var("IRQLAB_LINK").is_ok_and(|v| v == "dynamic");
                if !dynamic && static_libc(&dir, &libgcc).is_some() {
                    println!("cargo:rustc-link-arg-bins=-static");
                    chosen.push("static");
                }
            }
        }
    }
    if linux {
        if let Some(script) = startup_script() {
            println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
            chosen.push("ordered");
        }
    }
    println!("cargo:rustc-env=IRQLAB_LINKED={}", chosen.join(","));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=startup.order");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=IRQLAB_LINK");
}

/// The directory of the linker scripts below (made empty).
fn link_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("OUT_DIR")?).join("static-libgcc");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir)
}

/// Writes `libgcc_s.so` into `dir`, a linker script that names
/// `libgcc_eh.a` and `libgcc.a`, and returns both, or `None` when the C
/// compiler does not know both archives.
fn static_libgcc(dir: &Path) -> Option<[PathBuf; 2]> {
    let eh = archive("libgcc_eh.a")?;
    let gcc = archive("libgcc.a")?;
    script(dir, "gcc_s", &[&eh, &gcc])?;
    Some([eh, gcc])
}

/// Writes `libc.so`, `libm.so`, … into `dir`, linker scripts naming the C
/// library's archives (libc's with libgcc's, which it needs), or `None`
/// (and nothing) unless the C compiler knows every one.
fn static_libc(dir: &Path, libgcc: &[PathBuf; 2]) -> Option<()> {
    let names = ["c", "m", "pthread", "dl", "rt", "util"];
    let found = names
        .iter()
        .map(|n| archive(&format!("lib{n}.a")))
        .collect::<Option<Vec<_>>>()?;
    for (name, path) in names.iter().zip(&found) {
        let mut members = vec![path];
        if *name == "c" {
            members.extend(libgcc);
        }
        script(dir, name, &members)?;
    }
    Some(())
}

/// `dir/lib<name>.so`: a linker script with the archives as one group.
fn script(dir: &Path, name: &str, members: &[&PathBuf]) -> Option<()> {
    let list: Vec<String> = members.iter().map(|p| p.display().to_string()).collect();
    let text = format!("GROUP ( {} )\n", list.join(" "));
    std::fs::write(dir.join(format!("lib{name}.so")), text).ok()
}

/// The absolute path of a file of the C compiler's library, if it has it
/// (and the path needs no quoting in a linker script).
fn archive(name: &str) -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(cc)
        .arg(format!("-print-file-name={name}"))
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    let plain = path
        .to_str()
        .is_some_and(|p| !p.contains(|c: char| c.is_whitespace() || "()\"".contains(c)));
    (out.status.success() && path.is_absolute() && Path::new(&path).is_file() && plain)
        .then_some(path)
}

/// `OUT_DIR/startup.ld`: a linker script that puts the sections matched
/// by `startup.order`'s patterns (one per line) in an output section of
/// their own before `.text` (`INSERT`: the linker's default script stays
/// in force; GNU ld and lld both read it). `None` without the file or
/// with a line that is not one input-section description.
fn startup_script() -> Option<PathBuf> {
    let order = std::fs::read_to_string("startup.order").ok()?;
    let plain = |c: char| c.is_ascii_alphanumeric() || "_.$*:-+ ".contains(c);
    let mut text = String::from("SECTIONS\n{\n  .text.irqlab_startup :\n  {\n");
    for line in order.lines().filter(|l| !l.is_empty()) {
        // `[archive:member](patterns)`, nothing that could end the script
        let (head, rest) = line.split_once('(')?;
        let inner = rest.strip_suffix(')')?;
        if !head.chars().all(plain) || !inner.chars().all(plain) {
            return None;
        }
        text.push_str(&format!("    {line}\n"));
    }
    text.push_str("  }\n}\nINSERT BEFORE .text;\n");
    let path = PathBuf::from(std::env::var_os("OUT_DIR")?).join("startup.ld");
    std::fs::write(&path, text).ok()?;
    Some(path)
}
