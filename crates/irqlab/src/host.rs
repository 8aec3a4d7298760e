//! HostFs: the only code that reads `/proc` and `/sys`.
//!
//! Every path is relative to a root directory (`/` live, or a captured or
//! synthesized tree in tests and with `--root`). Files are opened once and
//! kept open; each read is a `pread` loop from offset 0 into a reused buffer
//! until a 0-byte read, because seq_file returns at most one page per call
//! and regenerates the content when the offset goes back to 0.
//! Writes (for the SystemGuard) also go through here, so tests can run the
//! guard against a fake tree.
//!
//! Faults it must survive (docs/limits.md): every open is non-blocking and
//! anything that is not a regular file is refused by name (`host/open.rs`);
//! every read stops with an error at [`MAX_READ`] bytes in all, or as soon
//! as one line is longer than [`MAX_LINE_READ`]; no buffer is ever sized
//! from `st_size` beyond `PRESIZE_MAX`. Peak memory of a read is thus at
//! most about twice `MAX_LINE_READ` for a file without newlines (a sparse
//! file, `/dev/zero` behind a symlink if it got past the type check) and
//! about `MAX_READ` for any input at all.
//!
//! A kept descriptor of the live root is read as it is: `/proc` and `/sys`
//! files are never replaced, and the per-sample cost is the `pread`s alone.
//! Under any other root (a captured or synthesized tree, which an editor,
//! `sed -i` or `mv` can replace) each read of a kept file first asks what
//! its path names now (one `statx`): another file than the one kept is
//! reopened and read, no file at all is a read error naming the path.
//!
//! The kernel ends every line of its text files with `\n`: the reads of
//! the statistics files ([`HostFs::read_lines`], [`HostFs::read_record`],
//! [`HostFs::read_text`]) refuse a non-empty text that does not (a copy
//! cut short), naming the path and the number of its last line.

mod attrs;
mod open;

pub use attrs::AttrDir;
pub use open::{create_regular, open_regular, open_regular_append, open_regular_rw, type_name};

use open::{FileId, Opened};

use anyhow::Context;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// First buffer size: one seq_file page (what one call returns anyway).
/// Buffers double when a read fills them and are kept, so a big file costs
/// a few growth steps once; a small one (schedstat, 30 bytes) does not
/// zero and fault in 64 KiB per kept file at start.
const FIRST: usize = 4096;

/// Most bytes one read of one file may return: 2 GiB. The largest
/// plausible kernel file is `/proc/interrupts` on the largest machine Linux
/// is built for: 8192 CPUs (x86 `MAXSMP`) × 11 bytes per count (`%10u `)
/// ≈ 90 KB per row × ~20 000 IRQ rows ≈ 1.8 GB. Anything longer is not a
/// kernel file: the read stops with an error instead of eating memory.
pub const MAX_READ: usize = 1 << 31;

/// Longest line a read may hold while still reading: the longest line any
/// parser accepts (`/proc/stat`'s `intr` line, 4 MiB) plus one byte, so that
/// the parser, not the read, reports a line just over its own limit. A file
/// without a newline within this many bytes (a 2 GB sparse file is all
/// zero bytes) stops here, after a few MiB, not after `MAX_READ`.
pub const MAX_LINE_READ: usize = max(
    max(
        irqlab_core::stat::MAX_LINE,
        irqlab_core::interrupts::MAX_LINE,
    ),
    irqlab_core::softirqs::MAX_LINE,
) + 1;

/// Largest first buffer sized from a regular file's `st_size` (captured
/// trees): bigger files grow by doubling like `/proc` files, so a huge
/// sparse file never gets a zero-filled buffer of its size.
const PRESIZE_MAX: usize = 8 << 20;

// the limits exceed the largest plausible kernel file and the longest line
// any parser accepts (checked at compile time)
const _: () = assert!(MAX_READ > 8192 * 11 * 20_000);
const _: () = assert!(MAX_LINE_READ > irqlab_core::stat::MAX_LINE);

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// A kept-open file and its reusable buffer.
struct Kept {
    file: File,
    buf: Vec<u8>,
    /// `st_size` at open (the type check's `fstat`): what [`presize`]
    /// sizes the first buffer from, without a second `fstat`.
    size: u64,
    /// The kept file's identity (from the same `fstat`), which
    /// [`Kept::follow`] compares with what its path names.
    id: FileId,
}

impl Kept {
    fn new(o: Opened) -> Self {
        Kept {
            file: o.file,
            buf: Vec::new(),
            size: o.size,
            id: o.id,
        }
    }

    /// Make the descriptor the file `rel` under `root` names now: one
    /// `statx` of the path; when it names another file than the kept
    /// one (replaced by `mv`, `sed -i`, an editor), that file is opened
    /// in its place (the buffer kept). An error naming the path when it
    /// names no file (removed) or one that cannot be opened.
    fn follow(&mut self, root: &Path, rel: &str) -> io::Result<()> {
        let path = join_rel(root, rel);
        let now = FileId::of_path(&path).map_err(|e| named(root, rel, e))?;
        if now != self.id {
            // a refusal names the path already
            let o = open::open_regular_sized(&path).map_err(|e| {
                if is_refusal(&e) {
                    e
                } else {
                    named(root, rel, e)
                }
            })?;
            self.file = o.file;
            self.size = o.size;
            self.id = o.id;
        }
        Ok(())
    }

    /// The text of a one-record file (see [`HostFs::read_record`]); read
    /// errors are not named.
    fn read_record(&mut self) -> io::Result<&[u8]> {
        if self.buf.is_empty() {
            presize(self.size, &mut self.buf);
        }
        if self.buf.is_empty() {
            // the first read of a /proc record lands on the stack; the kept
            // buffer is then sized to it (twice its length: a later, longer
            // text still ends short), so a 30-byte schedstat does not zero
            // and fault in a page of its own
            let mut small = [0u8; RECORD_FIRST];
            let n = read_at_retry(&self.file, &mut small)?;
            if let Some(text) = small.get(..n).filter(|_| n < RECORD_FIRST) {
                let len = (2 * n).clamp(RECORD_MIN, FIRST).next_power_of_two();
                self.buf.reserve_exact(len);
                self.buf.extend_from_slice(text);
                self.buf.resize(len, 0);
                return Ok(self.buf.get(..n).unwrap_or_default());
            }
            // longer: read again whole into a buffer of one page or more
            self.buf.resize(FIRST, 0);
        }
        let (filled, _calls) =
            read_loop_limited(&self.file, &mut self.buf, None, Limits::default(), true)?;
        Ok(self.buf.get(..filled).unwrap_or_default())
    }
}

/// A kept-open file and its reused buffer, owned by the caller of
/// [`HostFs::keep`] instead of a [`HostFs`]'s map; closed when dropped.
pub struct KeptFile(Kept);

