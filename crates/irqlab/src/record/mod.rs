//! `record`: the Parquet dataset writer (Hive-partitioned `host=/boot=`)
//! with its journal, the reader of a recording and [`playback`], which
//! makes it a snapshot source of the live sampler again. `record` takes
//! its samples through `sampler::counters`.

pub mod cells;
mod gzip;
pub mod identity;
pub mod journal;
pub mod layout;
pub mod pack;
pub mod playback;
pub mod reader;
mod same_shape;
pub mod schema;
pub mod segment;
pub mod trace_cells;
pub mod trace_replay;
pub mod writer;
