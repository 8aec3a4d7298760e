//! Loading result sets for `irqlab compare`: every input format becomes
//! [`VariantData`] (label → metrics → observations in trial order). Owns
//! format detection, label/metric naming and input errors; no statistics.
//! The formats, labels, directions and errors are specified in
//! `docs/compare-input.md`; the readers are `input_bench.rs` and
//! `input_table.rs`.

use crate::direction::Direction;
use crate::natural::natural_cmp;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

use super::input_bench as bench;
use super::input_table as table;

/// One trial's value of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Obs {
    pub value: f64,
    pub boot: Option<String>,
    /// The run the trial belongs to (a bench output directory, a probe
    /// file); `None` when the input does not say (plain numbers, tables).
    pub run: Option<String>,
}

impl Obs {
    /// A trial value with no boot or run information.
    pub fn plain(value: f64) -> Self {
        Obs {
            value,
            boot: None,
            run: None,
        }
    }
}

/// The values of one metric for one variant, in trial order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub metric: String,
    pub unit: Option<String>,
    pub direction: Option<Direction>,
    pub obs: Vec<Obs>,
    /// The input marks it as its workload's headline metric.
    pub headline: bool,
}

impl Series {
    pub fn values(&self) -> Vec<f64> {
        self.obs.iter().map(|o| o.value).collect()
    }
}

/// Everything loaded for one variant label.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VariantData {
    pub label: String,
    pub series: Vec<Series>,
    /// The label came from the data (bench `variant`, CSV `variant` column).
    pub from_data: bool,
    /// What must agree before runs are pooled under one label (bench
    /// plan: workload, trial length; bench and probe environment: root,
    /// kernel, machine); empty when the input does not say.
    pub plan: Vec<(String, String)>,
    /// Some of its runs are probe result sets (one trial each).
    pub probe: bool,
    /// The units and directions its inputs state, with where
    /// (`input_units`).
    pub claims: Vec<super::input_units::Claim>,
    /// Its place in the bench plan it ran in (`input_order`).
    pub plan_rank: Option<super::input_order::PlanRank>,
    /// The bench trials it holds, to find one trial pooled twice.
    pub trials: Vec<TrialSeen>,
}

/// A bench trial as recorded (its [`TrialKey`], and its values: a copy
/// of a run repeats them all, two runs do not) and where it was read
/// (`file:line`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrialSeen {
    pub key: TrialKey,
    pub values: Vec<u64>,
    pub at: String,
}

/// What names a bench trial: boot id, number, start time and measured
/// length (its bits: a copy has the very same number).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TrialKey {
    pub boot: String,
    pub trial: u32,
    pub started: String,
    duration_bits: u64,
}

impl TrialKey {
    pub fn new(boot: &str, trial: u32, started: &str, duration_s: f64) -> Self {
        TrialKey {
            boot: boot.to_string(),
            trial,
            started: started.to_string(),
            duration_bits: duration_s.to_bits(),
        }
    }
}

impl VariantData {
    pub fn new(label: &str, from_data: bool) -> Self {
        VariantData {
            label: label.to_string(),
            series: Vec::new(),
            from_data,
            plan: Vec::new(),
            probe: false,
            claims: Vec::new(),
            plan_rank: None,
            trials: Vec::new(),
        }
    }

    /// Append one observation, creating the metric on first use.
    pub fn push(&mut self, metric: &str, unit: Option<&str>, dir: Option<Direction>, obs: Obs) {
        let idx = match self.series.iter().position(|s| s.metric == metric) {
            Some(i) => i,
            None => {
                self.series.push(Series {
                    metric: metric.to_string(),
                    unit: unit.map(str::to_string),
                    direction: dir,
                    obs: Vec::new(),
                    headline: false,
                });
                self.series.len() - 1
            }
        };
        let s = &mut self.series[idx];
        if s.unit.is_none() {
            s.unit = unit.map(str::to_string);
        }
        if s.direction.is_none() {
            s.direction = dir;
        }
        s.obs.push(obs);
    }

