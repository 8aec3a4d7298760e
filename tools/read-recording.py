#!/usr/bin/env python3
"""Read an `irqlab record` dataset back with DuckDB or pyarrow, without irqlab.

    tools/read-recording.py DIR [--engine duckdb|pyarrow] [--summary]

DIR is a recording (`irqlab record -o DIR`) or several copied into one
directory: every `host=*/boot=*/part-*.parquet` below DIR is read as ONE
table (Hive partitioning gives the `host` and `boot` columns). The layout
is documented in docs/recording-schema.md: a segment holds every cell in
its first sample and then only the cells that changed. Schemas 2 and 3:
one `clock` row per sample (its `time` is the wall clock, in whole
milliseconds in schema 3 and nanoseconds in schema 2; its value sums to
CLOCK_MONOTONIC), and `value` is the raw counter in a cell's first row of
a segment and the increment since the row before in later rows, so the
counter is the running sum over the cell's rows of the segment ordered by
`seq` (the SQL of `--sql` below). Schema 1: raw values, the samples in the
footer key `irqlab.samples`.

Prints one JSON line per sample, in (host, boot, seq) order, with the full
state of every counter at that sample (the last change at or before it:
from its segment's first sample, which holds every cell, on through each
sample after it, whichever file holds that one; after a sample no file
holds, only the counters recorded again are known, as replay's
`missing_samples` gap says):

    {"host": "h1", "boot": "…", "seq": 3, "run": 1, "wall_ns": …,
     "mono_ns": …, "values": {"interrupts|LOC|0": 123, "stat|ctxt|-": 77, …}}

`run` numbers the `record` runs of a boot directory from 1, as `irqlab
replay --run N` does: a run starts at the boot's first sample and at
every sample whose shape (footer key `irqlab.shapes`) carries the `run`
mark. Two samples of different runs are not one interval: a rate is a
difference within a run (the runs may sample other rows, and the time
between them is not sampled). Recordings made before runs were marked
read as one run.

A file whose samples another file of the same boot directory is checked
to hold (`irqlab record` merges small segments by rewriting the window's
file; a crash between writing the new file and removing the old one
leaves both) is skipped, as irqlab's own reader does: the other file's
footer key `irqlab.seqs` must list the range of its name and the file's
row count, and hold every sample of the first file with the same clock
readings (monotonic nanoseconds exactly, wall time to the millisecond;
both files' samples read with the engine in use: schema 1 from the
footer key `irqlab.samples`, schemas 2 and 3 from the `clock` rows). A
sample two files hold otherwise is printed once when both took it at the
same clock readings. Two files holding a sample of one number taken at
other clock readings are files of two recordings (every recording
numbers its samples from 0; a segment of another recording of the same
boot copied into the directory): nothing is printed and the reader exits
1 naming both files and the sample, as irqlab does, rather than take one
recording's samples for the other's. A counter at or above 2^63 is read
back exactly (the `value` column holds its 64 bits; sums are taken
modulo 2^64).

`--summary` prints one line per (host, boot) instead: samples and runs,
then the rows.
Exits 1 with a message when a row's `time` differs from its sample's
wall clock, when two files hold a sample of one number with other clock
readings, when a sample list is missing, when `irqlab.shapes` cannot
be decoded, or when a segment's schema is not 1, 2 or 3. A closed
stdout (`| head`) ends it quietly with exit 0, as irqlab. Used by crates/irqlab/tests/record_readers.rs; install
the engines with tools/install-python-readers.sh.
"""

import argparse
import base64
import datetime
import glob
import gzip
import importlib
import json
import os
import sys

SCHEMAS = ("1", "2", "3")
# schemas whose `value` is an increment after a cell's first row
SUMMED = ("2", "3")

# `value` holds a counter's 64 bits as a signed integer (a counter at or
# above 2^63 reads negative) and increments wrap the same way: the counter
# is the sum modulo 2^64 (docs/recording-schema.md).
U64 = 1 << 64

# A sample's wall clock is compared to the millisecond (schema 3 stores
# whole milliseconds, schemas 1 and 2 nanoseconds), its monotonic clock
# exactly (`SampleTime::same_clock`, crates/irqlab/src/record/schema.rs).
WALL_NS_STEP = 1_000_000

