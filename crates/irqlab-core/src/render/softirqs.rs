//! `/proc/softirqs` rendering (docs/formats/softirqs.md): 20-space header of possible
//! CPUs, then `"%12s:"` + `" %10u"` per CPU for each row in model order.
//!
//! Must not add, drop or rename vectors.

use super::{counts_fmt, cpu_cells, right, spaces};
use crate::softirqs::Softirqs;

/// Render `m` as `/proc/softirqs`, appending to `out`.
///
/// ```
/// use irqlab_core::softirqs::{SoftirqRow, Softirqs};
/// let m = Softirqs::new(vec![0, 1], vec![SoftirqRow { name: "NET_RX".into(), counts: vec![1476, 1934] }]);
/// let mut out = String::new();
/// irqlab_core::render::render_softirqs(&m, &mut out);
/// assert_eq!(out, "                    CPU0       CPU1       \n      NET_RX:       1476       1934\n");
/// ```
pub fn render_softirqs(m: &Softirqs, out: &mut String) {
    spaces(out, 20);
    cpu_cells(out, &m.cpus);
    out.push('\n');
    for row in &m.rows {
        right(out, &row.name, 12);
        out.push(':');
        counts_fmt::leading_space(out, &row.counts);
        out.push('\n');
    }
}
