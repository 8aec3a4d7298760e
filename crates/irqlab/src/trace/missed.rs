//! Runs the kernel did not pass to irqlab's programs. A perf event
//! tracepoint program (the hard IRQ ones, on a kernel without BTF) is
//! skipped, and the skip counted in the program's `recursion_misses` (its
//! `/proc/self/fdinfo/<fd>` line), [`WHILE`]; a raw or BTF tracepoint
//! program (every other) only when it is itself already running there.
//! Such a run is in the kernel's counters but in no traced row, so each
//! interval says how many there were, per group of rows they would have
//! counted in, raised to the runs the kernel counted that no program saw
//! whatever the cause where those are known ([`super::untraced`]). Pure:
//! text in, counts out.

use irqlab_bpf::maps::VECTORS;
use std::collections::BTreeMap;

/// When the kernel skips a perf event program: the one wording of every
/// message that says why runs were missed.
pub const WHILE: &str = "while another BPF program or a map read runs on that CPU";

/// Runs the programs did not count per group of rows (skipped, or held
/// against the kernel's counts: [`super::untraced`]), cumulative or per
/// interval:
/// `hardirq` (every hard IRQ row), `softirq` (softirq runs and times),
/// `softirq_raise` (raise-to-entry latency) and a vector's
/// /proc/interrupts label (`RES`).
pub type Missed = BTreeMap<String, u64>;

/// The `recursion_misses:` value of a BPF program's fdinfo text; `None`
/// when the line is absent (kernels before 5.12) or not a number.
pub fn recursion_misses(fdinfo: &[u8]) -> Option<u64> {
    fdinfo.split(|&b| b == b'\n').find_map(|line| {
        let rest = line.strip_prefix(b"recursion_misses:")?;
        std::str::from_utf8(rest).ok()?.trim().parse().ok()
    })
}

/// The group of rows a program (named by its tracepoint, as the loader
/// names it: `irq_handler_entry`, `reschedule_exit`; a BTF tracepoint
/// program with `_btf` after it) counts into.
pub fn rows_of(program: &str) -> Option<&'static str> {
    let program = program.strip_suffix("_btf").unwrap_or(program);
    match program {
        "irq_handler_entry" | "irq_handler_exit" => Some("hardirq"),
        "softirq_entry" | "softirq_exit" => Some("softirq"),
        "softirq_raise" => Some("softirq_raise"),
        _ => {
            let stem = program
                .strip_suffix("_entry")
                .or_else(|| program.strip_suffix("_exit"))?;
            VECTORS
                .iter()
                .find(|v| v.tracepoint == stem)
                .map(|v| v.label)
        }
    }
}