    /// Pool `other`'s observations into this variant.
    pub fn absorb(&mut self, other: VariantData) {
        if self.plan.is_empty() {
            self.plan = other.plan.clone();
        }
        self.probe |= other.probe;
        if self.plan_rank.is_none() {
            self.plan_rank = other.plan_rank.clone();
        }
        for c in other.claims {
            let (unit, source) = (c.unit.as_deref(), c.source);
            self.state(&c.metric, unit, c.direction, || source);
        }
        self.trials.extend(other.trials);
        for s in other.series {
            for o in s.obs {
                self.push(&s.metric, s.unit.as_deref(), s.direction, o);
            }
            if s.headline {
                self.mark_headline(&s.metric);
            }
        }
    }

    /// Mark `metric` as the headline metric of its workload.
    pub fn mark_headline(&mut self, metric: &str) {
        if let Some(s) = self.series.iter_mut().find(|s| s.metric == metric) {
            s.headline = true;
        }
    }
}

/// Options from the command line that affect loading.
#[derive(Debug, Clone)]
pub struct LoadOpts {
    pub metric: Option<String>,
    /// Metrics given `--direction METRIC=…`: the inputs may state other
    /// directions for them.
    pub directed: Vec<String>,
    /// `--allow-copies`: plain inputs with the same values are compared
    /// (with a note), not refused.
    pub allow_copies: bool,
}

/// All variants in argument order, plus non-fatal warnings.
#[derive(Debug, Default)]
pub struct Loaded {
    pub variants: Vec<VariantData>,
    pub warnings: Vec<String>,
    /// `--metric` named the values of at least one input (a plain file or
    /// a directory of per-iteration files); other inputs name their own.
    pub metric_named: bool,
}

/// One bench trial pooled twice into variant `v` (a copy of a run beside
/// it, `A=run A=copy`): its values would count twice and, the copy being
/// taken as another run, make a verdict out of one run. An error naming
/// both places.
fn refuse_pooled_copies(v: &VariantData) -> Result<()> {
    type Key<'a> = (&'a TrialKey, &'a [u64]);
    let mut seen: std::collections::HashMap<Key, &str> = std::collections::HashMap::new();
    for t in &v.trials {
        if let Some(first) = seen.insert((&t.key, &t.values), &t.at) {
            bail!(
                "{}: trial {} of variant {} (boot {}, started {}) is also read from {first}: \
                 the same trial twice in one variant (a copy of a run?) would count twice; \
                 give each run once",
                t.at,
                t.key.trial,
                v.label,
                t.key.boot,
                t.key.started
            );
        }
    }
    Ok(())
}

/// Split `LABEL=PATH` (label without `/`) from a plain path.
pub fn split_spec(spec: &str) -> (Option<String>, PathBuf) {
    match spec.split_once('=') {
        Some((l, p)) if !l.is_empty() && !l.contains('/') && !p.is_empty() => {
            (Some(l.to_string()), PathBuf::from(p))
        }
        _ => (None, PathBuf::from(spec)),
    }
}

/// Why `spec` names no file though it has the `LABEL=PATH` form (a `=`
/// with no `/` before it): the path after `LABEL=` (`a=`) or the label
/// before `=PATH` (`=a.txt`) is empty. A file so named is given with a
/// `/` (`./a=`), which `split_spec` never reads as a label.
pub fn empty_part(spec: &str) -> Option<String> {
    let (label, path) = spec.split_once('=')?;
    if label.contains('/') {
        return None;
    }
    if label.is_empty() {
        return Some(format!(
            "the label before {spec} is empty (give LABEL{spec} to name the variant, or the \
             path alone; ./{spec} is a file named {spec})"
        ));
    }
    if path.is_empty() {
        return Some(format!(
            "the path after the label {spec} is empty (give a file or directory, {spec}. for \
             the current one; ./{spec} is a file named {spec})"
        ));
    }
    None
}

/// One variant found under one argument, before final naming.
pub(super) struct Found {
    pub(super) arg: usize,
    pub(super) path: PathBuf,
    /// `LABEL=` given: variants with the same explicit label are pooled.
    explicit: bool,
    /// The argument yields only this variant.
    single: bool,
    pub(super) data: VariantData,
}

