//! GZIP for the Parquet files `record` writes (segments, identity files)
//! and for footer values (`pack`), through one deflate state kept per
//! thread and reset between members, instead of the parquet crate's codec,
//! which builds a new state (~370 KB allocated and zeroed) for every
//! page; the kept state is as small as the longest input so far allows
//! ([`TIERS`]). Members are byte for byte what `flate2::write::GzEncoder`
//! makes at level 9. [`write_row_group`] encodes each column chunk
//! uncompressed, then stores it GZIP-compressed only when that is smaller
//! (a chunk of a few bytes, such as a constant column, grows by gzip's 18
//! bytes of header and trailer), so a file is never larger than with GZIP
//! on every chunk.

use bytes::Bytes;
use parquet::basic::{Compression as Codec, GzipLevel};
use parquet::column::page::{CompressedPage, Page, PageWriteSpec, PageWriter};
use parquet::column::writer::{get_column_writer, ColumnWriter};
use parquet::errors::{ParquetError, Result as PqResult};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use std::cell::RefCell;
use std::io::Write;

/// The level of every member (the best: segments are written rarely and
/// kept long).
const LEVEL: u32 = 9;

/// Below this many bytes a page's data cannot shrink under gzip (18 bytes
/// of header and trailer, at least 2 of deflate), so it is not tried.
const MIN_TRY: usize = 24;

/// The deflate configurations a kept state can have, smallest first:
/// (window bits, memory level). A state of window `2^w` and
/// `2^(m + 6)` symbols per block produces for an input shorter than both
/// (less `MIN_LOOKAHEAD`, the longest match plus the shortest, and two
/// symbols) what the default state (15, 8) produces: no match reaches
/// past its window and no block is cut before the input ends, and the
/// rest of deflate (the 64 K-entry hash head, the level's chain limits)
/// does not depend on either. The small ones allocate and clear less
/// (139, 172 and 248 KB against 368 KB: head, window, chains, pending
/// output and symbols; inputs up to 762, 3 834 and 8 190 bytes: a 2-CPU
/// VM's shapes footer is ~7.9 KB of JSON) and clear 3, 12 or 24 KB of
/// symbols per block instead of 48 KB; a test holds every tier to
/// `GzEncoder`'s output.
const TIERS: [(u8, u8); 4] = [(10, 4), (12, 6), (14, 7), (15, 8)];

/// The longest input tier `t` makes the default state's output for
/// (`usize::MAX` for the default state itself).
fn tier_max(t: usize) -> usize {
    match TIERS.get(t) {
        Some(&(w, m)) if t + 1 < TIERS.len() => {
            ((1usize << w) - 262).min((1usize << (u32::from(m) + 6)) - 2)
        }
        _ => usize::MAX,
    }
}

/// The smallest tier for an input of `len` bytes.
fn tier_for(len: usize) -> usize {
    (0..TIERS.len())
        .find(|&t| len <= tier_max(t))
        .unwrap_or(TIERS.len() - 1)
}

/// The kept state: its tier, `used` once it needs a reset before the
/// next member. A bigger input replaces it by a state of a bigger tier
/// (whose memory is mostly the freed one's: no new pages); a smaller one
/// keeps it.
struct State {
    z: zlib_rs::Deflate,
    tier: usize,
    used: bool,
}

