//! The row filter of a replayed `record` run: the flags', with the CPUs
//! the run recorded (`schema::RunStart`) when the flags name none, and
//! what replay says of it on stderr: the filter the run was recorded
//! with, and flags that select CPUs the recording does not hold.

use crate::cmd::args::FilterArgs;
use crate::export::plural;
use crate::filter::warnings::{listed_of, snapshot_warnings, softirqs_only_warning, ListedCpus};
use crate::filter::Filter;
use crate::record::reader::RecordedSample;
use crate::record::schema::RunStart;
use irqlab_core::{CpuList, Snapshot};

/// The start mark of the run `steps` begin (in its first sample's shape;
/// absent in recordings made before runs were marked).
pub fn run_start(steps: &[RecordedSample]) -> Option<&RunStart> {
    steps.first()?.shape.as_ref()?.run.as_ref()
}

/// The row filter the run was recorded with, for stderr: `recorded with
/// --cpus 1`, `recorded without a row filter`, or not known.
pub fn recorded_line(steps: &[RecordedSample]) -> String {
    match run_start(steps) {
        Some(r) => r.describe(),
        None => "recorded by an irqlab that did not keep its row filter (not known)".into(),
    }
}

/// The CPUs the run recorded, as a `--cpus` list (`None`: every CPU, or
/// not known).
pub fn recorded_cpus(steps: &[RecordedSample]) -> Option<Vec<u32>> {
    run_start(steps).and_then(RunStart::selected_cpus)
}

/// The filter a run is replayed with: `flags`, with the run's recorded
/// `--cpus` when `flags` select no CPUs, so that its lines are those
/// `top --cpus` showed (the first CPU-time line sums the recorded CPUs,
/// `sel`), not the whole machine's beside a subset.
pub fn replay_filter(flags: &Filter, steps: &[RecordedSample]) -> Filter {
    let mut f = flags.clone();
    if f.cpus.is_none() {
        f.cpus = recorded_cpus(steps);
    }
    f
}

/// What the filter flags ask of a replayed run that it does not hold:
/// `--cpus` CPUs not in the recording (it holds the CPUs its files list
/// at `snap`, the run's first sample) and an `--irq` that keeps no row
/// (`rows`: the filter of the rows as read), one line each.
pub fn warnings(flags: &FilterArgs, snap: &Snapshot, rows: &Filter) -> Vec<String> {
    let mut out = Vec::new();
    let list = flags
        .cpus
        .as_deref()
        .and_then(|s| CpuList::parse_list(s.as_bytes(), "--cpus").ok());
    if let Some(list) = list {
        let mut listed = ListedCpus::default();
        listed_of(snap, &mut listed);
        let held = listed.all();
        let (shown, absent): (Vec<u32>, Vec<u32>) = list.iter().partition(|c| held.contains(c));
        let holds = format!(
            "it holds {} ({})",
            plural(held.len(), "CPU"),
            CpuList::from_cpus(held.iter().copied())
        );
        if shown.is_empty() {
            out.push(format!(
                "irqlab: warning: --cpus {list} selects no CPU of the recording: {holds}"
            ));
        } else if !absent.is_empty() {
            let (noun, verb) = match absent.len() {
                1 => ("CPU", "is"),
                _ => ("CPUs", "are"),
            };
            out.push(format!(
                "irqlab: warning: --cpus {list}: {noun} {} {verb} not in the recording ({holds}); showing {}",
                CpuList::from_cpus(absent),
                CpuList::from_cpus(shown.iter().copied())
            ));
        }
        out.extend(softirqs_only_warning(&list, &shown, &listed));
    }
    out.extend(snapshot_warnings(None, flags.irq.as_deref(), snap, rows));
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::filter::warnings::fixtures::cpu3_offline;
    use crate::record::playback::fixtures::{shape, step};
    use crate::record::schema::Shape;

    /// A run's steps recorded with `filter` and `cpus` (the shape's run
    /// mark).
    fn run(filter: &str, cpus: Option<Vec<u32>>) -> Vec<RecordedSample> {
        let sh = Shape {
            run: Some(RunStart {
                filter: filter.into(),
                cpus,
            }),
            ..shape()
        };
        vec![step(0, 1, 0, Some(sh)), step(1, 2, 0, None)]
    }

    #[test]
    fn cpus_of_an_offline_cpu_the_recording_holds_softirqs_of_are_said_so() {
        // CPU 3 was offline: only /proc/softirqs lists it
        let snap = cpu3_offline();
        let flags = |cpus: &str| FilterArgs {
            irq: None,
            exclude: None,
            cpus: Some(cpus.into()),
        };
        let rows = Filter::default();
        assert_eq!(
            warnings(&flags("3"), &snap, &rows),
            [
                "irqlab: warning: --cpus 3: CPU 3 has no column in /proc/interrupts (offline?); \
              its softirqs are shown"
            ]
        );
        assert_eq!(
            warnings(&flags("9"), &snap, &rows),
            ["irqlab: warning: --cpus 9 selects no CPU of the recording: it holds 4 CPUs (0-3)"]
        );
    }

    #[test]
    fn the_recorded_cpus_apply_unless_the_flags_name_cpus() {
        let none = Filter::default();
        let steps = run("--cpus 1", Some(vec![1]));
        assert_eq!(replay_filter(&none, &steps).cpus, Some(vec![1]));
        let flags = Filter::from_flags(None, Some("0-1")).unwrap();
        assert_eq!(replay_filter(&flags, &steps).cpus, Some(vec![0, 1]));
        assert_eq!(replay_filter(&none, &run("", None)).cpus, None);
        // a recording made before the CPU list was kept apart
        assert_eq!(
            replay_filter(&none, &run("--cpus 2-3", None)).cpus,
            Some(vec![2, 3])
        );
        assert_eq!(recorded_line(&steps), "recorded with --cpus 1");
        assert_eq!(
            recorded_line(&run("", None)),
            "recorded without a row filter"
        );
    }
}
