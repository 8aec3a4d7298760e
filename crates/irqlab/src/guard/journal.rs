//! The guard's journal of host changes to undo (`journal.jsonl` in the
//! guard's state dir): one JSON object per line (JSON Lines), each a
//! [`Change`] with the value to restore, appended and fsync'd BEFORE the
//! change is made, so a SIGKILL at any point leaves enough to undo it.
//!
//! Owns the on-disk format and its file operations only; it must not touch
//! `/proc` or `/sys` (that is the guard's job, through HostFs).

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One journaled host change and how to undo it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A file under the root (`proc/sys/vm/stat_interval`) was written.
    File {
        /// Root-relative path.
        path: String,
        /// The file's whole text before the change, its newline too
        /// (written back byte for byte on undo).
        old: String,
        /// Value written.
        new: String,
        /// Boot id of the root's kernel when the change was made: a journal
        /// from another boot is not replayed for it (the boot reset it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        boot_id: Option<String>,
    },
    /// A thread's CPU affinity was set (`old`/`new` are CPU lists).
    Affinity {
        /// Thread id (TID).
        pid: i32,
        /// CPU list before the change.
        old: String,
        /// CPU list set.
        new: String,
        /// Boot id of the live kernel when the change was made: a journal
        /// from another boot is not replayed for it (the boot reset it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        boot_id: Option<String>,
    },
    /// A temporary file irqlab creates (journaled before it exists);
    /// undone by removing it. See `guard/tmpfile.rs`.
    TempFile {
        /// Absolute path.
        path: String,
    },
    /// A process group irqlab started (a workload's command); undone by
    /// stopping the whole group. See `guard/pgroup.rs`.
    ProcessGroup {
        /// Process group id (the leader's pid).
        pgid: i32,
        /// Boot the group belongs to.
        boot_id: String,
        /// The leader's start time (`/proc/PID/stat` field 22), so a
        /// reused pid is never taken for the group.
        start_time: u64,
        /// The group's own cgroup v2 directory (absolute), when it has
        /// one: its members are stopped with it and it is removed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cgroup: Option<String>,
        /// The `IRQLAB_TRACK` token in the environment of the group's
        /// descendants (`guard/descend.rs`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// A pseudo filesystem was mounted on an empty directory (undo: unmount).
    Mount {
        /// Root-relative mount point (`sys/kernel/tracing`).
        path: String,
        /// Filesystem type (`tracefs`).
        fstype: String,
        /// Boot id of the live kernel when the change was made: a journal
        /// from another boot is not replayed for it (the boot reset it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        boot_id: Option<String>,
    },
    /// A network namespace irqlab creates (`/run/netns/NAME`, journaled
    /// before it exists); undone by removing it, which also removes the
    /// veth end, nftables tables and qdiscs inside it. See `guard/netns.rs`.
    NetNamespace {
        /// Namespace name (a file name under `/run/netns`).
        name: String,
    },
}

/// Reads as the undo: `path = "old" (was set to "new")` (`old` without
/// the newline the file's text ends with).
impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::File { path, old, new, .. } => {
                write!(f, "{path} = {:?} (was set to {new:?})", old.trim())
            }
            Change::Affinity { pid, old, new, .. } => {
                write!(f, "affinity of thread {pid} = {old} (was set to {new})")
            }
            Change::TempFile { path } => write!(f, "temporary file {path} removed"),
            Change::ProcessGroup { pgid, .. } => write!(f, "process group {pgid} stopped"),
            Change::Mount { path, fstype, .. } => {
                write!(f, "{path} unmounted (had {fstype} mounted)")
            }
            Change::NetNamespace { name } => write!(f, "network namespace {name} removed"),
        }
    }
}

impl Change {
    /// Whether an undo of this entry can only touch what irqlab could
    /// have changed: a file or mount point under the root (a relative path
    /// without `.` or `..`), a temporary file named as irqlab names them
    /// (`irqlab-*`), a real
    /// thread or process group. A journal is read from disk: a line that
    /// fails this is not an entry (a corrupt or planted journal must not
    /// make `restore` write, remove or unmount anything else).
    pub fn check(&self) -> Result<()> {
        match self {
            Change::File { path, .. } | Change::Mount { path, .. } => under_root(path),
            Change::TempFile { path } => temp_file_path(path),
            Change::Affinity { pid, .. } if *pid <= 0 => bail!("thread id {pid} is not a thread"),
            Change::ProcessGroup { pgid, .. } if *pgid <= 1 => {
                bail!("{pgid} is not a process group irqlab could have started")
            }
            Change::NetNamespace { name } => super::netns::check_name(name),
            Change::Affinity { .. } | Change::ProcessGroup { .. } => Ok(()),
        }
    }
}