impl State {
    fn new(tier: usize) -> State {
        let (w, m) = TIERS.get(tier).copied().unwrap_or((15, 8));
        State {
            z: zlib_rs::Deflate::new_with_config(zlib_rs::DeflateConfig {
                level: LEVEL as i32,
                // raw deflate: the gzip header and trailer are written here
                window_bits: -i32::from(w),
                mem_level: i32::from(m),
                ..zlib_rs::DeflateConfig::default()
            }),
            tier,
            used: false,
        }
    }
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

/// Append the gzip member of `input` (level 9, no name, mtime 0, the
/// header `GzEncoder` writes) to `out`.
pub fn gzip(input: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    STATE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let tier = tier_for(input.len());
        if slot.as_ref().is_some_and(|st| st.tier < tier) {
            // freed first, so that the new state reuses its memory
            *slot = None;
        }
        let st = slot.get_or_insert_with(|| State::new(tier));
        if st.used {
            st.z.reset();
        }
        st.used = true;
        let head = out.len();
        // GzBuilder's header at the best level: XFL 2, OS 255
        out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff]);
        let start = out.len();
        loop {
            let done = usize::try_from(st.z.total_in()).unwrap_or(input.len());
            let made = usize::try_from(st.z.total_out()).unwrap_or(0);
            out.resize(start + made + input.len().saturating_sub(done) / 2 + 64, 0);
            let rest = input.get(done..).unwrap_or_default();
            let room = out.get_mut(start + made..).unwrap_or_default();
            match st.z.compress(rest, room, zlib_rs::DeflateFlush::Finish) {
                Ok(zlib_rs::Status::StreamEnd) => break,
                Ok(_) => {}
                Err(e) => {
                    // a state in an unknown place is not kept
                    *slot = None;
                    out.truncate(head);
                    return Err(std::io::Error::other(e.as_str()));
                }
            }
        }
        let made = usize::try_from(st.z.total_out()).unwrap_or(0);
        out.truncate(start + made);
        let crc = crc32fast::hash(input);
        out.extend_from_slice(&crc.to_le_bytes());
        // ISIZE: the input's length modulo 2^32
        out.extend_from_slice(&(input.len() as u32).to_le_bytes());
        Ok(())
    })
}

/// A page writer that keeps the column writer's (uncompressed) pages.
struct Kept<'a>(&'a mut Vec<CompressedPage>);

impl PageWriter for Kept<'_> {
    fn write_page(&mut self, page: CompressedPage) -> PqResult<PageWriteSpec> {
        // sizes and offsets are the final writer's: the column's metadata
        // takes them from there
        let mut spec = PageWriteSpec::new();
        spec.page_type = page.page_type();
        spec.num_values = page.num_values();
        self.0.push(page);
        Ok(spec)
    }

    fn close(&mut self) -> PqResult<()> {
        Ok(())
    }
}

/// `page` with its data replaced by `buf`.
fn with_buf(page: &Page, buf: Vec<u8>) -> PqResult<Page> {
    Ok(match page {
        Page::DataPage {
            num_values,
            encoding,
            def_level_encoding,
            rep_level_encoding,
            statistics,
            ..
        } => Page::DataPage {
            buf: buf.into(),
            num_values: *num_values,
            encoding: *encoding,
            def_level_encoding: *def_level_encoding,
            rep_level_encoding: *rep_level_encoding,
            statistics: statistics.clone(),
        },
        Page::DictionaryPage {
            num_values,
            encoding,
            is_sorted,
            ..
        } => Page::DictionaryPage {
            buf: buf.into(),
            num_values: *num_values,
            encoding: *encoding,
            is_sorted: *is_sorted,
        },
        Page::DataPageV2 { .. } => {
            return Err(ParquetError::General(
                "data page v2 is not written by irqlab".into(),
            ))
        }
    })
}

/// The pages of one column chunk as stored: GZIP-compressed when that is
/// smaller in all, else as encoded.
fn stored(pages: Vec<CompressedPage>) -> PqResult<(Codec, Vec<CompressedPage>)> {
    let raw: usize = pages.iter().map(|p| p.data().len()).sum();
    if raw >= MIN_TRY {
        let mut out = Vec::with_capacity(pages.len());
        let mut packed = 0;
        for p in &pages {
            let mut buf = Vec::new();
            gzip(p.data(), &mut buf)?;
            packed += buf.len();
            out.push(CompressedPage::new(
                with_buf(p.compressed_page(), buf)?,
                p.uncompressed_size(),
            ));
        }
        if packed < raw {
            return Ok((Codec::GZIP(GzipLevel::try_new(LEVEL)?), out));
        }
    }
    Ok((Codec::UNCOMPRESSED, pages))
}

