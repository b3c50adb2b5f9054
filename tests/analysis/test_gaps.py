from __future__ import annotations

import numpy as np

from tests.analysis.builders import call, session
from viewer.analysis import idle_gaps


def test_gaps_between_first_start_and_last_end() -> None:
    s = session(
        call("a", 0, 0, 100, 0, queued=0),
        call("a", 1, 120, 200, 1, queued=50),  # queued before the GPU was free: dispatch
        call("b", 0, 260, 300, 0, queued=240),  # queued after: starved
        start_ms=-500,
        end_ms=900,
    )
    g = idle_gaps(s)
    assert g["start"].tolist() == [100, 200]
    assert g["end"].tolist() == [120, 260]
    assert g["ms"].tolist() == [20, 60]
    assert g["cross_sector"].tolist() == [False, True]
    assert g["starved"].tolist() == [False, True]
    assert g["before_job"].tolist() == [0, 0]
    assert g["after_job"].tolist() == [0, 1]


def test_gap_side_is_the_call_that_ends_last() -> None:
    # Two workers: job a's long call closes the block, job b's call opens the next.
    s = session(
        call("a", 0, 0, 500, 0),
        call("b", 0, 100, 200, 1),
        call("b", 1, 600, 700, 1),
    )
    g = idle_gaps(s)
    assert g[["start", "end"]].to_numpy().tolist() == [[500, 600]]
    assert g["before_job"].tolist() == [0] and g["after_job"].tolist() == [1]
    assert bool(g["cross_sector"][0])


def test_gaps_clipped_to_range_and_per_gpu() -> None:
    s = session(
        call("a", 0, 0, 100, 0),
        call("a", 1, 300, 400, 0),
        call("a", 2, 0, 350, 2),
        call("a", 3, 360, 400, 2),
    )
    g = idle_gaps(s, (150, 1000))
    assert g[["gpu", "start", "end", "ms"]].to_numpy().tolist() == [
        [0, 150, 300, 150],
        [1, 350, 360, 10],
    ]
    assert len(idle_gaps(s, (120, 130))) == 1
    assert len(idle_gaps(s, (0, 90))) == 0


def test_no_synthesis_times_means_not_starved() -> None:
    s = session(call("a", 0, 0, 100, 0), call("b", 0, 200, 300, 0))
    assert idle_gaps(s)["starved"].tolist() == [False]


def test_empty_session() -> None:
    assert len(idle_gaps(session())) == 0


def test_the_whole_sessions_gaps_are_one_table_the_lanes_and_summary_share() -> None:
    """The window's lanes and its summary read one gaps table (on 1.5 M one-call jobs each
    had kept its own: 57 MB twice); a range still gets its own clipped copy."""
    from viewer.analysis import summarize
    from viewer.lanes.data import build_lanes

    s = session(
        call("a", 0, 0, 100, 0, queued=0),
        call("a", 1, 120, 200, 1, queued=50),
        call("b", 0, 260, 300, 0, queued=240),
    )
    whole = idle_gaps(s)
    assert build_lanes(s).gaps is whole and summarize(s).gaps is whole
    part = idle_gaps(s, (150, 250))
    assert part["start"].tolist() == [200] and part["end"].tolist() == [250]
    assert part["ms"].tolist() == [50] and whole["ms"].tolist() == [20, 60]


def test_blocks_that_touch_leave_no_gap() -> None:
    s = session(call("a", 0, 0, 100, 0), call("b", 0, 100, 200, 1), call("c", 0, 250, 300, 0))
    assert idle_gaps(s)[["start", "end"]].to_numpy().tolist() == [[200, 250]]


def test_gaps_and_transitions_of_calls_one_after_another_are_views_and_the_same() -> None:
    """A call a job, each after the last with a hole between: the gaps' ends and the
    transitions' times are views of the busy blocks' and the calls' columns (12 MB each at
    1.5 M one-call jobs), with the values copies gave."""
    from tests.analysis.builders import call, session
    from viewer.analysis.gaps import idle_gaps
    from viewer.analysis.intervals import busy_blocks, calls
    from viewer.analysis.transitions import transitions

    rows = [call(f"j{i}", 0, 100.0 * i, 100.0 * i + 60 + (i % 3), worker=i % 2, gpu=0)
            for i in range(50)]  # fmt: skip
    s = session(*rows, end_ms=6000.0)
    gaps, blocks = idle_gaps(s), busy_blocks(s)
    assert np.shares_memory(gaps["start"], blocks["end"])
    assert gaps["start"].tolist() == blocks["end"][:-1].tolist()
    assert gaps["end"].tolist() == blocks["start"][1:].tolist()
    trans = transitions(s)
    assert np.shares_memory(trans["time"], calls(s)["start"])
    assert trans["time"].tolist() == calls(s)["start"][1:].tolist()
    assert trans["from_job"].dtype == np.int32 and trans["to_job"].tolist() == list(range(1, 50))
    overlap = trans["overlap_ms"]  # sectors one after another: no overlap, 0 held once
    assert overlap.strides == (0,) and overlap.tolist() == [0.0] * 49
