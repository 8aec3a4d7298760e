//! The `trace` source of a recording (`record --trace`): the eBPF maps'
//! cumulative per-CPU counters ([`Sample`], since attach) as rows of
//! cells, and back. One row per traced item and field, keyed
//! `<item>/<field>` (docs/recording-schema.md, "Traced time"):
//!
//! - items: `hardirq:<irq>:<action>`, `vector:<label>:<tracepoint>`,
//!   `softirq:<NAME>`;
//! - fields: `count`, `ns`, `hist<k>` (log2 slot `k`, only slots that
//!   counted something on a recorded CPU), and for softirqs also
//!   `nested_irq_ns`, `ksoftirqd_count`, `ksoftirqd_ns`, `latency_count`,
//!   `latency_ns`, `latency_hist<k>`;
//! - one row [`AT_KEY`] (no CPU): the CLOCK_MONOTONIC instant of the read;
//! - once a recorded CPU has dropped hard IRQ runs (the programs' map was
//!   full), the row [`DROPPED_KEY`]: those runs per CPU;
//! - once the kernel has skipped a program (`crate::trace::missed`), one
//!   row `missed:<group>/count` (no CPU) per group that missed a run.
//!
//! Pure: no I/O, no panics on any key.

use crate::trace::sample::{
    softirq_name, Sample, SoftirqStats, Stats, TraceKey, HIST_SLOTS, SOFTIRQ_NAMES,
};
use anyhow::{anyhow, bail};
use std::collections::HashMap;

/// CPU ids a recording may name (the kernel's NR_CPUS is at most 8192):
/// a larger one is a corrupt recording, not an allocation.
pub const MAX_CPUS: usize = 1 << 16;

/// Item × CPU entries a rebuilt sample may hold (8192 CPUs × 256 items):
/// more is a corrupt layout, not an allocation.
const MAX_ENTRIES: usize = 1 << 21;

/// Key of the row holding the read's CLOCK_MONOTONIC instant (ns).
pub const AT_KEY: &str = "read/mono_ns";

/// Key of the row holding the hard IRQ runs the programs could not count
/// (per CPU); written only once one was dropped on a recorded CPU.
pub const DROPPED_KEY: &str = "dropped/count";

/// Item prefix of the rows holding a group's skipped program runs.
const MISSED_ITEM: &str = "missed:";

/// Whether the row `key` has one cell with no CPU ([`AT_KEY`], the
/// `missed:<group>/count` rows) rather than one per recorded CPU.
pub fn cpuless(key: &str) -> bool {
    key == AT_KEY || key.starts_with(MISSED_ITEM)
}

/// The groups of `t` that missed a run, in key order: one
/// `missed:<group>/count` row each.
fn missed_rows(t: &Sample) -> impl Iterator<Item = (&String, u64)> + '_ {
    t.missed
        .iter()
        .map(|(g, &n)| (g, n))
        .filter(|&(_, n)| n > 0)
}

/// One counter of a traced item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Count,
    Ns,
    Hist(usize),
    NestedIrqNs,
    KsoftirqdCount,
    KsoftirqdNs,
    LatencyCount,
    LatencyNs,
    LatencyHist(usize),
}

/// Fields every hard IRQ / vector row has (histogram slots follow).
const STATS_FIELDS: [Field; 2] = [Field::Count, Field::Ns];
/// Fields every softirq row has (histogram slots follow).
const SOFT_FIELDS: [Field; 7] = [
    Field::Count,
    Field::Ns,
    Field::NestedIrqNs,
    Field::KsoftirqdCount,
    Field::KsoftirqdNs,
    Field::LatencyCount,
    Field::LatencyNs,
];

impl Field {
    fn name(self) -> String {
        match self {
            Field::Count => "count".into(),
            Field::Ns => "ns".into(),
            Field::Hist(k) => format!("hist{k}"),
            Field::NestedIrqNs => "nested_irq_ns".into(),
            Field::KsoftirqdCount => "ksoftirqd_count".into(),
            Field::KsoftirqdNs => "ksoftirqd_ns".into(),
            Field::LatencyCount => "latency_count".into(),
            Field::LatencyNs => "latency_ns".into(),
            Field::LatencyHist(k) => format!("latency_hist{k}"),
        }
    }

