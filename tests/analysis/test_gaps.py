from __future__ import annotations

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
