//! Formatting shared by the human output formats: numbers to 6 significant
//! digits, signed percents, p-values, the describe grid and the lines of
//! the significance block. Never prints NaN or inf: undefined values
//! become `-`, values beyond the float range [`OVERFLOW`].

use super::model::{BootLevel, Comparison, Level, MetricReport, Pair, Tests};
use crate::direction::Direction;
use crate::stats::describe::ROWS;
use crate::stats::verdict::Verdict;

/// How a value beyond the float range (±1.8e308) is printed.
pub const OVERFLOW: &str = "overflow";

/// A number with 6 significant digits, trailing zeros trimmed.
pub fn num(x: f64) -> String {
    if x.is_infinite() {
        return OVERFLOW.to_string();
    }
    if x.is_nan() {
        return "-".to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..10).contains(&mag) {
        return format!("{x:.5e}");
    }
    let decimals = (5 - mag).clamp(0, 12) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A signed number (`+1.5`, `-2`).
pub fn signed(x: f64) -> String {
    if x >= 0.0 && x.is_finite() {
        format!("+{}", num(x))
    } else {
        num(x)
    }
}

/// A signed percent with two decimals, or two significant digits when
/// below 0.01 % (a change that is not 0 never reads `+0.00%`), or four
/// in scientific notation from `HUGE_PCT` (1e11 %) on (a table column
/// stays narrow: `+1.000e302%`, not 303 digits).
pub fn pct(x: f64) -> String {
    let small = x.abs();
    if small > 0.0 && small < 1e-10 {
        format!("{x:+.1e}%")
    } else if small >= HUGE_PCT && x.is_finite() {
        format!("{x:+.3e}%")
    } else if small > 0.0 && small < 0.01 {
        let decimals = (1 - small.log10().floor() as i32).clamp(3, 11) as usize;
        format!("{x:+.decimals$}%")
    } else if x.is_finite() {
        format!("{x:+.2}%")
    } else if x.is_infinite() {
        OVERFLOW.to_string()
    } else {
        "-".to_string()
    }
}

/// A change in percentage points with three decimals (`+1.500`), in
/// scientific notation from `HUGE_PCT` on, [`OVERFLOW`] beyond the float
/// range (the difference of two values near ±1.8e308 %).
pub fn points(x: f64) -> String {
    if x.is_infinite() {
        OVERFLOW.to_string()
    } else if x.abs() >= HUGE_PCT {
        format!("{x:+.3e}")
    } else {
        format!("{x:+.3}")
    }
}

/// A size in percent with `decimals` decimals (`12.50`), in scientific
/// notation from `HUGE_PCT` on (`1.000e302`, not 303 digits): a
/// coefficient of variation, a smallest detectable change.
pub fn magnitude(x: f64, decimals: usize) -> String {
    if x.abs() >= HUGE_PCT && x.is_finite() {
        format!("{x:.3e}")
    } else {
        format!("{x:.decimals$}")
    }
}

/// From this many percent on, [`pct`] writes a change in scientific
/// notation (a billion-fold change and beyond).
const HUGE_PCT: f64 = 1e11;

/// A p-value: 4 decimals, scientific below 1e-4, `< 1e-300` when it
/// underflows (a printed p is never 0).
pub fn p(x: f64) -> String {
    if x < 1e-300 {
        "< 1e-300".to_string()
    } else if x < 1e-4 {
        format!("{x:.1e}")
    } else {
        format!("{x:.4}")
    }
}

/// Optional value through a formatter, `-` when absent.
pub fn opt(x: Option<f64>, f: fn(f64) -> String) -> String {
    x.map_or_else(|| "-".to_string(), f)
}

/// "name (unit, higher is better)".
pub fn title(m: &MetricReport) -> String {
    let unit = m
        .unit
        .as_deref()
        .map(|u| format!("{u}, "))
        .unwrap_or_default();
    let dir = match m.direction {
        Direction::None => "better direction unknown".to_string(),
        d => format!("{} is better", d.as_str()),
    };
    format!("{} ({unit}{dir})", m.name)
}

/// The settings line printed above the tables.
pub fn settings_line(c: &Comparison) -> String {
    let s = &c.settings;
    format!(
        "baseline {}; alpha {}, noise ±{}%, {} resamples, seed {}",
        c.baseline_label(),
        s.alpha,
        s.noise_pct,
        s.resamples,
        s.seed
    )
}

/// The describe grid (header row first) for the baseline and `others`.
pub fn grid(c: &Comparison, m: &MetricReport, others: &[usize]) -> Vec<Vec<String>> {
    let b = c.baseline;
    let mut head = vec![String::new(), c.labels[b].clone()];
    for &i in others {
        head.push(c.labels[i].clone());
        head.push("delta".to_string());
        if m.is_pct() {
            head.push("points".to_string());
        }
    }
    let mut rows = vec![head];
    for (r, name) in ROWS.iter().enumerate() {
        let cell = |i: usize| m.columns[i].as_ref().and_then(|d| d.rows()[r]);
        let mut row = vec![name.to_string(), opt(cell(b), num)];
        for &i in others {
            row.push(opt(cell(i), num));
            row.push(opt(m.delta_rows(b, i).and_then(|d| d[r]), pct));
            if m.is_pct() {
                row.push(opt(m.point_rows(b, i).and_then(|d| d[r]), points));
            }
        }
        rows.push(row);
    }
    rows
}

/// Why delta cells of the describe grid are `-` although both values
/// exist: the rows whose baseline value is 0, where a relative change is
/// undefined (`None` when there are none). Said once per metric, in every
/// format that prints the grid, and in JSON as the metric's `delta_note`.
pub fn delta_note(c: &Comparison, m: &MetricReport) -> Option<String> {
    let cell = |i: usize, r: usize| m.columns[i].as_ref().and_then(|d| d.rows()[r]);
    let others = || (0..c.labels.len()).filter(|&i| i != c.baseline);
    let zero: Vec<&str> = ROWS
        .iter()
        .enumerate()
        .filter(|&(r, _)| cell(c.baseline, r) == Some(0.0))
        .filter(|&(r, _)| others().any(|i| cell(i, r).is_some()))
        .map(|(_, name)| *name)
        .collect();
    if zero.is_empty() {
        return None;
    }
    Some(format!(
        "delta \"-\" in row{} {}: the baseline's value is 0, so a relative change is undefined",
        if zero.len() == 1 { "" } else { "s" },
        zero.join(", ")
    ))
}

/// Align a grid: first column left, others right, two spaces apart.
pub fn render_grid(rows: &[Vec<String>]) -> Vec<String> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(c, s)| match c {
                    0 => format!("{s:<w$}", w = width[0]),
                    _ => format!("{s:>w$}", w = width[c]),
                })
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