    fn parse(s: &str) -> Option<Field> {
        let slot = |p: &str| {
            s.strip_prefix(p)
                .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|&k| k < HIST_SLOTS)
        };
        if let Some(k) = slot("latency_hist") {
            return Some(Field::LatencyHist(k));
        }
        if let Some(k) = slot("hist") {
            return Some(Field::Hist(k));
        }
        STATS_FIELDS
            .iter()
            .chain(&SOFT_FIELDS)
            .copied()
            .find(|f| f.name() == s)
    }

    /// Whether a hard IRQ / vector row has this field.
    fn of_stats(self) -> bool {
        matches!(self, Field::Count | Field::Ns | Field::Hist(_))
    }

    fn stats(self, s: &Stats) -> u64 {
        match self {
            Field::Count => s.count,
            Field::Ns => s.total_ns,
            Field::Hist(k) => s.hist.get(k).copied().unwrap_or(0),
            _ => 0,
        }
    }

    fn soft(self, s: &SoftirqStats) -> u64 {
        match self {
            Field::NestedIrqNs => s.nested_irq_ns,
            Field::KsoftirqdCount => s.ksoftirqd_count,
            Field::KsoftirqdNs => s.ksoftirqd_ns,
            Field::LatencyCount => s.latency.count,
            Field::LatencyNs => s.latency.total_ns,
            Field::LatencyHist(k) => s.latency.hist.get(k).copied().unwrap_or(0),
            f => f.stats(&s.run),
        }
    }

    fn set_stats(self, s: &mut Stats, v: u64) {
        match self {
            Field::Count => s.count = v,
            Field::Ns => s.total_ns = v,
            Field::Hist(k) => {
                if let Some(h) = s.hist.get_mut(k) {
                    *h = v;
                }
            }
            _ => {}
        }
    }

    fn set_soft(self, s: &mut SoftirqStats, v: u64) {
        match self {
            Field::NestedIrqNs => s.nested_irq_ns = v,
            Field::KsoftirqdCount => s.ksoftirqd_count = v,
            Field::KsoftirqdNs => s.ksoftirqd_ns = v,
            Field::LatencyCount => s.latency.count = v,
            Field::LatencyNs => s.latency.total_ns = v,
            Field::LatencyHist(k) => {
                if let Some(h) = s.latency.hist.get_mut(k) {
                    *h = v;
                }
            }
            f => f.set_stats(&mut s.run, v),
        }
    }
}

/// The CPU ids of a sample's per-CPU vectors (`per_cpu[i]` is CPU `i`).
pub fn cpu_ids(t: &Sample) -> Vec<u32> {
    (0..t.ncpu())
        .filter_map(|i| u32::try_from(i).ok())
        .collect()
}

fn item_name(key: &TraceKey) -> String {
    match key {
        TraceKey::Hardirq { irq, name } => format!("hardirq:{irq}:{name}"),
        TraceKey::Vector { label, tracepoint } => format!("vector:{label}:{tracepoint}"),
    }
}

fn run_hist(s: &Stats) -> &[u64; HIST_SLOTS] {
    &s.hist
}

fn soft_hist(s: &SoftirqStats) -> &[u64; HIST_SLOTS] {
    &s.run.hist
}

fn latency_hist(s: &SoftirqStats) -> &[u64; HIST_SLOTS] {
    &s.latency.hist
}

/// Histogram slots that counted something on one of the columns `cols`.
fn slots<'a, T>(
    per_cpu: &'a [T],
    cols: &'a [usize],
    hist: fn(&T) -> &[u64; HIST_SLOTS],
) -> impl Iterator<Item = usize> + 'a {
    (0..HIST_SLOTS).filter(move |&k| {
        cols.iter()
            .filter_map(|&c| per_cpu.get(c))
            .any(|s| hist(s).get(k).is_some_and(|&v| v != 0))
    })
}

/// Visit the rows of `t` after [`AT_KEY`]'s, in layout order: the item's
/// name, the field, and the field's value on each column of `cols`.
/// Which hard IRQ / vector items are recorded (`--irq`: those whose
/// /proc/interrupts row is recorded); softirqs always are.
pub type Keep<'a> = &'a dyn Fn(&TraceKey) -> bool;

