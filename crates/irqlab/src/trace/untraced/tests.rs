use super::*;
use crate::trace::sample::{SoftirqStats, Stats};

/// /proc/interrupts of two CPUs with the x86 vector rows `RES`, `CAL`,
/// `LOC` and the single-value `ERR`.
fn irqs(res: [u64; 2], cal: [u64; 2], loc: [u64; 2]) -> Interrupts {
    let text = format!(
        "           CPU0       CPU1       \n\
         \x20 1:          9          0  IO-APIC   1-edge      i8042\n\
         LOC: {:>10} {:>10}   Local timer interrupts\n\
         RES: {:>10} {:>10}   Rescheduling interrupts\n\
         CAL: {:>10} {:>10}   Function call interrupts\n\
         ERR:          0\n",
        loc[0], loc[1], res[0], res[1], cal[0], cal[1]
    );
    Interrupts::parse(text.as_bytes()).unwrap()
}

/// /proc/softirqs of two CPUs: `TIMER` and `NET_RX` per CPU.
fn soft(timer: [u64; 2], net_rx: [u64; 2]) -> Softirqs {
    let text = format!(
        "                    CPU0       CPU1\n\
         \x20         TIMER: {:>10} {:>10}\n\
         \x20        NET_RX: {:>10} {:>10}\n",
        timer[0], timer[1], net_rx[0], net_rx[1]
    );
    Softirqs::parse(text.as_bytes()).unwrap()
}

fn stats(count: u64) -> Stats {
    Stats {
        count,
        ..Stats::default()
    }
}

fn vector(label: &str, tracepoint: &str, per_cpu: [u64; 2]) -> (TraceKey, Vec<Stats>) {
    let key = TraceKey::Vector {
        label: label.into(),
        tracepoint: tracepoint.into(),
    };
    (key, per_cpu.iter().map(|&n| stats(n)).collect())
}

/// A sample with RES, CAL as two vectors (call_function 1 per CPU, the
/// rest call_function_single) and softirqs TIMER (1) and NET_RX (3).
fn sample(res: [u64; 2], cal: [u64; 2], timer: [u64; 2], net_rx: [u64; 2]) -> Sample {
    let soft = |v: [u64; 2]| {
        v.iter()
            .map(|&n| SoftirqStats {
                run: stats(n),
                ..SoftirqStats::default()
            })
            .collect()
    };
    Sample {
        irqs: vec![
            vector("RES", "reschedule", res),
            vector("CAL", "call_function", [1, 1]),
            vector("CAL", "call_function_single", [cal[0] - 1, cal[1] - 1]),
        ],
        softirqs: vec![(1, soft(timer)), (3, soft(net_rx))],
        ..Sample::default()
    }
}

fn attached(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| format!("irq_vectors:{n}")).collect()
}

#[test]
fn a_group_is_held_only_when_all_its_programs_attached() {
    let mut t = attached(&[
        "reschedule_entry",
        "reschedule_exit",
        "call_function_entry",
        "call_function_exit",
        "call_function_single_entry",
        "local_timer_entry",
    ]);
    assert_eq!(groups(&t), vec!["RES"], "CAL lacks an exit, LOC its exit");
    t.push("irq_vectors:call_function_single_exit".into());
    t.push("irq:softirq_entry".into());
    t.push("irq:softirq_exit".into());
    assert_eq!(groups(&t), vec!["RES", "CAL", SOFTIRQ]);
}

#[test]
fn kernel_counts_take_per_cpu_vector_rows_and_sum_softirqs() {
    let k = kernel_counts(
        &["RES", "ERR", "PLT", SOFTIRQ],
        Some(&irqs([5, 6], [7, 8], [1, 2])),
        &soft([10, 20], [1, 2]),
    );
    assert_eq!(k["RES"], [(0, 5), (1, 6)].into());
    assert!(k["ERR"].is_empty(), "a single-value row has no CPUs");
    assert!(k["PLT"].is_empty(), "a row this machine lacks");
    assert_eq!(k[SOFTIRQ], [(0, 11), (1, 22)].into());
    // without /proc/interrupts, the softirqs alone
    let k = kernel_counts(&["RES", SOFTIRQ], None, &soft([10, 20], [1, 2]));
    assert!(!k.contains_key("RES"), "{k:?}");
    assert_eq!(k[SOFTIRQ], [(0, 11), (1, 22)].into());
}

