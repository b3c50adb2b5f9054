from __future__ import annotations

import pytest

from tests.analysis.builders import call, session
from viewer.analysis import cold_start_regions, summarize, transitions
from viewer.analysis.transitions import cold_start_ms


def warm_pipeline():
    """Two workers, three 2-partition jobs; job b starts while a's last call still runs.

    a->b is starved (b was queued after worker 0 became free at 100) and b began synthesis
    (at 50) before the session's first GPU_END (100): a cold start; b->c is not starved
    (c was queued long before worker 1 became free).
    """
    return session(
        call("a", 0, 0, 100, 0, queued=0, synth_start=-900),
        call("a", 1, 60, 200, 1, queued=0, synth_start=-900),
        call("b", 0, 150, 260, 0, queued=140, synth_start=50),
        call("b", 1, 210, 330, 1, queued=140, synth_start=50),
        call("c", 0, 280, 380, 0, queued=150, synth_start=60),
        call("c", 1, 335, 420, 1, queued=150, synth_start=60),
        start_ms=-1000,
        end_ms=500,
    )


def test_gap_from_latest_end_at_or_before_and_overlap() -> None:
    t = transitions(warm_pipeline())
    assert t["from_id"].tolist() == ["a", "b"] and t["to_id"].tolist() == ["b", "c"]
    assert t["time"].tolist() == [150, 280]
    # a->b: a's 2nd-to-last end (100) precedes b's start; a's last end (200) overlaps.
    assert t["gap_ms"].tolist() == [50, 20]
    assert t["overlap_ms"].tolist() == [50, 50]
    assert t["worker"].tolist() == [0, 0]
    assert t["starved"].tolist() == [True, False]
    assert t["cold_start"].tolist() == [True, False]


def test_gap_zero_when_nothing_of_previous_job_ended() -> None:
    s = session(call("a", 0, 0, 100, 0), call("b", 0, 10, 50, 1))
    t = transitions(s)
    assert t["gap_ms"].tolist() == [0]
    assert t["overlap_ms"].tolist() == [90]


def test_all_starved_is_no_cold_start() -> None:
    s = session(
        call("a", 0, 0, 100, 0, queued=0),
        call("b", 0, 200, 300, 0, queued=150),
        call("c", 0, 400, 500, 0, queued=350),
    )
    t = transitions(s)
    assert t["starved"].tolist() == [True, True]
    assert t["cold_start"].tolist() == [False, False]
    regions = cold_start_regions(s)
    assert regions["label"].tolist() == ["cold start"]


def test_starved_after_the_first_gpu_end_is_real_starvation_not_cold_start() -> None:
    """domain.md: a starved transition is a cold start only when its next job began
    synthesis before the session's first GPU_END; a synthesis-bound run whose later
    transitions happen to be fed in time has no cold transitions (the old rule called
    every leading starved transition cold)."""
    s = session(
        call("a", 0, 0, 100, 0, queued=0, synth_start=-900),
        call("b", 0, 200, 300, 0, queued=150, synth_start=120),
        call("c", 0, 400, 500, 0, queued=350, synth_start=150),
        call("d", 0, 510, 600, 0, queued=380, synth_start=160),
    )
    t = transitions(s)
    assert t["starved"].tolist() == [True, True, False]
    assert t["cold_start"].tolist() == [False, False, False]
    early = session(
        call("a", 0, 0, 100, 0, queued=0, synth_start=-900),
        call("b", 0, 200, 300, 0, queued=150, synth_start=99),
        call("c", 0, 400, 500, 0, queued=350, synth_start=101),
    )
    assert transitions(early)["cold_start"].tolist() == [True, False]


def test_range_keeps_transitions_whose_next_job_starts_inside() -> None:
    s = warm_pipeline()
    assert transitions(s, (200, 500))["to_id"].tolist() == ["c"]
    assert transitions(s, (0, 150))["to_id"].tolist() == ["b"]
    # cold_start is decided on the whole session, not on the range.
    assert transitions(s, (0, 150))["cold_start"].tolist() == [True]


def test_starved_falls_back_to_synth_end() -> None:
    s = session(call("a", 0, 0, 100, 0), call("b", 0, 200, 300, 0, synth_end=150))
    assert transitions(s)["starved"].tolist() == [True]


