//! Output files (`--out`, `--plot`, `--html`) written as `cp` or `tee`
//! would, never replacing what is not a regular file:
//!
//! - a symlink is followed: its final target is written, the link stays;
//! - a regular file or a new path is written whole or not at all: the
//!   content goes to a temporary file in the target's directory, which is
//!   renamed over the target only once everything was written and
//!   synced. A failure (full disk, a write error, a panic in the
//!   producer) removes the temporary file and leaves any previous file
//!   at the path untouched, never a truncated one;
//! - any other existing file (a device, a FIFO, a socket) is opened and
//!   written in place, without creating or renaming anything; a reader
//!   that goes away before the end (EPIPE) is a write error there, not
//!   the quiet end of a closed stdout (`| head`);
//! - a directory is refused before anything is written.
//!
//! What is no regular file is found as the kernel follows the path, so
//! that `/dev/stdout` on a pipe (`/proc/self/fd/1` -> `pipe:[N]`, no
//! path) is written in place too.
//!
//! Every error names the target file as given.

use anyhow::{anyhow, Context, Result};
use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Most symlinks followed to reach the target, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// What `write_file` finds at the end of a path's symlinks.
#[derive(Debug, PartialEq)]
enum Target {
    /// Nothing, or a regular file: replaced atomically.
    Replace(PathBuf),
    /// A device, FIFO or socket: written in place.
    InPlace(PathBuf),
}

/// Write `path` with what `produce` writes (see the module doc for how:
/// atomically for a regular file or a new path, in place for a device or
/// a FIFO, through symlinks). A directory at `path` is refused before
/// anything is written.
pub fn write_file(path: &Path, produce: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let shown = path.display();
    match target(path).with_context(|| format!("writing {shown}"))? {
        Target::Replace(real) => replace(path, &real, produce),
        Target::InPlace(real) => in_place(path, &real, produce),
    }
}

/// Refuse now what [`write_file`] would refuse at `path` once the output
/// is made, for a command that spends long making it (a probe run): a
/// directory at `path`, or for a new or regular file a directory beside
/// it that is missing or cannot take a new file. Nothing is created.
pub fn check(path: &Path) -> Result<()> {
    let shown = path.display();
    let Target::Replace(real) = target(path).with_context(|| format!("writing {shown}"))? else {
        return Ok(());
    };
    let dir = dir_of(&real);
    let cannot = || format!("writing {shown}: cannot create a file in {}", dir.display());
    let meta = std::fs::metadata(dir).with_context(cannot)?;
    if !meta.is_dir() {
        return Err(anyhow!("{}: not a directory", cannot()));
    }
    use nix::unistd::{access, AccessFlags};
    access(dir, AccessFlags::W_OK | AccessFlags::X_OK)
        .map_err(io::Error::from)
        .with_context(cannot)
}

/// The directory a new file at `real` goes in (`.` for a bare name).
fn dir_of(real: &Path) -> &Path {
    match real.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// [`write_file`] with a finished byte buffer.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    write_file(path, |w| Ok(w.write_all(bytes)?))
}

/// The file `path` names once its symlinks are followed, and how to
/// write it.
fn target(path: &Path) -> Result<Target> {
    if let Some(t) = kernel_followed(path)? {
        return Ok(t);
    }
    let mut real = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&real) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Replace(real)),
            Err(e) => return Err(e.into()),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let to = std::fs::read_link(&real)?;
            real = match real.parent() {
                Some(dir) => dir.join(to),
                None => to,
            };
        } else if kind.is_dir() {
            return Err(anyhow!("is a directory, expected a file"));
        } else if kind.is_file() {
            return Ok(Target::Replace(real));
        } else {
            return Ok(Target::InPlace(real));
        }
    }
    Err(io::Error::from_raw_os_error(nix::libc::ELOOP).into())
}

