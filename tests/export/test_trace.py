from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from tests.analysis.builders import call, pipeline, session
from viewer.analysis import idle_gaps, transitions
from viewer.export import files as files_mod
from viewer.export.trace import SCHEMA, trace_events, write_trace
from viewer.model import Timeline

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def check_trace(d: dict) -> dict[str, list[dict]]:
    """Validate the Trace Event Format object; returns the events by phase."""
    d = json.loads(json.dumps(d, allow_nan=False))  # JSON-safe, no NaN
    assert set(d) == {"traceEvents", "displayTimeUnit", "metadata"}
    assert d["displayTimeUnit"] == "ms"
    by_ph: dict[str, list[dict]] = defaultdict(list)
    for e in d["traceEvents"]:
        by_ph[e["ph"]].append(e)
    procs = {e["pid"] for e in by_ph["M"] if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]) for e in by_ph["M"] if e["name"] == "thread_name"}
    for e in d["traceEvents"]:
        if e["ph"] != "M":
            assert isinstance(e["ts"], int) and isinstance(e["pid"], int)
            assert e["pid"] in procs and (e["pid"], e["tid"]) in threads, e
    for e in by_ph["X"]:
        assert {"ph", "ts", "dur", "pid", "tid", "name"} <= set(e)
        assert isinstance(e["dur"], int) and e["dur"] >= 0
    # Slices on one track nest properly (never a partial overlap).
    per_track: dict[int, list[dict]] = defaultdict(list)
    for e in by_ph["X"]:
        per_track[e["tid"]].append(e)
    for slices in per_track.values():
        stack: list[int] = []
        for e in sorted(slices, key=lambda e: (e["ts"], -e["dur"])):
            while stack and stack[-1] <= e["ts"]:
                stack.pop()
            assert not stack or e["ts"] + e["dur"] <= stack[-1], e
            stack.append(e["ts"] + e["dur"])
    for e in by_ph["i"]:
        assert e["s"] in ("t", "p", "g")
    return by_ph


def _x(by_ph: dict, cat: str) -> list[dict]:
    return [e for e in by_ph["X"] if e.get("cat") == cat]


@pytest.fixture
def timeline() -> Timeline:
    return Timeline(Path("run.log"), [pipeline([35_000 + 10 * j for j in range(4)])])


def test_valid_trace_with_named_tracks(timeline: Timeline) -> None:
    d = trace_events(timeline)
    by_ph = check_trace(d)
    names = {e["args"]["name"] for e in by_ph["M"] if e["name"] == "thread_name"}
    assert {"GPU 0 · worker 0", "GPU 0 · worker 1", "GPU 0 · busy"} <= names
    assert "synthesis · row 0" in names
    procs = {e["args"]["name"] for e in by_ph["M"] if e["name"] == "process_name"}
    assert procs == {"GPU 0", "synthesis"}
    assert d["metadata"]["schema"] == SCHEMA
    calls_ = _x(by_ph, "gpu_call")
    assert len(calls_) == 40
    a = calls_[0]["args"]
    assert set(a) >= {"job", "partition", "worker", "gpu_ms", "kernel_ms", "breakdown", "open"}
    assert calls_[0]["name"] == "job0 p0"


def test_kernel_nested_in_its_call_on_the_same_track(timeline: Timeline) -> None:
    by_ph = check_trace(trace_events(timeline))
    calls_ = _x(by_ph, "gpu_call")
    kernels = _x(by_ph, "kernel")
    assert len(kernels) == len(calls_)
    for k in kernels:
        assert k["dur"] == 3_746_000
        assert any(
            c["tid"] == k["tid"]
            and c["ts"] <= k["ts"]
            and k["ts"] + k["dur"] <= c["ts"] + c["dur"]
            and c["args"]["job"] == k["args"]["job"]
            for c in calls_
        )


def test_instants_for_each_transition_and_gap() -> None:
    # Job 1 is queued long after the GPU frees up: a starved, cross-sector gap.
    s = pipeline([35_000, 200_000, 200_010])
    by_ph = check_trace(trace_events(Timeline(Path("x.log"), [s])))
    trans = [e for e in by_ph["i"] if e["cat"] == "transition"]
    expected = transitions(s)
    assert [e["name"] for e in trans] == [
        f"sector {a}->{b}" for a, b in zip(expected["from_job"], expected["to_job"], strict=True)
    ]
    assert [e["args"]["gap_ms"] for e in trans] == pytest.approx(list(expected["gap_ms"]))
    assert all(e["s"] == "p" for e in trans)
    assert {"gap_ms", "overlap_ms", "starved", "cold_start"} <= set(trans[0]["args"])
    gaps = [e for e in by_ph["i"] if e["cat"] == "idle_gap"]
    g = idle_gaps(s)
    assert len(gaps) == len(g) >= 1
    assert gaps[0]["args"]["starved"] and gaps[0]["args"]["cross_sector"]
    assert gaps[0]["name"] == "idle gap (starved)"
    assert gaps[0]["ts"] == round(float(g["start"][0]) * 1000)