/// Load every positional argument and give every variant a unique label;
/// one file given through two arguments, and copies of a plain input, are
/// refused (`input_same`).
pub fn load_all(specs: &[String], opts: &LoadOpts) -> Result<Loaded> {
    let mut out = Loaded::default();
    let paths: Vec<PathBuf> = specs.iter().map(|s| split_spec(s).1).collect();
    refuse_absent(&paths)?;
    out.warnings.extend(super::input_same::check(&paths)?);
    let mut found = Vec::new();
    for (arg, spec) in specs.iter().enumerate() {
        let (label, path) = split_spec(spec);
        let noted = out.warnings.len();
        let mut vs = load_one(&path, opts, &mut out.warnings, &mut out.metric_named)?;
        vs.retain(|v| v.series.iter().any(|s| !s.obs.is_empty()));
        if vs.is_empty() {
            return Err(no_values(&path, &out.warnings[noted..]));
        }
        if let Some(l) = &label {
            if vs.len() > 1 {
                return Err(super::usage(format!(
                    "{}: {l}= given but the path holds {} variants (a label names one \
                     variant: give the path without it, or one variant's directory)",
                    path.display(),
                    vs.len()
                )));
            }
            vs[0].label = l.clone();
        }
        let single = vs.len() == 1;
        for data in vs {
            found.push(Found {
                arg,
                path: path.clone(),
                explicit: label.is_some(),
                single,
                data,
            });
        }
    }
    let copies = super::input_same::refuse_copied_values(&found, opts.allow_copies)?;
    out.warnings.extend(copies);
    disambiguate(&mut found, &mut out.warnings);
    super::input_runs::arguments_as_runs(&mut found, &mut out.warnings);
    // The input each variant was first found in, beside out.variants.
    let mut first: Vec<PathBuf> = Vec::new();
    for f in found {
        match out.variants.iter().position(|v| v.label == f.data.label) {
            Some(i) => {
                let v = &mut out.variants[i];
                refuse_mixed(
                    (
                        &format!("{}= pools runs", v.label),
                        "give each its own label",
                    ),
                    (&first[i], &v.plan),
                    (&f.path, &f.data.plan),
                    &mut out.warnings,
                )?;
                v.absorb(f.data)
            }
            None => {
                first.push(f.path);
                out.variants.push(f.data);
            }
        }
    }
    super::input_units::check(&out.variants, &opts.directed)?;
    out.variants.iter().try_for_each(refuse_pooled_copies)?;
    super::input_runs::rows_as_runs(&mut out.variants, &mut out.warnings);
    super::input_order::by_plan(&mut out.variants, &mut out.warnings);
    out.warnings
        .extend(out.variants.iter().filter_map(single_probe_run));
    Ok(out)
}

/// The error for an input that holds no value: what its format holds,
/// and the notes reading it gave (its values all missing, its trials
/// skipped), which would otherwise not be shown.
fn no_values(path: &Path, notes: &[String]) -> anyhow::Error {
    let expected = match path.extension().and_then(|e| e.to_str()) {
        _ if path.is_dir() => "one number in each file of the directory",
        Some("jsonl") => "one bench trial a line",
        Some("csv") => "a header line, then rows of numbers",
        Some("json") => {
            "an array of row objects, an object of metric → array of numbers, \
             or a probe result set"
        }
        _ => "one number a line (blank and `#` lines are skipped)",
    };
    let mut e = format!("{}: no values found: expected {expected}", path.display());
    for n in notes {
        e.push_str(&format!("; {n}"));
    }
    anyhow::anyhow!(e)
}

/// An error for the first input that does not exist, before any input
/// is read: opening a FIFO waits for its writer (as `cat` and `diff` do),
/// and a mistyped later path must not wait behind it.
fn refuse_absent(paths: &[PathBuf]) -> Result<()> {
    for p in paths {
        std::fs::metadata(p).with_context(|| format!("{}", p.display()))?;
    }
    Ok(())
}

/// The note for a variant of probe runs that has only one: a probe run is
/// one trial, so nothing about the variant's spread is known.
fn single_probe_run(v: &VariantData) -> Option<String> {
    if !v.probe {
        return None;
    }
    let mut runs = v.series.iter().flat_map(|s| s.obs.iter()).map(|o| &o.run);
    let run = runs.next()?.as_deref()?;
    if !runs.all(|r| r.as_deref() == Some(run)) {
        return None;
    }
    Some(format!(
        "{run}: a probe run is one trial (its per-read median and p99) and variant {} \
         has only this one; give several runs per variant \
         (LABEL=run1.json LABEL=run2.json …) or a directory of runs",
        v.label
    ))
}

