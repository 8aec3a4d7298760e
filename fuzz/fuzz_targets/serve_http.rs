//! `irqlab serve`'s handling of a request head from a hostile client: the
//! input (after its first byte, the read size) is fed in reads of that
//! size as the server reads its socket, each read judged by
//! `serve::http::head_state` (more, a whole head, too large, garbage); a
//! whole head is answered by `serve::http::response` (request line,
//! method, target and query, `Accept` and `Accept-Encoding` negotiation,
//! keep-alive; OpenMetrics and gzip forms of a fixed body). Must never
//! panic, hang or grow without bound. The end of the head found read by
//! read must be the one found in all the bytes at once, and every answer
//! is an HTTP/1.1 status line.
#![no_main]
use irqlab::serve::http::{head_state, response, HeadState, Latest, MAX_HEAD};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use std::time::Instant;

const BODY: &str = "# HELP irqlab_interrupts_total Interrupts.\n\
# TYPE irqlab_interrupts_total counter\n\
irqlab_interrupts_total{irq=\"1\",cpu=\"0\"} 42\n";

fn latest() -> Option<&'static Latest> {
    static L: OnceLock<Option<Latest>> = OnceLock::new();
    L.get_or_init(|| Latest::new(BODY.as_bytes().to_vec(), Instant::now(), None).ok())
        .as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Some((&size, input)) = data.split_first() else {
        return;
    };
    let Some(latest) = latest() else {
        return;
    };
    let size = usize::from(size).max(1);
    let mut buf: Vec<u8> = Vec::new();
    for chunk in input.chunks(size) {
        let from = buf.len().saturating_sub(3);
        let room = (MAX_HEAD + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        match head_state(&buf, from) {
            HeadState::More => continue,
            HeadState::TooLarge | HeadState::Garbage => return,
            HeadState::Complete(end) => {
                assert_eq!(
                    head_state(&buf, 0),
                    HeadState::Complete(end),
                    "the head ends elsewhere in all the bytes at once"
                );
                let out = response(&buf[..end], latest);
                assert!(out.starts_with(b"HTTP/1.1 "), "not a status line");
                return;
            }
        }
    }
});