def test_open_call_runs_to_session_end_and_is_marked() -> None:
    s = session(
        call("a", 0, 0, 100, 0, kernel_start=10, kernel_ms=50),
        call("a", 1, 50, None, 1, kernel_start=60, kernel_ms=5000),  # crashed
        end_ms=400,
    )
    by_ph = check_trace(trace_events(Timeline(Path("x.log"), [s])))
    open_ = [e for e in _x(by_ph, "gpu_call") if e["args"]["open"]]
    assert len(open_) == 1
    assert open_[0]["ts"] + open_[0]["dur"] == 400_000
    assert open_[0]["name"] == "a p1 (open)"
    # Its kernel (longer than what is left) is clipped inside the call.
    kernels = [e for e in _x(by_ph, "kernel") if e["tid"] == open_[0]["tid"]]
    assert kernels[0]["ts"] + kernels[0]["dur"] == 400_000


def test_overlapping_calls_on_one_worker_get_an_overflow_track() -> None:
    s = session(call("a", 0, 0, None, 0), call("a", 1, 100, 200, 0), end_ms=500)
    by_ph = check_trace(trace_events(Timeline(Path("x.log"), [s])))
    names = {e["args"]["name"] for e in by_ph["M"] if e["name"] == "thread_name"}
    assert "GPU 0 · worker 0 · overlapping 1" in names
    assert len({e["tid"] for e in _x(by_ph, "gpu_call")}) == 2


def test_flows_link_synthesis_to_its_call(timeline: Timeline) -> None:
    by_ph = check_trace(trace_events(timeline))
    starts = {e["id"]: e for e in by_ph["s"]}
    ends = {e["id"]: e for e in by_ph["f"]}
    assert starts.keys() == ends.keys() and len(starts) == 40
    calls_ = {(c["tid"], c["ts"] + 1): c for c in _x(by_ph, "gpu_call")}
    synth = {(c["tid"], c["ts"] + 1): c for c in _x(by_ph, "synthesis")}
    for i, f in ends.items():
        assert f["bp"] == "e"
        call_ = calls_[(f["tid"], f["ts"])]  # just inside the call it points to
        src = synth[(starts[i]["tid"], starts[i]["ts"])]  # just inside its synthesis
        assert src["args"]["job"] == call_["args"]["job"]
        assert src["args"]["partition"] == call_["args"]["partition"]
    phases = {e["ph"] for e in trace_events(timeline, flows=False)["traceEvents"]}
    assert not phases & {"s", "f"}


def test_synthesis_rows_never_overlap_and_queue_follows_synthesis(timeline: Timeline) -> None:
    by_ph = check_trace(trace_events(timeline))
    synth = _x(by_ph, "synthesis")
    queue = _x(by_ph, "queue")
    assert len(synth) == 40
    rows = {e["tid"] for e in synth}
    assert len(rows) == 40  # every partition is synthesized at once, then waits in the queue
    assert all(q["dur"] > 0 for q in queue)


def test_range_clips_everything_inside_it(timeline: Timeline) -> None:
    rng = (40_000.0, 60_000.0)
    d = trace_events(timeline, rng=rng)
    by_ph = check_trace(d)
    assert d["metadata"]["range_ms"] == [40_000.0, 60_000.0]
    for e in by_ph["X"]:
        assert e["ts"] >= 40_000_000 and e["ts"] + e["dur"] <= 60_000_000
    assert any(e["args"].get("clipped") for e in _x(by_ph, "gpu_call"))
    for e in by_ph["i"]:
        assert 40_000_000 <= e["ts"] <= 60_000_000


def test_deterministic_and_sessions(timeline: Timeline) -> None:
    a = json.dumps(trace_events(timeline))
    assert a == json.dumps(trace_events(timeline))
    two = Timeline(Path("x.log"), [pipeline([35_000]), pipeline([35_000])])
    two.sessions[1].index = 1
    by_ph = check_trace(trace_events(two))
    procs = [e["args"]["name"] for e in by_ph["M"] if e["name"] == "process_name"]
    assert procs == ["session 1 · GPU 0", "session 1 · synthesis"] + [
        "session 2 · GPU 0",
        "session 2 · synthesis",
    ]
    only = trace_events(two, session=1)
    assert [(s["session"], s["index"]) for s in only["metadata"]["sessions"]] == [(2, 1)]
    with pytest.raises(ValueError, match="no session 8"):
        trace_events(two, session=7)