/// ` (confidence 0.968)` when an interval's achieved confidence is not
/// the nominal 95 %, else nothing.
pub fn achieved(conf: f64) -> String {
    if (conf - crate::compare::model::CONFIDENCE).abs() < 5e-4 {
        String::new()
    } else {
        format!(" (confidence {conf:.3})")
    }
}

/// Interval `[lo, hi]` through a formatter.
pub fn interval(lo: f64, hi: f64, f: fn(f64) -> String) -> String {
    format!("[{}, {}]", f(lo), f(hi))
}

/// What does not fit in a float when [`Tests::unrepresentable`]: the
/// Hodges–Lehmann shift itself, or only its interval (the shift is shown).
fn unrepresentable_note(t: &Tests) -> String {
    let what = match &t.hl {
        Some(h) if h.shift.is_finite() => {
            "the interval of the Hodges–Lehmann shift does not fit in a 64-bit float \
             (the shift itself does and is shown)"
        }
        _ => "the Hodges–Lehmann shift does not fit in a 64-bit float",
    };
    format!("{what} (values of opposite signs near ±1.8e308); no verdict is given")
}

/// Why a tested pair has no verdict although it may have moved, for every
/// format: the p floor of tiny samples, a verdict withheld because
/// between-run (or between-boot) variation is unseen, or one the cluster
/// level or the family of metrics did not confirm. Empty when nothing
/// needs saying.
pub fn pair_notes(c: &Comparison, m: &MetricReport, pair: &Pair, t: &Tests) -> Vec<String> {
    let mut out = Vec::new();
    if t.unrepresentable() {
        out.push(unrepresentable_note(t));
    }
    if let Some(floor) = t.p_floor {
        let nv = c
            .labels
            .iter()
            .position(|l| l == &pair.variant)
            .map_or(0, |i| m.values[i].len());
        out.push(format!(
            "with {} vs {nv} values the smallest possible p is {}; no verdict can be reached",
            m.values[c.baseline].len(),
            p(floor)
        ));
    }
    let level = t.clusters.level.as_str();
    let single = single_cluster(c, pair, t);
    if let Some(v) = t.clusters.within_pair {
        let within = match t.clusters.counts {
            (1, 1) => format!("this {level} pair"),
            _ => format!("these {level}s"),
        };
        out.push(format!(
            "{} within {within}; {single}, so between-{level} \
             variation is unseen and no verdict is given (interleave the variants \
             in one bench, or repeat the {level}s)",
            v.as_str()
        ));
    } else if t.clusters.level != Level::Trial && t.clusters.counts.0.min(t.clusters.counts.1) < 2 {
        out.push(format!(
            "{single}: between-{level} variation is unseen; no verdict can be reached"
        ));
    }
    if let Some(cp) = t.clusters.p {
        if cp >= c.settings.alpha && t.mwu.p < c.settings.alpha {
            out.push(format!(
                "not significant at the {level} level ({} vs {} {level}s, Welch p {})",
                t.clusters.counts.0,
                t.clusters.counts.1,
                p(cp)
            ));
        }
    }
    if t.corrected_away() {
        out.push(format!(
            "not significant after the false-discovery-rate correction over \
             the variant's metrics (adjusted p {}; before it: {}, p {})",
            p(t.p_family),
            t.verdict_uncorrected.as_str(),
            p(t.p_raw)
        ));
    }
    out
}

