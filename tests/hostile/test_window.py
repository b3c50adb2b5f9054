"""The real main window, offscreen in a subprocess, on the hostile inputs: each is shown
or refused with a message naming it, annotations belong to the log on screen, a sidecar
that cannot be used is named and kept, nothing is modified, no exception, and the
process ends normally within its limit (30 s plus 15 s per input)."""

from __future__ import annotations

import os

import pytest

from tests.hostile.corpus import INPUTS, Case
from viewer.export.format import display_path

WINDOW_CASES = [
    pytest.param(
        c, id=c.name, marks=[pytest.mark.xfail(reason=c.xfail, strict=False)] if c.xfail else []
    )
    for c in INPUTS
    if c.window
]


@pytest.mark.parametrize("window_case", WINDOW_CASES)
def test_the_window_on_a_hostile_input(window_case: Case, window_runs) -> None:
    run, built = window_runs
    b, before, after = built[window_case.name]
    assert run.hung_at is None, f"the window hung on {run.hung_at}:\n{run.stderr}"
    assert run.returncode == 0, f"the window process ended with {run.returncode}:\n{run.stderr}"
    assert "Traceback" not in run.stderr, run.stderr
    result = run.results[os.fspath(b.path)]
    assert result["errors"] == [], result["errors"]
    assert after == before, "the window modified the input folder"
    outcome, name = result["outcome"], display_path(b.path.name)
    if window_case.expect == "ok":
        assert outcome == "loaded", outcome
    elif window_case.expect == "refused":
        assert outcome.startswith("failed: ") and name in outcome, outcome
        assert name in result["banner"]
        for words in window_case.says:
            assert words.lower() in outcome.lower(), outcome
    else:
        assert outcome == "loaded" or (outcome.startswith("failed: ") and name in outcome)
    if outcome == "loaded":
        assert result["annotations_log"] == os.fspath(b.path.absolute())
    if window_case.sidecar:
        assert "run.log.annotations.json" in result["banner"], result["banner"]
        assert result["annotations"] == 0
