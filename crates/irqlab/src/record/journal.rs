//! The append-only journal: one JSON line per sample not yet in a closed
//! segment, written and flushed to the kernel at every sample (so a
//! SIGKILL loses nothing that was flushed). Reading stops at a torn or
//! unreadable tail and reports its byte offset; everything before it is
//! kept.

use super::cells::FlatRow;
#[cfg(test)]
use super::schema::SCHEMA;
use super::schema::{readable, unreadable, CellValue, JournalLine, SampleTime, Shape, SourceKind};
use anyhow::Context;
use serde::Serialize;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

/// An open journal.
pub struct RecordJournal {
    path: PathBuf,
    file: Locked,
    /// Bytes written so far.
    pub len: u64,
}

impl RecordJournal {
    /// Create (truncate) the journal at `path`, locked for this process:
    /// a second `record` or a `recover` of the same boot directory fails
    /// instead of taking a journal that is still being written.
    pub fn create(path: &Path) -> anyhow::Result<RecordJournal> {
        let file = lock(path, true)?;
        file.set_len(0)
            .with_context(|| format!("cannot truncate {}", path.display()))?;
        Ok(RecordJournal {
            path: path.to_path_buf(),
            file,
            len: 0,
        })
    }

    /// Empty the journal (a segment took its samples), keeping the lock.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.rewind())
            .with_context(|| format!("cannot truncate {}", self.path.display()))?;
        self.len = 0;
        Ok(())
    }

    /// Append one sample and flush it to the kernel. Streamed through a
    /// 64-KB buffer: a big machine's first line (every counter, ~60 MB of
    /// JSON at 1152 CPUs) is never held whole in memory.
    pub fn append(&mut self, line: &LineOut) -> anyhow::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &*self.file);
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

/// A journal file with its lock.
pub type Locked = nix::fcntl::Flock<std::fs::File>;

/// Open the journal at `path` for writing (created when `create`), with
/// an exclusive lock (`flock`); held until the file is closed.
pub fn lock(path: &Path, create: bool) -> anyhow::Result<Locked> {
    let file = std::fs::OpenOptions::new()
        .create(create)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    use nix::fcntl::{Flock, FlockArg};
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => Ok(locked),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => anyhow::bail!(
            "{} is being written by a running `irqlab record`: stop it first (`irqlab replay` reads a running recording as is)",
            path.display()
        ),
        Err((_, e)) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
    }
}

/// A journal line as written: the JSON of [`JournalLine`], with the cells
/// borrowed (a list of changed cells, or every cell of the differ's rows).
#[derive(Debug, Serialize)]
pub struct LineOut<'a> {
    pub schema: u32,
    #[serde(flatten)]
    pub time: SampleTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<&'a Shape>,
    pub cells: LineCells<'a>,
}

/// The cells of a [`LineOut`].
#[derive(Debug)]
pub enum LineCells<'a> {
    List(&'a [CellValue]),
    /// Every cell of these rows.
    Rows(&'a [FlatRow]),
}

/// One cell as [`CellValue`] serialises it.
#[derive(Serialize)]
struct CellRef<'a> {
    source: SourceKind,
    key: &'a str,
    cpu: Option<u32>,
    value: u64,
}

impl Serialize for LineCells<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        match self {
            LineCells::List(cells) => cells.serialize(s),
            LineCells::Rows(rows) => {
                let mut seq = s.serialize_seq(None)?;
                for r in rows.iter() {
                    for (&cpu, &value) in r.cpus.iter().zip(&r.values) {
                        seq.serialize_element(&CellRef {
                            source: r.source,
                            key: &r.key,
                            cpu,
                            value,
                        })?;
                    }
                }
                seq.end()
            }
        }
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

    fn out(l: &JournalLine) -> LineOut<'_> {
        LineOut {
            schema: l.schema,
            time: l.time,
            shape: l.shape.as_ref(),
            cells: LineCells::List(&l.cells),
        }
    }

    #[test]
    fn every_cell_of_rows_is_written_as_the_same_json_as_a_list() {
        let rows = vec![FlatRow {
            source: SourceKind::Interrupts,
            key: "LOC".into(),
            cpus: vec![Some(0), Some(1)],
            values: vec![5, 6],
        }];
        let mut l = line(3);
        l.shape = Some(Shape::default());
        l.cells = vec![
            CellValue {
                source: SourceKind::Interrupts,
                key: "LOC".into(),
                cpu: Some(0),
                value: 5,
            },
            CellValue {
                source: SourceKind::Interrupts,
                key: "LOC".into(),
                cpu: Some(1),
                value: 6,
            },
        ];
        let from_rows = LineOut {
            cells: LineCells::Rows(&rows),
            ..out(&l)
        };
        let a = serde_json::to_string(&from_rows).unwrap();
        assert_eq!(a, serde_json::to_string(&l).unwrap());
        assert_eq!(a, serde_json::to_string(&out(&l)).unwrap());
        let back: JournalLine = serde_json::from_str(&a).unwrap();
        assert_eq!(back.cells, l.cells);
    }

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
        j.append(&out(&line(0))).unwrap();
        j.append(&out(&line(1))).unwrap();
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
