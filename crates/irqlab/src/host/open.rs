//! Opening files under a root without ever blocking, and refusing what is
//! not a regular file.
//!
//! Owns [`open_regular`], [`open_regular_rw`], [`open_regular_append`]
//! and [`create_regular`]: every open is
//! `O_NONBLOCK | O_NOCTTY | O_CLOEXEC` (a FIFO without a writer would
//! otherwise block `open` forever), followed by an `fstat` of the opened
//! descriptor (not of the path, so a symlink swapped in between cannot
//! slip through). Anything but a regular file — FIFO, socket, character or
//! block device (`/dev/zero`), directory — is an error naming the path and
//! its type. Kernel `/proc` and `/sys` attribute files are regular files,
//! and `O_NONBLOCK` has no effect on regular files.

use nix::fcntl::OFlag;
use std::fs::{File, FileType, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

fn flags() -> i32 {
    (OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits()
}

/// Open `path` read-only; error unless it is a regular file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_regular_sized(path).map(|o| o.file)
}

/// Which file a path names: device and inode number. A kept descriptor
/// of a non-live root is compared by this with what its path names at
/// each read (`HostFs`), to notice a file replaced or removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(meta: &Metadata) -> Self {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    /// The file `path` names now (one `statx`, following symbolic links
    /// like the open does).
    pub(crate) fn of_path(path: &Path) -> io::Result<Self> {
        std::fs::metadata(path).map(|m| FileId::of(&m))
    }
}

/// What [`open_regular_sized`] opened: the descriptor, its `st_size` (0
/// for `/proc` files) and its [`FileId`], all from the type check's `fstat`.
pub(crate) struct Opened {
    pub file: File,
    pub size: u64,
    pub id: FileId,
}

/// [`open_regular`] that also returns the file's `st_size` and identity
/// from the same `fstat` as the type check, so that a caller sizing its
/// buffer from it or checking later that the path still names it does
/// not ask again.
pub(crate) fn open_regular_sized(path: &Path) -> io::Result<Opened> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags())
        .open(path)
        .map_err(|e| name_special(path, e))?;
    let meta = check_regular(path, &file)?;
    Ok(Opened {
        file,
        size: meta.len(),
        id: FileId::of(&meta),
    })
}

/// Open `path` read-only with the same flags as [`open_regular`] but no
/// type check: for callers that check the type themselves when the first
/// read is not conclusive (`HostFs::read_attr`).
pub(crate) fn open_unchecked(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(flags())
        .open(path)
}

/// A failed open of a special file (a socket gives `ENXIO`, a FIFO opened
/// for writing without a reader too) says what the file is; a loop of
/// symbolic links is refused by name (a broken tree, not an absent file).
fn name_special(path: &Path, e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) {
        return io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a loop of symbolic links, expected a regular file ({e})",
                path.display()
            ),
        );
    }
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => refused(path, m.file_type()),
        _ => e,
    }
}

fn refused(path: &Path, ty: FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a {}, expected a regular file (refused without reading it)",
            path.display(),
            type_name(ty)
        ),
    )
}

/// Open `path` for writing (truncating, not creating); error unless it is
/// a regular file. A FIFO without a reader fails at open (`ENXIO`) instead
/// of blocking.
pub fn create_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(flags())
        .open(path)
        .map_err(|e| name_special(path, e))?;
    check_regular(path, &file)?;
    Ok(file)
}

/// Open `path` for reading and writing (created when `create` and
/// absent; not truncated); error unless it is a regular file, in
/// [`open_regular`]'s words. A FIFO opens at once for reading and writing
/// and is then refused by its type: never waited on.
pub fn open_regular_rw(path: &Path, create: bool) -> io::Result<File> {
    open_checked(
        path,
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false),
    )
}

/// [`open_regular_rw`] for appending (`O_APPEND`: every write goes to
/// the end), created when absent.
pub fn open_regular_append(path: &Path) -> io::Result<File> {
    open_checked(
        path,
        OpenOptions::new().read(true).append(true).create(true),
    )
}

/// Open `path` as `opts` says, with [`flags`], then refuse it unless it
/// is a regular file.
fn open_checked(path: &Path, opts: &mut OpenOptions) -> io::Result<File> {
    let file = opts
        .custom_flags(flags())
        .open(path)
        .map_err(|e| name_special(path, e))?;
    check_regular(path, &file)?;
    Ok(file)
}

/// The file's metadata when it is a regular file, else the refusal.
fn check_regular(path: &Path, file: &File) -> io::Result<Metadata> {
    let meta = file.metadata()?;
    let ty = meta.file_type();
    if ty.is_file() {
        return Ok(meta);
    }
    Err(refused(path, ty))
}

/// A human name of a file type (what stands where another type belongs).
pub fn type_name(ty: FileType) -> &'static str {
    if ty.is_file() {
        "regular file"
    } else if ty.is_fifo() {
        "FIFO (named pipe)"
    } else if ty.is_socket() {
        "socket"
    } else if ty.is_char_device() {
        "character device"
    } else if ty.is_block_device() {
        "block device"
    } else if ty.is_dir() {
        "directory"
    } else if ty.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}
