//! `record`: the Parquet dataset writer (Hive-partitioned `host=/boot=`)
//! with its journal, the reader that makes a recording a snapshot source
//! again, and [`source`], the one seam through which `record` and `serve`
//! take live samples.

pub mod source;