impl std::fmt::Debug for KeptFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("KeptFile").field(&self.0.file).finish()
    }
}

/// The hasher of the kept-file map: its keys are irqlab's own relative
/// paths (no untrusted input to flood it), looked up once per file per
/// sample, so a word-at-a-time folded multiply (each 8 bytes xored in,
/// multiplied to 128 bits, the halves folded: foldhash's mixer) replaces
/// the default SipHash, which cost several hundred instructions per read.
#[derive(Default, Clone, Copy)]
struct RelHasher(u64);

impl RelHasher {
    fn mix(&mut self, w: u64) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let p = u128::from(self.0 ^ w) * u128::from(K ^ 0x2d35_8dcc_aa6c_78a5);
        self.0 = (p as u64) ^ ((p >> 64) as u64) ^ K;
    }
}

impl std::hash::Hasher for RelHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.mix(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        // the tail with its length, so that padding cannot alias
        let mut w = [0u8; 8];
        if let Some(dst) = w.get_mut(..rest.len()) {
            dst.copy_from_slice(rest);
        }
        w[7] ^= rest.len() as u8;
        self.mix(u64::from_le_bytes(w));
    }

    fn write_u8(&mut self, b: u8) {
        self.mix(u64::from(b));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The kept files of one root by relative path.
type KeptMap = HashMap<String, Kept, std::hash::BuildHasherDefault<RelHasher>>;

/// `root`-relative `rel` (`proc/interrupts`, a leading `/` allowed) as a path.
fn join_rel(root: &Path, rel: &str) -> PathBuf {
    root.join(rel.trim_start_matches('/'))
}

/// The kept-open descriptor of `rel` under `root`, opened (regular files
/// only) on first use; later calls cost one map lookup, and under a root
/// whose files can be replaced (`replaceable`: not the live `/`) one
/// `statx` to [`Kept::follow`] the path. A failed follow closes the
/// descriptor (the next call opens the path afresh) and is the error.
fn kept_file<'a>(
    kept: &'a mut KeptMap,
    root: &Path,
    rel: &str,
    replaceable: bool,
) -> io::Result<&'a mut Kept> {
    match kept.get_mut(rel) {
        Some(k) if replaceable => {
            if let Err(e) = k.follow(root, rel) {
                kept.remove(rel);
                return Err(e);
            }
        }
        Some(_) => {}
        None => {
            let o = open::open_regular_sized(&join_rel(root, rel))?;
            kept.insert(rel.to_string(), Kept::new(o));
        }
    }
    kept.get_mut(rel)
        .ok_or_else(|| io::Error::other("kept file vanished"))
}

/// [`HostFs::read`]: the whole file through its kept descriptor.
fn read_whole<'a>(
    kept: &'a mut KeptMap,
    root: &Path,
    rel: &str,
    replaceable: bool,
) -> io::Result<&'a [u8]> {
    let k = kept_file(kept, root, rel, replaceable)?;
    if k.buf.is_empty() {
        presize(k.size, &mut k.buf);
    }
    let (filled, _calls) = pread_to_end(&k.file, &mut k.buf).map_err(|e| named(root, rel, e))?;
    Ok(k.buf.get(..filled).unwrap_or_default())
}

/// First read of [`HostFs::read_record`] for a file of unknown size (on
/// the stack): `/proc/PID/stat`, `schedstat`, `/proc/softirqs` and a small
/// machine's `/proc/stat` fit.
const RECORD_FIRST: usize = 2048;
/// Smallest kept buffer of a record file.
const RECORD_MIN: usize = 256;

/// First read of [`HostFs::read_attr`] (a stack buffer: comm names are at
/// most 64 bytes, affinity lists and chip names short).
const ATTR_FIRST: usize = 256;

/// Why [`HostFs::check_root`] found no directory at the root.
#[derive(Debug)]
pub enum RootError {
    /// It exists but is not a directory: the error to show (`--root FILE:
    /// not a directory`).
    NotADirectory(anyhow::Error),
    /// It could not be stat'ed (absent, no access).
    Stat(io::Error),
}

/// Gateway to one root's `/proc` and `/sys`.
pub struct HostFs {
    root: PathBuf,
    kept: KeptMap,
    /// Not the live `/`: a kept file's path may come to name another
    /// file, so each read [`Kept::follow`]s it (see the module doc).
    replaceable: bool,
}