#[test]
fn every_run_traced_is_no_shortfall() {
    let g = vec!["RES", "CAL", SOFTIRQ];
    let mut u = Untraced::new(g);
    u.baseline(
        &irqs([100, 200], [50, 60], [0, 0]),
        &soft([10, 20], [5, 5]),
        &sample([3, 4], [2, 2], [1, 1], [1, 1]),
    );
    u.kernel(
        Some(&irqs([130, 260], [80, 61], [0, 0])),
        &soft([20, 25], [5, 9]),
    );
    // the kernel's runs since: RES 30, 60; CAL 30, 1; softirq 10, 9
    let all = sample([33, 64], [32, 3], [6, 6], [6, 5]);
    assert!(u.shortfall(&all).is_empty());
    // one run short per CPU is the run in flight at the read: not said
    let one = sample([32, 63], [31, 2], [5, 6], [6, 4]);
    assert!(u.shortfall(&one).is_empty());
    // more traced than counted (runs between the two reads) is no shortfall
    let more = sample([40, 70], [40, 9], [9, 9], [9, 9]);
    assert!(u.shortfall(&more).is_empty());
}

#[test]
fn runs_no_program_saw_are_the_shortfall_less_one_per_cpu() {
    let mut u = Untraced::new(vec!["RES", SOFTIRQ]);
    u.baseline(
        &irqs([100, 200], [0, 0], [0, 0]),
        &soft([0, 0], [0, 0]),
        &sample([0, 0], [2, 2], [0, 0], [0, 0]),
    );
    u.kernel(
        Some(&irqs([150, 300], [0, 0], [0, 0])),
        &soft([40, 0], [0, 10]),
    );
    let s = sample([40, 100], [2, 2], [30, 0], [0, 9]);
    let short = u.shortfall(&s);
    // RES: CPU 0 counted 50, traced 40: 9 beyond the in-flight one
    // softirq: CPU 0 40 against 30 (9), CPU 1 10 against 9 (0)
    assert_eq!(short, [("RES".into(), 9), (SOFTIRQ.into(), 9)].into());
}

#[test]
fn a_wrapped_kernel_count_is_runs_not_a_gap() {
    let mut u = Untraced::new(vec!["RES"]);
    let near = (1u64 << 32) - 5;
    u.baseline(
        &irqs([near, 0], [0, 0], [0, 0]),
        &soft([0, 0], [0, 0]),
        &sample([0, 0], [2, 2], [0, 0], [0, 0]),
    );
    u.kernel(Some(&irqs([10, 0], [0, 0], [0, 0])), &soft([0, 0], [0, 0]));
    assert_eq!(u.kernel["RES"][&0], 15);
    assert_eq!(
        u.shortfall(&sample([5, 0], [2, 2], [0, 0], [0, 0])),
        [("RES".into(), 9)].into()
    );
}

#[test]
fn cpus_outside_the_baseline_are_not_held() {
    let mut u = Untraced::new(vec!["RES"]);
    // CPU 1 offline at the baseline: its column is absent
    let one_cpu =
        Interrupts::parse(b"           CPU0\nRES:        100   Rescheduling interrupts\n").unwrap();
    u.baseline(&one_cpu, &soft([0, 0], [0, 0]), &Sample::default());
    u.kernel(
        Some(&irqs([100, 9_999], [0, 0], [0, 0])),
        &soft([0, 0], [0, 0]),
    );
    assert!(
        u.shortfall(&Sample::default()).is_empty(),
        "a CPU that came online brings its history, not runs of this window"
    );
    // and one that goes offline adds nothing while away
    u.kernel(Some(&one_cpu), &soft([0, 0], [0, 0]));
    assert_eq!(u.kernel["RES"][&0], 0);
}

