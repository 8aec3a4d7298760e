//! `/proc/stat` rendering (docs/formats/stat.md): `cpu` (two spaces), `cpuN`,
//! `intr`, `ctxt`, `btime`, `processes`, `procs_running`, `procs_blocked`,
//! `softirq`, all numbers separated by single spaces.
//!
//! Must not compute totals: it prints the model's values (absent optional
//! lines are omitted).

use super::num;
use crate::stat::{CpuTimes, Stat};

/// Render `m` as `/proc/stat`, appending to `out`.
///
/// ```
/// use irqlab_core::stat::{CpuTimes, Stat};
/// let m = Stat {
///     total: CpuTimes { cpu: None, fields: vec![1, 2] },
///     cpus: vec![CpuTimes { cpu: Some(3), fields: vec![1, 2] }],
///     intr_total: 5,
///     intr: vec![0, 4],
///     ctxt: Some(9),
///     ..Stat::default()
/// };
/// let mut out = String::new();
/// irqlab_core::render::render_stat(&m, &mut out);
/// assert_eq!(out, "cpu  1 2\ncpu3 1 2\nintr 5 0 4\nctxt 9\n");
/// ```
pub fn render_stat(m: &Stat, out: &mut String) {
    cpu_line(out, &m.total);
    for c in &m.cpus {
        cpu_line(out, c);
    }
    values_line(out, "intr", m.intr_total, &m.intr);
    let singles = [
        ("ctxt", m.ctxt),
        ("btime", m.btime),
        ("processes", m.processes),
        ("procs_running", m.procs_running),
        ("procs_blocked", m.procs_blocked),
    ];
    for (name, v) in singles {
        if let Some(v) = v {
            values_line(out, name, v, &[]);
        }
    }
    if let Some(total) = m.softirq_total {
        values_line(out, "softirq", total, &m.softirq);
    }
}

fn cpu_line(out: &mut String, c: &CpuTimes) {
    out.push_str("cpu");
    match c.cpu {
        Some(id) => num(out, u64::from(id), 0),
        None => out.push(' '),
    }
    for &v in &c.fields {
        out.push(' ');
        num(out, v, 0);
    }
    out.push('\n');
}

fn values_line(out: &mut String, name: &str, first: u64, rest: &[u64]) {
    out.push_str(name);
    out.push(' ');
    num(out, first, 0);
    for &v in rest {
        out.push(' ');
        num(out, v, 0);
    }
    out.push('\n');
}
