//! Exporters: one file per output format, each writing a
//! [`Report`](crate::report::Report) to any `io::Write` — except `jsonl`,
//! the `top --batch` JSON line, which streams the same contract from two
//! snapshots without building the Report (see its module doc). Every
//! interrupts row in JSON, in `show` and in those lines, is written by
//! [`irq_row_json`]. Also where output goes: [`stdout`] (a closed stdout
//! ends the run) and [`atomic`] (output files written whole or not at all).

pub mod atomic;
pub mod csv;
pub mod grid;
pub mod irq_row_json;
pub mod jsonl;
pub mod report_json;
pub mod row_key;
pub mod stderr;
pub mod stdout;
pub mod table;

/// `n` and the noun, pluralised: "1 CPU", "2 CPUs", "0 CPUs".
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
