//! gzip of a large body on several threads, as one ordinary gzip member
//! (RFC 1952) that every gzip reader decodes: the body is cut at line
//! ends into parts, each part is deflated raw on its own thread and ended
//! with a sync flush (byte-aligned, not final), the parts are joined in
//! order, one empty final block closes the stream, and the CRC-32 of the
//! whole is combined from the parts' CRCs. A part starts with an empty
//! window, so the output is a few bytes larger than a one-thread gzip.
//! Pure: bytes in, bytes out.

use flate2::{Compress, Compression, FlushCompress};

/// Parts smaller than this are not worth a thread.
const MIN_PART: usize = 4 << 20;

/// gzip header: magic, deflate, no flags, no time, no extra flags, OS
/// unknown.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// A final fixed-Huffman block holding only its end-of-block code.
const FINAL_EMPTY_BLOCK: [u8; 2] = [0x03, 0x00];

/// The gzip of `body` at the fastest level, on up to `threads` threads
/// (`None` if deflate fails, which it does not on a Vec).
pub fn gzip(body: &[u8], threads: usize) -> Option<Vec<u8>> {
    let parts = split(body, threads.clamp(1, 64));
    let deflated: Vec<Option<(Vec<u8>, crc32fast::Hasher)>> = if parts.len() == 1 {
        parts.iter().map(|p| deflate_part(p)).collect()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = parts
                .iter()
                .map(|p| s.spawn(move || deflate_part(p)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok().flatten())
                .collect()
        })
    };
    let size: usize = deflated.iter().flatten().map(|(d, _)| d.len()).sum();
    let mut out = Vec::with_capacity(HEADER.len() + size + FINAL_EMPTY_BLOCK.len() + 8);
    out.extend_from_slice(&HEADER);
    let mut crc = crc32fast::Hasher::new();
    for part in deflated {
        let (d, c) = part?;
        out.extend_from_slice(&d);
        crc.combine(&c);
    }
    out.extend_from_slice(&FINAL_EMPTY_BLOCK);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    // ISIZE: the length modulo 2^32
    out.extend_from_slice(&((body.len() & 0xffff_ffff) as u32).to_le_bytes());
    Some(out)
}

/// `body` cut into at most `n` parts of at least [`MIN_PART`] bytes,
/// each ending at a line end (the last one at the end of `body`).
fn split(body: &[u8], n: usize) -> Vec<&[u8]> {
    let n = n.min(body.len() / MIN_PART).max(1);
    let want = body.len() / n;
    let mut parts = Vec::with_capacity(n);
    let mut rest = body;
    while parts.len() + 1 < n && rest.len() > want {
        let cut = rest
            .get(want..)
            .and_then(|r| irqlab_core::scan::find_byte(b'\n', r))
            .map_or(rest.len(), |i| want + i + 1);
        let (head, tail) = rest.split_at(cut);
        parts.push(head);
        rest = tail;
    }
    if !rest.is_empty() || parts.is_empty() {
        parts.push(rest);
    }
    parts
}

/// Raw deflate of `part`, ended by a sync flush, and its CRC-32.
fn deflate_part(part: &[u8]) -> Option<(Vec<u8>, crc32fast::Hasher)> {
    let mut crc = crc32fast::Hasher::new();
    crc.update(part);
    let mut z = Compress::new(Compression::fast(), false);
    let mut out = Vec::with_capacity(part.len() / 8 + 64);
    let mut input = part;
    loop {
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity().max(4096));
        }
        let before = z.total_in();
        z.compress_vec(input, &mut out, FlushCompress::Sync).ok()?;
        let used = usize::try_from(z.total_in() - before).ok()?;
        input = input.get(used..)?;
        // the flush is complete once a call leaves output space unused
        if input.is_empty() && out.len() < out.capacity() {
            break;
        }
    }
    Some((out, crc))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Read;

    fn gunzip(z: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(z)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    fn body(lines: usize) -> Vec<u8> {
        let mut b = Vec::new();
        for i in 0..lines {
            b.extend_from_slice(
                format!(
                    "irqlab_interrupts_total{{cpu=\"{}\",irq=\"{}\"}} {}\n",
                    i % 1152,
                    i / 1152,
                    i * 7
                )
                .as_bytes(),
            );
        }
        b
    }

    #[test]
    fn every_thread_count_gives_one_member_that_decodes_to_the_body() {
        let b = body(300_000);
        assert!(b.len() > 3 * MIN_PART);
        for threads in [1, 2, 3, 8] {
            let z = gzip(&b, threads).unwrap();
            assert_eq!(gunzip(&z), b, "{threads} threads");
            // a single member: a multi-member stream would need the
            // reader to go on after the first trailer
            let mut one = flate2::read::GzDecoder::new(z.as_slice());
            let mut out = Vec::new();
            one.read_to_end(&mut out).unwrap();
            assert_eq!(out.len(), b.len());
        }
    }

    #[test]
    fn small_and_empty_bodies_and_bodies_without_line_ends() {
        for b in [
            Vec::new(),
            b"x".to_vec(),
            b"a 1\nb 2".to_vec(),
            vec![b'z'; 9 << 20],
        ] {
            let z = gzip(&b, 4).unwrap();
            assert_eq!(gunzip(&z), b);
        }
    }

    #[test]
    fn parts_end_at_line_ends_and_cover_the_body() {
        let b = body(400_000);
        let parts = split(&b, 4);
        assert!(parts.len() > 1);
        assert_eq!(parts.concat(), b);
        for p in &parts {
            assert!(p.ends_with(b"\n"));
        }
    }

    #[test]
    fn the_system_gzip_reads_it_or_skip() {
        let b = body(300_000);
        let z = gzip(&b, 2).unwrap();
        let Ok(mut child) = std::process::Command::new("gzip")
            .args(["-d", "-c"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
        else {
            eprintln!("serve::gzip: SKIP: no gzip command");
            return;
        };
        let mut stdin = child.stdin.take().unwrap();
        let feed = std::thread::spawn(move || {
            use std::io::Write;
            stdin.write_all(&z).unwrap();
        });
        let out = child.wait_with_output().unwrap();
        feed.join().unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b);
    }
}
