//! Result sets given more than once. One file read through two arguments
//! (`a.txt a.txt`, `x=a.txt y=./a.txt`, a directory and a run inside it)
//! is a usage error: its runs would be compared with themselves, or
//! counted twice in one variant. Two variants of plain inputs (number
//! files, tables, per-iteration directories) with the same values, in the
//! same order, are refused too: copies of one run, whatever their bytes.
//! Two other files (bench, probe runs) with the same bytes get a note:
//! they are probably copies of one run. Specified in
//! `docs/compare-input.md` ("Inputs given twice").

use super::input::{Found, VariantData};
use super::input_bench as bench;
use crate::natural::natural_cmp;
use anyhow::{bail, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One run as an argument reads it.
struct Run {
    /// The argument it was found under (index into the paths).
    arg: usize,
    /// The run as the user can find it: the argument, or the file found
    /// under a directory argument.
    shown: PathBuf,
    /// The files it is read from, canonical.
    files: Vec<PathBuf>,
}

/// Refuse a file read through two arguments (or twice through one); the
/// notes for runs whose files hold the same bytes. `paths` are the
/// arguments' paths, without `LABEL=`.
pub fn check(paths: &[PathBuf]) -> Result<Vec<String>> {
    let runs: Vec<Run> = paths
        .iter()
        .enumerate()
        .flat_map(|(arg, p)| runs_of(arg, p))
        .collect();
    refuse_shared(paths, &runs)?;
    Ok(copies(&runs))
}

/// Refuse an output file (`--plot`, `--html`: `(flag, path)`) that is a
/// file the inputs at `paths` are read from, or a bench run's record
/// beside its `trials.jsonl` (`trials.csv`, `plan.json`, `env.json`,
/// `summary.json`, `env-resume-*.json`): writing it would replace what was
/// measured. Two outputs naming one file (not a device or FIFO) are
/// refused too: the second would replace the first. A usage error (exit 2), before anything is
/// read or written.
pub fn refuse_outputs_over_inputs(paths: &[PathBuf], outputs: &[(&str, &Path)]) -> Result<()> {
    // no output file: the inputs' directories are not walked for nothing
    if outputs.is_empty() {
        return Ok(());
    }
    let runs: Vec<Run> = paths
        .iter()
        .enumerate()
        .flat_map(|(arg, p)| runs_of(arg, p))
        .collect();
    let mut seen: Vec<(&str, PathBuf)> = Vec::new();
    for &(flag, out) in outputs {
        let Some(target) = output_target(out) else {
            continue;
        };
        // a device or FIFO is written in place, and may take both
        let device = target.exists() && !target.is_file();
        if let Some((first, _)) = seen.iter().find(|(_, t)| *t == target && !device) {
            return Err(super::usage(format!(
                "{flag} {}: {first} writes the same file; give each output its own file",
                out.display()
            )));
        }
        let read = runs.iter().find(|r| {
            r.files
                .iter()
                .any(|f| *f == target || beside_trials(f, &target))
        });
        if let Some(r) = read {
            return Err(super::usage(format!(
                "{flag} {}: the comparison reads it (input {}): writing the report there \
                 would replace what was measured; choose another file",
                out.display(),
                paths[r.arg].display()
            )));
        }
        seen.push((flag, target));
    }
    Ok(())
}

/// The canonical path an output at `out` writes: the file a symlink names
/// (the writer follows it), else the canonical directory and the name.
fn output_target(out: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(out) {
        return Some(c);
    }
    let name = out.file_name()?;
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::canonicalize(dir).ok().map(|d| d.join(name))
}

/// Is `target` (canonical) a bench record kept beside the canonical
/// `trials` file: a `trials.csv` or a `.json` in its directory or the run
/// directory above it?
fn beside_trials(trials: &Path, target: &Path) -> bool {
    if trials
        .file_name()
        .is_none_or(|n| n != crate::results::TRIALS_FILE)
    {
        return false;
    }
    let Some(dir) = trials.parent() else {
        return false;
    };
    let name = target.file_name().map(|n| n.to_string_lossy());
    let record = name.is_some_and(|n| n == crate::results::TRIALS_CSV || n.ends_with(".json"));
    record && (target.parent() == Some(dir) || target.parent() == dir.parent())
}

/// The runs argument `arg` reads at `path`: a file is one run; a directory
/// its bench `trials.jsonl` files, else its probe run files (`.json`) one
/// by one and its other per-iteration files as one run. What cannot be
/// read yields nothing here: loading reports it.
fn runs_of(arg: usize, path: &Path) -> Vec<Run> {
    let run = |shown: PathBuf, files: Vec<PathBuf>| Run { arg, shown, files };
    if !path.is_dir() {
        return canonical(&with_twin(path))
            .map(|files| run(path.to_path_buf(), files))
            .into_iter()
            .collect();
    }
    let trials = bench::find_trials(path).unwrap_or_default();
    if !trials.is_empty() {
        return trials
            .into_iter()
            .filter_map(|t| canonical(std::slice::from_ref(&t)).map(|f| run(t, f)))
            .collect();
    }
    let (probes, iterations): (Vec<PathBuf>, Vec<PathBuf>) = iteration_files(path)
        .into_iter()
        .partition(|p| p.extension().is_some_and(|e| e == "json"));
    let mut runs: Vec<Run> = probes
        .into_iter()
        .filter_map(|p| canonical(std::slice::from_ref(&p)).map(|f| run(p, f)))
        .collect();
    if let Some(files) = canonical(&iterations).filter(|f| !f.is_empty()) {
        runs.push(run(path.to_path_buf(), files));
    }
    runs
}

/// A file, and for a bench `trials.csv` the `trials.jsonl` beside it: the
/// two hold the same trials.
fn with_twin(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    if path
        .file_name()
        .is_some_and(|n| n == crate::results::TRIALS_CSV)
    {
        let twin = path.with_file_name(crate::results::TRIALS_FILE);
        if twin.is_file() {
            files.push(twin);
        }
    }
    files
}

/// The non-hidden regular files directly in `dir`, in natural order (the
/// files a directory of per-iteration files is read from).
fn iteration_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| !name.starts_with('.'))
        .collect();
    files.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    files.into_iter().map(|(_, p)| p).collect()
}

