//! Per-boot cache of the strategy decision (`strategy.rs`): the start-up
//! measurement of both strategies (20 timed rounds of each) runs once per
//! boot, kernel, root, online CPU count and IRQ set; later runs reuse its
//! outcome. Only the `auto` strategy with an `--irq` filter that selects
//! numbered IRQs measures at all (`host_source.rs`); every other run
//! decides without reading anything twice.
//!
//! The cache is one small text file per user,
//! `$XDG_CACHE_HOME/irqlab/strategy` (else `$HOME/.cache/irqlab/strategy`):
//! writable by an unprivileged user, no lock needed (replaced whole by a
//! rename). A line is used only when its boot id and kernel release equal
//! the root's and it is younger than [`MAX_AGE_S`]; any other line is
//! stale and dropped at the next store. A line that does not parse is
//! ignored; a missing or unwritable cache only means measuring again. A
//! root without a readable boot id or kernel release is never cached.

use super::strategy::{Decision, Strategy};
use crate::host::HostFs;
use irqlab_core::paths;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Oldest entry reused (s): a day, so that a long-running boot measures
/// again now and then.
pub const MAX_AGE_S: u64 = 24 * 3600;
/// Most entries kept (the newest).
const MAX_ENTRIES: usize = 32;
/// First field of every line (format version).
const TAG: &str = "irqlab-strategy-1";
/// Largest cache file read: a larger one is not ours.
pub const MAX_FILE_BYTES: usize = 64 << 10;

/// What a decision is valid for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub boot_id: String,
    pub kernel: String,
    /// The root read, as given (`/` live).
    pub root: String,
    /// Online CPUs (columns of every count row).
    pub cpus: usize,
    /// The targeted IRQs, comma-separated.
    pub irqs: String,
}

impl Key {
    /// The key of `irqs` under `fs`'s root, `None` when the root has no
    /// readable boot id or kernel release (or a field cannot be written
    /// on one line).
    pub fn of(fs: &HostFs, cpus: usize, irqs: &str) -> Option<Key> {
        let boot_id = fs.read_attr(paths::BOOT_ID).filter(|s| !s.is_empty())?;
        let kernel = fs.read_attr(paths::OSRELEASE).filter(|s| !s.is_empty())?;
        let root = fs.root().to_str()?.to_string();
        let key = Key {
            boot_id,
            kernel,
            root,
            cpus,
            irqs: irqs.to_string(),
        };
        let plain = |s: &str| !s.contains(['\t', '\n', '\r']);
        (plain(&key.boot_id) && plain(&key.kernel) && plain(&key.root) && plain(&key.irqs))
            .then_some(key)
    }
}

/// The cache file of this user, if a cache directory is known.
pub fn path() -> Option<PathBuf> {
    let nonempty = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty());
    let dir = match nonempty("XDG_CACHE_HOME") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(nonempty("HOME")?).join(".cache"),
    };
    dir.is_absolute()
        .then(|| dir.join("irqlab").join("strategy"))
}

fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// One parsed line.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: Key,
    pub decision: Decision,
    /// When it was stored (s since the epoch).
    pub stamp_s: u64,
}

/// A cache file larger than [`MAX_FILE_BYTES`] (its size): not ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge(pub usize);

/// The entries of a cache file's bytes, in file order; a line that does
/// not parse (or is not UTF-8) is skipped.
pub fn parse(bytes: &[u8]) -> Result<Vec<Entry>, TooLarge> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(TooLarge(bytes.len()));
    }
    Ok(String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(parse_line)
        .collect())
}

fn parse_line(line: &str) -> Option<Entry> {
    let f: Vec<&str> = line.split('\t').collect();
    let [tag, boot_id, kernel, root, cpus, irqs, strategy, full, targeted, rounds, stamp] = f[..]
    else {
        return None;
    };
    if tag != TAG {
        return None;
    }
    let strategy = match strategy {
        "proc_interrupts" => Strategy::ProcInterrupts,
        "per_cpu_count" => Strategy::PerCpuCount,
        _ => return None,
    };
    let decision = Decision {
        strategy,
        full_ns: full.parse().ok()?,
        targeted_ns: targeted.parse().ok()?,
        rounds: rounds.parse().ok().filter(|&r| r > 0)?,
    };
    // the stored choice must be the one its own figures make
    let cheaper = if decision.targeted_ns < decision.full_ns {
        Strategy::PerCpuCount
    } else {
        Strategy::ProcInterrupts
    };
    if cheaper != strategy || boot_id.is_empty() || kernel.is_empty() || irqs.is_empty() {
        return None;
    }
    Some(Entry {
        key: Key {
            boot_id: boot_id.into(),
            kernel: kernel.into(),
            root: root.into(),
            cpus: cpus.parse().ok()?,
            irqs: irqs.into(),
        },
        decision,
        stamp_s: stamp.parse().ok()?,
    })
}

