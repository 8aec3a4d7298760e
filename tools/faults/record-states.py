#!/usr/bin/env python3
"""Every counter at every sample of one boot directory, for tools/faults/record.sh.

    tools/faults/record-states.py BOOTDIR [--with-journal] > states.json

Reads the segments with tools/read-recording.py (DuckDB or pyarrow, not
irqlab; it skips superseded segments by irqlab's rule, clock readings
included, and exits 1 on files of two recordings, and so does this),
and with --with-journal also the journal as it was flushed:
readable lines only (JSON whose schema is 1 to 3, cells with a known
source and a value 0 <= v < 2^64, `seq` above the line before), lines
whose sample a segment holds dropped, the first line's missing cells
taken from the state of the segment before it (docs/recording-schema.md,
"Journal lines") unless the line starts a `record` run (`run` in its
shape): a run's first line holds every cell of that run and nothing
carries over from the run before. Prints one JSON object: {"SEQ": {"source|key|cpu":
value}} — what a correct `irqlab recover` must turn the directory into.
"""

import json
import os
import subprocess
import sys

SOURCES = {"interrupts", "softirqs", "stat", "threads", "trace"}
HERE = os.path.dirname(os.path.abspath(__file__))


def segment_states(boot):
    engine = "duckdb"
    try:
        import duckdb  # noqa: F401
    except ImportError:
        engine = "pyarrow"
    has = any(n.startswith("part-") and n.endswith(".parquet") for n in os.listdir(boot))
    if not has:
        return {}
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, "..", "read-recording.py"), boot, "--engine", engine],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.exit(f"record-states: read-recording.py {boot}: {out.stderr.strip()}")
    return {json.loads(l)["seq"]: json.loads(l)["values"] for l in out.stdout.splitlines()}


def cell(c):
    if not isinstance(c, dict) or c.get("source") not in SOURCES:
        return None
    v, cpu, key = c.get("value"), c.get("cpu"), c.get("key")
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 1 << 64 or not isinstance(key, str):
        return None
    if cpu is not None and (not isinstance(cpu, int) or not 0 <= cpu < 1 << 32):
        return None
    return f"{c['source']}|{key}|{'-' if cpu is None else cpu}", v


def journal_lines(path):
    lines, last = [], None
    with open(path, "rb") as f:
        data = f.read()
    for raw in data.split(b"\n")[:-1]:  # the bytes after the last newline are torn
        try:
            l = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(l, dict) or l.get("schema") not in (1, 2, 3):
            continue
        seq = l.get("seq")
        if not isinstance(seq, int) or (last is not None and seq <= last):
            continue
        cells = [cell(c) for c in l.get("cells", [])]
        if any(c is None for c in cells):
            continue
        shape = l.get("shape")
        starts_run = isinstance(shape, dict) and "run" in shape
        lines.append((seq, cells, starts_run))
        last = seq
    return lines


def main():
    boot = sys.argv[1]
    states = segment_states(boot)
    journal = os.path.join(boot, "journal.jsonl")
    if "--with-journal" in sys.argv and os.path.isfile(journal):
        lines = [l for l in journal_lines(journal) if l[0] not in states]
        if lines:
            before = [s for s in states if s < lines[0][0]]
            state = dict(states[max(before)]) if before else {}
            for seq, cells, starts_run in lines:
                if starts_run:
                    state = {}
                for k, v in cells:
                    state[k] = v
                states[seq] = dict(state)
    json.dump({str(k): v for k, v in sorted(states.items())}, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
