"""Shapes of log that blew up (issue 27): many daemon restarts (item 10) and 10^5
partitions synthesizing at once (item 11), at a size that runs in seconds.  What each
output holds is checked here; time and memory at the issue's size are benchmark rows
(tests/benchmarks/test_shapes_bench.py)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np

from tests.hostile.files import run_cli
from tests.hostile.shapes import deep_synthesis, many_restarts
from viewer.analysis.stages import synthesis_rows
from viewer.io import open_log
from viewer.lanes import lod
from viewer.lanes.data import build_lanes

RUNS = 1500
PARTITIONS = 20_000


def test_a_trace_of_many_restarts_has_each_session_apart(tmp_path) -> None:
    """One GPU process and one synthesis process per daemon run, every slice in its own
    session's processes, each run's two calls and two syntheses."""
    log = many_restarts(tmp_path / "run.log", RUNS)
    out = tmp_path / "t.json"
    done = run_cli(["export", log, "--out", out], timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    trace = json.loads(out.read_bytes())
    sessions = trace["metadata"]["sessions"]
    assert [s["session"] for s in sessions] == list(range(1, RUNS + 1))
    names = {
        e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"
    }
    assert len(names) == 2 * RUNS
    for s in sessions:
        assert {names[pid] for pid in s["pids"].values()} == {
            f"session {s['session']} · GPU 0",
            f"session {s['session']} · synthesis",
        }
    session_of = {pid: s["session"] for s in sessions for pid in s["pids"].values()}
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    per = Counter((session_of[e["pid"]], e["cat"]) for e in slices)
    for cat in ("gpu_call", "synthesis", "queue"):
        assert [per[(r, cat)] for r in range(1, RUNS + 1)] == [2] * RUNS, cat
    jobs = {(session_of[e["pid"]], e["args"]["job"]) for e in slices if e["cat"] == "gpu_call"}
    assert jobs == {(r + 1, f"{r:08x}-8e5f-4d2b-9a1c-3f2e1d0c9b8a") for r in range(RUNS)}


def test_restarts_told_by_offsets_alone_are_found(tmp_path) -> None:
    """The same runs without their daemon start lines: each run's offsets start again
    from 10 ms, 5 s below where the run before ended, so each is a session."""
    timeline = open_log(many_restarts(tmp_path / "run.log", RUNS, second_ms=5000, starts=False))
    assert len(timeline.sessions) == RUNS
    assert all(len(s.partitions) == 2 for s in timeline.sessions)


def test_every_synthesis_gets_a_row_and_no_row_overlaps(tmp_path, monkeypatch) -> None:
    """20 000 syntheses at once: 20 000 rows, one each, none overlapping; the lanes hold
    each one in its row, stacked with a fixed number of numpy passes (not one per row)."""
    timeline = open_log(deep_synthesis(tmp_path / "run.log", PARTITIONS))
    (session,) = timeline.sessions
    sr = synthesis_rows(session)
    assert len(sr.rows) == PARTITIONS and sr.depth == PARTITIONS
    assert sorted(sr.row_of.tolist()) == list(range(PARTITIONS))  # all overlap at 100 ms
    made: Counter[str] = Counter()
    for owner, name in ((lod.Intervals, "make"), (lod.Stack, "of_lanes")):
        bound = getattr(owner, name)

        def counted(cls, *a, _bound=bound, _name=name, **k):
            made[_name] += 1
            return _bound(*a, **k)

        monkeypatch.setattr(owner, name, classmethod(counted))
    lanes = build_lanes(session)
    assert made["of_lanes"] == 3 and made["make"] < 20  # synth, open, queue; the GPU lanes
    (group,) = [g for g in lanes.groups if g.name == "synthesis"]
    assert len(group.lanes) == PARTITIONS
    synth = group.stacks()["synth"].data.level(0)
    assert (np.diff(synth.bounds) == 1).all()  # one synthesis in each row
    for r in (0, 1, PARTITIONS // 2, PARTITIONS - 1):
        iv = group.lanes[r].layers["synth"]
        assert iv.row.tolist() == sr.rows[sr.row_of == r].tolist()
    # The packing never puts two in one row that overlap (a smaller, deeper mix of rows).
    start, end = sr.start, sr.end
    order = np.lexsort((start, sr.row_of))
    same = sr.row_of[order][1:] == sr.row_of[order][:-1]
    assert (start[order][1:][same] >= end[order][:-1][same]).all()


def test_the_image_of_many_rows_is_written(tmp_path) -> None:
    """The PNG export of 20 000 rows at once: the first rows, cut at the pixel budget,
    with a note saying so."""
    log = deep_synthesis(tmp_path / "run.log", PARTITIONS)
    out = tmp_path / "v.png"
    done = run_cli(["export", log, "--out", out, "--width", "600"], timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "cut" in done.stderr.decode()