impl HostFs {
    /// A gateway rooted at `root` (`/` for the live system).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        HostFs {
            replaceable: root != Path::new("/"),
            root,
            kept: KeptMap::default(),
        }
    }

    /// Whether the root is the live `/`, whose kernel files a kept
    /// descriptor always reads as they are now (under another root a
    /// path may come to name another file: see `replaceable`).
    pub fn is_live(&self) -> bool {
        !self.replaceable
    }

    /// Treat this root as the live `/` ([`HostFs::is_live`]): for tests
    /// of what a kept descriptor reads, with files rewritten in place.
    #[cfg(test)]
    pub fn pretend_live(&mut self) {
        self.replaceable = false;
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root as one `stat` finds it: `Ok` for a directory, else a
    /// root that exists but is not a directory (`--root FILE: not a
    /// directory`) or one that cannot be stat'ed (absent, no access). For
    /// the error paths of the commands that read the host, and
    /// `restore`'s check before it looks for a journal.
    pub fn check_root(&self) -> Result<(), RootError> {
        match std::fs::metadata(&self.root) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(RootError::NotADirectory(anyhow::anyhow!(
                "--root {}: not a directory",
                self.root.display()
            ))),
            Err(e) => Err(RootError::Stat(e)),
        }
    }

    /// Absolute path of a root-relative path such as `proc/interrupts`.
    pub fn path(&self, rel: &str) -> PathBuf {
        join_rel(&self.root, rel)
    }

    /// Read the whole file at `rel` through a kept-open descriptor. The
    /// returned slice is valid until the next read of the same file.
    pub fn read(&mut self, rel: &str) -> io::Result<&[u8]> {
        read_whole(&mut self.kept, &self.root, rel, self.replaceable)
    }

    /// [`HostFs::read`] of a kernel text file of lines (a whole
    /// `/proc/interrupts`): a non-empty text that does not end with `\n`
    /// is an error ("truncated line", naming the file and line).
    pub fn read_text(&mut self, rel: &str) -> io::Result<&[u8]> {
        let text = read_whole(&mut self.kept, &self.root, rel, self.replaceable)?;
        whole_lines(&self.root, rel, text)
    }

    /// Like [`HostFs::read`] for a file the kernel generates as one record
    /// (`single_open` seq_files: `/proc/softirqs`, `/proc/stat`,
    /// `/proc/PID/stat`, `/proc/PID/schedstat`; sysfs attributes): its
    /// whole text is generated before the first byte is copied, so a read
    /// shorter than asked is the end, and no second `pread` is spent to
    /// see EOF (regular files of captured trees are short only at EOF
    /// too). Not for `/proc/interrupts`, whose rows are records of their
    /// own: a read of it stops short before a row that does not fit the
    /// kernel's page buffer. A non-empty text that does not end with `\n`
    /// is an error ("truncated line", naming the file and line).
    pub fn read_record(&mut self, rel: &str) -> io::Result<&[u8]> {
        let root = &self.root;
        let k = kept_file(&mut self.kept, root, rel, self.replaceable)?;
        let text = k.read_record().map_err(|e| named(root, rel, e))?;
        whole_lines(root, rel, text)
    }

    /// Open `rel` (regular files only) as a [`KeptFile`] its caller keeps
    /// and reads with [`HostFs::read_kept_record`]: a sampler's per-thread
    /// files, read without a map lookup per sample.
    pub fn keep(&self, rel: &str) -> io::Result<KeptFile> {
        let o = open::open_regular_sized(&self.path(rel))?;
        Ok(KeptFile(Kept::new(o)))
    }

    /// [`HostFs::read_record`] through `k` (opened by [`HostFs::keep`] from
    /// `rel`, which read errors name). The slice is valid until the next
    /// read of `k`. Under a root that is not the live `/`, `k` first
    /// follows `rel` to the file it names now, as every kept read does.
    pub fn read_kept_record<'a>(&self, k: &'a mut KeptFile, rel: &str) -> io::Result<&'a [u8]> {
        if self.replaceable {
            k.0.follow(&self.root, rel)?;
        }
        k.0.read_record().map_err(|e| named(&self.root, rel, e))
    }

    /// Like [`HostFs::for_each_line`] through a kept-open descriptor and
    /// its kept buffer (a sampler re-reading a file that may be huge:
    /// the buffer stays about [`STREAM_CHUNK`] instead of the file's size),
    /// for a kernel text file of lines: a last line without `\n` is not
    /// handed to `f` but an error ("truncated line", naming the file and line).
    pub fn read_lines<E: From<io::Error>>(
        &mut self,
        rel: &str,
        f: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let root = &self.root;
        let k = kept_file(&mut self.kept, root, rel, self.replaceable)?;
        let lim = Limits::default();
        stream_lines(&k.file, &mut k.buf, STREAM_CHUNK, lim, LastLine::Refuse, f).map_err(|e| {
            match e {
                Streamed::Io(e) => E::from(named(root, rel, e)),
                Streamed::Truncated { line } => E::from(truncated(root, rel, line)),
                Streamed::Line(e) => e,
            }
        })
    }

    /// Close the kept descriptor of `rel` (e.g. after an IRQ disappeared).
    pub fn forget(&mut self, rel: &str) {
        self.kept.remove(rel);
    }

    /// Open, read to EOF and close (no caching), using `buf` as scratch.
    /// Returns bytes read and read calls.
    pub fn read_once(&self, rel: &str, buf: &mut Vec<u8>) -> io::Result<(usize, u32)> {
        let file = open_regular(&self.path(rel))?;
        pread_to_end(&file, buf).map_err(|e| named(&self.root, rel, e))
    }

    /// Open, read to EOF and close a binary file (the kernel's BTF) of at
    /// most `limit` bytes: sized from its `st_size`, no limit on a line.
    pub fn read_binary(&self, rel: &str, limit: usize) -> io::Result<Vec<u8>> {
        let o = open::open_regular_sized(&self.path(rel))?;
        // room for the whole file and the 0-byte read after it
        let size = usize::try_from(o.size).unwrap_or(limit).min(limit);
        let mut buf = vec![0; size.saturating_add(1)];
        let lim = Limits {
            total: limit,
            line: usize::MAX,
        };
        let (n, _) = read_loop_limited(&o.file, &mut buf, None, lim, false)
            .map_err(|e| named(&self.root, rel, e))?;
        buf.truncate(n);
        Ok(buf)
    }

    /// [`HostFs::read_once`] of a kernel text file of lines, the text
    /// returned: a non-empty text that does not end with `\n` is an error
    /// ("truncated line", naming the file and line), as with
    /// [`HostFs::read_text`].
    pub fn read_once_text<'b>(&self, rel: &str, buf: &'b mut Vec<u8>) -> io::Result<&'b [u8]> {
        let (n, _) = self.read_once(rel, buf)?;
        whole_lines(&self.root, rel, buf.get(..n).unwrap_or_default())
    }

    /// Stream the file at `rel` line by line through `buf`, a reused
    /// buffer of at most [`STREAM_CHUNK`] bytes that grows only to hold
    /// one line longer than that: `f` gets every line without its `\n`
    /// (a last line without one too). The whole file is never in memory
    /// (a 13 MB `/proc/interrupts` costs a buffer of about
    /// [`STREAM_CHUNK`]). Same limits as every read: [`MAX_READ`] bytes in all, no
    /// line longer than [`MAX_LINE_READ`]; a read error names the path.
    pub fn for_each_line<E: From<io::Error>>(
        &self,
        rel: &str,
        buf: &mut Vec<u8>,
        f: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let file = open_regular(&self.path(rel))?;
        let lim = Limits::default();
        stream_lines(&file, buf, STREAM_CHUNK, lim, LastLine::Keep, f).map_err(|e| match e {
            Streamed::Io(e) => E::from(named(&self.root, rel, e)),
            Streamed::Truncated { line } => E::from(truncated(&self.root, rel, line)),
            Streamed::Line(e) => e,
        })
    }

    /// Read a small attribute file as trimmed text, `None` if absent or
    /// not a regular file. open + read + close only, like
    /// [`AttrDir::read`] (which closes its files in runs): the type is
    /// asked (`fstat`) only when the first read is not a short non-empty
    /// one, which is what a FIFO, a
    /// directory or a device like `/dev/zero` gives (`top` reads every
    /// `/proc/PID/comm` at start: one system call fewer per process).
    /// A read shorter than the small buffer is the whole file (sysfs and
    /// single-record seq_files return everything in one call, regular
    /// files are short only at EOF; a multi-record seq_file such as
    /// `cpuinfo` fills the 256 bytes unless at EOF, as it stops early only
    /// before a record that overflows its page buffer, over 3.8 KB): no
    /// second read to see EOF.
    pub fn read_attr(&self, rel: &str) -> Option<String> {
        attr_text_checked(&open::open_unchecked(&self.path(rel)).ok()?)
    }

    /// Whether `rel`'s mode has no write permission bit (`0444`, such as
    /// the sysctl `kernel/osrelease`): a write would be refused. False
    /// when it cannot be stat'ed: the write then says why.
    pub fn is_read_only(&self, rel: &str) -> bool {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(self.path(rel)).is_ok_and(|m| m.permissions().mode() & 0o222 == 0)
    }

    /// Whether `rel` is there (anything, a symlink followed). False when
    /// it cannot be stat'ed.
    pub fn exists(&self, rel: &str) -> bool {
        std::fs::metadata(self.path(rel)).is_ok()
    }

    /// Whether `rel` is a directory (a symlink followed). False when it
    /// cannot be stat'ed.
    pub fn is_dir(&self, rel: &str) -> bool {
        std::fs::metadata(self.path(rel)).is_ok_and(|m| m.is_dir())
    }

    /// Names of the entries of directory `rel` (sorted), empty if absent.
    pub fn list_dir(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(rel))
            .map(|it| {
                it.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Open `rel` read-only and hand the descriptor to the caller (for
    /// `probe`, which times [`pread_chunked`] on descriptors it keeps).
    /// Refuses anything but a regular file, like every other read.
    pub fn open(&self, rel: &str) -> io::Result<File> {
        open_regular(&self.path(rel))
    }

    /// Like [`HostFs::read_once`], but every `read` call asks for at most
    /// `chunk` bytes. Returns bytes read and read calls.
    pub fn read_once_chunked(
        &self,
        rel: &str,
        buf: &mut Vec<u8>,
        chunk: usize,
    ) -> io::Result<(usize, u32)> {
        let file = open_regular(&self.path(rel))?;
        pread_chunked(&file, buf, chunk).map_err(|e| named(&self.root, rel, e))
    }

    /// Write `value` to `rel` (only the SystemGuard may call this).
    pub fn write(&self, rel: &str, value: &str) -> anyhow::Result<()> {
        let path = self.path(rel);
        create_regular(&path)
            .and_then(|mut f| io::Write::write_all(&mut f, value.as_bytes()))
            .with_context(|| format!("writing {value:?} to {}", path.display()))
    }
}

/// The trimmed text of an attribute file whose type was not checked (see
/// [`HostFs::read_attr`]): a short
/// non-empty first read is a regular file's whole text (a FIFO opened
/// non-blocking reads empty or fails, a directory fails, `/dev/zero`
/// fills the buffer); anything else is read only if `fstat` says regular.
/// The short read lands on the stack and the text is made from it (one
/// allocation).
fn attr_text_checked(file: &File) -> Option<String> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    let mut small = [0u8; ATTR_FIRST];
    if let Ok(n @ 1..ATTR_FIRST) = read_at_retry(file, &mut small) {
        // the usual case: the text made straight from the stack
        return small.get(..n).map(text);
    }
    whole_if_regular(file).ok().map(|b| text(&b))
}

/// The whole of `file` when `fstat` says it is regular (`InvalidInput`
/// when it is not): [`attr_text_checked`] past a first read that was not
/// short and non-empty.
fn whole_if_regular(file: &File) -> io::Result<Vec<u8>> {
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut buf = vec![0u8; 2 * ATTR_FIRST];
    let (n, _) = read_loop(file, &mut buf, None)?;
    buf.truncate(n);
    Ok(buf)
}

/// One `pread` at offset 0, retried when a signal interrupts it.
fn read_at_retry(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match file.read_at(buf, 0) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// Most bytes one read of [`HostFs::for_each_line`] asks for (its buffer
/// starts at one page and doubles up to this while reads fill it).
pub const STREAM_CHUNK: usize = 256 << 10;

/// Why [`stream_lines`] stopped: a read failed, the text ended inside
/// line number `line` ([`LastLine::Refuse`]), or the line callback failed.
enum Streamed<E> {
    Io(io::Error),
    Truncated { line: usize },
    Line(E),
}

/// What [`stream_lines`] does with a last line that has no `\n`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LastLine {
    /// Hand it to the callback like any other line.
    Keep,
    /// Stop with [`Streamed::Truncated`]: the kernel ends every line.
    Refuse,
}

/// `text` read from `rel` under `root` if it is empty or ends with `\n`,
/// else the [`truncated`] error naming its last line (counted only then).
fn whole_lines<'a>(root: &Path, rel: &str, text: &'a [u8]) -> io::Result<&'a [u8]> {
    match text.last() {
        None | Some(b'\n') => Ok(text),
        Some(_) => {
            let line = text.iter().filter(|&&b| b == b'\n').count() + 1;
            Err(truncated(root, rel, line))
        }
    }
}

