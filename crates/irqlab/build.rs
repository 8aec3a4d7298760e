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
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let gnu = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "gnu");
    if linux {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    if linux && gnu {
        if let Some(dir) = static_libgcc_dir() {
            println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
}

/// A directory holding `libgcc_s.so`, a linker script that names
/// `libgcc_eh.a` and `libgcc.a`, or `None` when the C compiler does not
/// know both archives.
fn static_libgcc_dir() -> Option<PathBuf> {
    let eh = archive("libgcc_eh.a")?;
    let gcc = archive("libgcc.a")?;
    let dir = PathBuf::from(std::env::var_os("OUT_DIR")?).join("static-libgcc");
    std::fs::create_dir_all(&dir).ok()?;
    let script = format!("GROUP ( {} {} )\n", eh.display(), gcc.display());
    std::fs::write(dir.join("libgcc_s.so"), script).ok()?;
    Some(dir)
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