/// Runs pooled as one variant must agree on what their inputs record
/// (bench: workload, trial length; both: root, kernel, machine): else a
/// usage error, `{pool} that differ in {fields}: {a} and {b}; {hint}`.
/// Runs pooled by a relative root as typed (older runs) are warned about.
fn refuse_mixed(
    (pool, hint): (&str, &str),
    (a, plan_a): (&Path, &[(String, String)]),
    (b, plan_b): (&Path, &[(String, String)]),
    warns: &mut Vec<String>,
) -> Result<()> {
    if let Some(field) = bench::differing_field(plan_a, plan_b) {
        return Err(super::usage(format!(
            "{pool} that differ in {field}: {} and {}; {hint}",
            a.display(),
            b.display()
        )));
    }
    if let Some(root) = bench::root_as_typed(plan_b) {
        let w = bench::as_typed_warning(pool, root);
        if !warns.contains(&w) {
            warns.push(w);
        }
    }
    Ok(())
}

/// Labels that collide across arguments (and were not given with `LABEL=`
/// on both sides) become the shortest distinguishing suffix of their paths.
fn disambiguate(found: &mut [Found], warns: &mut Vec<String>) {
    let labels: Vec<String> = found.iter().map(|f| f.data.label.clone()).collect();
    let mut done = std::collections::BTreeSet::new();
    for label in &labels {
        if !done.insert(label.clone()) {
            continue;
        }
        let group: Vec<usize> = (0..found.len())
            .filter(|&i| &found[i].data.label == label)
            .collect();
        let args: std::collections::BTreeSet<usize> = group.iter().map(|&i| found[i].arg).collect();
        if args.len() < 2 {
            continue;
        }
        let rename: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&i| !found[i].explicit)
            .collect();
        let explicit = group.len() - rename.len();
        if rename.is_empty() || (rename.len() == 1 && explicit == 0) {
            continue;
        }
        let paths: Vec<&Path> = rename.iter().map(|&i| found[i].path.as_path()).collect();
        let names = suffix_names(&paths, &labels);
        let mut shown = Vec::new();
        for (&i, name) in rename.iter().zip(names) {
            let f = &mut found[i];
            f.data.label = if f.single {
                name
            } else {
                format!("{name}:{label}")
            };
            shown.push(format!("{} ({})", f.data.label, f.path.display()));
        }
        warns.push(format!(
            "variant {label:?} is in several inputs; named by their paths: {} \
             (use LABEL=PATH to choose names)",
            shown.join(", ")
        ));
    }
}

/// Path components, the last one without its extension.
fn components(path: &Path) -> Vec<String> {
    let mut c: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if let (Some(last), true) = (c.last_mut(), path.is_file()) {
        *last = stem_of(Path::new(last.as_str()));
    }
    c
}

/// The shortest path suffixes (in components) that tell `paths` apart and
/// differ from `taken`; `#N` is appended when even full paths collide.
pub fn suffix_names(paths: &[&Path], taken: &[String]) -> Vec<String> {
    let comps: Vec<Vec<String>> = paths.iter().map(|p| components(p)).collect();
    let longest = comps.iter().map(Vec::len).max().unwrap_or(0);
    let suffix = |c: &[String], k: usize| c[c.len().saturating_sub(k)..].join("/");
    for k in 1..=longest {
        let names: Vec<String> = comps.iter().map(|c| suffix(c, k)).collect();
        let unique = names
            .iter()
            .enumerate()
            .all(|(i, n)| !names[..i].contains(n) && !taken.contains(n));
        if unique {
            return names;
        }
    }
    comps
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{}#{}", suffix(c, longest), i + 1))
        .collect()
}

fn load_one(
    path: &Path,
    opts: &LoadOpts,
    warns: &mut Vec<String>,
    named: &mut bool,
) -> Result<Vec<VariantData>> {
    let meta = std::fs::metadata(path).with_context(|| format!("{}", path.display()))?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if meta.is_dir() {
        let runs = bench::find_trials(path)?;
        if runs.is_empty() {
            if let Some(marker) = bench::bench_marker(path)? {
                bail!(
                    "{}: a bench result directory without trials.jsonl ({} found): \
                     no trial has finished there",
                    path.display(),
                    marker.display()
                );
            }
            return per_iteration_dir(path, opts, named, warns).map(|v| vec![v]);
        }
        return bench::load_runs(&runs, &name_of(path), warns);
    }
    match ext {
        "jsonl" => bench::load_runs(&[path.to_path_buf()], &stem_of(path), warns),
        "csv" => table::load_csv(path, &stem_of(path), warns),
        "json" => table::load_json(path, &stem_of(path), warns),
        _ => {
            *named = true;
            plain_file(path, opts, warns).map(|v| vec![v])
        }
    }
}