/// The error of a kernel text file whose line `line` has no `\n`: the
/// kernel ends every line, so the text was cut short (a truncated copy).
/// `InvalidData`, a refusal ([`is_refusal`]): it fails the read instead
/// of making the file missing.
fn truncated(root: &Path, rel: &str, line: usize) -> io::Error {
    let path = root.join(rel.trim_start_matches('/'));
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{}:{line}: truncated line (no newline at end of file)",
            path.display()
        ),
    )
}

/// The read loop of [`HostFs::for_each_line`]: `pread`s of up to
/// `chunk` bytes appended after the unfinished last line, each
/// complete line handed to `f`, the unfinished rest moved to the front;
/// at the end an unfinished rest is kept or refused as `last` says.
fn stream_lines<E>(
    file: &File,
    buf: &mut Vec<u8>,
    chunk: usize,
    lim: Limits,
    last: LastLine,
    mut f: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), Streamed<E>> {
    let chunk = chunk.max(1);
    // complete lines handed to `f` (the number of a truncated last line)
    let mut lines: usize = 0;
    // bytes of the unfinished line at the front of `buf`
    let mut held = 0;
    let mut offset: usize = 0;
    // bytes asked per read: one page at first (a 2 KB /proc/interrupts
    // must not zero and fault in a 256 KiB buffer), doubled each time a
    // read fills it, up to `chunk`; the kept buffer remembers the size
    let mut step = buf.len().clamp(FIRST.min(chunk), chunk);
    loop {
        let want = held + step;
        if buf.len() < want {
            buf.resize(want, 0);
        }
        let Some(dst) = buf.get_mut(held..want) else {
            return Err(Streamed::Io(io::Error::other("read buffer too small")));
        };
        let n = match file.read_at(dst, offset as u64) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Streamed::Io(e)),
        };
        offset += n;
        if n == step {
            step = (step * 2).min(chunk);
        }
        let end = held + n;
        let data = buf.get(..end).unwrap_or_default();
        if n == 0 {
            if !data.is_empty() {
                if last == LastLine::Refuse {
                    return Err(Streamed::Truncated { line: lines + 1 });
                }
                f(data).map_err(Streamed::Line)?;
            }
            return Ok(());
        }
        let mut start = 0;
        // newlines can only be in the new bytes
        let mut from = held;
        while let Some(i) = data
            .get(from..)
            .and_then(|d| irqlab_core::scan::find_byte(b'\n', d))
        {
            let stop = from + i;
            f(data.get(start..stop).unwrap_or_default()).map_err(Streamed::Line)?;
            lines += 1;
            start = stop + 1;
            from = start;
        }
        held = end - start;
        let open_from = offset - held;
        check_limits(offset, open_from, lim).map_err(Streamed::Io)?;
        buf.copy_within(start..end, 0);
    }
}

