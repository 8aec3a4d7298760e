//! Row order and selection of interrupt tables: `--sort` keys, device
//! names, `--threshold` and the `SUM` line. Works on built lines only;
//! never builds or filters rows itself (that is `build` and the filter).

use super::{IrqLine, ValuedSum};
use crate::natural::natural_cmp_nocase;
use irqlab_core::Shape;

/// Row order of interrupt tables (`top --sort`, the TUI's `s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Rate over the interval, highest first.
    #[default]
    Rate,
    /// Count since boot, highest first.
    Total,
    /// IRQ number (arch rows after, by label).
    Irq,
    /// Device name (actions, else description, else label), in natural
    /// order without regard to case (`eth2` < `ETH10` < `Xen`).
    Name,
}

impl SortKey {
    pub fn label(self) -> &'static str {
        match self {
            SortKey::Rate => "rate",
            SortKey::Total => "total",
            SortKey::Irq => "irq",
            SortKey::Name => "name",
        }
    }

    /// The next key in the TUI's `s` cycle.
    pub fn next(self) -> Self {
        match self {
            SortKey::Rate => SortKey::Total,
            SortKey::Total => SortKey::Irq,
            SortKey::Irq => SortKey::Name,
            SortKey::Name => SortKey::Rate,
        }
    }
}

/// Device name of a row: its actions, else its description, else label.
pub fn name_of(l: &IrqLine) -> String {
    if !l.actions.is_empty() {
        l.actions.join(",")
    } else if !l.description.is_empty() {
        l.description.clone()
    } else {
        l.label.clone()
    }
}

/// Sort `rows` by `key`; `rate` gives a row's rate (the TUI's is over its
/// selected CPUs). Stable: equal rows keep file order.
pub fn sort_rows<T>(
    rows: &mut Vec<T>,
    key: SortKey,
    line: impl Fn(&T) -> &IrqLine,
    rate: impl Fn(&T) -> Option<f64>,
) {
    match key {
        SortKey::Rate => {
            let mut keyed: Vec<(f64, T)> = rows
                .drain(..)
                .map(|r| (rate(&r).unwrap_or(-1.0), r))
                .collect();
            keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
            rows.extend(keyed.into_iter().map(|k| k.1));
        }
        SortKey::Total => rows.sort_by_key(|r| std::cmp::Reverse(line(r).since_boot)),
        SortKey::Irq => rows.sort_by(|a, b| {
            let key = |l: &IrqLine| (l.irq.unwrap_or(u32::MAX), l.label.clone());
            key(line(a)).cmp(&key(line(b)))
        }),
        SortKey::Name => {
            let mut keyed: Vec<(String, T)> =
                rows.drain(..).map(|r| (name_of(line(&r)), r)).collect();
            keyed.sort_by(|a, b| natural_cmp_nocase(&a.0, &b.0));
            rows.extend(keyed.into_iter().map(|k| k.1));
        }
    }
}

/// Whether a row is shown under `--threshold MIN` (rate per second over
/// all kept CPUs): rows with a gap are always shown (something happened).
pub fn above_threshold(l: &IrqLine, min: f64) -> bool {
    l.gaps.is_some() || l.total_rate.is_some_and(|r| r > 0.0 && r >= min)
}

/// Which kept rows the `SUM` line adds, decided row by row in file order:
/// every row but an s390 sub-class row (`CLK`, `[EXT] Clock Comparator`)
/// when its class row (`EXT`) was kept before it, whose counts already
/// include the sub-class's (docs/formats/arch-rows.md: summing both counts
/// twice). A sub-class row without its class row (`--irq CLK`) is added.
/// Kept between samples, it allocates nothing once its buffer has grown.
#[derive(Debug, Default, Clone)]
pub struct SumRows {
    /// Labels of the kept arch rows so far, each followed by `\n`.
    arch: String,
}

impl SumRows {
    /// Start a sample's rows.
    pub fn clear(&mut self) {
        self.arch.clear();
    }

    /// Whether the SUM line adds this kept row (called for every kept row,
    /// in file order).
    pub fn adds(&mut self, label: &str, irq: Option<u32>, description: &str) -> bool {
        if irq.is_some() {
            return true;
        }
        match irqlab_core::interrupts::class_of(irq, description) {
            Some(class) => !self.arch.split('\n').any(|l| l == class),
            None => {
                self.arch.push_str(label);
                self.arch.push('\n');
                true
            }
        }
    }
}

/// Per-CPU sum of the interrupt rates of `rows` (the `mpstat -I SUM`
/// line): per kept CPU column, and the total; the rows [`SumRows`] adds.
/// Single-value rows add to the total only; gaps add nothing, and a
/// column (or the total) where no added row has a value has none (`None`;
/// a sum of no rows is 0: [`ValuedSum`]).
pub fn rate_sum<'a>(
    ncpus: usize,
    rows: impl Iterator<Item = &'a IrqLine>,
) -> (Vec<Option<f64>>, Option<f64>) {
    let (mut per, mut total) = (vec![ValuedSum::default(); ncpus], ValuedSum::default());
    let mut adds = SumRows::default();
    for l in rows.filter(|l| adds.adds(&l.label, l.irq, &l.description)) {
        total.add(l.total_rate);
        if l.shape != Shape::PerCpu {
            continue;
        }
        let rates = l.rates.as_deref().unwrap_or_default();
        for (k, acc) in per.iter_mut().enumerate() {
            acc.add(rates.get(k).copied().flatten());
        }
    }
    (per.iter().map(|s| s.value()).collect(), total.value())
}
