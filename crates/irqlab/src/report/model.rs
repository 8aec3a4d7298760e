//! The report's types: sections and lines of `show` and `top`, and the
//! serde form of the sections that are not interrupt rows (an interrupts
//! row's JSON is `export::irq_row_json`'s; rates rounded by the same rule,
//! `ser_rate`). Plain data: building a report is `build`'s, row
//! order `order`'s; nothing here reads a file or computes a number.

use crate::filter::Filter;
use irqlab_core::delta::{self, CpuPct};
use irqlab_core::Shape;
use serde::Serialize;

/// The whole report.
#[derive(Debug, Default)]
pub struct Report {
    /// Seconds between the two snapshots (rates mode only).
    pub interval_s: Option<f64>,
    pub interrupts: Option<IrqSection>,
    pub softirqs: Option<SoftirqSection>,
    pub stat: Option<StatSection>,
}

#[derive(Debug)]
pub struct IrqSection {
    pub cpus: Vec<u32>,
    pub rows: Vec<IrqLine>,
    /// Rows present only in the first snapshot (rates mode).
    pub gone: Vec<String>,
}

/// One interrupts row. Snapshot mode fills `counts`/`total`; rates mode
/// fills `deltas`, `rates`, `total`, `total_rate` and `gaps`.
#[derive(Debug)]
pub struct IrqLine {
    pub label: String,
    pub irq: Option<u32>,
    /// `per_cpu`, `single`, `no_counts` or `irregular`.
    pub shape: Shape,
    pub counts: Option<Vec<u64>>,
    pub total: u64,
    /// Per-CPU (or single) count differences; null = gap (rates mode).
    pub deltas: Option<Vec<Option<u64>>>,
    pub rates: Option<Vec<Option<f64>>>,
    /// Rounded as `rates` are (integral values as integers, else to 0.001).
    pub total_rate: Option<f64>,
    pub gaps: Option<Vec<Option<delta::Gap>>>,
    pub chip: Option<String>,
    pub hwirq: Option<i64>,
    pub trigger: Option<String>,
    pub flow: Option<String>,
    pub actions: Vec<String>,
    pub description: String,
    /// Effective (else configured) affinity CPU list, when it was read.
    pub affinity: Option<String>,
    /// Count since boot over all CPUs (rates mode; for `--sort total`).
    pub since_boot: Option<u64>,
    /// The busiest CPU's id and rate, when `rates` was reduced to it
    /// ([`IrqRows::Busiest`](super::IrqRows::Busiest); `None` also when no CPU had a positive rate).
    pub busiest: Option<(u32, f64)>,
    /// The busiest CPU's id and count, when `counts` was reduced to it
    /// ([`IrqCounts::keep_busiest_count`](super::IrqCounts::keep_busiest_count); `None` also when all were 0).
    pub busiest_count: Option<(u32, u64)>,
}

impl IrqLine {
    /// Rates mode: no cell has a value over the interval (every one is a
    /// gap), so the row has no total and no total rate
    /// ([`has_value`](super::has_value)'s rule).
    pub fn no_value(&self) -> bool {
        self.gaps
            .as_ref()
            .is_some_and(|g| !super::has_value(g.iter().map(Option::is_none)))
    }

    /// True when this line passes `f`'s `--irq` test (the same test as
    /// [`Filter::keep_irq_row`] on the row it came from).
    pub fn passes(&self, f: &Filter) -> bool {
        f.keep_fields(
            &self.label,
            &self.description,
            self.chip.as_deref().unwrap_or(""),
            self.actions.iter().map(String::as_str),
        )
    }
}

#[derive(Debug, Serialize)]
pub struct SoftirqSection {
    pub cpus: Vec<u32>,
    pub rows: Vec<SoftirqLine>,
    /// Vectors present only in the first snapshot (rates mode), as
    /// [`IrqSection::gone`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gone: Vec<String>,
}

/// One softirq vector. Its JSON: `name`, `counts`, `total`, then in rates
/// mode `rates` and `total_rate` (absent without an interval, `null`
/// with `total` when no cell has a value).
#[derive(Debug)]
pub struct SoftirqLine {
    pub name: String,
    /// Counts (snapshot) or per-interval deltas (rates mode); null = gap.
    pub counts: Vec<Option<u64>>,
    /// The sum of the cells that have a value; `None` when no cell has
    /// one (every one a gap).
    pub total: Option<u64>,
    pub rates: Option<Vec<Option<f64>>>,
    /// Rounded as `rates` are (integral values as integers, else to 0.001).
    pub total_rate: Option<f64>,
}