/// Write one row group of `w` (whose properties must say UNCOMPRESSED):
/// `write(i, col)` fills column `i`; each chunk is then stored as
/// [`stored`] decides and spliced into the file.
pub fn write_row_group<W: Write + Send>(
    w: &mut SerializedFileWriter<W>,
    mut write: impl FnMut(usize, &mut ColumnWriter<'_>) -> PqResult<()>,
) -> PqResult<()> {
    let cols = w.schema_descr().columns().to_vec();
    let props = w.properties().clone();
    let mut rg = w.next_row_group()?;
    for (i, descr) in cols.into_iter().enumerate() {
        let mut pages = Vec::new();
        let mut col = get_column_writer(descr, props.clone(), Box::new(Kept(&mut pages)));
        write(i, &mut col)?;
        let mut close = col.close()?;
        let (codec, pages) = stored(pages)?;
        let mut sink = TrackedWrite::new(Vec::new());
        let (mut dict, mut data, mut packed, mut raw) = (None, None, 0, 0);
        {
            let mut pw = SerializedPageWriter::new(&mut sink);
            for p in pages {
                let spec = pw.write_page(p)?;
                let at = Some(spec.offset as i64);
                match spec.page_type {
                    parquet::basic::PageType::DICTIONARY_PAGE => dict = dict.or(at),
                    _ => data = data.or(at),
                }
                packed += spec.compressed_size as i64;
                raw += spec.uncompressed_size as i64;
            }
            pw.close()?;
        }
        close.metadata = close
            .metadata
            .into_builder()
            .set_compression(codec)
            .set_total_compressed_size(packed)
            .set_total_uncompressed_size(raw)
            .set_data_page_offset(data.unwrap_or(0))
            .set_dictionary_page_offset(dict)
            .build()?;
        close.bytes_written = packed as u64;
        let bytes = Bytes::from(sink.into_inner()?);
        rg.append_column(&bytes, close)?;
    }
    rg.close()?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn reference(input: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(LEVEL));
        z.write_all(input).unwrap();
        z.finish().unwrap()
    }

    #[test]
    fn a_kept_state_makes_the_members_a_new_gz_encoder_makes() {
        let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), b"a".to_vec(), vec![7; 300]];
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("{} {}\n", i % 97, i / 13).into_bytes())
            .collect();
        inputs.push(text);
        // bytes no compressor shrinks (xorshift)
        let mut x = 0x2545_f491_4f6c_dd1du64;
        inputs.push(
            (0..70_000)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect(),
        );
        for round in 0..2 {
            for (n, input) in inputs.iter().enumerate() {
                let mut out = vec![1, 2, 3];
                gzip(input, &mut out).unwrap();
                assert_eq!(&out[..3], &[1, 2, 3]);
                assert_eq!(out[3..], reference(input), "round {round}, input {n}");
            }
        }
    }

    /// Inputs of every tier's size and at its bounds, of text, repeats
    /// and noise, through states of every tier (an input after a longer
    /// one keeps the bigger state): the members are `GzEncoder`'s.
    #[test]
    fn every_tier_makes_the_default_states_members() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut noise = |n: usize, alphabet: u64| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    b'a'.wrapping_add((x % alphabet) as u8)
                })
                .collect()
        };
        let mut inputs = Vec::new();
        for t in 0..TIERS.len() - 1 {
            let max = tier_max(t);
            for n in [max / 3, max - 1, max, max + 1, max + 2] {
                // text with long and short repeats (matches at every
                // distance), a run, and noise of a small alphabet
                let text: Vec<u8> = (0..)
                    .flat_map(|i: u32| {
                        format!("IRQ{} {} cpu{} ", i % 37, i % 5, i % 3).into_bytes()
                    })
                    .take(n)
                    .collect();
                inputs.push(text);
                inputs.push(vec![b'x'; n]);
                inputs.push(noise(n, 4));
                inputs.push(noise(n, 200));
            }
        }
        // small to big (a new state per tier), then big to small (kept)
        for order in [false, true] {
            STATE.with(|c| *c.borrow_mut() = None);
            let mut all: Vec<&Vec<u8>> = inputs.iter().collect();
            all.sort_by_key(|i| i.len());
            if order {
                all.reverse();
            }
            for input in all {
                let mut out = Vec::new();
                gzip(input, &mut out).unwrap();
                assert_eq!(out, reference(input), "{} bytes", input.len());
            }
        }
        assert_eq!(tier_for(0), 0);
        assert_eq!(tier_for(tier_max(0) + 1), 1);
        assert_eq!(tier_for(1 << 20), TIERS.len() - 1);
    }
}
