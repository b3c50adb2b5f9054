"""stages.synthesis_rows: the synthesis lanes and the trace draw the same rows and waits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.analysis.builders import call, session
from viewer.analysis.stages import synthesis_rows
from viewer.export.trace import trace_events
from viewer.io import open_log
from viewer.lanes.data import build_lanes
from viewer.model import Timeline

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.mark.parametrize("name", ["phase8_pw20.log", "two_gpus.log", "damaged.log"])
def test_lanes_and_trace_show_the_same_synthesis_rows(name: str) -> None:
    timeline = open_log(SAMPLES / name)
    for s in timeline.sessions:
        sr = synthesis_rows(s)
        lanes = [lane for lane in build_lanes(s).lanes() if lane.kind == "synth"]
        assert len(lanes) == sr.depth
        lane_waits = sum(len(lane.layers["queue"]) for lane in lanes)
        one = Timeline(timeline.source, [s])
        events = trace_events(one, flows=False)["traceEvents"]
        rows = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
        assert sum("synthesis · row" in r for r in rows) == sr.depth
        waits = [e for e in events if e.get("ph") == "X" and e.get("name") == "queued"]
        assert len(waits) == lane_waits == int(sr.has_wait.sum())


def test_a_wait_never_starts_before_its_synthesis_ends_and_open_ones_run_to_the_end() -> None:
    s = session(
        # queued before SYNTH_END (clocks out of order): the wait starts at SYNTH_END
        call("a", 0, 1000, 2000, 0, synth_start=0.0, synth_end=900.0, queued=800.0),
        # still synthesizing at the end of the log
        dict(job_id="b", partition=0, synth_start=1500.0, worker=-1, gpu=-1),
        end_ms=5000.0,
    )
    sr = synthesis_rows(s)
    a, b = (int(np.flatnonzero(sr.rows == i)[0]) for i in (0, 1))
    assert sr.wait_from[a] == 900 and sr.wait_to[a] == 1000 and sr.has_wait[a]
    assert sr.open[b] and sr.end[b] == 5000 and not sr.has_wait[b]
    assert not sr.start.flags.writeable
