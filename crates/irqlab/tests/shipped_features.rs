//! The binary is built with the features its tests run with: a feature
//! only the tests turn on (a dev-dependency's) would make `cargo test`
//! check a program that is not the one shipped. serde_json's
//! `float_roundtrip` changes how compare and recover read values back.

use std::path::Path;

/// The `[dependencies]` section of this crate's manifest.
fn dependencies() -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap_or_default();
    let start = text.find("\n[dependencies]").unwrap_or(text.len());
    let rest = &text[start..];
    let end = rest[1..].find("\n[").map_or(rest.len(), |i| i + 1);
    rest[..end].to_string()
}

#[test]
fn serde_json_parses_floats_exactly_in_the_shipped_binary() {
    let deps = dependencies();
    let line = deps.lines().find(|l| l.starts_with("serde_json"));
    assert!(
        line.is_some_and(|l| l.contains("float_roundtrip")),
        "crates/irqlab/Cargo.toml [dependencies] must give serde_json the \
         float_roundtrip feature (not only [dev-dependencies]): {line:?}"
    );
}
