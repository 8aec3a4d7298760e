//! Appends to a byte buffer as one shared call each: [`Put::put`] (a
//! slice) and [`Put::put1`] (a byte). The `top --batch` JSON line is
//! written by a hundred appends a sample, most of them constant keys;
//! inlined, each carried its own capacity check and copy, and at a 1-s
//! pace (caches cold at every sample) the code those copies spread over
//! cost more than the calls (BENCHMARKS.md, session 30).

/// Out-of-line appends (see the module doc).
pub trait Put {
    /// Append `s`.
    fn put(&mut self, s: &[u8]);
    /// Append `b`.
    fn put1(&mut self, b: u8);
}

impl Put for Vec<u8> {
    #[inline(never)]
    fn put(&mut self, s: &[u8]) {
        self.extend_from_slice(s);
    }

    #[inline(never)]
    fn put1(&mut self, b: u8) {
        self.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_as_extend_and_push() {
        let mut v = b"a".to_vec();
        v.put(b"bc");
        v.put1(b'd');
        v.put(b"");
        assert_eq!(v, b"abcd");
    }
}
