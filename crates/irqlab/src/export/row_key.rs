//! Cached per-row output and the identity it was built for: every row
//! position's key (the row's label and description, back to back) in one
//! buffer and its output (built from them: jsonl's fixed JSON fields,
//! serve's labels) in another, both in row order, with a small
//! fixed-size [`Slot`] per position. Checking the rows against their keys
//! reads consecutive bytes (a few rows per cache line, none of the
//! outputs), and the outputs of consecutive rows sit in consecutive
//! lines (no per-row allocation, no allocator headers or gaps between
//! rows). Nothing is allocated per sample while the rows stay.

/// Where one row position's key and output sit in [`RowCache`]'s
/// buffers, and what the user keeps beside them (`ext`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Slot<T> {
    /// Start of the key (label, then description) in the key buffer.
    key_at: u32,
    label_len: u32,
    key_len: u32,
    /// Start and length of the output in the output buffer.
    at: u32,
    len: u32,
    /// Built since the last [`RowCache::invalidate`].
    valid: bool,
    /// The filters keep the row (decided when the entry was built).
    keep: bool,
    /// The user's figures about the output.
    pub ext: T,
}

impl<T> Slot<T> {
    /// The filters keep the row.
    pub fn keep(&self) -> bool {
        self.keep
    }
}

/// The keys and outputs of every row position (see the module docs).
#[derive(Debug)]
pub struct RowCache<T> {
    keys: Vec<u8>,
    bytes: Vec<u8>,
    slots: Vec<Slot<T>>,
    /// Bytes of the buffers in valid entries (the rest was replaced).
    live_keys: usize,
    live: usize,
    /// An output was built, replaced or invalidated since the last
    /// [`RowCache::take_changed`].
    changed: bool,
}

impl<T> Default for RowCache<T> {
    fn default() -> Self {
        RowCache {
            keys: Vec::new(),
            bytes: Vec::new(),
            slots: Vec::new(),
            live_keys: 0,
            live: 0,
            changed: true,
        }
    }
}

