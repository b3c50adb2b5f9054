from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from tests.analysis.builders import pipeline
from viewer.analysis import summarize
from viewer.analysis.cache import _memo
from viewer.analysis.intervals import calls


def test_tables_are_computed_once_per_session_and_freed_with_it() -> None:
    s = pipeline([35_000.0, 72_000.0], parts=3)
    assert calls(s) is calls(s)
    first = summarize(s, (0.0, 80_000.0))
    again = summarize(s, (0.0, 80_000.0))
    assert first.verdict == again.verdict and first.kernel == again.kernel
    assert first.transitions.equals(again.transitions)
    assert s in _memo
    ref = weakref.ref(s)
    del s, first, again
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("name", ["phase8_pw20.log", "two_gpus.log", "monolithic_mixed.log"])
def test_a_big_sessions_figures_on_two_threads_are_those_on_one(monkeypatch, name) -> None:
    """``summarize`` computes a big session's kernel figures on a second thread: the same
    summary as on one thread (whole session and a range)."""
    from viewer.analysis import summary
    from viewer.export.report import summary_dict
    from viewer.io import open_log

    path = Path(__file__).resolve().parents[2] / "sample_logs" / name
    got = {}
    for rows in (1, 10**12):
        monkeypatch.setattr(summary, "TWO_THREADS_ROWS", rows)
        s = open_log(path).sessions[0]
        mid = (s.start_ms + s.end_ms) / 2
        got[rows] = [summary_dict(summary.summarize(s, rng)) for rng in (None, (s.start_ms, mid))]
    assert got[1] == got[10**12]
