//! Link the `irqlab` executable as non-PIE: the dynamic loader then has no
//! relative relocations to apply at start (a PIE build has ~16 000, about
//! 0.3 ms and a hundred copy-on-write page faults per run), which matters
//! for an observer started once per second by scripts and measured against
//! `mpstat` (BENCHMARKS.md). Only the binaries are affected; the library,
//! tests and benches link as usual.
fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