/// "one run a side", or "one run of B (3 of A)" when only one side of the
/// pair has a single run (or boot).
pub fn single_cluster(c: &Comparison, pair: &Pair, t: &Tests) -> String {
    let level = t.clusters.level.as_str();
    let (base, var) = (c.baseline_label(), &pair.variant);
    match t.clusters.counts {
        (1, n) if n > 1 => format!("one {level} of {base} ({n} of {var})"),
        (n, 1) if n > 1 => format!("one {level} of {var} ({n} of {base})"),
        _ => format!("one {level} a side"),
    }
}

/// "name (variant): Δ [CI] verdict" of a pair with a verdict.
pub fn changed_line(m: &MetricReport, pair: &Pair) -> Option<String> {
    let t = pair.outcome.as_ref().ok()?;
    (t.verdict != Verdict::NoChange).then(|| {
        format!(
            "{} ({}): {} {}",
            m.name,
            pair.variant,
            headline(t),
            t.verdict.as_str()
        )
    })
}

/// "name (variant): Δ [CI] ~, regressed before correction (p …,
/// adjusted p …)" of a pair the family correction took a verdict from.
pub fn corrected_line(m: &MetricReport, pair: &Pair) -> Option<String> {
    let t = pair.outcome.as_ref().ok()?;
    t.corrected_away().then(|| {
        format!(
            "{} ({}): {} ~, {} before correction (p {}, adjusted p {})",
            m.name,
            pair.variant,
            headline(t),
            t.verdict_uncorrected.as_str(),
            p(t.p_raw),
            p(t.p_family)
        )
    })
}