# Schemas 2 and 3 in SQL: every counter at every row where it changed, raw.
SQL = """
SELECT host, boot, filename, epoch_ns(time) AS time, seq, source, key, cpu,
       ((sum(value) OVER (PARTITION BY filename, source, key, cpu ORDER BY seq))
        % 18446744073709551616 + 18446744073709551616) % 18446744073709551616 AS value
FROM read_parquet(?, hive_partitioning = true, filename = true, union_by_name = true)
"""


def fail(msg):
    print(f"read-recording: {msg}", file=sys.stderr)
    sys.exit(1)


def schema_of(path, kv):
    v = kv.get("irqlab.schema")
    if v not in SCHEMAS:
        fail(f"{path}: schema {v!r}, expected one of {', '.join(SCHEMAS)}")
    return v


def samples_of(path, kv, changes):
    """The samples of one segment: schema 1 from the footer, schemas 2 and 3 from
    its `clock` rows (already summed into CLOCK_MONOTONIC)."""
    if schema_of(path, kv) == "1":
        if "irqlab.samples" not in kv:
            fail(f"{path}: no irqlab.samples in the footer")
        return json.loads(kv["irqlab.samples"])
    clock = [r for r in changes if r[2] == "clock|mono_ns|-"]
    if not clock:
        fail(f"{path}: no clock rows (no samples)")
    return [{"seq": seq, "wall_ns": t, "mono_ns": v} for seq, t, _, v, _, _ in clock]


def run_marks(path, kv):
    """The seqs of a segment whose shape marks the start of a `record` run:
    footer key irqlab.shapes, the JSON [{seq, shape}] (schema 1) or base64
    of its gzip."""
    raw = kv.get("irqlab.shapes")
    if raw is None:
        return set()
    try:
        if schema_of(path, kv) == "1":
            shapes = json.loads(raw)
        else:
            shapes = json.loads(gzip.decompress(base64.b64decode(raw, validate=True)))
        return {int(s["seq"]) for s in shapes if isinstance(s.get("shape"), dict) and "run" in s["shape"]}
    except (ValueError, OSError, TypeError, KeyError, AttributeError) as e:
        fail(f"{path}: irqlab.shapes is not the JSON [{{seq, shape}}] its schema packs ({e})")


def number_runs(samples, marks):
    """Sets `run` on samples sorted by (host, boot, seq): 1 at a boot's first
    sample, one more at each later sample whose seq is marked."""
    last, run = None, 0
    for s in samples:
        k = (s["host"], s["boot"])
        if k != last:
            last, run = k, 1
        elif s["seq"] in marks.get(k, ()):
            run += 1
        s["run"] = run


def load_duckdb(files):
    import duckdb

    con = duckdb.connect()
    kv = {}
    for f, k, v in con.execute(
        "SELECT file_name, decode(key), decode(value) FROM parquet_kv_metadata(?)",
        [files],
    ).fetchall():
        kv.setdefault(f, {})[k] = v
    if all(kv.get(f, {}).get("irqlab.schema") in SUMMED for f in files):
        # the window sum in SQL, as a user would write it
        return kv, con.execute(SQL, [files]).fetchall(), True
    rows = con.execute(
        "SELECT host, boot, filename, epoch_ns(time), seq, source, key, cpu, value "
        "FROM read_parquet(?, hive_partitioning = true, filename = true, union_by_name = true)",
        [files],
    ).fetchall()
    return kv, rows, False


def load_pyarrow(root, files):
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    kv = {}
    for f in files:
        meta = pq.ParquetFile(f).metadata.metadata or {}
        kv[f] = {k.decode(): v.decode() for k, v in meta.items()}
    data = ds.dataset(files, format="parquet", partitioning="hive", partition_base_dir=root)
    cols = ["host", "boot", "__filename", "time", "seq", "source", "key", "cpu", "value"]
    t = data.to_table(columns=cols)
    # timestamps (ms in schema 3, ns before) as integer nanoseconds
    # (datetime would round to µs)
    ns = t.column("time").cast(pa.timestamp("ns", tz="UTC")).cast("int64")
    t = t.set_column(cols.index("time"), "time", ns)
    d = t.to_pydict()
    rows = list(zip(*(d[c] for c in cols)))
    return kv, rows, False