/// What the kernel finds at `path` when that is no regular file: the
/// links of `/proc/self/fd/N` (`/dev/stdout` on a pipe or socket) read as
/// `pipe:[N]`, which names no path, so such a target is written in place
/// through `path` itself. `None` for a regular file or an unreachable
/// path, which the link walk resolves.
fn kernel_followed(path: &Path) -> Result<Option<Target>> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        Err(anyhow!("is a directory, expected a file"))
    } else if kind.is_file() {
        Ok(None)
    } else {
        Ok(Some(Target::InPlace(path.to_path_buf())))
    }
}

/// Write `real` (which `path` names) atomically: a buffered temporary
/// file beside it, renamed over it when `produce` and the final flush
/// and sync succeed.
fn replace(
    path: &Path,
    real: &Path,
    produce: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let shown = path.display();
    let dir = dir_of(real);
    let name = real
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
    // Something other than a regular file may have appeared meanwhile.
    if let Target::InPlace(_) = target(path).with_context(|| format!("writing {shown}"))? {
        return Err(anyhow!("writing {shown}: no longer a regular file"));
    }
    tmp.persist(real)
        .map_err(|e| anyhow!("writing {shown}: {}", e.error))?;
    Ok(())
}

/// Write `real` (a device, FIFO or socket that `path` names) in place:
/// opened for writing without creating or truncating anything.
fn in_place(
    path: &Path,
    real: &Path,
    produce: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let shown = path.display();
    let file: File = OpenOptions::new()
        .write(true)
        .open(real)
        .with_context(|| format!("writing {shown}"))?;
    let mut out = BufWriter::new(file);
    produce(&mut out)
        .and_then(|()| Ok(out.flush()?))
        .map_err(|e| in_place_error(path, e))
}

/// A write error of an in-place target, named. A broken pipe (the reader
/// of a FIFO or socket went away) becomes a plain error: unlike stdout's,
/// which `main` takes for a normal end (`| head`), a file given by name
/// that takes only part of the output is a failed write.
fn in_place_error(path: &Path, err: anyhow::Error) -> anyhow::Error {
    let shown = path.display();
    if super::stdout::is_closed(&err) {
        anyhow!(
            "writing {shown}: its reader closed it before the output was complete (broken pipe)"
        )
    } else {
        err.context(format!("writing {shown}"))
    }
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
    fn check_refuses_what_write_file_would_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.json");
        check(&new).unwrap();
        let e = format!("{:#}", check(dir.path()).unwrap_err());
        assert!(e.ends_with("is a directory, expected a file"), "{e}");
        let e = format!("{:#}", check(&dir.path().join("no/x.json")).unwrap_err());
        assert!(e.contains(": cannot create a file in "), "{e}");
        assert_eq!(names(dir.path()), Vec::<String>::new());
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
    fn a_fifo_whose_reader_leaves_early_is_a_write_error() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                use std::io::Read;
                let mut got = [0u8; 10];
                File::open(fifo).unwrap().read_exact(&mut got).unwrap();
            })
        };
        let err = write_file(&fifo, |w| {
            w.write_all(b"0123456789")?;
            w.flush()?;
            reader.join().unwrap();
            for _ in 0..64 {
                w.write_all(&[b'x'; 16 * 1024])?;
            }
            Ok(())
        })
        .unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.starts_with(&format!("writing {}", fifo.display())),
            "{msg}"
        );
        assert!(msg.contains("broken pipe"), "{msg}");
        assert!(!super::super::stdout::is_closed(&err), "{msg}");
    }

    #[test]
    fn dev_stdout_on_a_pipe_is_written_in_place() {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        let (rd, wr) = nix::unistd::pipe().unwrap();
        let path = PathBuf::from(format!("/proc/self/fd/{}", wr.as_raw_fd()));
        write_bytes(&path, b"through the pipe").unwrap();
        drop(wr);
        let mut got = String::new();
        File::from(rd).read_to_string(&mut got).unwrap();
        assert_eq!(got, "through the pipe");
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
