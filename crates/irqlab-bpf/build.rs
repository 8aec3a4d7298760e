//! Compiles src/bpf/irqlab.bpf.c with clang (`-target bpf -O2 -g`) into
//! `$OUT_DIR/irqlab.bpf.o`. Without clang the build still succeeds: an
//! empty object is written, `cfg(irqlab_bpf_missing)` is set and the loader
//! says at run time how to get a real one (so `cargo clippy --workspace`
//! works on machines without clang). `IRQLAB_BPF_REQUIRE=1` turns a
//! missing or failing clang into a build error (CI sets it). Without the
//! `loader` feature (irqlab without `trace`) nothing is compiled.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(irqlab_bpf_missing)");
    println!("cargo:rerun-if-changed=src/bpf/irqlab.bpf.c");
    println!("cargo:rerun-if-changed=src/bpf/irqlab.h");
    println!("cargo:rerun-if-changed=src/bpf/probe.bpf.c");
    println!("cargo:rerun-if-env-changed=CLANG");
    println!("cargo:rerun-if-env-changed=IRQLAB_BPF_REQUIRE");
    if env::var_os("CARGO_FEATURE_LOADER").is_none() {
        // only the map layouts are built: no object needed
        return;
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default()).join("irqlab.bpf.o");
    let clang = env::var("CLANG").unwrap_or_else(|_| "clang".into());
    probe_object(&clang, &out.with_file_name("probe.bpf.o"));
    let status = Command::new(&clang)
        .args(["-target", "bpf", "-O2", "-g", "-Wall", "-Werror", "-c"])
        .arg("src/bpf/irqlab.bpf.c")
        .arg("-o")
        .arg(&out)
        .status();
    let why = match status {
        Ok(s) if s.success() => return,
        Ok(s) => format!("`{clang} -target bpf` failed ({s})"),
        Err(e) => format!("`{clang}` could not be run ({e})"),
    };
    if env::var_os("IRQLAB_BPF_REQUIRE").is_some_and(|v| v == "1") {
        panic!("irqlab-bpf: {why}; install clang (tools/install-trace-deps.sh)");
    }
    println!("cargo:warning=irqlab-bpf: {why}; building without BPF objects (install clang: tools/install-trace-deps.sh)");
    println!("cargo:rustc-cfg=irqlab_bpf_missing");
    if let Err(e) = std::fs::write(&out, b"") {
        panic!("irqlab-bpf: writing {}: {e}", out.display());
    }
}

/// `probe --kernel`'s object (src/bpf/probe.bpf.c → `$OUT_DIR/probe.bpf.o`);
/// empty when clang is missing or fails (src/probe_loader.rs then says
/// so), a build error with `IRQLAB_BPF_REQUIRE=1`.
fn probe_object(clang: &str, out: &std::path::Path) {
    let status = Command::new(clang)
        .args(["-target", "bpf", "-O2", "-g", "-Wall", "-Werror", "-c"])
        .arg("src/bpf/probe.bpf.c")
        .arg("-o")
        .arg(out)
        .status();
    if status.as_ref().is_ok_and(|s| s.success()) {
        return;
    }
    if env::var_os("IRQLAB_BPF_REQUIRE").is_some_and(|v| v == "1") {
        panic!("irqlab-bpf: `{clang} -target bpf` failed on src/bpf/probe.bpf.c ({status:?})");
    }
    println!("cargo:warning=irqlab-bpf: src/bpf/probe.bpf.c not compiled ({status:?}); `probe --kernel` will say so");
    if let Err(e) = std::fs::write(out, b"") {
        panic!("irqlab-bpf: writing {}: {e}", out.display());
    }
}
