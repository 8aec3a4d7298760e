//! A recording's journal (`record`'s append-only JSON lines, one sample
//! each; docs/recording-schema.md): parsed, then every sample rebuilt as
//! `replay` does — the files re-rendered from the layout and parsed, the
//! traced maps of `record --trace` rebuilt and each traced interval
//! computed. Must never panic, hang or grow without bound; errors are fine.
#![no_main]
use irqlab::record::journal;
use irqlab::record::reader::{RecordedSample, Replayer};
use irqlab::record::trace_replay::TraceReplay;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (lines, _) = journal::parse(data);
    let steps: Vec<RecordedSample> = lines
        .into_iter()
        .map(|l| RecordedSample {
            time: l.time,
            shape: l.shape,
            cells: l.cells,
        })
        .collect();
    let mut r = Replayer::default();
    for s in &steps {
        let _ = r.apply(s);
    }
    let n = steps.len();
    if let Ok(mut t) = TraceReplay::new(steps.into(), None) {
        for _ in 0..n {
            if t.next_interval().is_err() {
                break;
            }
        }
    }
});