def segment_range(path):
    """(first, last) of `part-FIRST-LAST.parquet`, else None."""
    name = os.path.basename(path)
    if not (name.startswith("part-") and name.endswith(".parquet")):
        return None
    try:
        a, b = name[len("part-"):-len(".parquet")].split("-")
        return int(a), int(b)
    except ValueError:
        return None


def footer(path, engine):
    """(key-value metadata, rows) of a Parquet file's footer, read with
    `engine`, or None when it is not a readable Parquet file."""
    try:
        if engine == "pyarrow":
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(path).metadata
            kv = {k.decode(): v.decode() for k, v in (meta.metadata or {}).items()}
            return kv, meta.num_rows
        import duckdb

        con = duckdb.connect()
        kv = dict(
            con.execute(
                "SELECT decode(key), decode(value) FROM parquet_kv_metadata(?)", [path]
            ).fetchall()
        )
        (rows,) = con.execute("SELECT num_rows FROM parquet_file_metadata(?)", [path]).fetchone()
        return kv, rows
    except Exception:
        return None


def checked_seqs(path, engine):
    """The runs [[first, last], ...] of a segment's samples from its footer
    key irqlab.seqs, if that key is there and adds up (its row count is the
    file's); else None."""
    f = footer(path, engine)
    if f is None or "irqlab.seqs" not in f[0]:
        return None
    try:
        seqs = json.loads(f[0]["irqlab.seqs"])
        runs = [(int(a), int(b)) for a, b in seqs["runs"]]
        rows = int(seqs["rows"])
    except (ValueError, KeyError, TypeError):
        return None
    ordered = all(a <= b for a, b in runs) and all(x[1] + 1 < y[0] for x, y in zip(runs, runs[1:]))
    if not runs or not ordered or rows != f[1]:
        return None
    return runs


def clock_rows(path, engine):
    """The `clock` rows of one schema-2 or -3 segment: (seq, wall ns, value)."""
    if engine == "pyarrow":
        import pyarrow as pa
        import pyarrow.parquet as pq

        t = pq.read_table(path, columns=["seq", "time", "value"], filters=[("source", "=", "clock")])
        ns = t.column("time").cast(pa.timestamp("ns", tz="UTC")).cast("int64")
        return list(zip(t.column("seq").to_pylist(), ns.to_pylist(), t.column("value").to_pylist()))
    import duckdb

    return (
        duckdb.connect()
        .execute(
            "SELECT seq, epoch_ns(time), value FROM read_parquet(?, hive_partitioning = false) "
            "WHERE source = 'clock'",
            [path],
        )
        .fetchall()
    )


def sample_clocks(path, engine):
    """{seq: (wall_ns, mono_ns)} of every sample of one segment, read whole
    with `engine` (schema 1: the footer's irqlab.samples; schemas 2 and 3:
    the `clock` rows, whose value is raw in the first row and an increment
    after it), or None when the file cannot be read."""
    try:
        f = footer(path, engine)
        if f is None:
            return None
        kv = f[0]
        schema = kv.get("irqlab.schema")
        if schema == "1":
            return {int(s["seq"]): (int(s["wall_ns"]), int(s["mono_ns"])) for s in json.loads(kv["irqlab.samples"])}
        if schema not in SUMMED:
            return None
        out, mono = {}, None
        for seq, wall, v in sorted(clock_rows(path, engine)):
            mono = v % U64 if mono is None else (mono + v) % U64
            out[seq] = (wall, mono)
        return out
    except Exception:
        return None


def same_clock(a, b):
    """Whether two (wall_ns, mono_ns) are one sample's clock readings."""
    return a[1] == b[1] and a[0] // WALL_NS_STEP == b[0] // WALL_NS_STEP