/// What [`visit`] calls per row: the item's name (built on demand), the
/// field, the values.
type Visitor<'a> = dyn FnMut(&dyn Fn() -> String, Field, &[u64]) + 'a;

fn visit(t: &Sample, cols: &[usize], keep: Keep<'_>, f: &mut Visitor<'_>) {
    let mut vals = Vec::with_capacity(cols.len());
    for (key, per_cpu) in t.irqs.iter().filter(|(k, _)| keep(k)) {
        let name = || item_name(key);
        let hist = slots(per_cpu, cols, run_hist).map(Field::Hist);
        for field in STATS_FIELDS.into_iter().chain(hist) {
            vals.clear();
            vals.extend(
                cols.iter()
                    .map(|&c| per_cpu.get(c).map_or(0, |s| field.stats(s))),
            );
            f(&name, field, &vals);
        }
    }
    for (vec, per_cpu) in &t.softirqs {
        let name = || format!("softirq:{}", softirq_name(*vec));
        let hist = slots(per_cpu, cols, soft_hist).map(Field::Hist);
        let lat = slots(per_cpu, cols, latency_hist).map(Field::LatencyHist);
        for field in SOFT_FIELDS.into_iter().chain(hist).chain(lat) {
            vals.clear();
            vals.extend(
                cols.iter()
                    .map(|&c| per_cpu.get(c).map_or(0, |s| field.soft(s))),
            );
            f(&name, field, &vals);
        }
    }
    if cols
        .iter()
        .any(|&c| t.drops.get(c).is_some_and(|&d| d != 0))
    {
        vals.clear();
        vals.extend(cols.iter().map(|&c| t.drops.get(c).copied().unwrap_or(0)));
        f(&|| "dropped".to_string(), Field::Count, &vals);
    }
}

/// The row keys of `t` on columns `cols` (of [`cpu_ids`]), [`AT_KEY`] first.
pub fn row_keys(t: &Sample, cols: &[usize], keep: Keep<'_>) -> Vec<String> {
    let mut out = vec![AT_KEY.to_string()];
    visit(t, cols, keep, &mut |item, field, _| {
        out.push(format!("{}/{}", item(), field.name()))
    });
    out.extend(missed_rows(t).map(|(g, _)| format!("{MISSED_ITEM}{g}/count")));
    out
}

/// The values of `t`'s rows in the order of [`row_keys`]: `row(i, values)`.
pub fn row_values(t: &Sample, cols: &[usize], keep: Keep<'_>, row: &mut dyn FnMut(usize, &[u64])) {
    row(0, &[t.at_ns]);
    let mut i = 1;
    visit(t, cols, keep, &mut |_, _, vals| {
        row(i, vals);
        i += 1;
    });
    for (_, n) in missed_rows(t) {
        row(i, &[n]);
        i += 1;
    }
}

/// A traced item parsed from a row key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Item {
    Irq(TraceKey),
    Soft(u32),
    Dropped,
    Missed(String),
}

fn parse_item(s: &str) -> Option<Item> {
    if s == "dropped" {
        return Some(Item::Dropped);
    }
    if let Some(group) = s.strip_prefix(MISSED_ITEM).filter(|g| !g.is_empty()) {
        return Some(Item::Missed(group.to_string()));
    }
    if let Some(rest) = s.strip_prefix("hardirq:") {
        let (irq, name) = rest.split_once(':')?;
        return Some(Item::Irq(TraceKey::Hardirq {
            irq: irq.parse().ok()?,
            name: name.to_string(),
        }));
    }
    if let Some(rest) = s.strip_prefix("vector:") {
        let (label, tp) = rest.split_once(':')?;
        return Some(Item::Irq(TraceKey::Vector {
            label: label.to_string(),
            tracepoint: tp.to_string(),
        }));
    }
    let name = s.strip_prefix("softirq:")?;
    let vec = match SOFTIRQ_NAMES.iter().position(|n| *n == name) {
        Some(i) => u32::try_from(i).ok()?,
        None => name.strip_prefix("SOFTIRQ")?.parse().ok()?,
    };
    Some(Item::Soft(vec))
}