/// The last path component (for labels), or the path itself.
pub fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The file stem (for labels and metric names).
pub fn stem_of(path: &Path) -> String {
    path.file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Unit implied by a metric name's suffix.
pub fn unit_from_name(name: &str) -> Option<&'static str> {
    [
        ("_ns", "ns"),
        ("_per_sec", "1/s"),
        ("_pct", "%"),
        ("_bytes", "B"),
    ]
    .iter()
    .find(|(suffix, _)| name.ends_with(suffix))
    .map(|(_, unit)| *unit)
}

/// Parse one number; non-finite values are rejected too.
pub fn parse_number(path: &Path, line: usize, text: &str) -> Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => bail!(
            "{}:{line}: expected a number, found {:?}",
            path.display(),
            text.trim()
        ),
    }
}

/// Numbers of a plain file, one a line (blank and `#` lines ignored); the
/// 1-based numbers of lines that mark a value as missing (`NaN`, `-`,
/// `null`) in `missing`.
pub fn read_numbers(path: &Path, missing: &mut Vec<usize>) -> Result<Vec<f64>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    numbers_in(path, &text, missing)
}

/// `text` without a leading byte-order mark (U+FEFF), which editors and
/// spreadsheets on Windows put at the start of a UTF-8 file; the CSV
/// reader skips it too.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// [`read_numbers`] of a file's text.
fn numbers_in(path: &Path, text: &str, missing: &mut Vec<usize>) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for (i, line) in without_bom(text).lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        match super::input_nulls::parse_cell(path, i + 1, t)? {
            Some(v) => out.push(v),
            None => missing.push(i + 1),
        }
    }
    Ok(out)
}

fn plain_file(path: &Path, opts: &LoadOpts, warns: &mut Vec<String>) -> Result<VariantData> {
    let metric = opts.metric.clone().unwrap_or_else(|| "value".to_string());
    let mut v = VariantData::new(&stem_of(path), false);
    let mut missing = Vec::new();
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let values = numbers_in(path, &text, &mut missing)?;
    if values.len() + missing.len() > 1 {
        warns.extend(unterminated_note(path, &text, "value"));
    }
    for value in values {
        v.push(&metric, unit_from_name(&metric), None, Obs::plain(value));
    }
    warns.extend(super::input_nulls::line_notes(path, &metric, &missing));
    Ok(v)
}

/// The note for a file of several values whose last line has no newline:
/// a file still being written (a loop appending one number per
/// iteration) may have had that value cut short, and nothing in the text
/// tells; the value (`what`: "value", or "row" for a CSV table) is read
/// as it stands. A blank or `#` last line holds no value and gets no note.
pub fn unterminated_note(path: &Path, text: &str, what: &str) -> Option<String> {
    if text.is_empty() || text.ends_with('\n') {
        return None;
    }
    let last = text.rsplit('\n').next().unwrap_or_default().trim();
    if last.is_empty() || last.starts_with('#') {
        return None;
    }
    let line = text.bytes().filter(|&b| b == b'\n').count() + 1;
    Some(format!(
        "{}:{line}: the last line has no newline; its {what} {last:?} is read as it stands \
         (if the file was still being written, it may be cut short)",
        path.display()
    ))
}

