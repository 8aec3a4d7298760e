//! Undo of a journaled temporary file: remove it. A file that no longer
//! exists needs nothing (its owner removed it, or it was never created).
//! Touches only the path in the journal entry.

use anyhow::{Context, Result};

/// Remove `path`; `Some(why)` when there was nothing to remove.
pub(super) fn remove(path: &str) -> Result<Option<String>> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(Some(format!("temporary file {path} is already gone")))
        }
        Err(e) => Err(e).with_context(|| format!("removing temporary file {path}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_once_then_reports_gone() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("irqlab-disk-x.dat");
        std::fs::write(&p, b"x").unwrap();
        let s = p.to_str().unwrap();
        assert_eq!(remove(s).unwrap(), None);
        assert!(!p.exists());
        assert!(remove(s).unwrap().unwrap().contains("already gone"));
    }
}
