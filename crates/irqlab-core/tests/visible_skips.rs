//! A test that skips says so where `cargo test` shows it: libtest hides
//! what `println!`/`eprintln!` print from passing tests, so a skip line
//! written with them reads as a plain `ok`. Every skip in this crate's
//! tests goes through `common::corpus_skipped` (the stderr handle).
#![allow(clippy::unwrap_used)]

#[test]
fn corpus_tests_skip_visibly_not_through_print_macros() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("visible_skips.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let l = line.to_ascii_lowercase();
            if (l.contains("println!(") || l.contains("print!(")) && l.contains("skip") {
                bad.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "skips hidden by libtest:\n{}",
        bad.join("\n")
    );
}
