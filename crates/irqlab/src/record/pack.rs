//! Packing of large footer values (schema 2's `irqlab.shapes`): gzip, then
//! standard base64 (RFC 4648, with padding), because Parquet key-value
//! metadata is read as text by DuckDB and pyarrow. Pure: bytes in, bytes
//! out, errors for bad input, no panics.

use anyhow::{anyhow, Context};
use std::io::Read;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// gzip (best compression) then base64 of `text`.
pub fn pack(text: &str) -> anyhow::Result<String> {
    // the members `flate2::write::GzEncoder` makes, from a kept state
    let mut z = Vec::new();
    super::gzip::gzip(text.as_bytes(), &mut z)?;
    Ok(base64(&z))
}

/// The inverse of [`pack`].
pub fn unpack(packed: &str) -> anyhow::Result<String> {
    let bytes = unbase64(packed.trim())?;
    let mut out = String::new();
    flate2::read::GzDecoder::new(bytes.as_slice())
        .read_to_string(&mut out)
        .context("not gzip-compressed UTF-8")?;
    Ok(out)
}

fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let idx = ((n >> (18 - 6 * i)) & 63) as usize;
                out.push(char::from(ALPHABET.get(idx).copied().unwrap_or(b'A')));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn unbase64(text: &str) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (i, c) in text.bytes().enumerate() {
        if c == b'=' {
            break;
        }
        let v = ALPHABET
            .iter()
            .position(|&a| a == c)
            .ok_or_else(|| anyhow!("not base64: byte {c:#04x} at offset {i}"))?;
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_and_round_trips() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
            assert_eq!(unbase64(coded).unwrap(), plain.as_bytes());
        }
        let text = r#"[{"seq":0,"shape":{"irq_rows":[]}}]"#.repeat(50);
        let packed = pack(&text).unwrap();
        assert!(packed.len() < text.len() / 4, "{}", packed.len());
        assert_eq!(unpack(&packed).unwrap(), text);
        assert!(unpack("not base64!").is_err());
        assert!(unpack("Zm9v").is_err(), "base64 but not gzip");
    }
}