fn format_line(e: &Entry) -> String {
    let (k, d) = (&e.key, &e.decision);
    format!(
        "{TAG}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
        k.boot_id,
        k.kernel,
        k.root,
        k.cpus,
        k.irqs,
        d.strategy.name(),
        d.full_ns,
        d.targeted_ns,
        d.rounds,
        e.stamp_s
    )
}

/// The entries of the file at `path`: none when it is missing, not a
/// regular file (a FIFO is never opened) or too large.
fn read(path: &Path) -> Vec<Entry> {
    let mut bytes = Vec::new();
    let limit = MAX_FILE_BYTES as u64 + 1;
    if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        let read = std::fs::File::open(path).and_then(|f| f.take(limit).read_to_end(&mut bytes));
        if read.is_err() {
            bytes.clear();
        }
    }
    parse(&bytes).unwrap_or_default()
}

/// `entries` that are fresh for `key`'s boot and kernel at `now`
/// (everything else is stale).
fn fresh(entries: Vec<Entry>, key: &Key, now: u64) -> Vec<Entry> {
    entries
        .into_iter()
        .filter(|e| {
            e.key.boot_id == key.boot_id
                && e.key.kernel == key.kernel
                && e.stamp_s <= now
                && now - e.stamp_s <= MAX_AGE_S
        })
        .collect()
}

/// The decision for `key` among a cache file's `entries` (the last one
/// stored), if fresh at `now`.
pub fn find(entries: Vec<Entry>, key: &Key, now: u64) -> Option<Decision> {
    fresh(entries, key, now)
        .into_iter()
        .rev()
        .find(|e| e.key == *key)
        .map(|e| e.decision)
}

/// The cached decision for `key` in the file at `path`, if fresh.
pub fn lookup(path: &Path, key: &Key) -> Option<Decision> {
    find(read(path), key, now_s())
}

/// The cache file's text once `decision` is stored for `key` at `now`
/// among its `entries`: stale and superseded entries dropped, the newest
/// `MAX_ENTRIES` (32) kept that fit in [`MAX_FILE_BYTES`] (a larger file is
/// not read back at all).
pub fn with_stored(entries: Vec<Entry>, key: &Key, decision: &Decision, now: u64) -> String {
    let mut entries = fresh(entries, key, now);
    entries.retain(|e| e.key != *key);
    entries.push(Entry {
        key: key.clone(),
        decision: decision.clone(),
        stamp_s: now,
    });
    let mut size = 0;
    let mut lines: Vec<String> = entries
        .iter()
        .rev()
        .take(MAX_ENTRIES)
        .map(format_line)
        .take_while(|l| {
            size += l.len();
            size <= MAX_FILE_BYTES
        })
        .collect();
    lines.reverse();
    lines.concat()
}

/// Store `decision` for `key` in the file at `path`, dropping stale,
/// corrupt and superseded lines. Best effort: an error only means the
/// next run measures again.
pub fn store(path: &Path, key: &Key, decision: &Decision) -> std::io::Result<()> {
    let text = with_stored(read(path), key, decision, now_s());
    replace_whole(path, text.as_bytes())
}