/// Heading of the pairs that lose their verdict to the family correction.
pub const CORRECTED_HEADING: &str = "No significant change after correction:";

/// The verdict word of a pair for tables: the verdict, `~ (why)` when a
/// note explains the lack of one, `missing: …` or `not tested: …`.
pub fn verdict_cell(c: &Comparison, m: &MetricReport, pair: &Pair) -> String {
    match &pair.outcome {
        Err(why) if pair.missing => why.clone(),
        Err(why) => format!("not tested: {why}"),
        Ok(t) => {
            let notes = pair_notes(c, m, pair, t);
            match notes.first() {
                Some(n) if t.verdict == Verdict::NoChange => {
                    format!("~ ({n})")
                }
                _ => t.verdict.as_str().to_string(),
            }
        }
    }
}

/// The smallest detectable change of a tested pair, as words.
pub fn mde(t: &Tests) -> String {
    match t.mde_pct {
        Some(d) => format!("±{}%", magnitude(d, 2)),
        None if t.no_verdict_possible() => "none (no verdict possible)".to_string(),
        None => "undefined (baseline mean 0, or near 0 for its spread)".to_string(),
    }
}

/// What a pair without a verdict could have detected: "a change smaller
/// than ±X% could not be detected with these runs" (the smallest
/// detectable change), or that no change could; `None` for a pair with a
/// verdict, or when that change is undefined (baseline mean 0).
pub fn detectable_note(t: &Tests) -> Option<String> {
    if t.verdict != Verdict::NoChange {
        return None;
    }
    match t.mde_pct {
        Some(d) => Some(format!(
            "a change smaller than ±{}% could not be detected with these runs",
            magnitude(d, 2)
        )),
        None if t.no_verdict_possible() => {
            Some("no change of any size could be detected with these runs".to_string())
        }
        None => None,
    }
}

/// The headline change of a tested pair: Δmedian with its interval, or the
/// Hodges–Lehmann shift when the relative change is undefined (baseline
/// median 0), as the verdict is taken.
pub fn headline(t: &Tests) -> String {
    match t.median.as_ref() {
        Some(ci) => format!("{} {}", pct(ci.estimate), interval(ci.lo, ci.hi, pct)),
        None => t.hl.as_ref().map_or("-".into(), |h| {
            format!("{} {}", signed(h.shift), interval(h.lo, h.hi, signed))
        }),
    }
}

/// One row per metric and variant (header first): metric, variant, the
/// headline change, Mann–Whitney p and the verdict (or why not tested).
pub fn verdict_rows(c: &Comparison) -> Vec<Vec<String>> {
    let mut rows = vec![["metric", "variant", "change [95 % CI]", "p", "verdict"]
        .map(String::from)
        .to_vec()];
    for m in &c.metrics {
        for pair in &m.pairs {
            let (change, pv) = match &pair.outcome {
                Ok(t) => (headline(t), p(t.mwu.p)),
                Err(_) => ("-".into(), "-".into()),
            };
            let verdict = verdict_cell(c, m, pair);
            rows.push(vec![
                m.name.clone(),
                pair.variant.clone(),
                change,
                pv,
                verdict,
            ]);
        }
    }
    rows
}