impl Serialize for SoftirqLine {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Rates<'a>(&'a Option<Vec<Option<f64>>>);
        impl Serialize for Rates<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                ser_rates(self.0, s)
            }
        }
        struct TotalRate(Option<f64>);
        impl Serialize for TotalRate {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                ser_total_rate(&self.0, s)
            }
        }
        let mut st = s.serialize_struct("SoftirqLine", 5)?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("counts", &self.counts)?;
        st.serialize_field("total", &self.total)?;
        if self.rates.is_some() {
            st.serialize_field("rates", &Rates(&self.rates))?;
        }
        if self.total_rate.is_some() || self.total.is_none() {
            st.serialize_field("total_rate", &TotalRate(self.total_rate))?;
        }
        st.end()
    }
}

#[derive(Debug, Default, Serialize)]
pub struct StatSection {
    /// Per-CPU time shares (the aggregate line first, none when `--cpus`
    /// selects no CPU): since boot, or over the interval.
    pub cpu_pct: Vec<CpuPctLine>,
    /// With `--cpus`: the CPUs the first (`cpu: null`) line sums; absent
    /// when that line is the kernel's all-CPU line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate_cpus: Option<Vec<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctxt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub btime: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub procs_running: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub procs_blocked: Option<u64>,
    pub intr_total: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub softirq_total: Option<u64>,
}

impl StatSection {
    /// Label of the aggregate (`cpu: null`) line: `all` for the kernel's
    /// all-CPU line, `sel` for the `--cpus` CPUs summed together (then
    /// [`StatSection::aggregate_note`] says which).
    pub fn aggregate_label(&self) -> &'static str {
        match self.aggregate_cpus {
            None => "all",
            Some(_) => "sel",
        }
    }

    /// `sel = CPUs 0-3 together (--cpus)`: what the `sel` line sums; none
    /// for the kernel's all-CPU line or an empty selection.
    pub fn aggregate_note(&self) -> Option<String> {
        let cpus = self.aggregate_cpus.as_ref().filter(|c| !c.is_empty())?;
        let list = irqlab_core::CpuList::from_cpus(cpus.iter().copied());
        let noun = if cpus.len() == 1 { "CPU" } else { "CPUs" };
        Some(format!("sel = {noun} {list} together (--cpus)"))
    }
}

/// The CPU-time share columns of `show`'s table and `top`'s CPU-time
/// panel, in mpstat's order ([`CpuPct::in_print_order`]: user, nice,
/// system, iowait, irq, softirq, steal, idle).
pub const CPU_PCT_HEADINGS: [&str; 8] = [
    "USR%", "NICE%", "SYS%", "IOW%", "IRQ%", "SOFT%", "STL%", "IDLE%",
];

/// One CPU's (or the aggregate's) time shares; in JSON `{"cpu":…,
/// "user_pct":…,…}`, each share rounded as rates are, a gap line `{"cpu":…}`
/// alone.
#[derive(Debug)]
pub struct CpuPctLine {
    /// CPU id, or null for the all-CPU line.
    pub cpu: Option<u32>,
    pub pct: Option<CpuPct>,
}

impl Serialize for CpuPctLine {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Share(f64);
        impl Serialize for Share {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                ser_total_rate(&Some(self.0), s)
            }
        }
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("cpu", &self.cpu)?;
        if let Some(p) = &self.pct {
            let shares = [
                ("user_pct", p.user_pct),
                ("nice_pct", p.nice_pct),
                ("system_pct", p.system_pct),
                ("idle_pct", p.idle_pct),
                ("iowait_pct", p.iowait_pct),
                ("irq_pct", p.irq_pct),
                ("softirq_pct", p.softirq_pct),
                ("steal_pct", p.steal_pct),
            ];
            for (key, v) in shares {
                m.serialize_entry(key, &Share(v))?;
            }
        }
        m.end()
    }
}

/// A rate as JSON: integral values (most cells of a big machine are 0)
/// as integers, others rounded to 1e-3. Shortest-round-trip float
/// formatting of a million cells per sample would dominate `top --batch`.
pub(crate) fn ser_rate<S: serde::Serializer>(v: f64, s: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
                                                // `as` casts instead of `fract()`: that is a libm call per cell.
    if (0.0..EXACT).contains(&v) && (v as u64) as f64 == v {
        s.serialize_u64(v as u64)
    } else {
        s.serialize_f64((v * 1000.0).round() / 1000.0)
    }
}

pub(crate) fn ser_total_rate<S: serde::Serializer>(
    v: &Option<f64>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match *v {
        Some(v) if v.is_finite() => ser_rate(v, s),
        _ => s.serialize_none(),
    }
}

pub(crate) fn ser_rates<S: serde::Serializer>(
    v: &Option<Vec<Option<f64>>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    struct One(Option<f64>);
    impl Serialize for One {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self.0 {
                Some(v) if v.is_finite() => ser_rate(v, s),
                _ => s.serialize_none(),
            }
        }
    }
    let Some(v) = v else {
        return s.serialize_none();
    };
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for x in v {
        seq.serialize_element(&One(*x))?;
    }
    seq.end()
}