def test_gpu_ms_source_has_no_kernel_slices() -> None:
    s = pipeline([35_000], timing=False)
    by_ph = check_trace(trace_events(Timeline(Path("x.log"), [s])))
    assert not _x(by_ph, "kernel")
    assert _x(by_ph, "gpu_call")[0]["args"]["kernel_ms"] is None


def test_write_trace_round_trip_and_failure_leaves_nothing(
    timeline: Timeline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = write_trace(timeline, tmp_path / "t.json")
    assert json.loads(out.read_text())["traceEvents"]
    before = out.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(files_mod.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_trace(timeline, out, flows=False)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


@pytest.mark.parametrize("name", sorted(p.stem for p in SAMPLES.glob("*.log")))
def test_sample_logs_give_valid_traces(name: str) -> None:
    from viewer.io import open_log

    tl = open_log(SAMPLES / f"{name}.log")
    by_ph = check_trace(trace_events(tl))
    n_trans = sum(len(transitions(s)) for s in tl.sessions)
    assert len([e for e in by_ph["i"] if e["cat"] == "transition"]) == n_trans
    n_calls = sum(int(np.isfinite(s.partitions["gpu_start"]).sum()) for s in tl.sessions)
    assert len(_x(by_ph, "gpu_call")) == n_calls


def test_track_ids_never_collide_for_huge_worker_and_gpu_ids() -> None:
    """Worker ids of 2^20 and more, GPU ordinals near 1e9 (issue 13, item 14)."""
    placed = [(0, 2**20), (1, 0), (10**9, 5), (0, 2**31 - 1), (2**31 - 1, 7), (0, 3)]
    rows = [call(f"j{i}", 0, 1e3 * i, 1e3 * i + 500, w, gpu=g) for i, (g, w) in enumerate(placed)]
    workers = {w: g for g, w in placed}
    by_ph = check_trace(trace_events(Timeline(Path("x.log"), [session(*rows, workers=workers)])))
    names = {e["tid"]: e["args"]["name"] for e in by_ph["M"] if e["name"] == "thread_name"}
    assert len(set(names.values())) == len(names)
    for e in _x(by_ph, "gpu_call"):
        assert names[e["tid"]] == f"GPU {e['args']['gpu']} · worker {e['args']['worker']}"
    assert len({e["tid"] for e in _x(by_ph, "gpu_call")}) == len(placed)
    busy = {names[e["tid"]] for e in _x(by_ph, "busy")}
    assert busy == {f"GPU {g} · busy" for g, _ in placed}


def test_a_source_name_that_is_not_utf8(timeline: Timeline, tmp_path: Path) -> None:
    bad = Timeline(Path(os.fsdecode(b"bad\xff.log")), timeline.sessions)
    assert trace_events(bad)["metadata"]["source"] == "bad\\xff.log"
    out = write_trace(bad, tmp_path / os.fsdecode(b"out\xff.json"))
    assert json.loads(out.read_bytes())["metadata"]["source"] == "bad\\xff.log"


@pytest.mark.parametrize("rows", [1, 7, 1 << 14])
def test_write_trace_streams_the_same_bytes_a_chunk_at_a_time(
    rows: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """write_trace writes the events a chunk at a time as they are made (issue 27 item 9:
    1.5 M jobs held 11 GB of event dicts): the bytes of trace_events, whatever the chunk,
    with and without a range, one session or several."""
    from viewer.export import trace as trace_mod
    from viewer.export.format import json_bytes

    monkeypatch.setattr(trace_mod, "CHUNK_ROWS", rows)
    two = Timeline(Path("run.log"), [pipeline([35_000.0, 36_000.0]), pipeline([35_000.0] * 3)])
    for tl in (two, Timeline(two.source, two.sessions[:1])):
        for rng in (None, (36_000.0, 80_000.0)):
            want = json_bytes(trace_events(tl, rng=rng), newline=False)
            assert write_trace(tl, tmp_path / "t.json", rng=rng).read_bytes() == want


def test_a_session_traced_keeps_no_table_and_a_windows_keep_theirs() -> None:
    """Each session's tables go once its events are written (30 000 daemon restarts kept
    ~20 KB of them each: 666 MB above the interpreter on a 35 MB log); a session whose
    tables a window had made keeps those, and no other."""
    from viewer.analysis.cache import made
    from viewer.analysis.intervals import calls
    from viewer.analysis.stages import stages

    many = Timeline(Path("x.log"), [pipeline([35_000]) for _ in range(3)])
    for i, s in enumerate(many.sessions):
        s.index = i
    window = many.sessions[1]
    stages(window)  # the window's own, made before
    before = json.dumps(trace_events(many))
    assert made(many.sessions[0]) == made(many.sessions[2]) == set()
    assert made(window) == {stages.__wrapped__}
    assert calls.__wrapped__ not in made(window)
    assert json.dumps(trace_events(many)) == before  # made again, the same trace