/// Replace the cache file at `path` whole: `bytes` into a private
/// temporary file beside it (its directory made if missing), renamed over
/// it. No fsync: a cache lost to a crash is only measured again. Used by
/// both per-boot caches (this one and `threads/cache.rs`).
pub fn replace_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("cache path has no directory"))?;
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        Key {
            boot_id: "b1".into(),
            kernel: "6.18.0".into(),
            root: "/".into(),
            cpus: 2,
            irqs: "24,25".into(),
        }
    }

    fn decision() -> Decision {
        Decision {
            strategy: Strategy::PerCpuCount,
            full_ns: 40_000,
            targeted_ns: 3_000,
            rounds: 20,
        }
    }

    #[test]
    fn stored_decision_is_found_for_the_same_key_only() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("irqlab/strategy");
        assert_eq!(lookup(&p, &key()), None);
        store(&p, &key(), &decision()).unwrap();
        assert_eq!(lookup(&p, &key()), Some(decision()));
        let other_irqs = Key {
            irqs: "24".into(),
            ..key()
        };
        assert_eq!(lookup(&p, &other_irqs), None);
        let other_cpus = Key { cpus: 3, ..key() };
        assert_eq!(lookup(&p, &other_cpus), None);
    }

    #[test]
    fn another_boot_or_kernel_makes_entries_stale_and_they_are_dropped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("strategy");
        store(&p, &key(), &decision()).unwrap();
        let reboot = Key {
            boot_id: "b2".into(),
            ..key()
        };
        assert_eq!(lookup(&p, &reboot), None);
        let kernel = Key {
            kernel: "6.19.0".into(),
            ..key()
        };
        assert_eq!(lookup(&p, &kernel), None);
        store(&p, &reboot, &decision()).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("\tb2\t"));
    }

    #[test]
    fn old_future_and_corrupt_lines_are_ignored() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("strategy");
        let now = now_s();
        let line = |stamp: u64| {
            format_line(&Entry {
                key: key(),
                decision: decision(),
                stamp_s: stamp,
            })
        };
        for bad in [
            line(now - MAX_AGE_S - 10),
            line(now + 3600),
            "garbage\n".to_string(),
            line(now).replace("per_cpu_count", "proc_interrupts"),
            line(now).replace("\t20\t", "\t0\t"),
            line(now).replacen('\t', "\tx\t", 3),
            "\u{0}\u{1}\n".to_string(),
        ] {
            std::fs::write(&p, &bad).unwrap();
            assert_eq!(lookup(&p, &key()), None, "{bad:?}");
        }
        std::fs::write(&p, line(now)).unwrap();
        assert_eq!(lookup(&p, &key()), Some(decision()));
    }

    #[test]
    fn a_directory_at_the_cache_path_is_not_read_and_store_fails_softly() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("strategy");
        std::fs::create_dir(&p).unwrap();
        assert_eq!(lookup(&p, &key()), None);
        assert!(store(&p, &key(), &decision()).is_err());
    }

    #[test]
    fn a_file_larger_than_the_limit_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("strategy");
        let line = format_line(&Entry {
            key: key(),
            decision: decision(),
            stamp_s: now_s(),
        });
        let mut text = line.clone();
        text.push_str(&"#".repeat(MAX_FILE_BYTES - line.len()));
        assert_eq!(parse(text.as_bytes()).map(|e| e.len()), Ok(1));
        std::fs::write(&p, &text).unwrap();
        assert_eq!(lookup(&p, &key()), Some(decision()));
        text.push('#');
        assert_eq!(parse(text.as_bytes()), Err(TooLarge(MAX_FILE_BYTES + 1)));
        std::fs::write(&p, &text).unwrap();
        assert_eq!(lookup(&p, &key()), None);
    }

    #[test]
    fn with_stored_keeps_fresh_entries_of_other_keys() {
        let now = 1_700_000_000;
        let other = Key {
            irqs: "24".into(),
            ..key()
        };
        let old = Entry {
            key: other.clone(),
            decision: decision(),
            stamp_s: now - 10,
        };
        let text = with_stored(vec![old.clone()], &key(), &decision(), now);
        let entries = parse(text.as_bytes()).unwrap();
        assert_eq!(entries.len(), 2, "{text}");
        assert_eq!(find(entries.clone(), &other, now), Some(decision()));
        assert_eq!(find(entries, &key(), now), Some(decision()));
    }

    #[test]
    fn the_text_stored_fits_the_size_read_back() {
        let now = 1_700_000_000;
        let long = |i: usize| Key {
            irqs: format!("{i},{}", "9".repeat(2100)),
            ..key()
        };
        let entries: Vec<Entry> = (0..31)
            .map(|i| Entry {
                key: long(i),
                decision: decision(),
                stamp_s: now - 1,
            })
            .collect();
        let text = with_stored(entries, &key(), &decision(), now);
        assert!(text.len() <= MAX_FILE_BYTES, "{}", text.len());
        let back = parse(text.as_bytes()).unwrap();
        assert_eq!(find(back.clone(), &key(), now), Some(decision()));
        assert_eq!(find(back, &long(30), now), Some(decision()));
    }

    #[test]
    fn line_round_trips() {
        let e = Entry {
            key: key(),
            decision: decision(),
            stamp_s: 1_700_000_000,
        };
        assert_eq!(parse_line(format_line(&e).trim_end()), Some(e));
    }
}
