//! `host::AttrDir` closes the descriptors of the files it read in runs
//! (`close_range`): a flush closes only its own, never another's that is
//! numbered between them; drop closes them all; the runs never hold more
//! than `AttrDir::HELD_MAX`; a process out of descriptors still reads. One test in
//! this binary, so no other thread opens descriptors while it counts on
//! the kernel handing out the lowest free number.

#![allow(clippy::unwrap_used)]

use irqlab::host::{AttrDir, HostFs};
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};

/// A tree whose `proc/irq/N/effective_affinity_list` says `N` for N in
/// `0..n`.
fn tree(n: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for irq in 0..n {
        let d = dir.path().join(format!("proc/irq/{irq}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("effective_affinity_list"), format!("{irq}\n")).unwrap();
    }
    dir
}

fn is_open(fd: RawFd) -> bool {
    std::fs::symlink_metadata(format!("/proc/self/fd/{fd}")).is_ok()
}

/// The number the next open gets (the lowest free one).
fn next_fd() -> RawFd {
    File::open("/dev/null").unwrap().as_raw_fd()
}

/// Descriptors holding every free number up to the highest open one (a
/// test process may inherit some, such as 10 or 251), so that the kernel
/// hands out consecutive numbers from here on.
fn fill_holes() -> Vec<File> {
    let top = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.parse::<RawFd>().ok())
        .max()
        .unwrap();
    let mut held = Vec::new();
    while held.last().map_or(0, |f: &File| f.as_raw_fd()) < top {
        held.push(File::open("/dev/null").unwrap());
    }
    held
}

fn name(irq: u32) -> String {
    format!("{irq}/effective_affinity_list")
}

#[test]
fn runs_close_only_their_own_descriptors() {
    let dir = tree(AttrDir::HELD_MAX as u32 + 40);
    let fs = HostFs::new(dir.path());
    let mut d = fs.attr_dir("proc/irq").unwrap();
    let _held = fill_holes();

    // three descriptors; the outer two closed: holes around another's
    let (h0, h1, h2) = (
        File::open("/dev/null").unwrap(),
        File::open("/dev/null").unwrap(),
        File::open("/dev/null").unwrap(),
    );
    let (n0, n1, n2) = (h0.as_raw_fd(), h1.as_raw_fd(), h2.as_raw_fd());
    assert!(n0 < n1 && n1 < n2);
    drop((h0, h2));
    assert_eq!(d.read(&name(0)).as_deref(), Some("0"));
    assert!(is_open(n0), "the file read is kept in a run");
    assert_eq!(d.read(&name(1)).as_deref(), Some("1"));
    assert!(is_open(n2), "the second file read took the next hole");
    assert!(is_open(n0), "a second run beside the first");
    assert_eq!(d.read(&name(2)).as_deref(), Some("2"));
    let n3 = n2 + 1;
    assert!(is_open(n3), "the second run grew");
    d.flush();
    assert!(!is_open(n0) && !is_open(n2) && !is_open(n3));
    assert!(
        is_open(n1),
        "another's descriptor between the runs stays open"
    );
    drop(h1);

    // the runs are closed when they hold HELD_MAX
    let first = next_fd();
    let max = AttrDir::HELD_MAX as RawFd;
    for irq in 0..max - 1 {
        assert_eq!(d.read(&name(irq as u32)), Some(irq.to_string()));
    }
    let last = first + max - 2;
    assert!(is_open(first) && is_open(last), "one run, kept");
    assert_eq!(d.read(&name(7)).as_deref(), Some("7"));
    assert!(
        (first..=last + 1).all(|fd| !is_open(fd)),
        "HELD_MAX: closed"
    );

    // more runs than RUNS_MAX: the runs are closed first; each run is
    // split from the next by another's descriptor
    let runs = AttrDir::RUNS_MAX;
    let mut others = Vec::new();
    let mut mine = Vec::new();
    for irq in 0..=runs {
        others.push(File::open("/dev/null").unwrap());
        mine.push(next_fd());
        d.read(&name(irq as u32)).unwrap();
        assert!(is_open(*mine.last().unwrap()));
    }
    assert!(mine.iter().take(runs).all(|&fd| !is_open(fd)), "{mine:?}");
    assert!(is_open(mine[runs]));
    assert!(others.iter().all(|f| is_open(f.as_raw_fd())));
    d.flush();
    drop(others);

    // drop closes the run (and the directory)
    for irq in 0..5 {
        d.read(&name(irq)).unwrap();
    }
    assert!((first..first + 5).all(is_open));
    drop(d);
    assert!((first..first + 5).all(|fd| !is_open(fd)), "drop closes all");

    // out of descriptors while a run holds some: the run is closed and
    // the open tried again
    let mut d = fs.attr_dir("proc/irq").unwrap();
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    let low = next_fd() as u64 + 4;
    setrlimit(Resource::RLIMIT_NOFILE, low, hard).unwrap();
    let read: Vec<Option<String>> = (0..20).map(|irq| d.read(&name(irq))).collect();
    setrlimit(Resource::RLIMIT_NOFILE, soft, hard).unwrap();
    let want: Vec<Option<String>> = (0..20).map(|irq| Some(irq.to_string())).collect();
    assert_eq!(read, want);
}
