#!/usr/bin/env python3
"""Every counter at every sample of one boot directory, for tools/faults/record.sh.

    tools/faults/record-states.py BOOTDIR [--with-journal] > states.json

Reads the segments with tools/read-recording.py (DuckDB or pyarrow, not
irqlab; it skips superseded segments by irqlab's rule, clock readings
included, and exits 1 on files of two recordings, and so does this),
and with --with-journal also the journal as it was flushed:
readable lines only (JSON whose schema is 1 to 3, `wall_ns` and
`mono_ns` whole numbers 0 <= v < 2^64, cells with a known source and a
value 0 <= v < 2^64, `seq` above the line before). A line whose sample a
segment holds is that segment's, as `irqlab recover` takes it: never
turned into a sample of its own, and compared with the segment's sample
as recover compares it. One at other clock readings (`mono_ns`, or
`wall_ns` to the millisecond) makes the journal another recording's:
recover leaves the directory as it is (exit 1), and this exits 1 naming
the line. One whose cells differ from the segment's state at that
sample is a conflict: recover keeps the journal aside
(journal.jsonl.partial-*) and names the first difference; this prints
the segment's values for that sample and says on stderr how many lines
differ and how the first does (`sample 3: interrupts "LOC" CPU 0 is 5
in the journal, 4 in the segment`), exit status 0. The first unheld
line's missing cells are taken from the state at the sample before it
(docs/recording-schema.md, "Journal lines"),
from whichever segment holds that sample, as recover takes them
(record/layout.rs, recover_journal): also from a segment that holds
later samples too (a hole at the line: recover skipped its unreadable
line before). When no segment holds the sample before the line, a cell
the line does not list may have changed unseen, so that sample holds
only the cells the line lists. Nor when the line starts a `record` run
(`run` in its shape): a run's first line holds every cell of that run
and nothing carries over from the run before.
Prints one JSON object:
{"SEQ": {"source|key|cpu": value}} — what a correct `irqlab recover`
must turn the directory into.
"""

import json
import os
import subprocess
import sys

SOURCES = {"interrupts", "softirqs", "stat", "threads", "trace"}
HERE = os.path.dirname(os.path.abspath(__file__))


def engine():
    """DuckDB when python3 has it, else pyarrow."""
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return "pyarrow"
    return "duckdb"


def segment_states(boot, engine):
    """Every sample the segments hold: ({seq: values}, {seq: (wall_ns, mono_ns)})."""
    has = any(n.startswith("part-") and n.endswith(".parquet") for n in os.listdir(boot))
    if not has:
        return {}, {}
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, "..", "read-recording.py"), boot, "--engine", engine],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.exit(f"record-states: read-recording.py {boot}: {out.stderr.strip()}")
    samples = [json.loads(l) for l in out.stdout.splitlines()]
    return {s["seq"]: s["values"] for s in samples}, {s["seq"]: (s["wall_ns"], s["mono_ns"]) for s in samples}


def u64(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 64


def cell(c):
    if not isinstance(c, dict) or c.get("source") not in SOURCES:
        return None
    v, cpu, key = c.get("value"), c.get("cpu"), c.get("key")
    if not u64(v) or not isinstance(key, str):
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
        if not u64(l.get("wall_ns")) or not u64(l.get("mono_ns")):
            continue
        cells = [cell(c) for c in l.get("cells", [])]
        if any(c is None for c in cells):
            continue
        shape = l.get("shape")
        starts_run = isinstance(shape, dict) and "run" in shape
        lines.append((seq, (l["wall_ns"], l["mono_ns"]), cells, starts_run))
        last = seq
    return lines


WALL_NS_STEP = 1_000_000


def other_recording(journal, held, clocks):
    """Exit 1 when a line of `held` (samples the segments hold) was taken
    at other clock readings than the segment's sample (`mono_ns`, and
    `wall_ns` to the millisecond, as irqlab's SampleTime::same_clock):
    the journal is another recording's, which recover refuses."""
    for seq, (wall, mono), _, _ in held:
        w, m = clocks[seq]
        if mono != m or wall // WALL_NS_STEP != w // WALL_NS_STEP:
            sys.exit(
                f"record-states: {journal}: sample {seq} was taken at wall_ns {wall}, mono_ns {mono},"
                f" but a segment holds it at wall_ns {w}, mono_ns {m}: the journal is another"
                " recording's (recover leaves the directory as it is)"
            )


def difference(line, values):
    """How a journal line's cells differ from the segment's sample of its
    number (irqlab's recover); None when they do not."""
    seq, _, cells, _ = line
    for k, v in cells:
        if values.get(k) != v:
            source, key, cpu = k.split("|", 2)
            got = values.get(k, "not listed")
            return f"sample {seq}: {source} {json.dumps(key)} CPU {cpu} is {v} in the journal, {got} in the segment"
    return None


def report_conflicts(journal, held, states):
    """Say on stderr how the lines of `held` (samples the segments hold)
    differ from the segments, as recover would before keeping the
    journal aside."""
    diffs = [d for d in (difference(l, states[l[0]]) for l in held) if d]
    if diffs:
        print(
            f"record-states: {journal}: {len(diffs)} line(s) differ from the segments that hold"
            f" their samples (recover keeps the journal aside): {diffs[0]}",
            file=sys.stderr,
        )


def add_journal(journal, states, clocks):
    """Add the journal's samples no segment holds to `states`."""
    read = journal_lines(journal)
    in_segments = [l for l in read if l[0] in states]
    other_recording(journal, in_segments, clocks)
    report_conflicts(journal, in_segments, states)
    held = set(states)
    lines = [l for l in read if l[0] not in states]
    if not lines:
        return
    first = lines[0][0]
    # recover's rule: the state at the sample before the journal's first
    # line, when a segment holds it
    state = dict(states.get(first - 1, {}))
    prev = first
    for seq, _, cells, starts_run in lines:
        # a run's start holds every cell; after a line recover skipped, a
        # counter is unknown until a line lists it again (read-recording.py
        # omits it, as replay's `missing_samples` gap)
        if starts_run or seq > prev + 1:
            state = {}
        prev = seq
        for k, v in cells:
            state[k] = v
        states[seq] = dict(state)
    fill_after(states, held)


def fill_after(states, held):
    """A segment's sample after one only the journal has (it fills a hole
    recover left in that segment): read-recording.py reads it over that
    sample's state once recover has written it, so its state is the one
    before updated by what the segment lists there (read-recording.py,
    without the sample before, gave just that)."""
    moved = set()
    for seq in sorted(states):
        if seq in held and seq - 1 in states and (seq - 1 not in held or seq - 1 in moved):
            states[seq] = {**states[seq - 1], **states[seq]}
            moved.add(seq)


def main():
    boot = sys.argv[1]
    eng = engine()
    states, clocks = segment_states(boot, eng)
    journal = os.path.join(boot, "journal.jsonl")
    if "--with-journal" in sys.argv and os.path.isfile(journal):
        add_journal(journal, states, clocks)
    json.dump({str(k): v for k, v in sorted(states.items())}, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
