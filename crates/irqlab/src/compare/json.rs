//! `--format json`: the comparison as one JSON document (schema
//! `irqlab.compare/1`). Undefined numbers are `null`, never NaN.

use super::model::{BootLevel, Comparison, MetricReport, Pair};
use crate::stats::describe::ROWS;
use serde_json::{json, Value};
use std::io::Write;

/// JSON schema identifier.
pub const SCHEMA: &str = "irqlab.compare/1";

fn f(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

fn rows(r: Option<[Option<f64>; 8]>) -> Value {
    match r {
        None => Value::Null,
        Some(r) => ROWS
            .iter()
            .zip(r)
            .map(|(k, v)| (k.to_string(), v.map_or(Value::Null, f)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

/// Build the JSON document.
pub fn to_value(c: &Comparison) -> Value {
    let s = &c.settings;
    json!({
        "schema": SCHEMA,
        "baseline": c.baseline_label(),
        "variants": c.labels,
        "settings": {"alpha": s.alpha, "noise_pct": s.noise_pct, "resamples": s.resamples,
                     "seed": s.seed, "confidence": super::model::CONFIDENCE},
        "metrics": c.metrics.iter().map(|m| metric(c, m)).collect::<Vec<_>>(),
        "notes": c.notes,
    })
}

fn metric(c: &Comparison, m: &MetricReport) -> Value {
    let b = c.baseline;
    let mut describe = serde_json::Map::new();
    let mut delta = serde_json::Map::new();
    let mut points = serde_json::Map::new();
    for (i, l) in c.labels.iter().enumerate() {
        describe.insert(l.clone(), rows(m.columns[i].as_ref().map(|d| d.rows())));
        if i != b {
            delta.insert(l.clone(), rows(m.delta_rows(b, i)));
            if m.is_pct() {
                points.insert(l.clone(), rows(m.point_rows(b, i)));
            }
        }
    }
    json!({
        "name": m.name, "unit": m.unit, "direction": m.direction.as_str(),
        "only_in": m.only_in, "describe": describe, "delta_pct": delta,
        "delta_note": super::format::delta_note(c, m),
        "delta_points": if m.is_pct() { Value::Object(points) } else { Value::Null },
        "values": c.labels.iter().zip(&m.values).map(|(l, v)| (l.clone(), json!(v)))
            .collect::<serde_json::Map<_, _>>(),
        "comparisons": m.pairs.iter().map(|p| pair(c, m, p)).collect::<Vec<_>>(),
        "warnings": m.warnings,
    })
}

fn ci(c: &Option<crate::stats::bootstrap::RelCi>) -> Value {
    c.as_ref().map_or(Value::Null, |c| {
        json!({"estimate": f(c.estimate), "lo": f(c.lo), "hi": f(c.hi),
                   "resamples": c.resamples})
    })
}

fn pair(c: &Comparison, m: &MetricReport, p: &Pair) -> Value {
    let t = match &p.outcome {
        Err(why) => {
            return json!({"variant": p.variant, "refused": why, "verdict": Value::Null,
                "missing": p.missing})
        }
        Ok(t) => t,
    };
    let welch = t.welch.as_ref().map_or(
        Value::Null,
        |w| json!({"t": f(w.t), "df": f(w.df), "p": f(w.p)}),
    );
    json!({
        "variant": p.variant, "refused": Value::Null,
        "median_change_pct": ci(&t.median), "mean_change_pct": ci(&t.mean),
        "hodges_lehmann": t.hl.as_ref().map_or(Value::Null, |h| json!({"shift": f(h.shift),
            "lo": f(h.lo), "hi": f(h.hi), "confidence": f(h.confidence)})),
        "mann_whitney": {"u": f(t.mwu.u), "p": f(t.mwu.p), "method": t.mwu.method.as_str()},
        "welch": welch,
        "verdict": t.verdict.as_str(),
        "boot_level": boot(&t.boot_level),
        "missing": false,
        "notes": super::format::pair_notes(c, m, p, t),
        "median_note": t.median_note, "mean_note": t.mean_note,
        "p_floor": t.p_floor.map_or(Value::Null, f),
        "verdict_p": f(t.p_family),
        "detectable_change_pct": t.mde_pct.map_or(Value::Null, f),
        "detectable_change_note": super::format::detectable_note(t),
        "unit_of_replication": {
            "level": t.clusters.level.as_str(),
            "counts": [t.clusters.counts.0, t.clusters.counts.1],
            "welch_p": t.clusters.p.map_or(Value::Null, f),
            "within_pair": t.clusters.within_pair.map(|v| v.as_str()),
        },
        "moves_with": t.duplicates,
    })
}

fn boot(b: &BootLevel) -> Value {
    match b {
        BootLevel::NotApplicable => Value::Null,
        BootLevel::TooFew { base, variant } => json!({"tested": false, "boots": [base, variant]}),
        BootLevel::Tested {
            base,
            variant,
            median_change_pct,
            mwu,
            welch,
        } => json!({
            "tested": true, "boots": [base, variant],
            "median_change_pct": median_change_pct.map_or(Value::Null, f),
            "mann_whitney_p": f(mwu.p),
            "welch_p": welch.as_ref().map_or(Value::Null, |w| f(w.p)),
        }),
    }
}

/// Write the JSON document, indented when `pretty` (else on one line),
/// with a trailing newline.
pub fn write(c: &Comparison, pretty: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if pretty {
        serde_json::to_writer_pretty(&mut *out, &to_value(c))?;
    } else {
        serde_json::to_writer(&mut *out, &to_value(c))?;
    }
    writeln!(out)
}