#[test]
fn nothing_is_said_before_the_baseline() {
    let u = Untraced::new(vec!["RES"]);
    assert!(!u.based());
    assert!(u
        .shortfall(&sample([0, 0], [2, 2], [0, 0], [0, 0]))
        .is_empty());
}

#[test]
fn without_proc_interrupts_only_softirqs_advance() {
    let mut u = Untraced::new(vec!["RES", SOFTIRQ]);
    u.baseline(
        &irqs([0, 0], [0, 0], [0, 0]),
        &soft([0, 0], [0, 0]),
        &sample([0, 0], [2, 2], [0, 0], [0, 0]),
    );
    u.kernel(None, &soft([20, 0], [0, 0]));
    assert_eq!(u.kernel["RES"][&0], 0, "kept at its last read");
    assert_eq!(u.kernel[SOFTIRQ][&0], 20);
    // runs traced since are no shortfall of a vector not read again
    let s = sample([50, 0], [2, 2], [10, 0], [0, 0]);
    assert_eq!(u.shortfall(&s), [(SOFTIRQ.into(), 9)].into());
    u.kernel(Some(&irqs([70, 0], [0, 0], [0, 0])), &soft([20, 0], [0, 0]));
    assert_eq!(u.shortfall(&s)["RES"], 19, "said at the next read");
}

#[test]
fn a_dear_file_is_read_at_fewer_reads() {
    // this VM: 0.1 ms a read, reads every 10 ms or 1 s: every read
    assert_eq!(reads_per_read(100_000, 10_000_000, 1), 1);
    assert_eq!(reads_per_read(100_000, 1_000_000_000, 1), 1);
    // 150 ms a read (488 CPUs), reads every second: every 15th
    assert_eq!(reads_per_read(150_000_000, 1_000_000_000, 1), 15);
    // at -i 10ms: every 1 500th, 15 s apart
    assert_eq!(reads_per_read(150_000_000, 10_000_000, 1), 1_500);
    // degenerate inputs stay defined
    assert_eq!(reads_per_read(0, 0, 0), 1);
    assert_eq!(reads_per_read(u64::MAX, 1, 1), u64::MAX, "saturates");
}

/// `trace_live` read the maps twice back to back, then 2 s later: the
/// pair set every 10th read due, so the read 2 s later held the hard IRQ
/// rows against counts of before the window and said none of its
/// missed runs.
#[test]
fn a_read_long_after_the_last_is_due_whatever_the_count_says() {
    // 0.1 ms a read: due 10 ms after it
    assert!(waited_for(2_000_000_000, 100_000, 1));
    assert!(waited_for(10_000_000, 100_000, 1));
    assert!(!waited_for(9_999_999, 100_000, 1));
    // a read that took nothing (none yet) is due at once
    assert!(waited_for(0, 0, 1));
    assert!(!waited_for(0, u64::MAX, 0), "saturates");
}

/// /proc/interrupts of two CPUs with numbered rows 24 (one action), 11
/// (`eleven`'s actions) and 9 (no action), and a `LOC` row.
fn numbered(n24: [u64; 2], n11: [u64; 2], eleven: &str, n9: [u64; 2]) -> Interrupts {
    let text = format!(
        "           CPU0       CPU1       \n\
         \x20 9: {:>10} {:>10}  IO-APIC   9-fasteoi\n\
         \x2011: {:>10} {:>10}  IO-APIC  11-fasteoi   {eleven}\n\
         \x2024: {:>10} {:>10}  PCI-MSIX-0000:00:05.0   1-edge      virtio1-req.0\n\
         LOC:          1          1   Local timer interrupts\n",
        n9[0], n9[1], n11[0], n11[1], n24[0], n24[1]
    );
    Interrupts::parse(text.as_bytes()).unwrap()
}