/// Every path canonical, or `None` when one cannot be resolved.
fn canonical(paths: &[PathBuf]) -> Option<Vec<PathBuf>> {
    paths
        .iter()
        .map(|p| std::fs::canonicalize(p).ok())
        .collect()
}

/// A usage error for the first file two runs read (exit 2), naming the
/// file and the arguments it was given through.
fn refuse_shared(paths: &[PathBuf], runs: &[Run]) -> Result<()> {
    let mut seen: HashMap<&Path, usize> = HashMap::new();
    for r in runs {
        for f in &r.files {
            let Some(&first) = seen.get(f.as_path()) else {
                seen.insert(f, r.arg);
                continue;
            };
            let (a, b) = (&paths[first], &paths[r.arg]);
            let (ca, cb) = (std::fs::canonicalize(a).ok(), std::fs::canonicalize(b).ok());
            let what = match (ca.filter(|c| Some(c) == cb.as_ref()), a == b) {
                (Some(_), true) => format!("{} is given twice", a.display()),
                (Some(c), false) => format!(
                    "{} and {} are the same {} ({})",
                    a.display(),
                    b.display(),
                    if a.is_dir() { "directory" } else { "file" },
                    c.display()
                ),
                (None, _) => format!(
                    "{} is read through both {} and {}",
                    f.display(),
                    a.display(),
                    b.display()
                ),
            };
            return Err(super::usage(format!(
                "{what}: its runs would be compared with themselves, or counted \
                 twice in one variant; give each result set once"
            )));
        }
    }
    Ok(())
}

/// A note for every run whose files hold the same bytes as an earlier
/// run's: `{a} and {b} hold the same bytes: …`. Only runs of equal size
/// are read.
fn copies(runs: &[Run]) -> Vec<String> {
    let mut by_size: HashMap<(usize, u64), Vec<&Run>> = HashMap::new();
    for r in runs {
        if let Some(size) = size_of(&r.files).filter(|&s| s > 0) {
            by_size.entry((r.files.len(), size)).or_default().push(r);
        }
    }
    let mut groups: Vec<Vec<&Run>> = by_size.into_values().filter(|g| g.len() > 1).collect();
    groups.sort_by_key(|g| (g[0].arg, g[0].shown.clone()));
    let mut notes = Vec::new();
    for group in groups {
        let mut kept: Vec<(&Run, Vec<Vec<u8>>)> = Vec::new();
        for r in group {
            let Some(bytes) = contents(&r.files) else {
                continue;
            };
            match kept.iter().find(|(_, b)| *b == bytes) {
                Some((first, _)) => notes.push(format!(
                    "{} and {} hold the same bytes: probably copies of one run, whose \
                     values are then compared with themselves or counted twice",
                    first.shown.display(),
                    r.shown.display()
                )),
                None => kept.push((r, bytes)),
            }
        }
    }
    notes
}

