//! HostFs under faults: special files refused without blocking, reads
//! bounded in size and line length, no buffer sized from `st_size`.

use super::*;
use std::sync::mpsc;
use std::time::Duration;

/// Run `f` on a thread and fail (instead of hanging the suite) when it does
/// not return within 10 s: a regression to a blocking open must not hang.
fn within_10s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("HostFs blocked for 10 s on a special file")
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    dir
}

fn err_of(root: &Path, rel: &'static str) -> String {
    let root = root.to_path_buf();
    within_10s(move || {
        let mut fs = HostFs::new(&root);
        let e = fs.read(rel).map(|b| b.len()).unwrap_err().to_string();
        assert!(fs.read_attr(rel).is_none(), "read_attr of {rel}");
        assert!(fs.open(rel).is_err(), "open of {rel}");
        let mut buf = Vec::new();
        assert!(fs.read_once(rel, &mut buf).is_err(), "read_once of {rel}");
        e
    })
}

#[test]
fn fifo_is_refused_by_name_without_blocking() {
    let dir = tree();
    let p = dir.path().join("proc/interrupts");
    nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let e = err_of(dir.path(), "proc/interrupts");
    assert!(
        e.contains("FIFO") && e.contains(&p.display().to_string()),
        "{e}"
    );
    // writing (the guard) must not block on it either
    let root = dir.path().to_path_buf();
    let w = within_10s(move || HostFs::new(root).write("proc/interrupts", "1").is_err());
    assert!(w, "write to a FIFO without a reader must fail");
}

/// `open_regular_rw` and `open_regular_append` (the record journal's
/// lock, the guard's journal): a FIFO is refused by its type at once, in
/// `open_regular`'s words, as is a device; a regular file is created
/// only when asked.
#[test]
fn read_write_opens_refuse_a_fifo_or_device_by_its_type_without_blocking() {
    let dir = tree();
    let fifo = dir.path().join("journal.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let want = format!(
        "{} is a FIFO (named pipe), expected a regular file",
        fifo.display()
    );
    for append in [false, true] {
        let p = fifo.clone();
        let e = within_10s(move || match append {
            false => open::open_regular_rw(&p, true).unwrap_err(),
            true => open::open_regular_append(&p).unwrap_err(),
        });
        assert!(e.to_string().contains(&want), "{e}");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
    let e = open::open_regular_rw(Path::new("/dev/null"), false).unwrap_err();
    assert!(
        e.to_string()
            .contains("/dev/null is a character device, expected a regular file"),
        "{e}"
    );
    let new = dir.path().join("new");
    let e = open::open_regular_rw(&new, false).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert!(!new.exists());
    open::open_regular_rw(&new, true).unwrap();
    assert!(new.is_file());
}

#[test]
fn socket_directory_and_char_device_are_refused() {
    let dir = tree();
    let _sock = std::os::unix::net::UnixListener::bind(dir.path().join("proc/softirqs")).unwrap();
    std::fs::create_dir(dir.path().join("proc/stat")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("proc/zero")).unwrap();
    assert!(err_of(dir.path(), "proc/softirqs").contains("socket"));
    assert!(err_of(dir.path(), "proc/stat").contains("directory"));
    let e = err_of(dir.path(), "proc/zero");
    assert!(
        e.contains("character device") && e.contains("proc/zero"),
        "{e}"
    );
}

#[test]
fn sparse_2gib_file_stops_at_the_line_limit_with_bounded_memory() {
    let dir = tree();
    let p = dir.path().join("proc/interrupts");
    let f = File::create(&p).unwrap();
    f.set_len(2 << 30).unwrap();
    let mut fs = HostFs::new(dir.path());
    let e = fs.read("proc/interrupts").unwrap_err().to_string();
    assert!(
        e.contains("line longer than") && e.contains("interrupts"),
        "{e}"
    );
    let cap = fs.kept.get("proc/interrupts").map_or(0, |k| k.buf.len());
    assert!(
        cap <= 2 * MAX_LINE_READ + PRESIZE_MAX,
        "buffer grew to {cap}"
    );
    let mut buf = Vec::new();
    assert!(fs.read_once("proc/interrupts", &mut buf).is_err());
    assert!(
        buf.len() <= 2 * MAX_LINE_READ,
        "read_once grew to {}",
        buf.len()
    );
}

#[test]
fn total_and_line_limits_are_exact() {
    let dir = tree();
    let p = dir.path().join("f");
    let lim = Limits {
        total: 64,
        line: 16,
    };
    let read = |data: &[u8], chunk: Option<usize>| {
        std::fs::write(&p, data).unwrap();
        let file = File::open(&p).unwrap();
        let mut buf = Vec::new();
        read_loop_limited(&file, &mut buf, chunk, lim, false).map(|(n, _)| n)
    };
    let lines16 = b"123456789012345\n".repeat(4);
    for chunk in [None, Some(1), Some(7)] {
        assert_eq!(read(&lines16, chunk).unwrap(), 64);
        let e = read(&b"123456789012345\n".repeat(5), chunk).unwrap_err();
        assert!(e.to_string().contains("more than 64 bytes"), "{e}");
        assert_eq!(read(&[b'x'; 16], chunk).unwrap(), 16);
        let e = read(&[b'x'; 17], chunk).unwrap_err();
        assert!(e.to_string().contains("line longer than 16"), "{e}");
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }
}
