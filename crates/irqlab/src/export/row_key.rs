//! A cached row's identity: the label and description a row's cached
//! output was built from, back to back at the front of one buffer whose
//! rest holds that output (jsonl's fixed JSON fields; serve's rows keep
//! their labels beside it). Checking a row against it compares adjacent
//! bytes, and rebuilding reuses the buffer: nothing is allocated per
//! sample while the rows stay.

/// The identity a row position's cached output is valid for, and the
/// output after it.
#[derive(Debug, Default)]
pub struct RowKey {
    /// `set` was called since the last `invalidate`.
    valid: bool,
    /// The filters keep the row (decided when the key was set).
    keep: bool,
    label_len: usize,
    /// End of the label and description; the output follows.
    key_len: usize,
    buf: Vec<u8>,
}

impl RowKey {
    /// Built for a row with this label and description.
    pub fn is_for(&self, label: &str, description: &str) -> bool {
        let (label, desc) = (label.as_bytes(), description.as_bytes());
        self.valid
            && self.label_len == label.len()
            && self.key_len == label.len() + desc.len()
            && self.buf.get(..self.label_len) == Some(label)
            && self.buf.get(self.label_len..self.key_len) == Some(desc)
    }

    /// Now for this row: its key written, its output emptied, room made
    /// for `room` bytes of output at once.
    pub fn set(&mut self, label: &str, description: &str, keep: bool, room: usize) {
        self.valid = true;
        self.keep = keep;
        let b = &mut self.buf;
        b.clear();
        b.reserve(label.len() + description.len() + room);
        b.extend_from_slice(label.as_bytes());
        self.label_len = b.len();
        b.extend_from_slice(description.as_bytes());
        self.key_len = b.len();
    }

    /// Valid for no row (the filter or what the output depends on changed).
    pub fn invalidate(&mut self) {
        self.valid = false;
    }

    /// The filters keep the row.
    pub fn keep(&self) -> bool {
        self.keep
    }

    /// The output kept after the key.
    pub fn output(&self) -> &[u8] {
        self.buf.get(self.key_len..).unwrap_or_default()
    }

    /// The buffer the output is appended to (after the key).
    pub fn output_buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Where the output starts in [`RowKey::output_buf`].
    pub fn output_start(&self) -> usize {
        self.key_len
    }
}

/// The cached key of position `pos` in `keys` (grown as needed).
pub fn key_at<K: Default>(keys: &mut Vec<K>, pos: usize) -> &mut K {
    if keys.len() <= pos {
        keys.resize_with(pos + 1, K::default);
    }
    &mut keys[pos]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_for_its_label_and_description_only() {
        let mut k = RowKey::default();
        assert!(!k.is_for("", ""), "a new key is for no row");
        k.set("24", "IO-APIC acpi", true, 16);
        k.output_buf().extend_from_slice(b"out");
        assert!(k.is_for("24", "IO-APIC acpi"));
        // the same bytes split elsewhere are another row
        assert!(!k.is_for("24 ", "IO-APIC acpi"));
        assert!(!k.is_for("2", "4IO-APIC acpi"));
        assert!(!k.is_for("24", "IO-APIC acpi "));
        assert_eq!(k.output(), b"out");
        assert_eq!(k.output_start(), "24IO-APIC acpi".len());
        k.set("LOC", "", false, 0);
        assert!(k.is_for("LOC", "") && !k.keep() && k.output().is_empty());
        k.invalidate();
        assert!(!k.is_for("LOC", ""));
    }

    #[test]
    fn key_at_grows_to_the_position() {
        let mut keys: Vec<RowKey> = Vec::new();
        key_at(&mut keys, 3).set("a", "b", true, 0);
        assert_eq!(keys.len(), 4);
        assert!(keys[3].is_for("a", "b") && !keys[0].is_for("a", "b"));
    }
}
