from __future__ import annotations

import gc
import weakref

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