/// Regular files (captured trees) report their size (`size`, from the
/// open's `fstat`): size the buffer once so that it need not double past
/// it, up to [`PRESIZE_MAX`]. /proc files report 0 and grow.
fn presize(size: u64, buf: &mut Vec<u8>) {
    let want = usize::try_from(size)
        .unwrap_or(usize::MAX)
        .saturating_add(4096)
        .min(PRESIZE_MAX);
    if want > buf.len() && size > 0 {
        buf.resize(want, 0);
    }
}

/// Write every file of a tree (`synth` output, a test's fake /proc and
/// /sys) under `root`; returns the total bytes written.
pub fn write_tree(root: &Path, files: &[(String, Vec<u8>)]) -> anyhow::Result<u64> {
    let mut made: Option<PathBuf> = None;
    let mut bytes = 0u64;
    for (rel, data) in files {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            if made.as_deref() != Some(dir) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                made = Some(dir.to_path_buf());
            }
        }
        std::fs::write(&path, data).with_context(|| format!("writing {}", path.display()))?;
        bytes += data.len() as u64;
    }
    Ok(bytes)
}

/// True for HostFs's own refusals (not a regular file, over a read
/// limit, a truncated text) and for a symbolic-link loop (a broken tree, not an absent
/// file), as opposed to an absent or unreadable file: callers that skip
/// absent sources must fail on these.
pub fn is_refusal(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData
    ) || e.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32)
}

/// Put the file's path in front of a read error (the read loop only has
/// the descriptor).
fn named(root: &Path, rel: &str, e: io::Error) -> io::Error {
    let path = root.join(rel.trim_start_matches('/'));
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// `pread` from offset 0 until a 0-byte read. `buf` is used as scratch
/// space: its length is the usable capacity (zeroed once, doubled when
/// full), so steady-state reads neither allocate nor clear memory.
/// Returns the number of bytes read and the number of read calls.
pub fn pread_to_end(file: &File, buf: &mut Vec<u8>) -> io::Result<(usize, u32)> {
    if buf.len() < FIRST {
        buf.resize(FIRST, 0);
    }
    read_loop(file, buf, None)
}

/// `pread` from offset 0 until a 0-byte read, asking for at most `chunk`
/// bytes per call (`chunk` 0 is treated as 1). `buf` keeps the whole
/// content and grows as needed; steady-state reads do not allocate.
/// Returns the number of bytes read and the number of read calls.
pub fn pread_chunked(file: &File, buf: &mut Vec<u8>, chunk: usize) -> io::Result<(usize, u32)> {
    read_loop(file, buf, Some(chunk.max(1)))
}

/// The read loop of both: each call asks for `chunk` bytes, or for all the
/// buffer's free space when `chunk` is `None`. Stops with an error past
/// [`MAX_READ`] bytes or a line longer than [`MAX_LINE_READ`].
fn read_loop(file: &File, buf: &mut Vec<u8>, chunk: Option<usize>) -> io::Result<(usize, u32)> {
    read_loop_limited(file, buf, chunk, Limits::default(), false)
}

/// The two bounds of a read (fields so that tests can use small ones).
#[derive(Clone, Copy)]
struct Limits {
    total: usize,
    line: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            total: MAX_READ,
            line: MAX_LINE_READ,
        }
    }
}