/// `path` is root-relative and stays under the root: no leading `/`, no
/// `.` or `..` component, no NUL.
fn under_root(path: &str) -> Result<()> {
    if !plain_components(path) {
        bail!("path {path:?} is not a relative path under the root");
    }
    Ok(())
}

/// `path` is names joined by single `/`s: none empty, `.` or `..`, no NUL.
fn plain_components(path: &str) -> bool {
    !path.contains('\0')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The name every temporary file irqlab makes starts with.
pub const TEMP_FILE_PREFIX: &str = "irqlab-";

/// `path` is absolute and its file name starts with [`TEMP_FILE_PREFIX`].
pub fn temp_file_path(path: &str) -> Result<()> {
    let plain = path.starts_with('/')
        && !path.contains('\0')
        && path
            .rsplit('/')
            .next()
            .is_some_and(|name| name.starts_with(TEMP_FILE_PREFIX));
    if !plain {
        bail!(
            "temporary file {path:?} is not an absolute path to a file named {TEMP_FILE_PREFIX}*"
        );
    }
    Ok(())
}

/// The journal file: created on the first append, removed when everything
/// was restored.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: Option<File>,
}

impl Journal {
    /// A journal at `path` (nothing is created yet).
    pub fn new(path: PathBuf) -> Self {
        Journal { path, file: None }
    }

    /// Where the journal lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append `change` as one line and fsync it.
    pub fn append(&mut self, change: &Change) -> Result<()> {
        let line = to_line(change)?;
        let file = self.open()?;
        file.write_all(line.as_bytes())
            .and_then(|()| file.sync_all())
            .with_context(|| format!("appending to journal {}", self.path.display()))
    }

    /// Replace the journal's content with `entries` (atomically: temporary
    /// file, fsync, rename).
    pub fn rewrite(&mut self, entries: &[Change]) -> Result<()> {
        self.file = None;
        let mut text = String::new();
        for c in entries {
            text.push_str(&to_line(c)?);
        }
        let tmp = self.path.with_extension("jsonl.tmp");
        let ctx = || format!("rewriting journal {}", self.path.display());
        let mut f = File::create(&tmp).with_context(ctx)?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .with_context(ctx)?;
        std::fs::rename(&tmp, &self.path).with_context(ctx)?;
        sync_parent(&self.path);
        Ok(())
    }

    /// Delete the journal file (absent is fine).
    pub fn remove(&mut self) -> Result<()> {
        self.file = None;
        match std::fs::remove_file(&self.path) {
            Ok(()) => {
                sync_parent(&self.path);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).with_context(|| format!("removing journal {}", self.path.display())),
        }
    }

    fn open(&mut self) -> Result<&mut File> {
        if self.file.is_none() {
            if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating journal directory {}", dir.display()))?;
            }
            // never blocks on a FIFO in its place: refused by its type
            let f = crate::host::open_regular_append(&self.path)
                .with_context(|| format!("opening journal {}", self.path.display()))?;
            sync_parent(&self.path);
            self.file = Some(f);
        }
        match self.file.as_mut() {
            Some(f) => Ok(f),
            None => bail!("journal {} is not open", self.path.display()),
        }
    }
}

fn to_line(change: &Change) -> Result<String> {
    let mut line = serde_json::to_string(change).context("encoding a journal entry")?;
    line.push('\n');
    Ok(line)
}