/// IRQ 11's two actions as /proc/interrupts prints them.
const SHARED: &str = "uhci_hcd:usb1, eth0";

fn action(irq: i32, name: &str, per_cpu: [u64; 2]) -> (TraceKey, Vec<Stats>) {
    let key = TraceKey::Hardirq {
        irq,
        name: name.into(),
    };
    (key, per_cpu.iter().map(|&n| stats(n)).collect())
}

/// A sample of the hard IRQ actions: 24's, and 11's `uhci_hcd:usb1` and
/// `eth0`.
fn hard(n24: [u64; 2], usb: [u64; 2], eth: [u64; 2]) -> Sample {
    Sample {
        irqs: vec![
            action(24, "virtio1-req.0", n24),
            action(11, "uhci_hcd:usb1", usb),
            action(11, "eth0", eth),
        ],
        ..Sample::default()
    }
}

/// An `Untraced` of the hard IRQ group with its baseline taken.
fn hard_based(irqs: &Interrupts, traced: &Sample) -> Untraced {
    let mut u = Untraced::new(vec![HARDIRQ]);
    u.baseline(irqs, &soft([0, 0], [0, 0]), traced);
    u
}

fn hardirq(u: &Untraced, traced: &Sample) -> u64 {
    u.shortfall(traced).get(HARDIRQ).copied().unwrap_or(0)
}

#[test]
fn hard_irqs_are_a_group_when_both_handler_programs_attached() {
    let t = vec!["irq:irq_handler_entry".to_string()];
    assert!(!groups(&t).contains(&HARDIRQ), "no exit program");
    let t = vec![
        "irq:irq_handler_entry".to_string(),
        "irq:irq_handler_exit".to_string(),
    ];
    assert_eq!(groups(&t), vec![HARDIRQ]);
}

/// A CI run traced the virtio disk IRQ 41 972 times where /proc counted
/// 41 989, and `missed` said 0.
#[test]
fn a_single_action_row_lacks_its_untraced_runs() {
    let mut u = hard_based(
        &numbered([100, 200], [0, 0], SHARED, [0, 0]),
        &hard([7, 7], [0, 0], [0, 0]),
    );
    u.kernel(
        Some(&numbered([1100, 250], [0, 0], SHARED, [0, 0])),
        &soft([0, 0], [0, 0]),
    );
    // the kernel ran it 1000 and 50 times; traced 990 and 49 since
    let traced = hard([997, 56], [0, 0], [0, 0]);
    assert_eq!(hardirq(&u, &traced), 9, "{:?}", u.shortfall(&traced));
    // one short per CPU is the run in flight at the read
    assert_eq!(hardirq(&u, &hard([1006, 56], [0, 0], [0, 0])), 0);
    // more traced than counted (replays, runs between the reads): none
    assert_eq!(hardirq(&u, &hard([2000, 90], [0, 0], [0, 0])), 0);
}

#[test]
fn a_shared_row_owes_one_run_per_action() {
    let mut u = hard_based(
        &numbered([0, 0], [10, 10], SHARED, [0, 0]),
        &hard([0, 0], [0, 0], [0, 0]),
    );
    u.kernel(
        Some(&numbered([0, 0], [20, 15], SHARED, [0, 0])),
        &soft([0, 0], [0, 0]),
    );
    // 10 and 5 interrupts: 2 × 9 and 2 × 4 handler runs at least
    assert_eq!(hardirq(&u, &hard([0, 0], [9, 4], [9, 4])), 0);
    // CPU 0 missed one interrupt (both actions), CPU 1 one eth0 run
    assert_eq!(hardirq(&u, &hard([0, 0], [8, 4], [8, 3])), 3);
    // a traced run of either action counts for the row
    assert_eq!(hardirq(&u, &hard([0, 0], [18, 8], [0, 0])), 0);
}

