use super::*;
use crate::sampler::counters::SampleCounters;

fn opts(per_cpu: PerCpu, naming: Naming) -> Options {
    Options {
        per_cpu,
        filter: crate::filter::Filter::default(),
        naming,
        ticks_per_s: 100,
    }
}

fn sample(interrupts: &str) -> SampleCounters {
    let mut s = SampleCounters::default();
    s.snap.interrupts = irqlab_core::Interrupts::parse(interrupts.as_bytes()).ok();
    s.snap.softirqs =
        irqlab_core::Softirqs::parse(b"                    CPU0       CPU1\n          HI:          1          2\n      NET_RX:         10         20\n").ok();
    s.snap.stat = irqlab_core::Stat::parse(b"cpu  1 2 3 4 5 150 7 0 0 0\ncpu0 1 2 3 4 5 50 7 0 0 0\ncpu1 1 2 3 4 5 100 7 0 0 0\nintr 0\n").ok();
    s
}

const TWO: &str = "           CPU0       CPU1\n 24:          5          7  IO-APIC   9-fasteoi   acpi\nLOC:        100        200   Local timer interrupts\nERR:          3\n";

fn body(r: &mut Renderer, s: &SampleCounters) -> String {
    let mut out = Vec::new();
    r.render(s.view(), &OwnStats::default(), &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn all_mode_lists_every_cpu_with_identity_labels() {
    let mut r = Renderer::new(opts(PerCpu::All, Naming::Irqlab));
    let b = body(&mut r, &sample(TWO));
    assert!(
        b.contains(
            "irqlab_interrupts_total{cpu=\"1\",irq=\"24\",chip=\"IO-APIC\",actions=\"acpi\"} 7\n"
        ),
        "{b}"
    );
    assert!(
        b.contains("irqlab_interrupts_total{cpu=\"0\",irq=\"LOC\",chip=\"\",actions=\"\"} 100\n")
    );
    assert!(
        b.contains("irqlab_interrupts_total{cpu=\"all\",irq=\"ERR\",chip=\"\",actions=\"\"} 3\n")
    );
    assert!(b.contains("irqlab_softirqs_total{cpu=\"1\",vector=\"NET_RX\"} 20\n"));
    assert!(
        b.contains("irqlab_cpu_irq_seconds_total{cpu=\"1\"} 1\n"),
        "{b}"
    );
    assert!(b.contains("irqlab_cpu_softirq_seconds_total{cpu=\"0\"} 0.07\n"));
}

#[test]
fn node_mode_uses_node_exporter_names() {
    let mut r = Renderer::new(opts(PerCpu::All, Naming::Node));
    let b = body(&mut r, &sample(TWO));
    assert!(b.contains("node_interrupts_total{cpu=\"0\",type=\"24\",info=\"IO-APIC\",devices=\"9-fasteoi acpi\"} 5\n"), "{b}");
    assert!(b.contains("node_interrupts_total{cpu=\"1\",type=\"LOC\",info=\"Local timer interrupts\",devices=\"\"} 200\n"));
    assert!(
        !b.contains("type=\"ERR\""),
        "node_exporter skips single-value rows"
    );
    assert!(b.contains("node_softirqs_functions_total{cpu=\"0\",type=\"HI\"} 1\n"));
    assert!(
        b.contains("node_cpu_seconds_total{cpu=\"1\",mode=\"irq\"} 1\n"),
        "{b}"
    );
}

#[test]
fn sum_mode_does_not_drop_when_a_cpu_goes_offline() {
    let mut r = Renderer::new(opts(PerCpu::Sum, Naming::Irqlab));
    let b = body(&mut r, &sample(TWO));
    assert!(b.contains("irqlab_interrupts_total{cpu=\"all\",irq=\"24\",chip=\"IO-APIC\",actions=\"acpi\"} 12\n"), "{b}");
    let one = "           CPU0\n 24:          6  IO-APIC   9-fasteoi   acpi\n";
    let b = body(&mut r, &sample(one));
    assert!(
        b.contains("irq=\"24\",chip=\"IO-APIC\",actions=\"acpi\"} 13\n"),
        "{b}"
    );
}

#[test]
fn top_mode_shows_k_cpus_and_a_monotonic_other() {
    let mut r = Renderer::new(opts(PerCpu::Top(1), Naming::Irqlab));
    let b = body(&mut r, &sample(TWO));
    assert!(
        b.contains("{cpu=\"1\",irq=\"24\",chip=\"IO-APIC\",actions=\"acpi\"} 7\n"),
        "{b}"
    );
    assert!(b.contains("{cpu=\"other\",irq=\"24\",chip=\"IO-APIC\",actions=\"acpi\"} 5\n"));
    // CPU 0 overtakes CPU 1: CPU 1's increments (1) go to other from now on.
    let next =
        "           CPU0       CPU1\n 24:         20          8  IO-APIC   9-fasteoi   acpi\n";
    let b = body(&mut r, &sample(next));
    assert!(
        b.contains("{cpu=\"0\",irq=\"24\",chip=\"IO-APIC\",actions=\"acpi\"} 20\n"),
        "{b}"
    );
    assert!(
        b.contains("{cpu=\"other\",irq=\"24\",chip=\"IO-APIC\",actions=\"acpi\"} 6\n"),
        "{b}"
    );
}

#[test]
fn filters_and_escaping() {
    let mut o = opts(PerCpu::All, Naming::Irqlab);
    o.filter.exclude = regex::Regex::new("^LOC$").ok();
    let mut r = Renderer::new(o);
    let quoted = "           CPU0\n 30:          1  PCI-MSI   5-edge   a\"b\\c\n";
    let b = body(&mut r, &sample(quoted));
    assert!(b.contains("actions=\"a\\\"b\\\\c\"} 1\n"), "{b}");
    let b = body(&mut r, &sample(TWO));
    assert!(!b.contains("irq=\"LOC\""));
}

#[test]
fn seconds_are_exact_decimals() {
    let mut o = Vec::new();
    SeriesValue::Seconds {
        count: 1_500_000_001,
        unit: 1_000_000_000,
    }
    .write(&mut o);
    o.push(b' ');
    SeriesValue::Seconds {
        count: 7,
        unit: 100,
    }
    .write(&mut o);
    assert_eq!(String::from_utf8(o).unwrap(), "1.500000001 0.07");
}

/// The labels cached per row position follow the rows: a renderer that
/// rendered other samples before writes the same body as a fresh one,
/// when rows are replaced, move, repeat (arch labels numbered `#1`
/// among the kept rows only) or are dropped by the filter, in both
/// namings.
#[test]
fn cached_row_labels_equal_a_fresh_renderers_when_rows_change() {
    let samples = [
        TWO,
        "           CPU0       CPU1\n 24:          5          7  IO-APIC   9-fasteoi   acpi\n 25:          1          1  IO-APIC   10-edge   eth\"0\nLOC:        100        200   Local timer interrupts\nERR:          3\n",
        "           CPU0       CPU1\n 25:          1          1  IO-APIC   10-edge   eth\"0\n 24:          5          7  IO-APIC   9-fasteoi   acpi\nLOC:        100        200   Local timer interrupts\nLOC:        100        200   Local timer again\nERR:          3\n",
        "           CPU0       CPU1\nLOC:        100        200   skipped\n 24:          5          7  IO-APIC   9-fasteoi   acpi,\\ x\nLOC:        100        200   Local timer interrupts\nLOC:        100        200   Local timer again\nERR:          4\n",
        TWO,
    ];
    for naming in [Naming::Irqlab, Naming::Node] {
        for irq in [None, Some("^(24|LOC|ERR)$"), Some("timer|acpi|ERR")] {
            let mut o = opts(PerCpu::All, naming);
            o.filter = crate::filter::Filter::from_flags(irq, None).unwrap();
            let mut used = Renderer::new(o.clone());
            // each twice: the second time every row is the last body's
            for (i, text) in samples.iter().flat_map(|t| [t, t]).enumerate() {
                let s = sample(text);
                let fresh = body(&mut Renderer::new(o.clone()), &s);
                assert_eq!(body(&mut used, &s), fresh, "{naming:?} {irq:?} sample {i}");
            }
        }
    }
}

#[test]
fn seconds_digits_equal_the_formatted_decimal() {
    // the fraction is written without `format!`: the same bytes as
    // `.{frac:09}` with its trailing zeros dropped
    let units = [1u64, 3, 7, 100, 1000, 1_000_000_000, 1_000_000_007];
    let counts = (0..2000u64).chain([u64::MAX, u64::MAX - 1, 999_999_999, 1_000_000_001]);
    for count in counts {
        for unit in units {
            let mut got = Vec::new();
            SeriesValue::Seconds { count, unit }.write(&mut got);
            let frac = u128::from(count % unit) * 1_000_000_000 / u128::from(unit);
            let mut want = (count / unit).to_string();
            if frac != 0 {
                want.push_str(format!(".{frac:09}").trim_end_matches('0'));
            }
            assert_eq!(String::from_utf8(got).unwrap(), want, "{count}/{unit}");
        }
    }
}

#[test]
fn label_pairs_written_in_place_equal_the_joined_labels() {
    let odd = [
        "",
        "0",
        "all",
        "a\"b",
        "back\\slash",
        "new\nline",
        "ünï",
        "\\\"\n",
    ];
    for a in odd {
        for b in odd {
            let pairs = [("irq", a), ("thread", b)];
            let (mut joined, mut direct, mut series) = (Vec::new(), Vec::new(), 0);
            let mut fam = Family {
                name: "f",
                out: &mut joined,
                series: &mut series,
            };
            fam.line(labels(&pairs).as_bytes(), SeriesValue::Int(7));
            let mut fam = Family {
                name: "f",
                out: &mut direct,
                series: &mut series,
            };
            fam.line_pairs(&pairs, SeriesValue::Int(7));
            assert_eq!(joined, direct, "{a:?} {b:?}");
            assert_eq!(series, 2);
        }
    }
}

/// What a renderer keeps per row follows the CPU columns: one that
/// rendered other CPU sets before (CPUs going offline, coming back, new
/// ones, `--cpus` picking some) writes the same body as a fresh one.
#[test]
fn a_used_renderer_equals_a_fresh_one_when_cpus_change() {
    let samples = [
        "           CPU0       CPU1\n 24:          5          7  IO-APIC   9-fasteoi   acpi\nLOC:        100        200   Local timer interrupts\n",
        "           CPU0\n 24:          6  IO-APIC   9-fasteoi   acpi\nLOC:        101   Local timer interrupts\n",
        "           CPU0       CPU1       CPU2\n 24:          6          8          1  IO-APIC   9-fasteoi   acpi\nLOC:        102        201          5   Local timer interrupts\n",
        "           CPU1       CPU2\n 24:          8          1  IO-APIC   9-fasteoi   acpi\nLOC:        201          5   Local timer interrupts\n",
    ];
    for naming in [Naming::Irqlab, Naming::Node] {
        for cpus in [None, Some("1-2")] {
            let mut o = opts(PerCpu::All, naming);
            if let Some(c) = cpus {
                o.filter = crate::filter::Filter::from_flags(None, Some(c)).unwrap();
            }
            let mut used = Renderer::new(o.clone());
            for (i, text) in samples.iter().enumerate() {
                let s = sample(text);
                let fresh = body(&mut Renderer::new(o.clone()), &s);
                assert_eq!(body(&mut used, &s), fresh, "{naming:?} {cpus:?} sample {i}");
            }
        }
    }
}

#[test]
fn prefixed_lines_equal_the_lines_written_whole() {
    let cpus = [0, 7, 1151];
    let mut pre = CpuPrefixes::default();
    pre.prepare("irqlab_interrupts_total", &cpus);
    for key in ["", "irq=\"24\",chip=\"IO-APIC\""] {
        let mut tail = Vec::new();
        line_tail(&mut tail, key.as_bytes());
        for (i, &c) in cpus.iter().enumerate() {
            let (mut a, mut b, mut n) = (Vec::new(), Vec::new(), 0);
            let v = SeriesValue::Int(u64::from(c) * 1000 + 3);
            let prefix = pre.get(i, c).unwrap();
            Family {
                name: "irqlab_interrupts_total",
                out: &mut a,
                series: &mut n,
            }
            .line_prefixed(prefix, &tail, v);
            let cpu = c.to_string();
            Family {
                name: "irqlab_interrupts_total",
                out: &mut b,
                series: &mut n,
            }
            .line_cpu(&cpu, key.as_bytes(), v);
            assert_eq!(String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
        }
    }
}

#[test]
fn prefixes_are_only_given_for_the_cpu_list_they_were_built_for() {
    let mut pre = CpuPrefixes::default();
    pre.prepare("f", &[0, 1]);
    assert_eq!(pre.get(1, 1), Some(&b"f{cpu=\"1"[..]));
    assert_eq!(pre.get(1, 2), None);
    assert_eq!(pre.get(2, 2), None);
    pre.prepare("f", &[0, 2]);
    assert_eq!(pre.get(1, 2), Some(&b"f{cpu=\"2"[..]));
    pre.prepare("g", &[0, 2]);
    assert_eq!(pre.get(0, 0), Some(&b"g{cpu=\"0"[..]));
}

#[test]
fn ksoftirqd_lines_carry_the_cpu_label_only() {
    let threads = [ThreadCpu {
        pid: Some(30),
        name: "ksoftirqd/3".into(),
        kind: ThreadKind::Ksoftirqd { cpu: 3 },
        cpu_pct: 0.0,
        last_cpu: None,
        cpu_ns: 1_500_000_000,
    }];
    let mut r = Renderer::new(opts(PerCpu::All, Naming::Irqlab));
    let mut out = Vec::new();
    r.threads(&threads, &mut out);
    let b = String::from_utf8(out).unwrap();
    assert!(
        b.contains("\nirqlab_ksoftirqd_cpu_seconds_total{cpu=\"3\"} 1.5\n"),
        "{b}"
    );
}

/// Sample `i` (one a second) of a host whose CPU 1 goes offline at
/// sample 4 and comes back at 5, whose LOC count on CPU 0 wraps at 3 and
/// whose IRQ 24 is freed and reused by another action at 6, back at 7:
/// interrupts, softirqs, `/proc/stat` and ksoftirqd threads.
fn moving_sample(i: u64) -> SampleCounters {
    let cpus: &[u32] = if i == 4 { &[0, 2] } else { &[0, 1, 2] };
    let grow = |cpu: u32, base: u64| base + i * (u64::from(cpu) + 1) * 7;
    let loc0 = if i < 3 {
        u64::from(u32::MAX) - 30 + i * 10
    } else {
        i * 10
    };
    let action = if i == 6 { "eth0" } else { "acpi" };
    let row = |label: &str, f: &dyn Fn(u32) -> u64, desc: &str| {
        let cols: String = cpus.iter().map(|&c| format!(" {:>10}", f(c))).collect();
        format!("{label}:{cols}  {desc}\n")
    };
    let head: String = cpus.iter().map(|c| format!("       CPU{c}")).collect();
    let mut text = format!("     {head}\n");
    text += &row(
        " 24",
        &|c| grow(c, 5),
        &format!("IO-APIC   9-fasteoi   {action}"),
    );
    text += &row(
        "LOC",
        &|c| if c == 0 { loc0 } else { grow(c, 100) },
        "Local timer interrupts",
    );
    text += &format!("ERR: {:>10}\n", 3 + i);
    let mut s = SampleCounters::default();
    s.snap.mono_ns = (i + 1) * 1_000_000_000;
    s.snap.wall_ns = s.snap.mono_ns;
    s.snap.interrupts = Some(irqlab_core::Interrupts::parse(text.as_bytes()).unwrap());
    let mut soft = format!("     {head}\n");
    soft += &row("      HI", &|c| grow(c, 1), "");
    soft += &row("  NET_RX", &|c| grow(c, 10), "");
    s.snap.softirqs = Some(irqlab_core::Softirqs::parse(soft.as_bytes()).unwrap());
    let stat_line = |name: String, v: u64| format!("{name} 1 2 3 4 5 {v} {} 0 0 0\n", 2 * v);
    let mut stat = stat_line("cpu ".into(), 1000 + i);
    for &c in cpus {
        stat += &stat_line(format!("cpu{c}"), grow(c, 50));
    }
    stat += "intr 0\n";
    s.snap.stat = Some(irqlab_core::Stat::parse(stat.as_bytes()).unwrap());
    s.threads = cpus
        .iter()
        .map(|&cpu| ThreadCpu {
            pid: Some(10 + cpu),
            name: format!("ksoftirqd/{cpu}"),
            kind: ThreadKind::Ksoftirqd { cpu },
            cpu_pct: 0.0,
            last_cpu: Some(cpu),
            cpu_ns: grow(cpu, 1_000_000),
        })
        .collect();
    s
}

/// Bodies written only at some samples (the others only accumulated, as
/// cached mode does when nobody scrapes) are, byte for byte, those of a
/// renderer writing every sample: across a wrap, a CPU going offline and
/// back, and an IRQ number reused by another action between two bodies,
/// in every per-CPU mode, both namings, with and without `--cpus`.
#[test]
fn bodies_written_at_some_samples_equal_those_written_at_every_sample() {
    let samples: Vec<SampleCounters> = (0..10).map(moving_sample).collect();
    let patterns: [&[usize]; 4] = [&[0, 2, 5, 8, 9], &[0, 9], &[1, 3, 7], &[6, 8]];
    let mut skipping_differs = false;
    for per_cpu in [PerCpu::All, PerCpu::Sum, PerCpu::Top(1), PerCpu::Top(2)] {
        for naming in [Naming::Irqlab, Naming::Node] {
            for cpus in [None, Some("0-1")] {
                let mut o = opts(per_cpu, naming);
                o.filter = crate::filter::Filter::from_flags(None, cpus).unwrap();
                let mut every = Renderer::new(o.clone());
                let all: Vec<String> = samples.iter().map(|s| body(&mut every, s)).collect();
                if (per_cpu, naming, cpus) == (PerCpu::All, Naming::Irqlab, None) {
                    assert!(all[6]
                        .contains("{cpu=\"1\",irq=\"24\",chip=\"IO-APIC\",actions=\"eth0\"} 89\n"));
                    assert!(!all[4].contains("cpu=\"1\""), "{}", all[4]);
                    assert!(all[3].contains("{cpu=\"0\",irq=\"LOC\",chip=\"\",actions=\"\"} 30\n"));
                }
                for written in patterns {
                    let mut lazy = Renderer::new(o.clone());
                    let mut skipping = Renderer::new(o.clone());
                    for (i, s) in samples.iter().enumerate() {
                        lazy.accumulate(s.view());
                        if !written.contains(&i) {
                            continue;
                        }
                        let mut out = Vec::new();
                        lazy.write(s.view(), &OwnStats::default(), &mut out);
                        let got = String::from_utf8(out).unwrap();
                        let ctx = format!("{per_cpu:?} {naming:?} {cpus:?} {written:?} sample {i}");
                        assert_eq!(got, all[i], "{ctx}");
                        skipping_differs |= body(&mut skipping, s) != all[i];
                    }
                }
            }
        }
    }
    // The samples exercise the sums: rendering only some of them (the
    // others not accumulated) would give other bodies.
    assert!(skipping_differs);
}

/// The `/proc/interrupts` text of a synth powerpc machine: `LOC` twice
/// ("… for timer event device", "… for others"), the second's count on
/// CPU 0 raised by `bump`.
fn powerpc_text(bump: u64) -> String {
    use irqlab_core::render::{Arch, Era};
    let spec = irqlab_core::synth::SynthSpec {
        cpus: 2,
        irqs: 4,
        nr_irqs: 424,
        arch: Arch::Powerpc,
        era: Era::E3,
        offline: Vec::new(),
        seed: 1,
    };
    let mut tree = spec.build().unwrap();
    let mut locs = tree
        .interrupts
        .rows_mut()
        .iter_mut()
        .filter(|r| r.label == "LOC");
    let (_, second) = (locs.next().unwrap(), locs.next().unwrap());
    second.counts[0] += bump;
    tree.interrupts_text()
}

/// Both powerpc `LOC` rows are exported, with distinct label sets, and a
/// change to the second shows in its own series, in both namings.
#[test]
fn both_rows_of_a_repeated_arch_label_are_exported() {
    for naming in [Naming::Irqlab, Naming::Node] {
        for per_cpu in [PerCpu::All, PerCpu::Sum] {
            let mut r = Renderer::new(opts(per_cpu, naming));
            let before = body(&mut r, &sample(&powerpc_text(0)));
            let after = body(&mut r, &sample(&powerpc_text(1000)));
            let name = match naming {
                Naming::Irqlab => "irqlab_interrupts_total{",
                Naming::Node => "node_interrupts_total{",
            };
            let locs = |b: &str| -> Vec<String> {
                b.lines()
                    .filter(|l| l.starts_with(name) && l.contains("LOC"))
                    .map(str::to_string)
                    .collect()
            };
            let (b, a) = (locs(&before), locs(&after));
            let per_row = if per_cpu == PerCpu::All { 2 } else { 1 };
            assert_eq!(b.len(), 2 * per_row, "{naming:?} {per_cpu:?}\n{before}");
            let key = |l: &String| l.rsplit_once(' ').unwrap().0.to_string();
            let keys: std::collections::BTreeSet<_> = b.iter().map(key).collect();
            assert_eq!(keys.len(), b.len(), "{b:?}");
            let changed: Vec<_> = b.iter().zip(&a).filter(|(x, y)| x != y).collect();
            assert_eq!(changed.len(), 1, "{naming:?} {per_cpu:?} {b:?} {a:?}");
            let second = match naming {
                Naming::Irqlab => "irq=\"LOC#1\"",
                Naming::Node => "for others",
            };
            assert!(changed[0].0.contains(second), "{changed:?}");
            if naming == Naming::Node {
                // node_exporter's `type` is the row's label: the rows
                // differ by `info`
                assert!(b.iter().all(|l| l.contains("type=\"LOC\",")), "{b:?}");
            }
        }
    }
}

/// Under node naming, rows of one label with the same description too
/// are told apart by `type` (`LOC#1`): no two series share labels.
#[test]
fn node_naming_numbers_only_rows_equal_in_label_and_description() {
    let text = "           CPU0       CPU1\nLOC:        100        200   Local timer interrupts\nLOC:          1          2   Local timer interrupts\nLOC:          3          4   Other timer\n";
    let mut r = Renderer::new(opts(PerCpu::All, Naming::Node));
    let b = body(&mut r, &sample(text));
    for want in [
        "node_interrupts_total{cpu=\"0\",type=\"LOC\",info=\"Local timer interrupts\",devices=\"\"} 100\n",
        "node_interrupts_total{cpu=\"0\",type=\"LOC#1\",info=\"Local timer interrupts\",devices=\"\"} 1\n",
        "node_interrupts_total{cpu=\"1\",type=\"LOC\",info=\"Other timer\",devices=\"\"} 4\n",
    ] {
        assert!(b.contains(want), "{want:?} not in\n{b}");
    }
}

/// A sample taken at second `t` whose `/proc/interrupts` is `text`.
fn sample_at(text: &str, t: u64) -> SampleCounters {
    let mut s = sample(text);
    s.snap.mono_ns = t * 1_000_000_000;
    s.snap.wall_ns = s.snap.mono_ns;
    s
}

/// The value of the `cpu="all"` series of the arch row `label` in `b`.
fn all_value(b: &str, label: &str) -> Option<u64> {
    let prefix =
        format!("irqlab_interrupts_total{{cpu=\"all\",irq=\"{label}\",chip=\"\",actions=\"\"}} ");
    b.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.parse().ok())
}

/// The `cpu="all"` values of `label` in the bodies of `values`' rows
/// (`row(v)` is the `/proc/interrupts` text), one sample a second.
fn single_series(
    per_cpu: PerCpu,
    label: &str,
    row: impl Fn(u64) -> String,
    values: &[u64],
) -> Vec<Option<u64>> {
    let mut r = Renderer::new(opts(per_cpu, Naming::Irqlab));
    values
        .iter()
        .zip(1..)
        .map(|(&v, t)| all_value(&body(&mut r, &sample_at(&row(v), t)), label))
        .collect()
}

/// x86's `ERR:` line (and `MIS:`, alike) under two CPUs.
fn x86_err(v: u64) -> String {
    format!("           CPU0       CPU1\nLOC:        100        200   Local timer interrupts\nERR: {v:>10}\nMIS:          0\n")
}

/// arm64's `Err:` line under `cpus` CPUs (one CPU: the parser cannot
/// tell it from a per-CPU row).
fn arm64_err(cpus: u32, v: u64) -> String {
    let head: String = (0..cpus).map(|c| format!("       CPU{c}")).collect();
    let ipi: String = (0..cpus).map(|c| format!(" {:>10}", 10 + c)).collect();
    format!("    {head}\nIPI0:{ipi}       Rescheduling interrupts\nErr: {v:>10}\n")
}

const MAX32: u64 = u32::MAX as u64;

/// x86's `ERR` (`atomic_t`, 32-bit) under `sum` and `top=K` is a
/// monotonic sum: a wrap adds its modular difference, a value above
/// 2^32 − 1 (no kernel value) or a step back adds nothing and the sum
/// counts on from the next value; under `all` it is the raw value.
#[test]
fn a_32_bit_single_value_row_is_a_monotonic_sum_at_its_width() {
    let values = [MAX32 - 5, 5, 1 << 32, 7, 9, 3, 4];
    let sums = [
        MAX32 - 5,
        MAX32 + 6, // the wrap: +11
        MAX32 + 6, // above 2^32 - 1: a gap
        MAX32 + 6, // from that value: a gap
        MAX32 + 8,
        MAX32 + 8, // a step back: a reset gap
        MAX32 + 9,
    ];
    let want: Vec<Option<u64>> = sums.iter().copied().map(Some).collect();
    for per_cpu in [PerCpu::Sum, PerCpu::Top(1)] {
        let got = single_series(per_cpu, "ERR", x86_err, &values);
        assert_eq!(got, want, "{per_cpu:?}");
        assert!(got.windows(2).all(|w| w[0] <= w[1]), "{per_cpu:?} {got:?}");
    }
    let raw = single_series(PerCpu::All, "ERR", x86_err, &values);
    assert_eq!(raw, values.map(Some).to_vec(), "all: raw values");
    // Seen first above 2^32 - 1: nothing summed until a kernel value.
    let got = single_series(PerCpu::Sum, "ERR", x86_err, &[1 << 32, 10, 12]);
    assert_eq!(got, [Some(0), Some(0), Some(2)]);
}

/// arm64's `Err` (`unsigned long`) stays 64-bit in the sums: a value
/// above 2^32 − 1 is counted, a decrease is a reset (no wrap), also with
/// one online CPU, where the row looks per-CPU (under `top=K` it is then
/// written as every row of that host: `cpu="0"`, raw, and `other`), and
/// across the change from two CPUs to one.
#[test]
fn an_arm64_err_is_summed_at_64_bits() {
    let values = [MAX32 - 5, MAX32 + 5, 5, 15];
    let want = [MAX32 - 5, MAX32 + 5, MAX32 + 5, MAX32 + 15].map(Some);
    for cpus in [1, 2] {
        for per_cpu in [PerCpu::Sum, PerCpu::Top(1)] {
            if (cpus, per_cpu) == (1, PerCpu::Top(1)) {
                continue;
            }
            let got = single_series(per_cpu, "Err", |v| arm64_err(cpus, v), &values);
            assert_eq!(got, want, "{cpus} CPUs {per_cpu:?}");
        }
        let got = single_series(PerCpu::Sum, "Err", |v| arm64_err(cpus, v), &[1 << 40]);
        assert_eq!(got, [Some(1 << 40)], "{cpus} CPUs: first sight");
    }
    // CPU 1 goes offline between the second and third sample.
    let mut r = Renderer::new(opts(PerCpu::Sum, Naming::Irqlab));
    let steps = [
        (2, MAX32 - 5),
        (2, MAX32 + 5),
        (1, MAX32 + 8),
        (2, MAX32 + 9),
    ];
    let got: Vec<Option<u64>> = steps
        .iter()
        .zip(1..)
        .map(|(&(cpus, v), t)| all_value(&body(&mut r, &sample_at(&arm64_err(cpus, v), t)), "Err"))
        .collect();
    assert_eq!(got, [MAX32 - 5, MAX32 + 5, MAX32 + 8, MAX32 + 9].map(Some));
}

/// An irregular row (an old vendor kernel's IPI row of a count per
/// possible CPU under a header of online CPUs) has one series,
/// `cpu="all"`: under `sum` and `top=K` a monotonic sum of its columns'
/// increments (a column's wrap adds its modular difference), under
/// `all` the raw total of its columns.
#[test]
fn an_irregular_row_is_a_monotonic_sum_of_its_columns() {
    let row = |v: u64| {
        format!("           CPU0       CPU1\nIPI0: {v:>10} {:>10} {:>10} {:>10}   Rescheduling interrupts\n", 5, 7, 9)
    };
    let values = [MAX32 - 5, 4, 6];
    for per_cpu in [PerCpu::Sum, PerCpu::Top(1)] {
        let got = single_series(per_cpu, "IPI0", row, &values);
        assert_eq!(
            got,
            [MAX32 + 16, MAX32 + 26, MAX32 + 28].map(Some),
            "{per_cpu:?}"
        );
    }
    let raw = single_series(PerCpu::All, "IPI0", row, &values);
    assert_eq!(raw, [MAX32 + 16, 25, 27].map(Some), "all: the raw total");
}

/// The HELP text of family `name` in a body served under `per_cpu`.
fn help(per_cpu: PerCpu, name: &str) -> String {
    let mut r = Renderer::new(opts(per_cpu, Naming::Irqlab));
    let b = body(&mut r, &sample(TWO));
    let prefix = format!("# HELP {name} ");
    b.lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_else(|| panic!("no HELP of {name} in {b}"))
}

/// The HELP of the interrupt and softirq families says which values are
/// raw counters: all of them under `all`, none but a shown CPU's under
/// `sum` and `top=K`.
#[test]
fn help_says_which_values_are_raw() {
    for name in ["irqlab_interrupts_total", "irqlab_softirqs_total"] {
        let all = help(PerCpu::All, name);
        assert!(all.contains("(raw /proc/"), "{all}");
        let sum = help(PerCpu::Sum, name);
        assert!(!sum.contains("raw"), "{sum}");
        assert!(sum.contains("cpu all: a monotonic sum"), "{sum}");
        let top = help(PerCpu::Top(2), name);
        assert!(
            top.contains("top K CPUs") && top.contains("monotonic sum"),
            "{top}"
        );
        for h in [all, sum, top] {
            assert!(!h.contains(['"', '\\', '\n']), "{h}");
        }
    }
}

#[test]
fn cpu_time_and_ksoftirqd_help_say_what_each_mode_exports() {
    for name in [
        "irqlab_cpu_irq_seconds_total",
        "irqlab_cpu_softirq_seconds_total",
    ] {
        let all = help(PerCpu::All, name);
        assert!(all.contains("per CPU (raw /proc/stat"), "{all}");
        for per_cpu in [PerCpu::Sum, PerCpu::Top(2)] {
            let one = help(per_cpu, name);
            assert!(one.contains(", cpu all (raw /proc/stat total"), "{one}");
            assert!(!one.contains("per CPU"), "{one}");
        }
    }
    let name = "irqlab_ksoftirqd_cpu_seconds_total";
    assert!(help(PerCpu::All, name).contains("per CPU N"));
    assert!(help(PerCpu::Sum, name).contains("cpu all: a monotonic sum"));
    let top = help(PerCpu::Top(2), name);
    assert!(top.contains("top K") && top.contains("cpu other"), "{top}");
    for per_cpu in [PerCpu::All, PerCpu::Sum, PerCpu::Top(2)] {
        for name in [
            "irqlab_cpu_irq_seconds_total",
            "irqlab_cpu_softirq_seconds_total",
            "irqlab_ksoftirqd_cpu_seconds_total",
        ] {
            let h = help(per_cpu, name);
            assert!(!h.contains(['"', '\\', '\n']), "{h}");
        }
    }
}
