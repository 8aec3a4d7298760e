//! `irqlab compare` in a scratch directory (a success, an error, a usage
//! error), and the number files its tests feed it.

use serde_json::Value;
use std::fs;
use std::path::Path;

/// `irqlab compare ARGS` run in `dir`.
pub fn compare(dir: &Path, args: &[&str]) -> std::process::Output {
    super::irqlab()
        .current_dir(dir)
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}

pub fn ok(dir: &Path, args: &[&str]) -> String {
    let out = compare(dir, args);
    let (o, e) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(out.status.success(), "{args:?}\n{o}\n{e}");
    o
}

pub fn err(dir: &Path, args: &[&str]) -> String {
    let out = compare(dir, args);
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(e.starts_with("irqlab:"), "{e}");
    e
}

/// `irqlab compare ARGS` in `dir` refused as a usage error: exit 2,
/// nothing on stdout, and a stderr (returned) that contains every one of
/// `want`.
pub fn usage(dir: &Path, args: &[&str], want: &[&str]) -> String {
    let out = compare(dir, args);
    let e = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {e}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout on a usage error");
    for w in want {
        assert!(e.contains(w), "{args:?}: no {w:?} in {e}");
    }
    e
}

pub fn json(dir: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json", "--resamples", "500"]);
    serde_json::from_str(&ok(dir, &a)).unwrap()
}

pub fn numbers(path: &Path, values: impl IntoIterator<Item = f64>) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text: String = values.into_iter().map(|v| format!("{v}\n")).collect();
    fs::write(path, text).unwrap();
}

/// Deterministic spread: `n` values around `centre`.
pub fn spread(centre: f64, step: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| centre + step * (((i * 7) % n) as f64 - n as f64 / 2.0))
        .collect()
}