fn per_iteration_dir(
    dir: &Path,
    opts: &LoadOpts,
    named: &mut bool,
    warns: &mut Vec<String>,
) -> Result<VariantData> {
    let mut files = Vec::new();
    let mut skipped = Skipped::default();
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type()?;
        if !name.starts_with('.') && kind.is_file() {
            files.push((name, entry.path()));
        } else if kind.is_dir() {
            skipped.dirs += 1;
        } else {
            skipped.other += 1;
        }
    }
    if files.is_empty() {
        return Err(no_result_file(dir, &skipped));
    }
    files.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    let metric = opts.metric.clone().unwrap_or_else(|| "value".to_string());
    let mut v = VariantData::new(&name_of(dir), false);
    let mut first_probe: Option<PathBuf> = None;
    for (name, path) in files {
        if name.ends_with(".json") {
            let run = probe_run(&path, warns)?;
            if let Some(first) = &first_probe {
                refuse_mixed(
                    (
                        &format!("{}: pools probe runs", dir.display()),
                        "give each its own label (LABEL=FILE)",
                    ),
                    (first, &v.plan),
                    (&path, &run.plan),
                    warns,
                )?;
            } else {
                first_probe = Some(path.clone());
            }
            v.absorb(run);
            continue;
        }
        let mut missing = Vec::new();
        let nums = read_numbers(&path, &mut missing)?;
        let found = nums.len() + missing.len();
        if found != 1 {
            bail!("{}: expected one number, found {found}", path.display());
        }
        *named = true;
        warns.extend(super::input_nulls::line_notes(&path, &metric, &missing));
        if let Some(&value) = nums.first() {
            v.push(&metric, unit_from_name(&metric), None, Obs::plain(value));
        }
    }
    Ok(v)
}

/// The entries of a directory of runs that are not result files.
#[derive(Default)]
struct Skipped {
    /// Subdirectories (none of them holds a trials.jsonl at any depth).
    dirs: usize,
    /// Hidden files and entries that are not regular files.
    other: usize,
}

/// What compare reads in a directory, for the errors that found none of it.
const DIR_READS: &str =
    "compare reads trials.jsonl at any depth, or else one file per iteration directly in it";

/// The error for a directory with no result file: empty, or holding only
/// what compare skips (subdirectories without trials.jsonl, hidden files).
fn no_result_file(dir: &Path, skipped: &Skipped) -> anyhow::Error {
    if skipped.dirs == 0 && skipped.other == 0 {
        return anyhow::anyhow!("{}: empty directory ({DIR_READS})", dir.display());
    }
    let mut found = Vec::new();
    if skipped.dirs > 0 {
        found.push(count_of(skipped.dirs, "subdirectory", "subdirectories"));
    }
    if skipped.other > 0 {
        found.push(count_of(
            skipped.other,
            "hidden or non-regular file",
            "hidden or non-regular files",
        ));
    }
    anyhow::anyhow!(
        "{}: holds no result file compare reads ({DIR_READS}); found only {}",
        dir.display(),
        found.join(" and ")
    )
}

/// `n` and the noun that goes with it (`1 subdirectory`, `2 subdirectories`).
fn count_of(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One probe run file inside a directory of runs: one trial per metric.
fn probe_run(path: &Path, warns: &mut Vec<String>) -> Result<VariantData> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let doc = super::input_json::read(path, &text)?;
    if !bench::is_probe(&doc) {
        bail!(
            "{}: in a directory of runs, a .json file must be a probe result set",
            path.display()
        );
    }
    bench::load_probe(path, &doc, "", warns)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_a_value_line_without_its_newline_is_noted() {
        let p = Path::new("a.txt");
        let note = unterminated_note(p, "1\n2\n3", "value").unwrap();
        assert!(note.starts_with("a.txt:3: the last line has no newline; its value \"3\""));
        for text in ["", "1\n2\n", "1\n# c", "1\n  "] {
            assert_eq!(unterminated_note(p, text, "value"), None, "{text:?}");
        }
    }

    #[test]
    fn specs_and_numbers() {
        assert_eq!(
            split_spec("tip=a/b"),
            (Some("tip".into()), PathBuf::from("a/b"))
        );
        assert_eq!(split_spec("a/x=y"), (None, PathBuf::from("a/x=y")));
        for spec in ["tip=a/b", "a/x=", "./=x", "plain.txt", "a/x=y"] {
            assert_eq!(empty_part(spec), None, "{spec}");
        }
        let e = empty_part("a=").unwrap();
        assert!(e.starts_with("the path after the label a= is empty"), "{e}");
        let e = empty_part("=x").unwrap();
        assert!(e.starts_with("the label before =x is empty"), "{e}");
        assert!(empty_part("=")
            .unwrap()
            .starts_with("the label before = is"));
        let e = parse_number(Path::new("f.txt"), 3, "abc").unwrap_err();
        assert_eq!(e.to_string(), "f.txt:3: expected a number, found \"abc\"");
        assert!(parse_number(Path::new("f"), 1, "nan").is_err());
        assert_eq!(unit_from_name("softirq_pct"), Some("%"));
    }
}