/// The significance block for one pair (first line: "B vs A: verdict").
pub fn sig_lines(c: &Comparison, m: &MetricReport, pair: &Pair) -> Vec<String> {
    let head = format!("{} vs {}", pair.variant, c.baseline_label());
    let t = match &pair.outcome {
        Err(why) => return vec![format!("{head}: {why}")],
        Ok(t) => t,
    };
    let unit = m
        .unit
        .as_deref()
        .map(|u| format!(" {u}"))
        .unwrap_or_default();
    let resamples = c.settings.resamples;
    let rel =
        |name: &str, ci: &Option<crate::stats::bootstrap::RelCi>, why: &Option<String>| match ci {
            Some(ci) => format!(
                "  {name} {} {}{}",
                pct(ci.estimate),
                interval(ci.lo, ci.hi, pct),
                if ci.resamples < resamples {
                    format!(" ({} resamples)", ci.resamples)
                } else {
                    String::new()
                }
            ),
            None => format!("  {name} - ({})", why.as_deref().unwrap_or("undefined")),
        };
    let mut out = vec![
        format!("{head}: {}", t.verdict.as_str()),
        rel("Δmedian", &t.median, &t.median_note),
        rel("Δmean  ", &t.mean, &t.mean_note),
        match &t.hl {
            Some(hl) => format!(
                "  HL shift {}{unit} {}{}",
                signed(hl.shift),
                interval(hl.lo, hl.hi, signed),
                achieved(hl.confidence)
            ),
            None => "  HL shift -".to_string(),
        },
        format!(
            "  Mann-Whitney U {}, p {} ({})",
            num(t.mwu.u),
            p(t.mwu.p),
            t.mwu.method.as_str()
        ),
    ];
    out.push(match &t.welch {
        Some(w) => format!("  Welch t {:+.3}, df {:.1}, p {}", w.t, w.df, p(w.p)),
        None => "  Welch t undefined (zero variance)".to_string(),
    });
    if t.p_family != t.mwu.p {
        out.push(format!(
            "  verdict p {} ({}{})",
            p(t.p_family),
            match t.clusters.p {
                Some(cp) => format!(
                    "{} level: Welch p {} on {} vs {} means; ",
                    t.clusters.level.as_str(),
                    p(cp),
                    t.clusters.counts.0,
                    t.clusters.counts.1
                ),
                None => String::new(),
            },
            "false discovery rate over the variant's metrics"
        ));
    }
    if !t.duplicates.is_empty() {
        out.push(format!(
            "  moves with {} (counted once)",
            t.duplicates.join(", ")
        ));
    }
    out.push(format!("  smallest detectable change {}", mde(t)));
    for n in pair_notes(c, m, pair, t)
        .into_iter()
        .chain(detectable_note(t))
    {
        out.push(format!("  note: {n}"));
    }
    if let Some(line) = boot_line(&t.boot_level, c.baseline_label(), &pair.variant) {
        out.push(line);
    }
    out
}

fn boot_line(b: &BootLevel, base: &str, var: &str) -> Option<String> {
    match b {
        BootLevel::NotApplicable => None,
        BootLevel::TooFew {
            base: nb,
            variant: nv,
        } => Some(format!(
            "  boot level: too few boots ({base} {nb}, {var} {nv}); trial level only"
        )),
        BootLevel::Tested {
            base: nb,
            variant: nv,
            median_change_pct,
            mwu,
            welch,
        } => {
            // Welch's t is undefined when no boot differs from another on its side
            let welch = welch
                .as_ref()
                .map_or("- (no spread between boots)".to_string(), |w| p(w.p));
            Some(format!(
                "  boot level ({nb} vs {nv}): Δmedian {}, U p {}, Welch p {welch}",
                opt(*median_change_pct, pct),
                p(mwu.p)
            ))
        }
    }
}

