//! Affinity of a report's numbered rows, from a live frame's metadata
//! cache (the sampler reads it, this only copies it into the lines).

use super::Report;
use crate::sampler::Frame;

/// Each numbered row's affinity, from the frame's metadata cache.
pub fn annotate_affinity(r: &mut Report, frame: &mut Frame) {
    if let Some(sec) = r.interrupts.as_mut() {
        for row in &mut sec.rows {
            if let Some(irq) = row.irq {
                row.affinity = frame.affinity(irq);
            }
        }
    }
}
