//! The append-only journal: one JSON line per sample not yet in a closed
//! segment, written and flushed to the kernel at every sample (so a
//! SIGKILL loses nothing that was flushed). Reading stops at a torn or
//! unreadable tail and reports its byte offset; everything before it is
//! kept.

#[cfg(test)]
use super::schema::SCHEMA;
use super::schema::{readable, unreadable, JournalLine};
use anyhow::Context;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

/// An open journal.
pub struct RecordJournal {
    path: PathBuf,
    file: std::fs::File,
    /// Bytes written so far.
    pub len: u64,
}

impl RecordJournal {
    /// Create (truncate) the journal at `path`.
    pub fn create(path: &Path) -> anyhow::Result<RecordJournal> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        Ok(RecordJournal {
            path: path.to_path_buf(),
            file,
            len: 0,
        })
    }

    /// Append one sample and flush it to the kernel. Streamed through a
    /// 64-KB buffer: a big machine's first line (every counter, ~60 MB of
    /// JSON at 1152 CPUs) is never held whole in memory.
    pub fn append(&mut self, line: &JournalLine) -> anyhow::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &self.file);
        let written = serde_json::to_writer(&mut w, line)
            .map_err(std::io::Error::from)
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush());
        drop(w);
        written.with_context(|| {
            format!(
                "cannot write {} at offset {}",
                self.path.display(),
                self.len
            )
        })?;
        self.len = self.file.stream_position().unwrap_or(self.len);
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Where and why reading a journal stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Torn {
    pub offset: u64,
    pub why: String,
}

/// The complete lines of a journal, and the torn tail if any.
pub fn read(path: &Path) -> anyhow::Result<(Vec<JournalLine>, Option<Torn>)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(parse(&bytes))
}

/// [`read`] on bytes.
pub fn parse(bytes: &[u8]) -> (Vec<JournalLine>, Option<Torn>) {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let rest = bytes.get(at..).unwrap_or_default();
        let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
            let why = format!("torn last record ({} bytes without a newline)", rest.len());
            return (
                out,
                Some(Torn {
                    offset: at as u64,
                    why,
                }),
            );
        };
        let line = rest.get(..nl).unwrap_or_default();
        match serde_json::from_slice::<JournalLine>(line) {
            Ok(l) if readable(l.schema) => out.push(l),
            Ok(l) => {
                let why = unreadable(l.schema);
                return (
                    out,
                    Some(Torn {
                        offset: at as u64,
                        why,
                    }),
                );
            }
            Err(e) => {
                return (
                    out,
                    Some(Torn {
                        offset: at as u64,
                        why: format!("unreadable record: {e}"),
                    }),
                )
            }
        }
        at += nl + 1;
    }
    (out, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::schema::{CellValue, SampleTime, SourceKind};

    fn line(seq: u64) -> JournalLine {
        JournalLine {
            schema: SCHEMA,
            time: SampleTime {
                seq,
                wall_ns: seq * 10,
                mono_ns: seq,
            },
            shape: None,
            cells: vec![CellValue {
                source: SourceKind::Softirqs,
                key: "HI".into(),
                cpu: Some(1),
                value: seq,
            }],
        }
    }

    #[test]
    fn torn_tail_is_reported_with_its_offset() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j");
        let mut j = RecordJournal::create(&p).unwrap();
        j.append(&line(0)).unwrap();
        j.append(&line(1)).unwrap();
        let good = j.len;
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.extend_from_slice(b"{\"schema\":1,\"seq\":2,\"wal");
        let (lines, torn) = parse(&bytes);
        assert_eq!(lines.len(), 2);
        assert_eq!(torn.unwrap().offset, good);
        // Garbage in the middle: kept up to it.
        let mut bad = std::fs::read(&p).unwrap();
        bad.splice(0..0, b"not json\n".iter().copied());
        let (lines, torn) = parse(&bad);
        assert!(lines.is_empty());
        assert_eq!(torn.unwrap().offset, 0);
        let other = br#"{"schema":9,"seq":0,"wall_ns":0,"mono_ns":0,"cells":[]}
"#;
        assert!(parse(other).1.unwrap().why.contains("schema 9"));
    }
}