/// Rebuild the sample from the rows `keys` on CPUs `cpus`; `get(key, cpu)`
/// gives a cell's value (`cpu` `None` for a [`cpuless`] row). A key that is not
/// one of this module's is an error naming it.
pub fn rebuild(
    keys: &[String],
    cpus: &[u32],
    get: &dyn Fn(&str, Option<u32>) -> u64,
) -> anyhow::Result<Sample> {
    let n = cpus.iter().max().map_or(0, |&m| m as usize + 1);
    if n > MAX_CPUS {
        bail!(
            "trace CPU id {}: above the {MAX_CPUS} CPUs a kernel can have",
            n - 1
        );
    }
    let mut t = Sample::default();
    let mut index: HashMap<Item, usize> = HashMap::new();
    for key in keys {
        if key == AT_KEY {
            t.at_ns = get(key, None);
            continue;
        }
        let bad =
            || anyhow!("trace row {key:?}: expected <item>/<field> (docs/recording-schema.md)");
        let (item, field) = key.rsplit_once('/').ok_or_else(bad)?;
        let (item, field) = (
            parse_item(item).ok_or_else(bad)?,
            Field::parse(field).ok_or_else(bad)?,
        );
        if item == Item::Dropped {
            if field != Field::Count {
                return Err(bad());
            }
            t.drops.resize(n, 0);
            for &cpu in cpus {
                if let Some(d) = t.drops.get_mut(cpu as usize) {
                    *d = get(key, Some(cpu));
                }
            }
            continue;
        }
        if let Item::Missed(group) = item {
            if field != Field::Count {
                return Err(bad());
            }
            t.missed.insert(group, get(key, None));
            continue;
        }
        if matches!(item, Item::Irq(_)) && !field.of_stats() {
            bail!(
                "trace row {key:?}: a hard IRQ row has no field {:?}",
                field.name()
            );
        }
        if !index.contains_key(&item) && (index.len() + 1).saturating_mul(n) > MAX_ENTRIES {
            bail!(
                "trace rows: {} items on {n} CPUs is more than a kernel's maps hold (corrupt layout)",
                index.len() + 1
            );
        }
        let slot = *index.entry(item.clone()).or_insert_with(|| match &item {
            Item::Irq(k) => {
                t.irqs.push((k.clone(), vec![Stats::default(); n]));
                t.irqs.len() - 1
            }
            Item::Soft(v) => {
                t.softirqs.push((*v, vec![SoftirqStats::default(); n]));
                t.softirqs.len() - 1
            }
            Item::Dropped | Item::Missed(_) => 0,
        });
        for &cpu in cpus {
            let v = get(key, Some(cpu));
            match &item {
                Item::Irq(_) => {
                    if let Some(s) = t.irqs.get_mut(slot).and_then(|r| r.1.get_mut(cpu as usize)) {
                        field.set_stats(s, v);
                    }
                }
                Item::Soft(_) => {
                    if let Some(s) = t
                        .softirqs
                        .get_mut(slot)
                        .and_then(|r| r.1.get_mut(cpu as usize))
                    {
                        field.set_soft(s, v);
                    }
                }
                Item::Dropped | Item::Missed(_) => {}
            }
        }
    }
    Ok(t)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A sample with one IRQ action, one vector and two softirqs on 3 CPUs.
    pub(crate) fn sample(scale: u64) -> Sample {
        let stats = |c: u64| {
            let mut s = Stats {
                count: c * scale,
                total_ns: c * scale * 900,
                ..Stats::default()
            };
            s.hist[10] = c * scale;
            s
        };
        let soft = |c: u64| {
            let mut s = SoftirqStats {
                run: stats(c),
                nested_irq_ns: c,
                ksoftirqd_count: c / 2,
                ksoftirqd_ns: c * 400,
                latency: stats(c),
            };
            s.latency.hist[3] = c;
            s
        };
        Sample {
            at_ns: 123_456_789 * scale,
            irqs: vec![
                (
                    TraceKey::Hardirq {
                        irq: 24,
                        name: "virtio0-input.0".into(),
                    },
                    vec![stats(1), stats(0), stats(5)],
                ),
                (
                    TraceKey::Vector {
                        label: "LOC".into(),
                        tracepoint: "local_timer".into(),
                    },
                    vec![stats(100), stats(90), stats(0)],
                ),
            ],
            softirqs: vec![(3, vec![soft(7), soft(0), soft(2)]), (12, vec![soft(0); 3])],
            drops: vec![],
            missed: [("RES".to_string(), 2 * scale)].into(),
        }
    }

    fn cells(t: &Sample, cols: &[usize]) -> HashMap<(String, Option<u32>), u64> {
        let keys = row_keys(t, cols, &|_| true);
        let ids = cpu_ids(t);
        let mut m = HashMap::new();
        row_values(t, cols, &|_| true, &mut |i, vals| {
            let key = keys[i].clone();
            if cpuless(&key) {
                m.insert((key, None), vals[0]);
            } else {
                for (&c, &v) in cols.iter().zip(vals) {
                    m.insert((key.clone(), Some(ids[c])), v);
                }
            }
        });
        m
    }

    #[test]
    fn keys_name_items_and_fields_and_skip_empty_histogram_slots() {
        let t = sample(1);
        let keys = row_keys(&t, &[0, 1, 2], &|_| true);
        assert_eq!(keys[0], AT_KEY);
        assert!(keys.contains(&"hardirq:24:virtio0-input.0/count".to_string()));
        assert!(keys.contains(&"hardirq:24:virtio0-input.0/hist10".to_string()));
        assert!(!keys.contains(&"hardirq:24:virtio0-input.0/hist11".to_string()));
        assert!(keys.contains(&"vector:LOC:local_timer/ns".to_string()));
        assert!(keys.contains(&"softirq:NET_RX/ksoftirqd_ns".to_string()));
        assert!(keys.contains(&"softirq:NET_RX/latency_hist3".to_string()));
        assert!(keys.contains(&"softirq:SOFTIRQ12/count".to_string()));
        assert!(
            !keys.contains(&"softirq:SOFTIRQ12/hist10".to_string()),
            "no slot counted anything"
        );
        let only_loc = row_keys(&t, &[0], &|k| k.label() == "LOC");
        assert!(only_loc.iter().all(|k| !k.starts_with("hardirq:")));
        assert!(only_loc.contains(&"vector:LOC:local_timer/count".to_string()));
        assert!(only_loc.contains(&"softirq:NET_RX/count".to_string()));
        let mut n = 0;
        row_values(&t, &[0, 1, 2], &|_| true, &mut |_, _| n += 1);
        assert_eq!(n, keys.len(), "one value row per key");
    }

    #[test]
    fn rows_rebuild_the_sample_on_the_recorded_cpus() {
        let t = sample(3);
        let all = [0, 1, 2];
        let m = cells(&t, &all);
        let keys = row_keys(&t, &all, &|_| true);
        let get = |k: &str, c: Option<u32>| m.get(&(k.to_string(), c)).copied().unwrap_or(0);
        assert_eq!(rebuild(&keys, &[0, 1, 2], &get).unwrap(), t);
        // only CPUs 0 and 2 recorded: CPU 1 rebuilds as zeros
        let m = cells(&t, &[0, 2]);
        let keys = row_keys(&t, &[0, 2], &|_| true);
        let get = |k: &str, c: Option<u32>| m.get(&(k.to_string(), c)).copied().unwrap_or(0);
        let back = rebuild(&keys, &[0, 2], &get).unwrap();
        assert_eq!(back.irqs[0].1[2], t.irqs[0].1[2]);
        assert_eq!(back.irqs[1].1[1], Stats::default());
        assert_eq!(back.softirqs[0].1[0], t.softirqs[0].1[0]);
    }

    #[test]
    fn dropped_runs_are_recorded_once_there_are_some_and_rebuilt() {
        let mut t = sample(1);
        t.drops = vec![0, 0, 0];
        let all = [0, 1, 2];
        assert!(!row_keys(&t, &all, &|_| true).contains(&DROPPED_KEY.to_string()));
        t.drops = vec![0, 0, 9];
        let keys = row_keys(&t, &all, &|_| true);
        assert_eq!(
            keys.iter().rev().nth(1).map(String::as_str),
            Some(DROPPED_KEY),
            "the last per-CPU row, before missed:RES"
        );
        assert!(
            !row_keys(&t, &[0, 1], &|_| true).contains(&DROPPED_KEY.to_string()),
            "none on the recorded CPUs"
        );
        let m = cells(&t, &all);
        let get = |k: &str, c: Option<u32>| m.get(&(k.to_string(), c)).copied().unwrap_or(0);
        assert_eq!(rebuild(&keys, &[0, 1, 2], &get).unwrap(), t);
        let err = rebuild(&["dropped/ns".to_string()], &[0], &get).unwrap_err();
        assert!(format!("{err}").contains("dropped/ns"), "{err}");
    }

    #[test]
    fn missed_runs_are_one_cell_per_group_that_missed_some() {
        let mut t = sample(1);
        t.missed = [("LOC".to_string(), 0), ("hardirq".to_string(), 5)].into();
        let all = [0, 1, 2];
        let keys = row_keys(&t, &all, &|_| true);
        assert!(
            !keys.iter().any(|k| k.starts_with("missed:LOC")),
            "{keys:?}"
        );
        assert_eq!(
            keys.last().map(String::as_str),
            Some("missed:hardirq/count")
        );
        assert!(cpuless("missed:hardirq/count") && !cpuless("dropped/count"));
        let m = cells(&t, &all);
        assert_eq!(m.get(&("missed:hardirq/count".to_string(), None)), Some(&5));
        let get = |k: &str, c: Option<u32>| m.get(&(k.to_string(), c)).copied().unwrap_or(0);
        let back = rebuild(&keys, &[0, 1, 2], &get).unwrap();
        assert_eq!(back.missed, [("hardirq".to_string(), 5)].into());
        for bad in ["missed:hardirq/ns", "missed:/count"] {
            let err = rebuild(&[bad.to_string()], &[0], &get).unwrap_err();
            assert!(format!("{err}").contains(bad), "{err}");
        }
    }

    #[test]
    fn bad_keys_are_named() {
        let get = |_: &str, _: Option<u32>| 0;
        for key in [
            "hardirq:x:eth0/count",
            "softirq:NET_RX/hist32",
            "softirq:NET_RX",
            "vector:LOC/count",
            "hardirq:24:eth0/ksoftirqd_ns",
            "bogus/count",
        ] {
            let err = rebuild(&[key.to_string()], &[0], &get).unwrap_err();
            assert!(format!("{err}").contains(key), "{key}: {err}");
        }
        let many: Vec<String> = (0..300).map(|i| format!("hardirq:{i}:x/count")).collect();
        let err = rebuild(&many, &[0, 8191], &get).unwrap_err();
        assert!(format!("{err}").contains("corrupt"), "{err}");
        let err = rebuild(&["softirq:RCU/count".to_string()], &[u32::MAX], &get).unwrap_err();
        assert!(format!("{err}").contains("4294967295"), "{err}");
        // an action name with ':' and '/' in it is kept whole
        let keys = ["hardirq:7:a:b/c/count".to_string()];
        let t = rebuild(&keys, &[0], &|_, _| 4).unwrap();
        assert_eq!(t.irqs[0].0.name(), "a:b/c");
        assert_eq!(t.irqs[0].1[0].count, 4);
    }

    proptest! {
        #[test]
        fn any_sample_round_trips(
            counts in proptest::collection::vec(0u64..1_000_000, 6),
            slot in 0usize..HIST_SLOTS,
            at in any::<u64>(),
        ) {
            let mut t = sample(1);
            t.at_ns = at;
            for (i, c) in counts.iter().enumerate() {
                let s = &mut t.irqs[i % 2].1[i % 3];
                s.count = *c;
                s.hist = [0; HIST_SLOTS];
                s.hist[slot] = *c;
                t.softirqs[0].1[i % 3].latency.hist[(slot + i) % HIST_SLOTS] = *c;
            }
            let all = [0, 1, 2];
            let m = cells(&t, &all);
            let keys = row_keys(&t, &all, &|_| true);
            let get = |k: &str, c: Option<u32>| m.get(&(k.to_string(), c)).copied().unwrap_or(0);
            prop_assert_eq!(rebuild(&keys, &[0, 1, 2], &get).unwrap(), t);
        }
    }
}
