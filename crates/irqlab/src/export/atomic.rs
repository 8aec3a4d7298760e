//! Output files written whole or not at all: the content goes to a
//! temporary file in the target's directory, which is renamed over the
//! target only once everything was written and synced. A failure (full
//! disk, a write error, a panic in the producer) removes the temporary
//! file and leaves any previous file at the path untouched, never a
//! truncated one. Every error names the target file.

use anyhow::{anyhow, Context, Result};
use std::fs::Permissions;
use std::io::{BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Write `path` atomically: `produce` writes the content into a buffered
/// temporary file beside it, which replaces `path` when `produce` and
/// the final flush and sync succeed. A directory at `path` is refused
/// before anything is written.
pub fn write_file(path: &Path, produce: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let shown = path.display();
    if path.is_dir() {
        return Err(anyhow!("writing {shown}: is a directory, expected a file"));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("writing {shown}: not a file name"))?;
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        // 0666 before the umask, like a file made by `>`.
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("writing {shown}: cannot create a file in {}", dir.display()))?;
    let mut out = BufWriter::new(tmp);
    produce(&mut out).with_context(|| format!("writing {shown}"))?;
    let tmp = out
        .into_inner()
        .map_err(|e| anyhow!("writing {shown}: {}", e.error()))?;
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("writing {shown}"))?;
    tmp.persist(path)
        .map_err(|e| anyhow!("writing {shown}: {}", e.error))?;
    Ok(())
}

/// [`write_file`] with a finished byte buffer.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    write_file(path, |w| Ok(w.write_all(bytes)?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn complete_writes_replace_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        std::fs::write(&p, "old").unwrap();
        write_bytes(&p, b"new content").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new content");
        assert_eq!(names(dir.path()), ["x.json"]);
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_ne!(mode & 0o044, 0, "readable by others like a `>` file");
    }

    #[test]
    fn failed_writes_leave_no_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        std::fs::write(&p, "old").unwrap();
        let err = write_file(&p, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::from_raw_os_error(28).into())
        })
        .unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.starts_with(&format!("writing {}", p.display())),
            "{msg}"
        );
        assert!(msg.contains("No space left on device"), "{msg}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(names(dir.path()), ["x.json"]);
        let fresh = dir.path().join("new.csv");
        assert!(write_file(&fresh, |_| Err(anyhow!("boom"))).is_err());
        assert!(!fresh.exists());
    }

    #[test]
    fn a_directory_or_missing_parent_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let msg = format!("{:#}", write_bytes(dir.path(), b"x").unwrap_err());
        assert!(msg.contains("is a directory"), "{msg}");
        let p = dir.path().join("no/such/dir/x.json");
        let msg = format!("{:#}", write_bytes(&p, b"x").unwrap_err());
        assert!(
            msg.starts_with(&format!("writing {}", p.display())),
            "{msg}"
        );
    }
}
