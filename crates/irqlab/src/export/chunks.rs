//! An in-memory output held until it is complete (so that an error found
//! later prints nothing), as a list of fixed-size chunks: growing one
//! buffer by doubling copies it again at every step and touches twice the
//! memory (on the 1152-CPU tree, 6 % of `show --format json` was that
//! copy and as much again its page faults).

use std::io::{self, Write};

/// Size of one chunk.
const CHUNK: usize = 1 << 20;

/// Bytes written so far, in chunks of `CHUNK` (1 MiB) bytes (the last one
/// partly filled).
#[derive(Debug, Default)]
pub struct Chunks {
    done: Vec<Vec<u8>>,
    cur: Vec<u8>,
}

impl Chunks {
    /// Nothing written yet.
    pub fn is_empty(&self) -> bool {
        self.done.is_empty() && self.cur.is_empty()
    }

    /// Write everything, in order, to `out`.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        for c in self.done.iter().chain(std::iter::once(&self.cur)) {
            out.write_all(c)?;
        }
        Ok(())
    }
}

impl Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.cur.capacity() == 0 {
            self.cur.reserve_exact(CHUNK);
        }
        let room = self.cur.capacity() - self.cur.len();
        if room == 0 {
            self.done
                .push(std::mem::replace(&mut self.cur, Vec::with_capacity(CHUNK)));
            return self.write(buf);
        }
        let n = room.min(buf.len());
        self.cur.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn keeps_every_byte_in_order_across_chunks() {
        let mut c = Chunks::default();
        assert!(c.is_empty());
        let mut want = Vec::new();
        for i in 0..3000u32 {
            let piece = format!("{i}:{}", "x".repeat((i % 997) as usize));
            c.write_all(piece.as_bytes()).unwrap();
            want.extend_from_slice(piece.as_bytes());
        }
        assert!(!c.is_empty() && !c.done.is_empty());
        assert!(c.done.iter().all(|d| d.len() == CHUNK));
        let mut got = Vec::new();
        c.write_to(&mut got).unwrap();
        assert_eq!(got, want);
    }
}