/// A buffer offset or length as stored in a [`Slot`] (the buffers hold
/// a few hundred bytes per row: far below 4 GiB).
fn off(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl<T: Copy + Default> RowCache<T> {
    /// The slot of position `pos`, if one was ever built.
    pub fn slot(&self, pos: usize) -> Option<&Slot<T>> {
        self.slots.get(pos)
    }

    /// The entry of `pos` was built for a row with this label and
    /// description.
    #[inline]
    pub fn is_for(&self, pos: usize, label: &str, description: &str) -> bool {
        let Some(s) = self.slots.get(pos) else {
            return false;
        };
        let (label, desc) = (label.as_bytes(), description.as_bytes());
        let at = s.key_at as usize;
        s.valid
            && s.label_len as usize == label.len()
            && s.key_len as usize == label.len() + desc.len()
            && self.keys.get(at..at + label.len()) == Some(label)
            && self.keys.get(at + label.len()..at + s.key_len as usize) == Some(desc)
    }

    /// An entry is valid at `pos`: for a row known to have the label and
    /// description of the row it was last checked or built for (the
    /// caller's to know), it is that row's entry without reading its key.
    #[inline]
    pub fn holds(&self, pos: usize) -> bool {
        self.slots.get(pos).is_some_and(|s| s.valid)
    }

    /// The output of `pos`'s entry (empty when none was built).
    #[inline]
    pub fn output(&self, pos: usize) -> &[u8] {
        self.slots
            .get(pos)
            .and_then(|s| self.bytes.get(s.at as usize..(s.at + s.len) as usize))
            .unwrap_or_default()
    }

    /// The user's figures of `pos`'s entry.
    #[inline]
    pub fn ext(&self, pos: usize) -> T {
        self.slots.get(pos).map(|s| s.ext).unwrap_or_default()
    }

    /// The slot of `pos`, grown to as needed.
    fn slot_mut(&mut self, pos: usize) -> &mut Slot<T> {
        if self.slots.len() <= pos {
            self.slots.resize_with(pos + 1, Slot::default);
        }
        &mut self.slots[pos]
    }

    /// The entry of `pos` becomes the one of this row: its key, and the
    /// output `build` appends to the buffer it is given (and the figures
    /// it returns), at the ends of the buffers.
    pub fn set(
        &mut self,
        pos: usize,
        label: &str,
        description: &str,
        keep: bool,
        build: impl FnOnce(&mut Vec<u8>) -> T,
    ) {
        self.retire(pos);
        self.changed = true;
        let key_at = self.keys.len();
        self.keys.extend_from_slice(label.as_bytes());
        self.keys.extend_from_slice(description.as_bytes());
        let at = self.bytes.len();
        let ext = build(&mut self.bytes);
        let len = self.bytes.len() - at;
        let key_len = label.len() + description.len();
        self.live_keys += key_len;
        self.live += len;
        *self.slot_mut(pos) = Slot {
            key_at: off(key_at),
            label_len: off(label.len()),
            key_len: off(key_len),
            at: off(at),
            len: off(len),
            valid: true,
            keep,
            ext,
        };
    }

    /// The output of `pos`'s (valid) entry becomes `output` (its key and
    /// filter decision stay), at the end of the output buffer.
    pub fn rewrite(&mut self, pos: usize, output: &[u8], ext: T) {
        let Some(s) = self.slots.get_mut(pos).filter(|s| s.valid) else {
            return;
        };
        self.changed = true;
        self.live = self.live - s.len as usize + output.len();
        s.at = off(self.bytes.len());
        s.len = off(output.len());
        s.ext = ext;
        self.bytes.extend_from_slice(output);
    }

    /// `pos`'s entry no longer counts as live bytes.
    fn retire(&mut self, pos: usize) {
        if let Some(s) = self.slots.get_mut(pos) {
            if s.valid {
                self.live -= s.len as usize;
                self.live_keys -= s.key_len as usize;
            }
            s.valid = false;
        }
    }

    /// Valid for no row (the filter or what the output depends on changed).
    pub fn invalidate(&mut self) {
        self.slots.iter_mut().for_each(|s| s.valid = false);
        self.live = 0;
        self.live_keys = 0;
        self.changed = true;
    }

    /// Whether any output was built, replaced or invalidated since the
    /// last call (compaction moves outputs but changes none).
    pub fn take_changed(&mut self) -> bool {
        std::mem::replace(&mut self.changed, false)
    }

    /// When replaced entries fill much of a buffer: the valid keys and
    /// outputs again back to back in row order (call between passes over
    /// the rows).
    pub fn compact(&mut self) {
        if (self.bytes.len() - self.live) * 4 <= self.live
            && (self.keys.len() - self.live_keys) * 4 <= self.live_keys
        {
            return;
        }
        self.compact_now();
    }

    #[cold]
    #[inline(never)]
    fn compact_now(&mut self) {
        let mut keys = Vec::with_capacity(self.live_keys + self.live_keys / 2);
        let mut bytes = Vec::with_capacity(self.live + self.live / 2);
        for s in self.slots.iter_mut() {
            if !s.valid {
                continue;
            }
            let src = s.key_at as usize..(s.key_at + s.key_len) as usize;
            s.key_at = off(keys.len());
            keys.extend_from_slice(self.keys.get(src).unwrap_or_default());
            let src = s.at as usize..(s.at + s.len) as usize;
            s.at = off(bytes.len());
            bytes.extend_from_slice(self.bytes.get(src).unwrap_or_default());
        }
        self.live_keys = keys.len();
        self.live = bytes.len();
        self.keys = keys;
        self.bytes = bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_for_its_label_and_description_only() {
        let mut c: RowCache<u8> = RowCache::default();
        assert!(!c.is_for(0, "", ""), "a new cache is for no row");
        c.set(0, "24", "IO-APIC acpi", true, |b| {
            b.extend_from_slice(b"out");
            7
        });
        assert!(c.is_for(0, "24", "IO-APIC acpi"));
        // the same bytes split elsewhere are another row
        assert!(!c.is_for(0, "24 ", "IO-APIC acpi"));
        assert!(!c.is_for(0, "2", "4IO-APIC acpi"));
        assert!(!c.is_for(0, "24", "IO-APIC acpi "));
        assert!(!c.is_for(1, "24", "IO-APIC acpi"));
        assert_eq!(c.output(0), b"out");
        assert_eq!(c.ext(0), 7);
        c.set(3, "LOC", "", false, |_| 1);
        assert!(c.is_for(3, "LOC", "") && !c.slot(3).is_some_and(Slot::keep));
        assert!(c.output(3).is_empty() && !c.is_for(2, "", ""));
        assert!(c.take_changed() && !c.take_changed());
        c.compact_now();
        assert!(!c.take_changed(), "compaction changes no output");
        c.invalidate();
        assert!(c.take_changed());
        assert!(!c.is_for(3, "LOC", "") && !c.is_for(0, "24", "IO-APIC acpi"));
    }

    #[test]
    fn rewritten_and_compacted_entries_keep_their_keys() {
        let mut c: RowCache<u32> = RowCache::default();
        for pos in 0..4 {
            c.set(pos, &pos.to_string(), "desc", true, |b| {
                b.extend_from_slice(b"first");
                0
            });
        }
        for round in 0..20u32 {
            if round % 5 == 0 {
                // a new row at a position: a new key
                c.set(1, "1", "desc", true, |b| {
                    b.extend_from_slice(b"again");
                    0
                });
            }
            for pos in 0..4 {
                let out = format!("{pos}:{round}");
                c.rewrite(pos, out.as_bytes(), round);
            }
            c.compact();
            for pos in 0..4 {
                assert!(c.is_for(pos, &pos.to_string(), "desc"));
                assert_eq!(c.output(pos), format!("{pos}:{round}").as_bytes());
                assert_eq!(c.ext(pos), round);
            }
            assert!(
                c.bytes.len() <= 2 * c.live + 64,
                "replaced bytes are dropped"
            );
        }
        c.compact_now();
        assert_eq!(c.bytes.len(), c.live);
        assert_eq!(c.keys, b"0desc1desc2desc3desc");
        assert_eq!(c.output(2), b"2:19");
    }
}