def readings(t):
    """`2026-…Z (monotonic N ns)`, as irqlab names a sample's clocks."""
    wall, mono = t
    at = datetime.datetime.fromtimestamp(wall // 10**9, datetime.timezone.utc)
    return f"{at.strftime('%Y-%m-%dT%H:%M:%S')}.{wall // WALL_NS_STEP % 1000:03d}Z (monotonic {mono} ns)"


def two_recordings(a, b, seq, ta, tb):
    """The message for files `a` and `b` holding sample `seq` at other clock readings."""
    return (
        f"{a} and {b} are files of two recordings in one boot directory: "
        f"the first's sample {seq} was taken at {readings(ta)}, the second's sample {seq} at {readings(tb)}; "
        f"neither supersedes the other: move one recording's files out of {os.path.dirname(a)}; "
        "nothing was read"
    )


def drop_superseded(files, engine):
    """Files another file of the same directory is checked to hold every
    sample of, as irqlab's reader does (crates/irqlab/src/record/layout.rs,
    `list`): a file named inside another's range is dropped only when that
    other file's own footer (irqlab.seqs) lists exactly the range of its
    name, with the row count the file has, and holds the samples of the
    first (what its footer lists, else the range of its name), and when,
    both read whole, the other file holds every sample of the first with
    the same clock readings. A file the other holds a sample of with other
    clock readings is a file of another recording: exits 1 naming both
    files and the sample. Samples read twice otherwise are dropped by
    `states`, which makes the same check."""
    by_dir = {}
    for f in files:
        by_dir.setdefault(os.path.dirname(f), []).append((segment_range(f), f))
    keep, mixed = [], []
    cache, clocks = {}, {}

    def seqs(f):
        if f not in cache:
            cache[f] = checked_seqs(f, engine)
        return cache[f]

    def times(f):
        if f not in clocks:
            clocks[f] = sample_clocks(f, engine)
        return clocks[f]

    def holds(runs, a, b):
        return any(x <= a and b <= y for x, y in runs)

    def same_samples(f, x):
        """Whether `x` holds every sample of `f` at the same clock readings
        (a sample at other readings goes to `mixed`)."""
        ft, xt = times(f), times(x)
        if ft is None or xt is None:
            return False
        for seq in sorted(ft):
            if seq not in xt:
                return False
            if not same_clock(ft[seq], xt[seq]):
                mixed.append(two_recordings(f, x, seq, ft[seq], xt[seq]))
                return False
        return True

    for entries in by_dir.values():
        named = [(r, f) for r, f in entries if r is not None]
        keep += [f for r, f in entries if r is None]
        for r, f in sorted(named):
            want = seqs(f) or [r]
            covered = False
            for xr, x in sorted(named):
                if x == f or not (xr[0] <= r[0] and r[1] <= xr[1]):
                    continue
                xs = seqs(x)
                if (
                    xs
                    and (xs[0][0], xs[-1][1]) == xr
                    and all(holds(xs, a, b) for a, b in want)
                    and same_samples(f, x)
                ):
                    covered = True
                    break
            if not covered:
                keep.append(f)
    if mixed:
        fail("\n".join(mixed))
    return sorted(keep)


def cell(source, key, cpu):
    return f"{source}|{key}|{'-' if cpu is None else cpu}"


def running_sums(changes):
    """Schemas 2 and 3: a cell's first row is raw, later rows are increments."""
    total = {}
    out = []
    for seq, t, c, v, host, boot in sorted(changes, key=lambda r: (r[2], r[0])):
        total[c] = (total[c] + v if c in total else v) % U64
        out.append((seq, t, c, total[c], host, boot))
    return out


def states(kv, rows, summed):
    """Full state per sample, filled forward in sample order: from the
    segment's first sample (which holds every cell), or from the sample
    before, whichever file holds it (a segment with a hole where `recover`
    skipped a journal line may have it in another file); after a sample
    no file holds, only the cells recorded again are known."""
    by_file = {}
    for host, boot, f, t, seq, source, key, cpu, value in rows:
        by_file.setdefault(os.path.normpath(f), []).append((seq, t, cell(source, key, cpu), value, host, boot))
    out, marks = [], {}
    for f, meta in sorted(kv.items()):
        f = os.path.normpath(f)
        changes = by_file.get(f, [])
        if schema_of(f, meta) in SUMMED and not summed:
            changes = running_sums(changes)
        samples = samples_of(f, meta, changes)
        changes = [r for r in changes if not r[2].startswith("clock|")]
        parts = dict(p.split("=", 1) for p in f.split(os.sep) if p.startswith(("host=", "boot=")))
        marks.setdefault((parts.get("host"), parts.get("boot")), set()).update(run_marks(f, meta))
        out += listed(f, parts, samples, sorted(changes, key=lambda r: r[0]))
    out.sort(key=lambda s: (s["host"] or "", s["boot"] or "", s["seq"]))
    # a sample two files hold (a file not superseded by the check above)
    # once, from the file read first, when both took it at the same clock
    # readings; at other readings they are files of two recordings
    once, seen = [], {}
    for s in out:
        k = (s["host"], s["boot"], s["seq"])
        first = seen.get(k)
        if first is None:
            seen[k] = s
            once.append(s)
            continue
        t, u = (s["wall_ns"], s["mono_ns"]), (first["wall_ns"], first["mono_ns"])
        if not same_clock(t, u):
            fail(
                f"{s['file']}: sample {s['seq']} was taken at {readings(t)}, but {first['file']} holds "
                f"a sample {s['seq']} taken at {readings(u)}: files of two recordings are in one boot "
                "directory (move one recording's files out); nothing was read"
            )
    fill(once)
    number_runs(once, marks)
    keys = ("host", "boot", "seq", "run")
    drop = ("file", "listed", "opens")
    return [{**{k: s[k] for k in keys}, **{k: v for k, v in s.items() if k not in drop}} for s in once]


def listed(f, parts, samples, changes):
    """The samples of file `f` in sample order, each with the cells it
    lists (`changes`, raw values, in sample order) and whether it opens
    the file (a segment's first sample holds every cell)."""
    times = {s["seq"]: s["wall_ns"] for s in samples}
    out, i = [], 0
    for n, s in enumerate(sorted(samples, key=lambda s: s["seq"])):
        cells = {}
        while i < len(changes) and changes[i][0] <= s["seq"]:
            seq, t, c, v, host, boot = changes[i]
            if t != times.get(seq):
                fail(f"{f}: seq {seq}: row time {t} != footer wall_ns {times.get(seq)}")
            cells[c] = v
            i += 1
        out.append(
            {
                "host": parts.get("host"),
                "boot": parts.get("boot"),
                "seq": s["seq"],
                "wall_ns": s["wall_ns"],
                "mono_ns": s["mono_ns"],
                "file": f,
                "listed": cells,
                "opens": n == 0,
            }
        )
    if i != len(changes):
        fail(f"{f}: {len(changes) - i} rows after the last listed sample")
    return out


def fill(samples):
    """Each sample's `values` (in place; `samples` in (host, boot, seq)
    order, one per sample): the cells it lists over the state of the
    sample before when that one is held, else over nothing (a segment's
    first sample lists every cell; after a missing sample a counter is
    unknown until recorded again, as replay's `missing_samples` gap)."""
    prev = None
    for s in samples:
        follows = (
            prev is not None
            and (prev["host"], prev["boot"]) == (s["host"], s["boot"])
            and prev["seq"] + 1 == s["seq"]
        )
        base = prev["values"] if follows and not s["opens"] else {}
        s["values"] = dict(sorted({**base, **s["listed"]}.items()))
        prev = s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--engine", choices=["duckdb", "pyarrow"], default="duckdb")
    ap.add_argument("--summary", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.dir)
    try:
        importlib.import_module(a.engine)
    except ImportError as e:
        fail(f"{a.engine} is not installed ({e}); run tools/install-python-readers.sh")
    files = drop_superseded(glob.glob(os.path.join(root, "**", "part-*.parquet"), recursive=True), a.engine)
    if not files:
        fail(f"{a.dir}: no Parquet segment (an unfinished recording? run `irqlab recover`)")
    kv, rows, summed = load_duckdb(files) if a.engine == "duckdb" else load_pyarrow(root, files)
    result = states({os.path.normpath(k): v for k, v in kv.items()}, rows, summed)
    if a.summary:
        seen = {}
        for s in result:
            k = (s["host"], s["boot"])
            n, _ = seen.get(k, (0, 0))
            seen[k] = (n + 1, s["run"])
        for (h, b), (n, runs) in sorted(seen.items()):
            print(json.dumps({"host": h, "boot": b, "samples": n, "runs": runs}))
        print(json.dumps({"rows": len(rows), "engine": a.engine}))
        return
    for s in result:
        print(json.dumps(s))


if __name__ == "__main__":
    try:
        main()
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader of stdout closed it (`| head`): stop quietly, as irqlab
        # does, with nothing left to flush into the closed pipe at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
