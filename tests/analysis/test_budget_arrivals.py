"""A budget-gated daemon's jobs wait for budget, freed when a kernel region ends: the
arrival inference counts those ends, so a backlog is not read as slow arrivals."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from viewer.analysis.floors import arrivals, floors
from viewer.io import open_log
from viewer.model.facts import Facts

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "budget_gated.log"


def test_a_budget_gated_backlog_is_seen_as_one() -> None:
    session = open_log(SAMPLE).sessions[0]
    assert session.facts.budget_gated
    arr = arrivals(session)
    assert int(arr["inferred"].sum()) == 7  # all 8 jobs were submitted at once
    f = floors(session)
    assert f.bound == "synthesis"
    assert f.values()["arrival"] < 1.0


def test_without_the_budget_lines_the_kernel_ends_do_not_count() -> None:
    session = open_log(SAMPLE).sessions[0]
    plain = replace(session, facts=Facts())
    assert int(arrivals(plain)["inferred"].sum()) < 7
    assert floors(plain).bound == "arrival"  # what the log alone would have said
