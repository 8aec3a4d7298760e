//! `record`: the Parquet dataset writer (Hive-partitioned `host=/boot=`)
//! with its journal, the reader that makes a recording a snapshot source
//! again, and [`source`], the one seam through which `record` and `serve`
//! take live samples.

pub mod cells;
pub mod journal;
pub mod layout;
pub mod reader;
pub mod schema;
pub mod segment;
pub mod source;
pub mod writer;
