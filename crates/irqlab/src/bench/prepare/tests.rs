//! Preparation steps against fake trees: cpufreq policies, sysctls, IRQ
//! affinity, `--strict`, and the CLI value syntax.

use super::*;
use crate::guard::default_journal;
use crate::host::HostFs;
use irqlab_core::paths::CPUFREQ;
use std::path::Path;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn guard(root: &Path) -> SystemGuard {
    SystemGuard::new(&HostFs::new(root), default_journal(root)).unwrap()
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

fn cpufreq_tree(avail: &str) -> tempfile::TempDir {
    let mut files = Vec::new();
    for p in 0..4 {
        files.push((
            format!("{CPUFREQ}/policy{p}/scaling_governor"),
            "powersave\n".to_string(),
        ));
        files.push((
            format!("{CPUFREQ}/policy{p}/scaling_available_governors"),
            format!("{avail}\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    tree(&refs)
}

#[test]
fn governor_set_on_every_policy_and_restored() {
    let dir = cpufreq_tree("performance powersave");
    let root = dir.path();
    let mut g = guard(root);
    let out = governor(&mut g, "performance").unwrap();
    assert!(matches!(&out, Outcome::Applied(l) if l.len() == 4), "{out}");
    for p in 0..4 {
        assert_eq!(
            read(root, &format!("{CPUFREQ}/policy{p}/scaling_governor")),
            "performance"
        );
    }
    assert_eq!(
        governor(&mut g, "performance").unwrap(),
        Outcome::Unchanged("governor already performance".into())
    );
    g.restore().unwrap();
    for p in 0..4 {
        assert_eq!(
            read(root, &format!("{CPUFREQ}/policy{p}/scaling_governor")),
            "powersave\n"
        );
    }
}

#[test]
fn governor_not_offered_changes_nothing() {
    let dir = cpufreq_tree("powersave schedutil");
    let mut g = guard(dir.path());
    let err = governor(&mut g, "performance").unwrap_err().to_string();
    assert!(err.contains("available: powersave schedutil"), "{err}");
    assert_eq!(g.pending(), 0);
}

#[test]
fn no_cpufreq_is_skipped_and_strict_fails() {
    let dir = tree(&[("proc/sys/vm/stat_interval", "1\n")]);
    let mut g = guard(dir.path());
    let out = governor(&mut g, "performance").unwrap();
    assert_eq!(out, Outcome::Skipped("no cpufreq on this machine".into()));
    let mut args = Preparation {
        governor: Some("performance".into()),
        sysctl: vec!["vm.stat_interval=5".parse().unwrap()],
        ..Preparation::default()
    };
    assert_eq!(apply(&mut g, &args).unwrap().len(), 2);
    g.restore().unwrap();
    args.strict = true;
    let err = apply(&mut g, &args).unwrap_err().to_string();
    assert!(
        err.contains("--strict") && err.contains("no cpufreq"),
        "{err}"
    );
    drop(g);
    assert_eq!(read(dir.path(), "proc/sys/vm/stat_interval"), "1\n");
}

#[test]
fn sysctl_round_trip_and_unknown_key() {
    let dir = tree(&[
        ("proc/sys/net/ipv4/conf/eth0.1/rp_filter", "1\n"),
        ("proc/sys/kernel/printk", "4\t4\t1\t7\n"),
    ]);
    let root = dir.path();
    let mut g = guard(root);
    sysctl(&mut g, "net/ipv4/conf/eth0.1/rp_filter", "0").unwrap();
    assert_eq!(read(root, "proc/sys/net/ipv4/conf/eth0.1/rp_filter"), "0");
    assert!(matches!(
        sysctl(&mut g, "kernel.printk", "4 4 1 7").unwrap(),
        Outcome::Unchanged(_)
    ));
    let err = sysctl(&mut g, "vm.nope", "1").unwrap_err().to_string();
    assert!(err.contains("unknown sysctl \"vm.nope\""), "{err}");
    assert!(sysctl(&mut g, "../etc/passwd", "1").is_err());
    g.restore().unwrap();
    assert_eq!(read(root, "proc/sys/net/ipv4/conf/eth0.1/rp_filter"), "1\n");
}

#[test]
fn irq_affinity_round_trip_and_unknown_irq_lists_actions() {
    let interrupts = "           CPU0       CPU1\n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n 26:          0         10  IO-APIC   4-edge      ttyS0\nNMI:          0          0   Non-maskable interrupts\n";
    let dir = tree(&[
        ("proc/interrupts", interrupts),
        ("proc/irq/26/smp_affinity_list", "0-1\n"),
    ]);
    let root = dir.path();
    let mut g = guard(root);
    let out = irq_affinity(&mut g, 26, &CpuList::from_cpus([1])).unwrap();
    assert_eq!(out, Outcome::Applied(vec!["IRQ 26 -> CPUs 1".into()]));
    assert_eq!(read(root, "proc/irq/26/smp_affinity_list"), "1");
    let err = irq_affinity(&mut g, 99, &CpuList::from_cpus([1]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("available IRQs: 24 (ACPI:Ged), 26 (ttyS0)"),
        "{err}"
    );
    g.restore().unwrap();
    assert_eq!(read(root, "proc/irq/26/smp_affinity_list"), "0-1\n");
}

#[test]
fn unknown_irq_with_a_truncated_proc_interrupts_lists_the_directories_and_why() {
    let interrupts = "           CPU0       CPU1\n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n 26:          0         10  IO-APIC   4-edge      tty";
    let dir = tree(&[
        ("proc/interrupts", interrupts),
        ("proc/irq/24/smp_affinity_list", "0-1\n"),
        ("proc/irq/26/smp_affinity_list", "0-1\n"),
    ]);
    let root = dir.path();
    let mut g = guard(root);
    let err = irq_affinity(&mut g, 99, &CpuList::from_cpus([1]))
        .unwrap_err()
        .to_string();
    let want = format!(
        "available IRQs: 24, 26 (the directories of {}; {}:3: truncated line (no newline at \
         end of file))",
        root.join("proc/irq").display(),
        root.join("proc/interrupts").display()
    );
    assert!(err.ends_with(&want), "{err}");
    g.restore().unwrap();
}

#[test]
fn cli_value_syntax() {
    let p: PinSpec = "irq/*-eth0=0-1,3".parse().unwrap();
    assert_eq!(
        (p.pattern.as_str(), p.cpus.to_string().as_str()),
        ("irq/*-eth0", "0-1,3")
    );
    let p: PinSpec = "re:a=b=2".parse().unwrap();
    assert_eq!(p.pattern, "re:a=b");
    assert!("ksoftirqd/*".parse::<PinSpec>().is_err());
    assert!("x=".parse::<PinSpec>().is_err());
    assert!("re:(=1".parse::<PinSpec>().is_err());
    let i: IrqSpec = "45=1".parse().unwrap();
    assert_eq!((i.irq, i.cpus), (45, CpuList::from_cpus([1])));
    assert!("eth0=1".parse::<IrqSpec>().is_err());
    assert!("45=x".parse::<IrqSpec>().is_err());
    let s: SysctlSpec = "kernel.printk=4 4 1 7".parse().unwrap();
    assert_eq!(
        (s.key.as_str(), s.value.as_str()),
        ("kernel.printk", "4 4 1 7")
    );
    assert!("vm.stat_interval".parse::<SysctlSpec>().is_err());
    assert!("/etc/x=1".parse::<SysctlSpec>().is_err());
}

#[test]
fn irq_affinity_refused_by_kernel_is_skipped_not_fatal() {
    let err = |code| {
        anyhow::Error::new(std::io::Error::from_raw_os_error(code)).context("writing \"1\" to x")
    };
    assert_eq!(super::refused_by_kernel(&err(nix::libc::EIO)), Some("EIO"));
    assert_eq!(
        super::refused_by_kernel(&err(nix::libc::EPERM)),
        Some("EPERM")
    );
    assert_eq!(
        super::refused_by_kernel(&err(nix::libc::EACCES)),
        None,
        "not root"
    );
}

#[test]
fn irq_affinity_to_an_absent_or_offline_cpu_is_refused_by_validate() {
    let dir = tree(&[
        ("proc/irq/26/smp_affinity_list", "0-1\n"),
        ("sys/devices/system/cpu/possible", "0-3\n"),
        ("sys/devices/system/cpu/online", "0-1\n"),
    ]);
    let fs = HostFs::new(dir.path());
    let prep = |spec: &str| Preparation {
        irq_affinity: vec![spec.parse().unwrap()],
        ..Preparation::default()
    };
    let e = format!("{:#}", validate(&fs, &prep("26=9")).unwrap_err());
    assert!(
        e.contains("CPU 9 does not exist") && e.contains("0-3"),
        "{e}"
    );
    let e = format!("{:#}", validate(&fs, &prep("26=2-3")).unwrap_err());
    assert!(e.contains("none of CPUs 2-3 is online"), "{e}");
    validate(&fs, &prep("26=1")).unwrap();
}

#[test]
fn strict_refusal_at_apply_time_is_a_usage_error() {
    let mut steps = Steps {
        list: Vec::new(),
        strict: true,
    };
    let e = steps
        .push(Outcome::Skipped(
            "IRQ 36: the kernel refuses to move it".into(),
        ))
        .unwrap_err();
    assert!(
        e.downcast_ref::<crate::bench::plan::Invalid>().is_some(),
        "{e}"
    );
}

/// A sysctl value that cannot be written is refused by `validate`,
/// before any change: a word where the sysctl holds numbers, a read-only
/// file.
#[test]
fn validate_refuses_a_sysctl_value_that_cannot_be_written() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tree(&[
        ("proc/sys/kernel/timer_migration", "1\n"),
        ("proc/sys/kernel/printk", "4\t4\t1\t7\n"),
        ("proc/sys/kernel/osrelease", "6.18\n"),
        ("proc/sys/kernel/core_pattern", "core\n"),
    ]);
    let ro = dir.path().join("proc/sys/kernel/osrelease");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let fs = HostFs::new(dir.path());
    let check = |key: &str, value: &str| {
        let p = Preparation {
            sysctl: vec![SysctlSpec {
                key: key.into(),
                value: value.into(),
            }],
            ..Preparation::default()
        };
        validate(&fs, &p).map_err(|e| format!("{e:#}"))
    };
    let e = check("kernel.timer_migration", "abc").unwrap_err();
    assert!(
        e.contains("--sysctl kernel.timer_migration=abc: expected a whole number"),
        "{e}"
    );
    assert!(check("kernel.printk", "4 4 x 7").is_err());
    let e = check("kernel.osrelease", "7").unwrap_err();
    assert!(e.contains("read-only"), "{e}");
    check("kernel.timer_migration", "0").unwrap();
    check("kernel.printk", "3 4 1 7").unwrap();
    check("kernel.core_pattern", "|/bin/false").unwrap();
}

/// A sysctl set, then an IRQ that is not there (a step that fails).
fn sysctl_then_missing_irq() -> Preparation {
    Preparation {
        sysctl: vec!["vm.stat_interval=7".parse().unwrap()],
        irq_affinity: vec!["99=1".parse().unwrap()],
        ..Preparation::default()
    }
}

/// A failed step's error names the earlier changes it undid; the host is
/// as it was and the journal gone before the error is returned.
#[test]
fn a_failed_step_says_which_earlier_changes_were_undone() {
    let dir = tree(&[("proc/sys/vm/stat_interval", "1\n")]);
    let mut g = guard(dir.path());
    let e = format!(
        "{:#}",
        apply(&mut g, &sysctl_then_missing_irq()).unwrap_err()
    );
    assert!(e.starts_with("--irq-affinity 99=1: IRQ 99 has no"), "{e}");
    assert!(
        e.contains(
            "\nthe host changes made before it were undone:\n\
             restored proc/sys/vm/stat_interval = \"1\" (was set to \"7\")"
        ),
        "{e}"
    );
    assert_eq!(g.pending(), 0);
    assert_eq!(read(dir.path(), "proc/sys/vm/stat_interval"), "1\n");
    assert!(!default_journal(dir.path()).exists());

    let only = Preparation {
        irq_affinity: vec!["99=1".parse().unwrap()],
        ..Preparation::default()
    };
    let e = format!("{:#}", apply(&mut g, &only).unwrap_err());
    assert!(
        e.ends_with("\nno host change had been made before it"),
        "{e}"
    );
}

/// When undoing an earlier change fails, the error names it and the
/// journal kept for `irqlab restore`.
#[test]
fn a_failed_step_names_an_earlier_change_it_could_not_undo() {
    let dir = tree(&[("proc/sys/vm/stat_interval", "1\n")]);
    let root = dir.path().to_path_buf();
    let mut g = guard(&root);
    g.set_observer(Box::new(move |e: &crate::guard::Event<'_>| {
        if let crate::guard::Event::Applied(_) = e {
            // the sysctl's file turns into a directory: no undo can write it
            let p = root.join("proc/sys/vm/stat_interval");
            std::fs::remove_file(&p).unwrap();
            std::fs::create_dir(&p).unwrap();
        }
    }));
    let e = format!(
        "{:#}",
        apply(&mut g, &sysctl_then_missing_irq()).unwrap_err()
    );
    assert!(
        e.contains("\nundoing the host changes made before it did not complete:\n"),
        "{e}"
    );
    assert!(
        e.contains("\nFAILED proc/sys/vm/stat_interval = \"1\""),
        "{e}"
    );
    assert!(e.contains("journal kept at"), "{e}");
    assert!(default_journal(dir.path()).exists());
}
