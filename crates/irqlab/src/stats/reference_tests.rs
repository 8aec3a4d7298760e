//! Tests against the committed scipy/numpy/pandas reference values
//! (`tests/fixtures/compare/reference.json`, made by
//! `tools/reference/compare_reference.py`): at least 6 significant digits.
#![allow(clippy::unwrap_used)]

use super::describe::describe;
use super::hodges_lehmann::hodges_lehmann;
use super::mannwhitney::{mann_whitney, Method};
use super::warnings::{skew_kurt, trend};
use super::welch::welch;
use serde_json::Value;

const REL: f64 = 1e-7;

fn reference() -> Value {
    let text = include_str!("../../tests/fixtures/compare/reference.json");
    serde_json::from_str(text).unwrap()
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("missing {key}"))
}

fn vec(v: &Value, key: &str) -> Vec<f64> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn check(what: &str, got: f64, want: f64) {
    let tol = REL * want.abs().max(1e-12);
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got:e}, want {want:e}"
    );
}

fn check_describe(name: &str, values: &[f64], want: &Value) {
    let d = describe(values).unwrap();
    let rows = d.rows();
    for (i, row) in super::describe::ROWS.iter().enumerate() {
        check(&format!("{name} {row}"), rows[i].unwrap(), num(want, row));
    }
}

#[test]
fn describe_matches_pandas() {
    for set in reference()["datasets"].as_array().unwrap() {
        let name = set["name"].as_str().unwrap();
        check_describe(name, &vec(set, "x"), &set["describe_x"]);
        check_describe(name, &vec(set, "y"), &set["describe_y"]);
    }
}

#[test]
fn tests_match_scipy() {
    for set in reference()["datasets"].as_array().unwrap() {
        let name = set["name"].as_str().unwrap();
        let (x, y) = (vec(set, "x"), vec(set, "y"));
        let m = mann_whitney(&x, &y).unwrap();
        let want = &set["mwu"];
        check(&format!("{name} U"), m.u, num(want, "u"));
        check(&format!("{name} U p"), m.p, num(want, "p"));
        let method = if m.method == Method::Exact {
            "exact"
        } else {
            "asymptotic"
        };
        assert_eq!(method, want["method"].as_str().unwrap(), "{name}");
        let w = welch(&x, &y).unwrap();
        let want = &set["welch"];
        check(&format!("{name} t"), w.t, num(want, "t"));
        check(&format!("{name} df"), w.df, num(want, "df"));
        check(&format!("{name} t p"), w.p, num(want, "p"));
    }
}

#[test]
fn hodges_lehmann_matches_reference() {
    for set in reference()["datasets"].as_array().unwrap() {
        let name = set["name"].as_str().unwrap();
        let hl = hodges_lehmann(&vec(set, "x"), &vec(set, "y"), 0.95).unwrap();
        let want = &set["hl"];
        check(&format!("{name} shift"), hl.shift, num(want, "shift"));
        check(&format!("{name} lo"), hl.lo, num(want, "lo"));
        check(&format!("{name} hi"), hl.hi, num(want, "hi"));
    }
}

#[test]
fn shape_and_trend_match_scipy() {
    for set in reference()["datasets"].as_array().unwrap() {
        let name = set["name"].as_str().unwrap();
        let y = vec(set, "y");
        let (rho, p) = trend(&y).unwrap();
        check(&format!("{name} rho"), rho, num(&set["spearman_y"], "rho"));
        check(&format!("{name} rho p"), p, num(&set["spearman_y"], "p"));
        let (s, k) = skew_kurt(&y).unwrap();
        check(&format!("{name} skew"), s, num(set, "skew_y"));
        check(&format!("{name} kurt"), k, num(set, "kurt_y"));
    }
}
