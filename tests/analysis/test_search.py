"""Search partitions by job id prefix, partition, worker, GPU, event or open calls."""

from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.builders import call, session
from viewer.analysis.search import Query, SearchError, find, parse_query


@pytest.fixture
def s():
    return session(
        call("73b04127-aaaa", 0, 1000, 5000, 0, synth_start=0, synth_end=900, pickup=990),
        call("73b04127-aaaa", 1, 1200, 5200, 1, synth_start=0, synth_end=1100),
        call("4a685667-bbbb", 0, 6000, 9000, 0, synth_start=3000, synth_end=5900, pickup=5990),
        call("4A685667-cccc", 3, 6100, None, 2, synth_start=3000, synth_end=6000),
        call("4a685667-bbbb", 1, np.nan, None, -1, synth_start=7000),
    )


def ids(s, matches) -> list[tuple[str, int]]:
    p = s.partitions.take(matches.rows)
    return list(zip(s.job_ids()[matches.rows].tolist(), p["partition"].tolist(), strict=True))


def test_parse() -> None:
    q = parse_query("73B0  p:0,1 w:1 gpu=0 gpu_pickup open")
    assert q == Query(
        jobs=("73b0",), partitions=(0, 1), workers=(1,), gpus=(0,), event="GPU_PICKUP", open=True
    )
    assert parse_query("   ").empty
    for bad, says in (
        ("x:1", "unknown key 'x'"),
        ("p:a", "expects numbers"),
        ("e:warp", "unknown event"),
        ("w:", "needs a value"),
    ):
        with pytest.raises(SearchError, match=says):
            parse_query(bad)


def test_job_prefix_any_case_in_time_order(s) -> None:
    m = find(s, "4a68")
    assert ids(s, m) == [("4a685667-bbbb", 0), ("4A685667-cccc", 3), ("4a685667-bbbb", 1)]
    assert m.times.tolist() == [6000, 6100, 7000]  # GPU_START, else SYNTH_START


def test_fields_and_together(s) -> None:
    assert ids(s, find(s, "4a68 p:0,3 w:2")) == [("4A685667-cccc", 3)]
    assert ids(s, find(s, "worker:0")) == [("73b04127-aaaa", 0), ("4a685667-bbbb", 0)]
    assert len(find(s, "gpu:1")) == 1  # worker 2 on GPU 1
    assert len(find(s, "")) == 0


def test_events_go_to_their_time(s) -> None:
    m = find(s, "GPU_PICKUP")
    assert ids(s, m) == [("73b04127-aaaa", 0), ("4a685667-bbbb", 0)]
    assert m.times.tolist() == [990, 5990] and m.event == "GPU_PICKUP"
    assert len(find(s, "event:gpu_end")) == 3  # the open call has none


def test_open_calls(s) -> None:
    assert ids(s, find(s, "open")) == [("4A685667-cccc", 3), ("4a685667-bbbb", 1)]


def test_a_pasted_page_is_refused_at_once() -> None:
    """issue 27 item 13: 100 000 pasted characters stalled the window 19.5 s."""
    from viewer.analysis.search import MAX_QUERY_CHARS, MAX_TERMS, SearchError, parse_query

    with pytest.raises(SearchError, match="at most"):
        parse_query("abc " * 25_000)
    with pytest.raises(SearchError, match=f"at most {MAX_TERMS}"):
        parse_query(" ".join(["j"] * (MAX_TERMS + 1)))
    assert parse_query("x" * MAX_QUERY_CHARS).jobs == ("x" * MAX_QUERY_CHARS,)
