//! Live (feature `trace`, root, python3): `irqlab trace`'s counts held
//! against ftrace's record of the same tracepoints over the same interval
//! (tools/trace-vs-ftrace.py, a tracefs instance of its own). ftrace sees
//! every hit; a run irqlab's programs did not see (a skipped program, or a
//! kernel that runs none while some task is current: docs/trace.md, "Runs
//! no program sees") is a difference, and irqlab's `missed` for the group
//! must say it: the differences less one per row (a CPU; a CPU and IRQ
//! for `hardirq`), within the runs in flight at the interval's two edges. irqlab never counts more than
//! ftrace saw beyond those.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;

use common::trace::{runs, Needs};
use std::collections::BTreeMap;

/// Runs in flight at each edge of the interval, per row: two edges.
const EDGE: i64 = 2;

fn skip_reason() -> Option<String> {
    common::trace::skip_reason(Needs::default())
        .or_else(|| (!runs("python3", "--version")).then(|| "python3 not installed".to_string()))
}

#[test]
fn missed_runs_are_the_hits_ftrace_saw_and_irqlab_did_not_or_skip() {
    const NAME: &str =
        "trace_vs_ftrace: missed_runs_are_the_hits_ftrace_saw_and_irqlab_did_not_or_skip";
    if !common::host_changes_allowed(NAME) || common::trace::skipped(NAME, skip_reason()) {
        return;
    }
    let (v, stderr, ok) = common::trace::python_tool("trace-vs-ftrace.py", &["--seconds", "6"]);
    assert!(ok, "{stderr}");
    let rows = v["rows"].as_array().unwrap();
    let mut want: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for r in rows {
        let group = r["group"].as_str().unwrap().to_string();
        let diff = r["diff"].as_i64().unwrap();
        assert!(diff >= -EDGE, "irqlab counted more than ftrace saw: {r}");
        let w = want.entry(group).or_default();
        w.0 += (diff - 1).max(0);
        w.1 += 1;
    }
    // x86 has the vector groups too; every kernel has softirqs
    assert!(
        want.contains_key("softirq"),
        "no softirq hits recorded: {v}"
    );
    for (group, (expected, nrows)) in &want {
        let said = v["irqlab_missed"][group].as_i64().unwrap_or(0);
        crate::visible!(
            "trace_vs_ftrace: {group}: ftrace saw {expected} more runs than irqlab beyond one \
             per row, irqlab said {said} missed"
        );
        assert!(
            (said - expected).abs() <= EDGE * nrows,
            "{group}: irqlab said {said} missed, ftrace shows {expected}: {v}"
        );
    }
}