#[test]
fn rows_without_an_action_a_program_saw_are_not_held() {
    // IRQ 9 has no action; 11's actions were never seen to run (a nested
    // IRQ's thread function passes no tracepoint), nor is a misread name
    let mut u = hard_based(
        &numbered([0, 0], [0, 0], SHARED, [0, 0]),
        &Sample::default(),
    );
    u.kernel(
        Some(&numbered([0, 0], [50, 50], SHARED, [40, 40])),
        &soft([0, 0], [0, 0]),
    );
    let only_24 = Sample {
        irqs: vec![action(24, "virtio1-req.0", [0, 0])],
        ..Sample::default()
    };
    assert_eq!(hardirq(&u, &only_24), 0);
    let other_name = Sample {
        irqs: vec![action(11, "uhci_hcd", [1, 1])],
        ..Sample::default()
    };
    assert_eq!(hardirq(&u, &other_name), 0);
    // one of the two actions seen: the row owes one run per interrupt
    let one_seen = Sample {
        irqs: vec![action(11, "eth0", [40, 49])],
        ..Sample::default()
    };
    assert_eq!(hardirq(&u, &one_seen), 9);
}

#[test]
fn a_row_whose_actions_change_adds_no_runs_from_then() {
    let mut u = hard_based(
        &numbered([0, 0], [0, 0], SHARED, [0, 0]),
        &hard([0, 0], [0, 0], [0, 0]),
    );
    u.kernel(
        Some(&numbered([0, 0], [11, 1], SHARED, [0, 0])),
        &soft([0, 0], [0, 0]),
    );
    // eth0 freed: the interrupts since count one run each, not two
    u.kernel(
        Some(&numbered([0, 0], [500, 500], "uhci_hcd:usb1", [0, 0])),
        &soft([0, 0], [0, 0]),
    );
    // requested again: still not held
    u.kernel(
        Some(&numbered([0, 0], [900, 900], SHARED, [0, 0])),
        &soft([0, 0], [0, 0]),
    );
    // the 11 interrupts of the held window owed 2 × 10 runs on CPU 0
    assert_eq!(hardirq(&u, &hard([0, 0], [5, 0], [5, 0])), 10);
    assert_eq!(hardirq(&u, &hard([0, 0], [889, 899], [0, 0])), 0);
}

#[test]
fn a_count_that_goes_back_ends_its_row() {
    let top = (1 << 32) - 5;
    let mut u = hard_based(
        &numbered([top, 100], [0, 0], SHARED, [0, 0]),
        &hard([0, 0], [0, 0], [0, 0]),
    );
    u.kernel(
        Some(&numbered([top + 3, 150], [0, 0], SHARED, [0, 0])),
        &soft([0, 0], [0, 0]),
    );
    // wrapped past 2^32, or the descriptor was freed and allocated again:
    // the same to the counts, so neither adds runs
    u.kernel(
        Some(&numbered([10, 4000], [0, 0], SHARED, [0, 0])),
        &soft([0, 0], [0, 0]),
    );
    assert_eq!(hardirq(&u, &hard([2, 49], [0, 0], [0, 0])), 0);
    assert_eq!(hardirq(&u, &hard([0, 0], [0, 0], [0, 0])), 2 + 49);
}

#[test]
fn runs_the_full_map_dropped_are_not_said_twice() {
    let mut base = hard([0, 0], [0, 0], [0, 0]);
    base.drops = vec![1, 0];
    let mut u = hard_based(&numbered([0, 0], [0, 0], SHARED, [0, 0]), &base);
    u.kernel(
        Some(&numbered([21, 0], [0, 0], SHARED, [0, 0])),
        &soft([0, 0], [0, 0]),
    );
    let mut traced = hard([10, 0], [0, 0], [0, 0]);
    traced.drops = vec![5, 0];
    // 20 owed, 10 traced, 4 seen but not counted
    assert_eq!(hardirq(&u, &traced), 6);
}
