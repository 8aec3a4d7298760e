//! Buffer sizes for `--buffer`: parsing `128`, `4k`, `64K`, `1M`, `1MiB`
//! (binary multiples) and printing them back in the short form. Pure.

/// Largest `--buffer`: 256 MiB. A read larger than the file returns the
/// whole file, so no larger size measures anything more; /proc/interrupts
/// is the biggest target, about 11 bytes per CPU per row: at 8192 CPUs (the
/// kernel's largest NR_CPUS) a 256 MiB read still holds ~2900 rows whole.
/// Larger sizes only cost memory (the buffer is allocated and touched) and
/// reach the kernel's per-read limit (`MAX_RW_COUNT`, just under 2 GiB),
/// above which the size asked for is not the size read.
pub const MAX_BUFFER: usize = 256 << 20;

/// Parse one size such as `128`, `4k`, `64KiB` or `1M` (1k = 1024 bytes).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: usize = num
        .parse()
        .map_err(|_| format!("expected a size like 128, 4k or 1M, found {s:?}"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => {
            return Err(format!(
                "unknown size unit {unit:?} in {s:?} (use k, M or G)"
            ))
        }
    };
    let size = n
        .checked_mul(1usize << shift)
        .ok_or_else(|| format!("size too large: {s:?}"))?;
    if size == 0 {
        return Err(format!("size must be at least 1 byte: {s:?}"));
    }
    if size > MAX_BUFFER {
        return Err(format!(
            "size {s:?} is over the largest buffer, {} ({MAX_BUFFER} bytes): \
             a read that large returns the whole of any /proc file",
            format_size(MAX_BUFFER)
        ));
    }
    Ok(size)
}

/// Parse a comma-separated list of sizes (`4k,64k`), keeping the order
/// and dropping duplicates. An empty item (`4k,,8k`, a trailing comma) is
/// refused by its position, never skipped.
pub fn parse_sizes(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    if s.trim().is_empty() {
        return Err("expected at least one size, e.g. 4k,64k".to_string());
    }
    for (i, part) in s.split(',').enumerate() {
        if part.trim().is_empty() {
            return Err(format!(
                "item {} of {s:?} is empty (expected a size like 128, 4k or 1M)",
                i + 1
            ));
        }
        let size = parse_size(part)?;
        if !out.contains(&size) {
            out.push(size);
        }
    }
    if out.is_empty() {
        return Err("expected at least one size, e.g. 4k,64k".to_string());
    }
    Ok(out)
}

/// Short form of a size: `128`, `4k`, `1M` (exact multiples only).
pub fn format_size(size: usize) -> String {
    const MIB: usize = 1 << 20;
    const KIB: usize = 1 << 10;
    if size >= MIB && size % MIB == 0 {
        format!("{}M", size / MIB)
    } else if size >= KIB && size % KIB == 0 {
        format!("{}k", size / KIB)
    } else {
        size.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_suffixed_sizes() {
        assert_eq!(parse_size("128"), Ok(128));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size(" 64K "), Ok(65536));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert_eq!(parse_size("512b"), Ok(512));
    }

    #[test]
    fn rejects_bad_sizes() {
        assert!(parse_size("").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("4x").is_err());
        assert!(parse_size("k").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }

    #[test]
    fn sizes_over_the_bound_are_refused_naming_it() {
        assert_eq!(parse_size("256M"), Ok(MAX_BUFFER));
        for s in ["257M", "1G", "2G", "16G"] {
            let err = parse_size(s).unwrap_err();
            assert!(
                err.contains("largest buffer, 256M (268435456 bytes)"),
                "{s}: {err}"
            );
        }
        assert_eq!(
            parse_size(&(MAX_BUFFER + 1).to_string()).map_err(|_| ()),
            Err(())
        );
    }

    #[test]
    fn lists_keep_order_and_drop_duplicates() {
        assert_eq!(parse_sizes("4k,64k"), Ok(vec![4096, 65536]));
        assert_eq!(parse_sizes("64k,4096,4k"), Ok(vec![65536, 4096]));
        assert!(parse_sizes(",").is_err());
        assert!(parse_sizes("").is_err());
    }

    #[test]
    fn an_empty_item_is_named_not_skipped() {
        let err = parse_sizes("4k,,8k").unwrap_err();
        assert!(err.contains("item 2 of \"4k,,8k\" is empty"), "{err}");
        for s in [",4k", "4k,", "4k, ,8k"] {
            assert!(parse_sizes(s).is_err(), "{s}");
        }
    }

    #[test]
    fn formats_back() {
        assert_eq!(format_size(128), "128");
        assert_eq!(format_size(4096), "4k");
        assert_eq!(format_size(1 << 20), "1M");
        assert_eq!(format_size(1500), "1500");
        for s in ["128", "4k", "64k", "1M"] {
            assert_eq!(format_size(parse_size(s).unwrap()), s);
        }
    }
}