/// Word-wrap `line` to `width` columns, continuation lines indented.
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    if line.chars().count() <= width {
        return vec![line.to_string()];
    }
    let lead = line.len() - line.trim_start().len();
    let indent = " ".repeat(lead + 4);
    let mut out = Vec::new();
    let mut cur = line[..lead].to_string();
    for word in line.trim_start().split(' ') {
        let sep = if cur.trim().is_empty() { "" } else { " " };
        let next = format!("{cur}{sep}{word}");
        if next.chars().count() > width && !cur.trim().is_empty() {
            out.push(cur);
            cur = format!("{indent}{word}");
        } else {
            cur = next;
        }
    }
    out.push(cur);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(num(119_777.11), "119777");
        assert_eq!(num(710.067_547), "710.068");
        assert_eq!(num(20.0), "20");
        assert_eq!(num(3.2), "3.2");
        assert_eq!(num(f64::NAN), "-");
        assert_eq!(pct(2.0409), "+2.04%");
        assert_eq!(pct(0.0), "+0.00%");
        assert_eq!(pct(0.003_04), "+0.0030%");
        assert_eq!(pct(-0.009_94), "-0.0099%");
        assert_eq!(pct(0.000_012), "+0.000012%");
        assert_eq!(pct(3e-12), "+3.0e-12%");
        assert_eq!(pct(99_999_999_999.0), "+99999999999.00%");
        assert_eq!(pct(1e302), "+1.000e302%");
        assert_eq!(pct(-2.5e11), "-2.500e11%");
        assert_eq!(pct(f64::INFINITY), "overflow");
        assert_eq!(num(f64::NEG_INFINITY), "overflow");
        assert_eq!(signed(f64::INFINITY), "overflow");
        assert_eq!(points(1.5), "+1.500");
        assert_eq!(points(-0.25), "-0.250");
        // found by fuzz/fuzz_targets/compare_decide.rs: "-inf" in the
        // points column of a % metric near -1.8e308, and 309 digits
        assert_eq!(points(f64::NEG_INFINITY), "overflow");
        assert_eq!(points(-1.797_693_134_862_315_7e308), "-1.798e308");
        assert_eq!(magnitude(22.64, 1), "22.6");
        assert_eq!(magnitude(99_999_999_999.0, 2), "99999999999.00");
        assert_eq!(magnitude(1.2e300, 1), "1.200e300");
        assert_eq!(p(0.00001), "1.0e-5");
        assert_eq!(p(0.0), "< 1e-300");
        assert_eq!(achieved(0.6667), " (confidence 0.667)");
        assert_eq!(achieved(0.95), "");
        let w = wrap(&format!("  {}", "word ".repeat(40)), 72);
        assert!(w.iter().all(|l| l.chars().count() <= 72));
        assert!(w[0].starts_with("  word") && w[1].starts_with("      word"));
    }

    #[test]
    fn a_huge_cv_is_written_in_scientific_notation() {
        let w = crate::compare::model::series_warnings("a", &[1e150, -1e150, 1.0], 3);
        let cv = w.iter().find(|l| l.contains("high variation")).unwrap();
        assert!(cv.contains("(CV 3.000e152 % > 5 %)"), "{cv}");
    }

    #[test]
    fn points_beyond_the_float_range_are_overflow_in_the_grid() {
        // found by fuzz/fuzz_targets/compare_decide.rs: "-inf" in the
        // points column of a % metric whose values are near ±1.8e308
        use crate::compare::input::{Loaded, Obs, VariantData};
        let side = |label: &str, v: f64| {
            let mut d = VariantData::new(label, false);
            for _ in 0..3 {
                d.push("busy", Some("%"), Some(Direction::Lower), Obs::plain(v));
            }
            d
        };
        let loaded = Loaded {
            variants: vec![side("a", 1.7e308), side("b", -1.7e308)],
            ..Loaded::default()
        };
        let s = crate::compare::model::Settings {
            alpha: 0.05,
            noise_pct: 1.0,
            resamples: 100,
            seed: 1,
            directions: crate::compare::DirectionRules::default(),
        };
        let c = crate::compare::model::build(loaded, None, s).unwrap();
        let g = grid(&c, &c.metrics[0], &[1]);
        assert_eq!(g[0][4], "points");
        assert_eq!(g[2][0], "mean");
        assert_eq!(g[2][4], OVERFLOW, "{g:?}");
        assert!(
            g.iter().flatten().all(|cell| !cell.contains("inf")),
            "{g:?}"
        );
    }
}
