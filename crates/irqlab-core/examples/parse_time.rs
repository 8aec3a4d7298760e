//! Times `Interrupts::parse` and `parse_into` on files given as arguments
//! (quick manual check; the real numbers come from `cargo bench`).

#![allow(clippy::unwrap_used, clippy::expect_used)]
fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap_or_default();
        let mut best = (f64::MAX, f64::MAX);
        let mut m = irqlab_core::Interrupts::default();
        for _ in 0..20 {
            let t = std::time::Instant::now();
            let fresh = irqlab_core::Interrupts::parse(&bytes);
            let a = t.elapsed().as_secs_f64();
            drop(fresh);
            let t = std::time::Instant::now();
            let _ = m.parse_into(&bytes);
            let b = t.elapsed().as_secs_f64();
            best = (best.0.min(a), best.1.min(b));
        }
        let mb = bytes.len() as f64 / 1e6;
        println!(
            "{path}: {mb:.1} MB parse {:.2} ms ({:.2} GB/s), parse_into {:.2} ms ({:.2} GB/s)",
            best.0 * 1e3,
            mb / best.0 / 1e3,
            best.1 * 1e3,
            mb / best.1 / 1e3
        );
    }
}