/// Make a created/renamed/removed directory entry durable (best effort).
fn sync_parent(path: &Path) {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

/// What [`load`] found in a journal.
#[derive(Debug, Default)]
pub struct JournalContents {
    /// The entries in the order they were made.
    pub entries: Vec<Change>,
    /// A torn last line (no newline, not valid JSON) that was ignored.
    pub torn_tail: Option<String>,
}

/// Read the journal at `path`; a missing file is an empty journal. A
/// malformed line fails with `path:line`, except a torn last line without
/// its newline (a crash in the middle of an append), which is reported.
/// Anything but a regular file of at most [`MAX_JOURNAL`] bytes is
/// refused unread.
pub fn load(path: &Path) -> Result<JournalContents> {
    match read_regular(path, "journal", MAX_JOURNAL)? {
        Some(bytes) => parse(path, &bytes),
        None => Ok(JournalContents::default()),
    }
}

/// The largest journal read: far more entries than any run makes.
pub const MAX_JOURNAL: u64 = 64 << 20;

/// The bytes of the regular file at `path` (`what`: `journal`, `lock`),
/// `None` when there is none. Opened without blocking and checked before
/// any read: a FIFO, device or endless file where a tree's journal or
/// lock belongs (a `--root` is untrusted input) is refused, never waited
/// on or read into memory; so is a file of more than `limit` bytes.
pub(super) fn read_regular(path: &Path, what: &str, limit: u64) -> Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    let ctx = || format!("reading {what} {}", path.display());
    let file = match crate::host::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(ctx),
    };
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(ctx)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        bail!(
            "{what} {} is larger than {limit} bytes: not irqlab's, refused",
            path.display()
        );
    }
    Ok(Some(bytes))
}