def test_cold_start_regions_per_gpu_and_cold_transition() -> None:
    r = cold_start_regions(warm_pipeline())
    assert r[["gpu", "start", "end"]].to_numpy().tolist() == [[0, -1000, 0], [0, 100, 150]]
    assert r["label"].tolist()[0] == "cold start"
    assert "0->1" in r["label"].tolist()[1]


def test_cold_start_regions_two_gpus() -> None:
    s = session(call("a", 0, 50, 100, 0), call("a", 1, 80, 200, 2), start_ms=0)
    r = cold_start_regions(s)
    assert r[["gpu", "start", "end"]].to_numpy().tolist() == [[0, 0, 50], [1, 0, 80]]


def test_single_job_or_empty() -> None:
    assert len(transitions(session(call("a", 0, 0, 1, 0)))) == 0
    assert len(transitions(session())) == 0
    assert len(cold_start_regions(session())) == 0


def test_the_session_cold_start_counts_its_head_once_on_two_gpus() -> None:
    """domain.md: from the session's first event to the first GPU_START, plus the cold
    transitions.  Each GPU's region runs from the session's start to its own first call;
    their sum (150 + 170 here) is GPU time, not the session's wait.  a -> b: b's first
    start (500) minus a's latest end before it (420), starved, b synthesized early."""
    s = session(
        call("a", 0, 150, 400, 0, queued=140, synth_start=-900),  # GPU 0 (workers 0, 1)
        call("a", 1, 170, 420, 2, queued=160, synth_start=-900),  # GPU 1 (workers 2, 3)
        call("b", 0, 500, 700, 0, queued=450, synth_start=100),  # starved, began early
        start_ms=0,
        end_ms=800,
    )
    regions = cold_start_regions(s)
    assert (regions["end"] - regions["start"]).sum() == 150 + 170 + 80
    t = transitions(s)
    assert t["cold_start"].tolist() == [True] and t["gap_ms"].tolist() == [80]
    assert cold_start_ms(s) == 150 + 80
    assert cold_start_ms(s, (100, 450)) == 50 + 30  # each part clipped to the range
    assert cold_start_ms(s, (600, 800)) == 0
    assert summarize(s).cold_start_ms == 230


def test_no_gpu_call_no_cold_start() -> None:
    assert cold_start_ms(session(call("a", 0, None, None, 0, synth_start=10))) == 0


def test_transitions_where_no_call_ended() -> None:
    """A crash or a damaged log: GPU calls of two jobs started, none ended.  The transition
    has no gap to measure (0: nothing of the first job ended) and the report goes on (it
    raised IndexError on such a session of a damaged log)."""
    s = session(call("a", 0, 100, None, 0), call("b", 0, 200, None, 1), start_ms=0, end_ms=900)
    t = transitions(s)
    assert t["from_id"].tolist() == ["a"] and t["gap_ms"].tolist() == [0]
    assert summarize(s).cold_start_ms == 100


def test_a_gap_spent_on_other_sectors_is_not_called_idle() -> None:
    """issue 28 item 4: on a run whose sectors interleave (transitions 0->1, 1->2 with
    sector 0 still running in between), "gap 36548 ms" stood over a worker busy the whole
    time. The worker's own idle is a column, and such a transition is interleaved."""
    from viewer.analysis.transitions import interleaved
    from viewer.export.report import transition_rows

    s = session(
        call("A", 0, 0.0, 10_000.0, 0),
        call("B", 0, 10_005.0, 20_000.0, 0),
        call("A", 1, 20_010.0, 30_000.0, 0),  # sector 0 again: the worker stays busy
        call("C", 0, 30_020.0, 40_000.0, 0),
        call("C", 1, 40_000.0, 41_000.0, 1),
    )
    t = transitions(s)
    assert t["to_id"].tolist() == ["B", "C"]
    assert t["gap_ms"].tolist() == pytest.approx([5.0, 10_020.0])  # the domain's figure
    assert t["worker_idle_ms"].tolist() == pytest.approx([5.0, 20.0])
    assert interleaved(t).tolist() == [False, True]
    rows = transition_rows(summarize(s))
    assert rows[1][1] == "10020 ms (interleaved: worker idle 20 ms)"
    assert rows[0][1] == "5 ms"