/// The total size of `files`, `None` when one cannot be read.
fn size_of(files: &[PathBuf]) -> Option<u64> {
    files
        .iter()
        .map(|f| std::fs::metadata(f).ok().map(|m| m.len()))
        .sum()
}

/// The bytes of every file, `None` when one cannot be read.
fn contents(files: &[PathBuf]) -> Option<Vec<Vec<u8>>> {
    files.iter().map(|f| std::fs::read(f).ok()).collect()
}

/// Refuse two variants of plain inputs (no bench or probe trial: number
/// files, tables, per-iteration directories) that hold the same values of
/// the same metrics in the same order: a copy of a run (its bytes, or its
/// rows under another name or with other line ends) compared with the run
/// gives "no change" whatever was measured, and pooled with it counts each
/// value twice. Bench and probe copies are found by their trials
/// (`input`); a probe run without a start time is not checked either. A
/// variant whose values are all one number is not checked: two runs of a
/// counter that stays at zero hold the same values without being copies.
/// An error naming both files (and variants); with `allow`
/// (`--allow-copies`: runs of a few discrete values may match by chance)
/// a note for each such pair, and a usage error when there is none (the
/// flag would be ignored).
pub(super) fn refuse_copied_values(found: &[Found], allow: bool) -> Result<Vec<String>> {
    let mut seen: Vec<(&Found, Values)> = Vec::new();
    let mut notes = Vec::new();
    for f in found.iter().filter(|f| checked(&f.data)) {
        let values = values_of(&f.data);
        if let Some((first, _)) = seen.iter().find(|(_, v)| *v == values) {
            let n: usize = values.iter().map(|(_, v)| v.len()).sum();
            let what = format!(
                "{} and {} hold the same values ({n} of {}, in the same order)",
                shown(first, found),
                shown(f, found),
                metrics_of(&values)
            );
            if !allow {
                bail!(
                    "{what}: copies of one run (the same bytes, or the same rows under \
                     another name) would be compared with themselves, giving no change \
                     whatever was measured, or counted twice in one variant; give each \
                     run once (--allow-copies compares them all the same)"
                );
            }
            notes.push(format!("{what}: compared as given (--allow-copies)"));
        }
        seen.push((f, values));
    }
    if allow && notes.is_empty() {
        return Err(super::usage(
            "--allow-copies: no two plain inputs hold the same values (the flag \
             would be ignored)",
        ));
    }
    Ok(notes)
}

/// A variant's values: each metric's, as [`values_of`] gives them.
type Values<'a> = Vec<(&'a str, Vec<u64>)>;

/// Is `v` from a plain input (not a bench or probe run), with at least
/// two different values?
fn checked(v: &VariantData) -> bool {
    let mut values = v.series.iter().flat_map(|s| s.obs.iter().map(|o| o.value));
    let first = values.next();
    !v.probe && v.trials.is_empty() && first.is_some_and(|a| values.any(|b| b != a))
}

/// Each metric's values (their bits, `-0` as `0`) in trial order, by metric.
fn values_of(v: &VariantData) -> Values<'_> {
    let mut out: Values = v
        .series
        .iter()
        .map(|s| {
            let bits = s.obs.iter().map(|o| (o.value + 0.0).to_bits()).collect();
            (s.metric.as_str(), bits)
        })
        .collect();
    out.sort_unstable();
    out
}

/// `metric x`, or `3 metrics`.
fn metrics_of(values: &Values) -> String {
    match values.as_slice() {
        [(m, _)] => format!("metric {m}"),
        _ => format!("{} metrics", values.len()),
    }
}

/// The input a variant was found in, and the variant when that input
/// holds several.
fn shown(f: &Found, found: &[Found]) -> String {
    let shared = found.iter().filter(|g| g.arg == f.arg).count() > 1;
    if shared {
        format!("{} (variant {})", f.path.display(), f.data.label)
    } else {
        f.path.display().to_string()
    }
}