/// `short_is_end`: a read returning less than asked ends the loop (one
/// record files, see [`HostFs::read_record`]).
fn read_loop_limited(
    file: &File,
    buf: &mut Vec<u8>,
    chunk: Option<usize>,
    lim: Limits,
    short_is_end: bool,
) -> io::Result<(usize, u32)> {
    let mut filled = 0;
    let mut calls = 0;
    // start of the line still open at `filled`
    let mut line_start = 0;
    // one byte more than the limit may be read, to tell "exactly the
    // limit" (fine) from "more than the limit" (an error)
    let cap = lim.total.saturating_add(1);
    loop {
        let end = chunk.map_or(buf.len(), |c| filled + c).min(cap);
        if buf.len() < end || filled == buf.len() {
            let grown = end.max(buf.len() * 2).max(1).min(cap);
            buf.resize(grown, 0);
        }
        let end = chunk.map_or(buf.len(), |c| filled + c).min(buf.len());
        let Some(dst) = buf.get_mut(filled..end) else {
            return Err(io::Error::other("read buffer too small"));
        };
        let asked = dst.len();
        let res = file.read_at(dst, filled as u64);
        calls += 1;
        match res {
            Ok(0) => return Ok((filled, calls)),
            Ok(n) => {
                let new = buf.get(filled..filled + n).unwrap_or_default();
                if let Some(i) = new.iter().rposition(|&b| b == b'\n') {
                    line_start = filled + i + 1;
                }
                filled += n;
                check_limits(filled, line_start, lim)?;
                if short_is_end && n < asked {
                    return Ok((filled, calls));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn check_limits(filled: usize, line_start: usize, lim: Limits) -> io::Result<()> {
    let open_line = filled - line_start;
    let msg = if filled > lim.total {
        format!(
            "more than {} bytes, stopped reading (no kernel file is this large; \
             docs/limits.md)",
            lim.total
        )
    } else if open_line > lim.line {
        format!(
            "a line longer than {} bytes at byte {line_start}, stopped reading \
             (no kernel file has lines this long; docs/limits.md)",
            lim.line
        )
    } else {
        return Ok(());
    };
    Err(io::Error::new(io::ErrorKind::InvalidData, msg))
}

/// A synth tree of 2 CPUs and 4 IRQs (x86, era E3, seed 5) in a new
/// temporary directory: the small machine of the samplers' loop tests.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn small_test_tree() -> tempfile::TempDir {
    let spec = irqlab_core::synth::SynthSpec {
        cpus: 2,
        irqs: 4,
        nr_irqs: 64,
        arch: irqlab_core::render::Arch::X86,
        era: irqlab_core::render::Era::E3,
        offline: vec![],
        seed: 5,
    };
    let d = tempfile::tempdir().unwrap();
    write_tree(d.path(), &spec.build().unwrap().files()).unwrap();
    d
}

#[cfg(test)]
mod fault_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_file_is_read_whole_without_a_line_limit_but_within_its_own() {
        let d = tempfile::tempdir().unwrap();
        // longer than any text line a read may hold, with no newline
        let bytes: Vec<u8> = (0..MAX_LINE_READ + 4096).map(|i| (i % 7) as u8).collect();
        std::fs::write(d.path().join("btf"), &bytes).unwrap();
        let fs = HostFs::new(d.path());
        assert_eq!(fs.read_binary("btf", usize::MAX).unwrap(), bytes);
        // the text reader refuses it, as it should a kernel text file
        assert!(fs.read_once("btf", &mut Vec::new()).is_err());
        let e = fs.read_binary("btf", 1 << 20).unwrap_err().to_string();
        assert!(e.contains("btf") && e.contains("more than"), "{e}");
    }

    #[test]
    fn reads_relative_to_root_and_rereads_fresh_content() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        let p = dir.path().join("proc/interrupts");
        std::fs::write(&p, "one").unwrap();
        let mut fs = HostFs::new(dir.path());
        assert_eq!(fs.read("proc/interrupts").unwrap(), b"one");
        std::fs::write(&p, "two two").unwrap();
        assert_eq!(fs.read("/proc/interrupts").unwrap(), b"two two");
        assert!(fs.read("proc/missing").is_err());
        assert_eq!(fs.read_attr("proc/interrupts").as_deref(), Some("two two"));
    }

    #[test]
    fn read_only_is_a_mode_without_write_bits_under_the_root() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path().join("proc/sys/kernel");
        std::fs::create_dir_all(&sys).unwrap();
        for (name, mode) in [("osrelease", 0o444), ("printk", 0o644), ("secret", 0o200)] {
            std::fs::write(sys.join(name), "1\n").unwrap();
            std::fs::set_permissions(sys.join(name), std::fs::Permissions::from_mode(mode))
                .unwrap();
        }
        let fs = HostFs::new(dir.path());
        assert!(fs.is_read_only("proc/sys/kernel/osrelease"));
        assert!(fs.is_read_only("/proc/sys/kernel/osrelease"));
        assert!(!fs.is_read_only("proc/sys/kernel/printk"));
        assert!(!fs.is_read_only("proc/sys/kernel/secret"));
        assert!(!fs.is_read_only("proc/sys/kernel/absent"));
    }

    #[test]
    fn exists_and_is_dir_look_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let btf = dir.path().join("sys/kernel/btf");
        std::fs::create_dir_all(&btf).unwrap();
        std::fs::write(btf.join("vmlinux"), b"").unwrap();
        std::os::unix::fs::symlink("btf", dir.path().join("sys/kernel/link")).unwrap();
        std::os::unix::fs::symlink("nowhere", dir.path().join("sys/kernel/dangling")).unwrap();
        let fs = HostFs::new(dir.path());
        for rel in [
            "sys/kernel/btf/vmlinux",
            "/sys/kernel/btf/vmlinux",
            "sys/kernel/btf",
        ] {
            assert!(fs.exists(rel), "{rel}");
        }
        assert!(!fs.exists("sys/kernel/tracing"));
        assert!(!fs.exists("sys/kernel/dangling"), "a symlink is followed");
        assert!(fs.is_dir("sys/kernel/btf") && fs.is_dir("/sys/kernel/btf"));
        assert!(fs.is_dir("sys/kernel/link"), "a symlink is followed");
        assert!(!fs.is_dir("sys/kernel/btf/vmlinux"));
        assert!(!fs.is_dir("sys/kernel/tracing"));
        // the root's own /sys is never looked at
        let host = HostFs::new(dir.path().join("empty"));
        assert!(!host.exists("sys") && !host.is_dir("sys"));
    }

    /// Put `text` at `path` as a new file (`mv new old`, what `sed -i`
    /// and editors do): the path names another inode.
    fn replace(path: &Path, text: &str) {
        let new = path.with_extension("new");
        std::fs::write(&new, text).unwrap();
        std::fs::rename(&new, path).unwrap();
    }

    #[test]
    fn kept_reads_follow_a_replaced_file_and_fail_on_a_removed_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        let p = dir.path().join("proc/stat");
        std::fs::write(&p, "one\n").unwrap();
        let mut fs = HostFs::new(dir.path());
        let mut k = fs.keep("proc/stat").unwrap();
        assert_eq!(fs.read_record("proc/stat").unwrap(), b"one\n");
        assert_eq!(fs.read("proc/stat").unwrap(), b"one\n");
        replace(&p, "two\n");
        assert_eq!(fs.read_record("proc/stat").unwrap(), b"two\n");
        assert_eq!(fs.read_text("proc/stat").unwrap(), b"two\n");
        assert_eq!(fs.read_kept_record(&mut k, "proc/stat").unwrap(), b"two\n");
        let mut lines = Vec::new();
        replace(&p, "three\n");
        fs.read_lines("proc/stat", |l| {
            lines.push(l.to_vec());
            Ok::<_, io::Error>(())
        })
        .unwrap();
        assert_eq!(lines, [b"three".to_vec()]);

        std::fs::remove_file(&p).unwrap();
        let shown = p.display().to_string();
        for e in [
            fs.read_record("proc/stat").unwrap_err(),
            fs.read_kept_record(&mut k, "proc/stat").unwrap_err(),
        ] {
            assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
            assert!(e.to_string().starts_with(&format!("{shown}: ")), "{e}");
        }
        // the removed file's descriptor is closed: none left to read from
        assert!(!fs.kept.contains_key("proc/stat"));
        std::fs::write(&p, "four\n").unwrap();
        assert_eq!(fs.read_record("proc/stat").unwrap(), b"four\n");
        assert_eq!(fs.read_kept_record(&mut k, "proc/stat").unwrap(), b"four\n");
    }

    #[test]
    fn a_file_replaced_by_a_fifo_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, "one\n").unwrap();
        let mut fs = HostFs::new(dir.path());
        assert_eq!(fs.read_record("f").unwrap(), b"one\n");
        std::fs::remove_file(&p).unwrap();
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = fs.read_record("f").unwrap_err();
        assert!(is_refusal(&e), "{e}");
        assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
    }

    #[test]
    fn the_live_root_does_not_follow_paths() {
        assert!(!HostFs::new("/").replaceable);
        assert!(HostFs::new("/tmp/tree").replaceable);
    }

    /// The kept-file map's cheap hasher still tells the paths a big
    /// machine keeps apart (thousands of threads' `schedstat` and `stat`
    /// files, the statistics files): no two collide, and the bits the map
    /// indexes by (low) and tags by (high 7) vary.
    #[test]
    fn kept_file_hasher_tells_many_thread_paths_apart() {
        use std::hash::BuildHasher;
        let b = std::hash::BuildHasherDefault::<RelHasher>::default();
        let mut rels: Vec<String> = (1..20_000u32)
            .flat_map(|p| [format!("proc/{p}/schedstat"), format!("proc/{p}/stat")])
            .collect();
        rels.extend(["proc/interrupts", "proc/softirqs", "proc/stat"].map(String::from));
        let hashes: Vec<u64> = rels.iter().map(|r| b.hash_one(r.as_str())).collect();
        let distinct: std::collections::HashSet<u64> = hashes.iter().copied().collect();
        assert_eq!(distinct.len(), rels.len());
        let low: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 0xfff).collect();
        let tags: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(low.len() > 3_000, "{}", low.len());
        assert_eq!(tags.len(), 128);
    }

    #[test]
    fn kept_file_buffer_is_sized_from_the_opens_fstat() {
        // captured trees: the first buffer of a kept file comes from the
        // st_size of the type check's fstat (no second fstat), and the
        // whole file is read in one go; /proc files (size 0) start at FIRST
        let dir = tempfile::tempdir().unwrap();
        let big = "z".repeat(5 * FIRST + 3) + "\n";
        std::fs::write(dir.path().join("big"), &big).unwrap();
        std::fs::write(dir.path().join("small"), "").unwrap();
        let mut fs = HostFs::new(dir.path());
        assert_eq!(fs.read_record("big").unwrap(), big.as_bytes());
        assert_eq!(fs.read("small").unwrap(), b"");
        let kept = |fs: &HostFs, rel: &str| {
            let k = &fs.kept[rel];
            (k.size, k.buf.len())
        };
        assert_eq!(kept(&fs, "big"), (big.len() as u64, big.len() + 4096));
        assert_eq!(kept(&fs, "small"), (0, FIRST));
        // a file that grew after the open still reads whole
        let bigger = "w".repeat(9 * FIRST);
        std::fs::write(dir.path().join("big"), &bigger).unwrap();
        assert_eq!(fs.read("big").unwrap(), bigger.as_bytes());
    }

    #[test]
    fn record_first_read_sizes_a_small_buffer_and_later_longer_texts_read_whole() {
        // files of unknown size (procfs, an empty file): the first read is
        // on the stack and the kept buffer twice the text, not a zeroed page
        let mut live = HostFs::new("/");
        let text = live.read_record("proc/self/stat").unwrap().to_vec();
        assert!(text.ends_with(b"\n") && text.len() < RECORD_FIRST);
        let len = live.kept["proc/self/stat"].buf.len();
        assert!(len >= 2 * text.len() && len < FIRST, "buffer {len}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "").unwrap();
        let mut fs = HostFs::new(dir.path());
        assert_eq!(fs.read_record("f").unwrap(), b"");
        assert_eq!(fs.kept["f"].buf.len(), RECORD_MIN);
        for n in [RECORD_MIN - 1, RECORD_MIN, 3 * RECORD_FIRST + 5] {
            let longer = "v".repeat(n - 1) + "\n";
            std::fs::write(dir.path().join("f"), &longer).unwrap();
            assert_eq!(fs.read_record("f").unwrap(), longer.as_bytes(), "{n} bytes");
        }
        // a first text longer than the stack buffer is read again whole
        let long = "u".repeat(RECORD_FIRST + 9) + "\n";
        std::fs::write(dir.path().join("g"), "").unwrap();
        let mut fs = HostFs::new(dir.path());
        // opened empty: size 0, nothing to presize from
        let opened = open::open_regular_sized(&dir.path().join("g")).unwrap();
        std::fs::write(dir.path().join("g"), &long).unwrap();
        fs.kept.insert("g".into(), Kept::new(opened));
        assert_eq!(fs.read_record("g").unwrap(), long.as_bytes());
    }

    #[test]
    fn streamed_buffer_starts_at_one_page_and_grows_to_the_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let line = "x".repeat(99);
        for (lines, most) in [(20, FIRST), (5000, STREAM_CHUNK + 100)] {
            std::fs::write(dir.path().join("f"), format!("{line}\n").repeat(lines)).unwrap();
            let fs = HostFs::new(dir.path());
            let (mut buf, mut n) = (Vec::new(), 0);
            fs.for_each_line("f", &mut buf, |l| {
                assert_eq!(l, line.as_bytes());
                n += 1;
                Ok::<_, io::Error>(())
            })
            .unwrap();
            assert_eq!(n, lines);
            assert!(buf.len() <= most, "{lines} lines: buffer {}", buf.len());
        }
    }

    #[test]
    fn record_reads_stop_at_a_short_read_and_still_read_big_files_whole() {
        let dir = tempfile::tempdir().unwrap();
        let big = "y".repeat(3 * FIRST + 7) + "\n";
        for text in ["1000 0 1\n", big.as_str()] {
            std::fs::write(dir.path().join("f"), text).unwrap();
            let file = File::open(dir.path().join("f")).unwrap();
            let mut buf = vec![0; FIRST];
            let (n, calls) =
                read_loop_limited(&file, &mut buf, None, Limits::default(), true).unwrap();
            assert_eq!(&buf[..n], text.as_bytes());
            let (_, to_eof) = read_loop(&file, &mut vec![0; FIRST], None).unwrap();
            assert_eq!(calls + 1, to_eof, "one read fewer than reading to EOF");
            let mut fs = HostFs::new(dir.path());
            assert_eq!(fs.read_record("f").unwrap(), text.as_bytes());
        }
    }

    #[test]
    fn read_attr_trims_and_reads_past_its_stack_buffer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("comm"), "ksoftirqd/0\n").unwrap();
        let long = "x".repeat(300);
        std::fs::write(dir.path().join("long"), format!("  {long}\n")).unwrap();
        std::fs::write(dir.path().join("empty"), "").unwrap();
        let fs = HostFs::new(dir.path());
        assert_eq!(fs.read_attr("comm").as_deref(), Some("ksoftirqd/0"));
        assert_eq!(fs.read_attr("long"), Some(long));
        assert_eq!(fs.read_attr("empty").as_deref(), Some(""));
        assert_eq!(fs.read_attr("absent"), None);
    }

    fn streamed(data: &[u8], chunk: usize, lim: Limits) -> Result<Vec<String>, String> {
        streamed_as(data, chunk, lim, LastLine::Keep)
    }

    fn streamed_as(
        data: &[u8],
        chunk: usize,
        lim: Limits,
        last: LastLine,
    ) -> Result<Vec<String>, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), data).unwrap();
        let file = File::open(dir.path().join("f")).unwrap();
        let mut lines = Vec::new();
        let mut buf = Vec::new();
        let res = stream_lines(&file, &mut buf, chunk, lim, last, |l| {
            lines.push(String::from_utf8_lossy(l).into_owned());
            Ok::<(), String>(())
        });
        assert!(buf.len() <= chunk + lim.line + 1, "buffer {}", buf.len());
        match res {
            Ok(()) => Ok(lines),
            Err(Streamed::Io(e)) => Err(e.to_string()),
            Err(Streamed::Truncated { line }) => Err(format!("truncated at line {line}")),
            Err(Streamed::Line(e)) => Err(e),
        }
    }

    #[test]
    fn streamed_lines_cross_chunks_and_keep_an_unterminated_last_line() {
        let lim = Limits {
            total: 1000,
            line: 100,
        };
        let text = b"CPU0 CPU1\n\n  0: 1 2 IO-APIC\nlast without newline";
        for chunk in [1, 3, 7, 64, 4096] {
            let got = streamed(text, chunk, lim).unwrap();
            assert_eq!(
                got,
                ["CPU0 CPU1", "", "  0: 1 2 IO-APIC", "last without newline"],
                "chunk {chunk}"
            );
        }
        assert_eq!(streamed(b"", 4, lim).unwrap(), Vec::<String>::new());
        assert_eq!(streamed(b"a\n", 4, lim).unwrap(), ["a"]);
    }

    #[test]
    fn refused_unterminated_last_line_is_not_handed_out_and_names_its_number() {
        let lim = Limits {
            total: 1000,
            line: 100,
        };
        let text = b"CPU0 CPU1\n\n  0: 1 2 IO-APIC\nLOC: 12";
        for chunk in [1, 3, 7, 64, 4096] {
            let got = streamed_as(text, chunk, lim, LastLine::Refuse);
            assert_eq!(got.unwrap_err(), "truncated at line 4", "chunk {chunk}");
        }
        let whole = streamed_as(b"a\nb\n", 3, lim, LastLine::Refuse).unwrap();
        assert_eq!(whole, ["a", "b"]);
        assert_eq!(
            streamed_as(b"", 4, lim, LastLine::Refuse).unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            streamed_as(b"x", 4, lim, LastLine::Refuse).unwrap_err(),
            "truncated at line 1"
        );
    }

    /// A statistics file of a tree cut inside its last line, as each of
    /// its reads sees it: `(path, error of read_lines, read_record,
    /// read_text)`.
    fn truncated_reads(rel: &str, text: &str) -> (String, [String; 3]) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(dir.path().join(rel), text).unwrap();
        let mut fs = HostFs::new(dir.path());
        let lines = fs.read_lines(rel, |_| Ok::<(), io::Error>(())).unwrap_err();
        let record = fs.read_record(rel).unwrap_err();
        let whole = fs.read_text(rel).unwrap_err();
        for e in [&lines, &record, &whole] {
            assert!(is_refusal(e), "{e}");
        }
        // the lenient reads still hand the text out as it is
        assert_eq!(fs.read(rel).unwrap(), text.as_bytes());
        let path = dir.path().join(rel).display().to_string();
        (path, [lines, record, whole].map(|e| e.to_string()))
    }

    #[test]
    fn statistics_files_cut_inside_their_last_line_are_refused_with_path_and_line() {
        let interrupts = "           CPU0       CPU1\n  0:        125          0   IO-APIC   2-edge      timer\nLOC: 3586003252 20756";
        let softirqs = "                    CPU0       CPU1\n          HI:          0          0\n         RCU: 1698969864 31580";
        let stat = "cpu  1 2 3 4 5 6 7 8 9 10\nintr 0\nctxt 4403";
        for (rel, text, line) in [
            ("proc/interrupts", interrupts, 3),
            ("proc/softirqs", softirqs, 3),
            ("proc/stat", stat, 3),
        ] {
            let (path, errors) = truncated_reads(rel, text);
            let want = format!("{path}:{line}: truncated line (no newline at end of file)");
            assert_eq!(errors, [want.clone(), want.clone(), want], "{rel}");
        }
    }

    #[test]
    fn empty_and_newline_terminated_texts_read_as_before() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        let mut fs = HostFs::new(dir.path());
        for text in ["", "\n", "intr 0\nctxt 4403\n"] {
            std::fs::write(dir.path().join("proc/stat"), text).unwrap();
            assert_eq!(fs.read_record("proc/stat").unwrap(), text.as_bytes());
            assert_eq!(fs.read_text("proc/stat").unwrap(), text.as_bytes());
            let mut n = 0;
            fs.read_lines("proc/stat", |_| {
                n += 1;
                Ok::<(), io::Error>(())
            })
            .unwrap();
            assert_eq!(n, text.matches('\n').count(), "{text:?}");
        }
    }

    #[test]
    fn streamed_reads_keep_the_line_and_total_limits() {
        let lim = Limits { total: 50, line: 8 };
        let long = streamed(b"short\nthis line is too long\n", 4, lim).unwrap_err();
        assert!(long.contains("a line longer than 8 bytes"), "{long}");
        let big = streamed(&b"1234567\n".repeat(10), 16, lim).unwrap_err();
        assert!(big.contains("more than 50 bytes"), "{big}");
        let stop = |l: &[u8]| if l == b"b" { Err("stop at b") } else { Ok(()) };
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("proc")).unwrap();
        std::fs::write(dir.path().join("proc/x"), "a\nb\nc\n").unwrap();
        let fs = HostFs::new(dir.path());
        let mut buf = Vec::new();
        let r: Result<(), StopErr> =
            fs.for_each_line("proc/x", &mut buf, |l| stop(l).map_err(StopErr::Line));
        assert!(matches!(r, Err(StopErr::Line("stop at b"))));
        let r: Result<(), StopErr> = fs.for_each_line("proc/absent", &mut buf, |_| Ok(()));
        assert!(matches!(r, Err(StopErr::Io(_))));
    }

    #[derive(Debug)]
    enum StopErr {
        Io(#[allow(dead_code)] io::Error),
        Line(&'static str),
    }

    impl From<io::Error> for StopErr {
        fn from(e: io::Error) -> Self {
            StopErr::Io(e)
        }
    }

    #[test]
    fn large_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("big"), &data).unwrap();
        let mut fs = HostFs::new(dir.path());
        assert_eq!(fs.read("big").unwrap(), &data[..]);
    }

    #[test]
    fn chunked_reads_count_calls() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), vec![7u8; 1000]).unwrap();
        let fs = HostFs::new(dir.path());
        let mut buf = Vec::new();
        // 1000 bytes in 128-byte calls: 8 data reads + the 0-byte read.
        assert_eq!(fs.read_once_chunked("f", &mut buf, 128).unwrap(), (1000, 9));
        let file = fs.open("f").unwrap();
        assert_eq!(pread_chunked(&file, &mut buf, 4096).unwrap(), (1000, 2));
        assert_eq!(buf.get(..1000).unwrap(), &[7u8; 1000][..]);
        assert_eq!(pread_chunked(&file, &mut buf, 0).unwrap(), (1000, 1001));
    }

    #[test]
    fn live_proc_interrupts_in_several_reads_when_available() {
        let fs = HostFs::new("/");
        match fs.open("proc/interrupts") {
            Ok(file) => {
                let mut buf = Vec::new();
                let (n, calls) = pread_to_end(&file, &mut buf).unwrap();
                assert!(buf[..n].ends_with(b"\n"));
                assert!(calls >= 2, "seq_file needs a final 0-byte read");
            }
            Err(e) => eprintln!("skipping: /proc/interrupts not readable: {e}"),
        }
    }
}