/// [`load`] of a journal's bytes (`path` names it in errors). Lines are
/// read one by one: a torn last line may end inside a character.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<JournalContents> {
    let mut out = JournalContents::default();
    let complete = bytes.ends_with(b"\n");
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let lines: Vec<&[u8]> = match bytes.is_empty() {
        true => Vec::new(),
        false => body.split(|&b| b == b'\n').collect(),
    };
    for (i, line) in lines.iter().enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let torn = i + 1 == lines.len() && !complete;
        let text = match std::str::from_utf8(line) {
            Ok(t) => t,
            Err(_) if torn => {
                out.torn_tail = Some(String::from_utf8_lossy(line).into_owned());
                continue;
            }
            Err(e) => bail!(
                "{}:{}: not a journal entry: not UTF-8 ({e})",
                path.display(),
                i + 1
            ),
        };
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Change>(text) {
            Ok(c) => {
                c.check().with_context(|| {
                    format!("{}:{}: not a journal entry", path.display(), i + 1)
                })?;
                out.entries.push(c)
            }
            Err(_) if torn => out.torn_tail = Some(text.to_string()),
            Err(e) => bail!(
                "{}:{}: not a journal entry: {}",
                path.display(),
                i + 1,
                crate::json_line::error(&e)
            ),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, old: &str, new: &str) -> Change {
        Change::File {
            path: path.into(),
            old: old.into(),
            new: new.into(),
            boot_id: None,
        }
    }

    #[test]
    fn lines_are_tagged_json_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/j.jsonl");
        let mut j = Journal::new(p.clone());
        let a = file("proc/sys/vm/stat_interval", "1", "2");
        let b = Change::Affinity {
            pid: 7,
            old: "0-1".into(),
            new: "0".into(),
            boot_id: None,
        };
        j.append(&a).unwrap();
        j.append(&b).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            r#"{"kind":"file","path":"proc/sys/vm/stat_interval","old":"1","new":"2"}"#
        );
        assert_eq!(load(&p).unwrap().entries, vec![a.clone(), b]);
        j.rewrite(std::slice::from_ref(&a)).unwrap();
        assert_eq!(load(&p).unwrap().entries, vec![a]);
        j.remove().unwrap();
        assert!(!p.exists());
        assert!(load(&p).unwrap().entries.is_empty());
    }

    #[test]
    fn torn_tail_is_ignored_but_bad_middle_line_fails() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        let good = r#"{"kind":"file","path":"a","old":"1","new":"2"}"#;
        std::fs::write(&p, format!("{good}\n{{\"kind\":\"fi")).unwrap();
        let l = load(&p).unwrap();
        assert_eq!(l.entries.len(), 1);
        assert!(l.torn_tail.is_some());
        std::fs::write(&p, format!("garbage\n{good}\n")).unwrap();
        let err = load(&p).unwrap_err().to_string();
        assert!(err.contains("j.jsonl:1"), "{err}");
        // the column in the line, not serde's "line 1 column N" after it
        std::fs::write(&p, format!("{good}\n{}\n", good.replace(':', ";"))).unwrap();
        let err = load(&p).unwrap_err().to_string();
        assert!(
            err.ends_with("j.jsonl:2: not a journal entry: column 8: expected `:`"),
            "{err}"
        );
    }

    #[test]
    fn entries_that_could_reach_outside_what_irqlab_changes_are_refused() {
        let p = Path::new("j.jsonl");
        let bad = [
            r#"{"kind":"file","path":"../outside","old":"1","new":"2"}"#,
            r#"{"kind":"file","path":"/etc/passwd","old":"","new":"x"}"#,
            r#"{"kind":"file","path":"proc/./sys","old":"1","new":"2"}"#,
            r#"{"kind":"mount","path":"sys/../proc","fstype":"tracefs"}"#,
            r#"{"kind":"temp_file","path":"/etc/shadow"}"#,
            r#"{"kind":"temp_file","path":"/tmp/irqlab-x/"}"#,
            r#"{"kind":"temp_file","path":"irqlab-relative.dat"}"#,
            r#"{"kind":"affinity","pid":0,"old":"0-1","new":"0"}"#,
            r#"{"kind":"process_group","pgid":1,"boot_id":"b","start_time":1}"#,
            r#"{"kind":"net_namespace","name":"../x"}"#,
        ];
        let good = "{\"kind\":\"file\",\"path\":\"a\",\"old\":\"1\",\"new\":\"2\"}\n";
        for line in bad {
            let text = format!("{good}{line}\n");
            let err = format!("{:#}", parse(p, text.as_bytes()).unwrap_err());
            assert!(
                err.starts_with("j.jsonl:2: not a journal entry"),
                "{line}: {err}"
            );
        }
        let ok = [
            r#"{"kind":"temp_file","path":"/tmp/irqlab-disk-1-2.dat"}"#,
            r#"{"kind":"mount","path":"sys/kernel/tracing","fstype":"tracefs"}"#,
        ];
        for line in ok {
            assert_eq!(
                parse(p, format!("{line}\n").as_bytes())
                    .unwrap()
                    .entries
                    .len(),
                1
            );
        }
    }

    #[test]
    fn a_journal_that_is_not_a_regular_file_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = format!("{:#}", load(&fifo).unwrap_err());
        assert!(
            err.contains("is a FIFO (named pipe), expected a regular file"),
            "{err}"
        );
        let err = format!("{:#}", load(Path::new("/dev/zero")).unwrap_err());
        assert!(
            err.contains("/dev/zero is a character device, expected a regular file"),
            "{err}"
        );
        let big = dir.path().join("big.jsonl");
        let f = File::create(&big).unwrap();
        f.set_len(MAX_JOURNAL + 1).unwrap();
        let err = format!("{:#}", load(&big).unwrap_err());
        assert!(err.contains("is larger than"), "{err}");
        assert!(load(&dir.path().join("none")).unwrap().entries.is_empty());
    }

    /// An append to a journal that is a FIFO is refused by its type at
    /// once, never waits for a reader (checked on a thread: a blocking
    /// open fails the test after 10 s instead of hanging it).
    #[test]
    fn an_append_to_a_fifo_journal_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let p = fifo.clone();
        std::thread::spawn(move || {
            let r = Journal::new(p).append(&file("a", "1", "2"));
            let _ = tx.send(r.map_err(|e| format!("{e:#}")));
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the append blocked on a FIFO");
        let err = r.unwrap_err();
        assert!(
            err.contains(&format!(
                "opening journal {}: {} is a FIFO (named pipe), expected a regular file",
                fifo.display(),
                fifo.display()
            )),
            "{err}"
        );
    }

    #[test]
    fn a_tail_torn_inside_a_character_is_the_torn_tail() {
        let p = Path::new("j.jsonl");
        let good = "{\"kind\":\"file\",\"path\":\"a\",\"old\":\"1\",\"new\":\"2\"}\n";
        let next = "{\"kind\":\"temp_file\",\"path\":\"/tmp/caf\u{e9}\"}\n";
        // a crash in the middle of the append, between the two bytes of 'é'
        let cut = good.len() + next.find('\u{e9}').unwrap() + 1;
        let bytes = [good, next].concat().into_bytes();
        let l = parse(p, &bytes[..cut]).unwrap();
        assert_eq!(l.entries.len(), 1);
        assert!(l.torn_tail.unwrap().starts_with("{\"kind\":\"temp_file\""));
        // the same bytes in the middle of the journal are an error
        let mut middle = bytes[..cut].to_vec();
        middle.extend_from_slice(format!("\n{good}").as_bytes());
        let err = parse(p, &middle).unwrap_err().to_string();
        assert!(
            err.starts_with("j.jsonl:2: not a journal entry: not UTF-8"),
            "{err}"
        );
    }
}