/// `cur − prev` per group, only the groups that missed a run.
pub fn since(cur: &Missed, prev: &Missed) -> Missed {
    cur.iter()
        .filter_map(|(k, &n)| {
            let d = n.saturating_sub(prev.get(k).copied().unwrap_or(0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect()
}

/// Hold every group of `cur` at least at `prev`'s count (the kernel's
/// counters only grow). A group `cur` already has costs no allocation.
pub fn hold(cur: &mut Missed, prev: &Missed) {
    for (k, &p) in prev {
        match cur.get_mut(k) {
            Some(c) => *c = (*c).max(p),
            None => {
                cur.insert(k.clone(), p);
            }
        }
    }
}

/// What a text output says when runs were missed (empty: none), for a
/// report of every row on every CPU.
pub fn line(m: &Missed) -> Option<String> {
    line_of(m, false, false)
}

/// [`line()`] for a report of some rows (`rows_filtered`: a group's count
/// also holds rows not shown) or some CPUs (`all_cpus`: the counts are of
/// every CPU, not split per CPU): the rows shown lack at most that many.
pub fn line_of(m: &Missed, all_cpus: bool, rows_filtered: bool) -> Option<String> {
    let groups: Vec<String> = m
        .iter()
        .filter(|(_, &n)| n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if groups.is_empty() {
        return None;
    }
    let (scope, lack) = match (all_cpus, rows_filtered) {
        (false, false) => ("", "those rows (and IRQ%/SOFTIRQ%) lack them"),
        (true, _) => (
            " on all CPUs (not split per CPU)",
            "the rows and CPUs shown lack at most that many",
        ),
        (false, true) => (
            " of every row of each group",
            "the rows shown lack at most that many",
        ),
    };
    Some(format!(
        "MISSED program runs{scope}: {}; the kernel counted that many runs irqlab's programs \
         did not (it skips a program {WHILE}, and some kernels run none for some runs: \
         docs/trace.md, \"Runs no program sees\"), so {lack}",
        groups.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fdinfo of a tracepoint program on 6.18, as the kernel prints it.
    const FDINFO: &[u8] = b"pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t2077\n\
prog_type:\t5\nprog_jited:\t1\nprog_tag:\t16e4a5e3a12c2f33\nmemlock:\t4096\n\
prog_id:\t5685\nrun_time_ns:\t0\nrun_cnt:\t0\nrecursion_misses:\t3\nverified_insns:\t41\n";

    #[test]
    fn reads_the_misses_line_and_nothing_else() {
        assert_eq!(recursion_misses(FDINFO), Some(3));
        assert_eq!(recursion_misses(b"prog_id:\t5\nrun_cnt:\t9\n"), None);
        assert_eq!(recursion_misses(b"recursion_misses:\tx\n"), None);
        assert_eq!(recursion_misses(b""), None);
        assert_eq!(
            recursion_misses(b"recursion_misses:\t18446744073709551615"),
            Some(u64::MAX)
        );
    }

    #[test]
    fn every_program_has_a_group() {
        assert_eq!(rows_of("irq_handler_exit"), Some("hardirq"));
        assert_eq!(rows_of("irq_handler_entry_btf"), Some("hardirq"));
        assert_eq!(rows_of("irq_handler_exit_btf"), Some("hardirq"));
        assert_eq!(rows_of("softirq_entry"), Some("softirq"));
        assert_eq!(rows_of("softirq_raise"), Some("softirq_raise"));
        assert_eq!(rows_of("reschedule_entry"), Some("RES"));
        assert_eq!(rows_of("call_function_single_exit"), Some("CAL"));
        assert_eq!(rows_of("local_timer_exit"), Some("LOC"));
        assert_eq!(rows_of("no_such_entry"), None);
        for v in VECTORS {
            for side in ["entry", "exit"] {
                assert_eq!(rows_of(&format!("{}_{side}", v.tracepoint)), Some(v.label));
            }
        }
    }

    fn m(pairs: &[(&str, u64)]) -> Missed {
        pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect()
    }

    #[test]
    fn since_keeps_the_groups_that_grew() {
        let prev = m(&[("hardirq", 2), ("RES", 5)]);
        let cur = m(&[("hardirq", 2), ("RES", 9), ("softirq", 1)]);
        assert_eq!(since(&cur, &prev), m(&[("RES", 4), ("softirq", 1)]));
        assert!(since(&prev, &cur).is_empty(), "never negative");
    }

    #[test]
    fn hold_never_lowers_a_group() {
        let mut cur = m(&[("RES", 3)]);
        hold(&mut cur, &m(&[("RES", 5), ("LOC", 1)]));
        assert_eq!(cur, m(&[("LOC", 1), ("RES", 5)]));
    }

    #[test]
    fn line_names_each_group_or_is_absent() {
        assert_eq!(line(&Missed::new()), None);
        assert_eq!(line(&m(&[("RES", 0)])), None);
        let l = line(&m(&[("RES", 2), ("hardirq", 7), ("LOC", 0)])).unwrap();
        assert!(
            l.starts_with("MISSED program runs: RES 2, hardirq 7;"),
            "{l}"
        );
        // the cause is said as the notes say it, map reads included
        assert!(l.contains(WHILE), "{l}");
        assert!(
            l.ends_with("so those rows (and IRQ%/SOFTIRQ%) lack them"),
            "{l}"
        );
    }

    /// `trace --cpus 1` said `so those rows lack them` of counts of every
    /// CPU.
    #[test]
    fn a_selection_is_told_the_counts_are_of_all_cpus_and_rows() {
        let runs = m(&[("softirq", 1)]);
        let l = line_of(&runs, true, true).unwrap();
        assert!(
            l.starts_with("MISSED program runs on all CPUs (not split per CPU): softirq 1;"),
            "{l}"
        );
        assert!(
            l.ends_with("the rows and CPUs shown lack at most that many"),
            "{l}"
        );
        assert!(!l.contains("those rows"), "{l}");
        let l = line_of(&runs, false, true).unwrap();
        assert!(
            l.starts_with("MISSED program runs of every row of each group: softirq 1;"),
            "{l}"
        );
        assert!(l.ends_with("the rows shown lack at most that many"), "{l}");
        assert_eq!(line_of(&Missed::new(), true, true), None);
    }
}
