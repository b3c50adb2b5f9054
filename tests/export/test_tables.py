from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from tests.analysis.builders import pipeline
from viewer.analysis import idle_gaps, job_table, transitions
from viewer.export.tables import TABLES, table_csv, table_frame, table_markdown
from viewer.model import Timeline


@pytest.fixture
def timeline() -> Timeline:
    a = pipeline([35_000, 200_000, 200_010])  # one starved cross-sector gap
    b = pipeline([35_000, 35_010])
    b.index = 1
    return Timeline(Path("run.log"), [a, b])


def test_tables_come_from_the_analysis(timeline: Timeline) -> None:
    a, b = timeline.sessions
    t = table_frame(timeline, "transitions")
    assert list(t["session"]) == [0] * len(transitions(a)) + [1] * len(transitions(b))
    assert list(t["gap_ms"]) == list(transitions(a)["gap_ms"]) + list(transitions(b)["gap_ms"])
    g = table_frame(timeline, "gaps", session=0)
    assert len(g) == len(idle_gaps(a)) >= 1
    assert {"start_ms", "end_ms", "gap_ms", "before_id", "after_id"} <= set(g.columns)
    j = table_frame(timeline, "jobs", session=1)
    assert list(j["job_id"]) == list(job_table(b)["job_id"])
    assert "completed_ms" in j.columns
    k = table_frame(timeline, "kernel")
    assert len(k) == 50 and (k["kernel_ms"] == 3746).all()
    assert (k["in_range_ms"] == k["kernel_ms"]).all()


def test_range_and_session_selection(timeline: Timeline) -> None:
    k = table_frame(timeline, "kernel", session=0, rng=(40_000, 41_000))
    assert len(k) >= 1 and (k["in_range_ms"] <= 1000).all()
    with pytest.raises(ValueError, match="no session 5"):
        table_frame(timeline, "jobs", session=5)
    with pytest.raises(ValueError, match="unknown table"):
        table_frame(timeline, "bogus")
    assert set(TABLES) == {"transitions", "gaps", "jobs", "kernel"}


def test_csv_and_markdown(timeline: Timeline) -> None:
    t = table_frame(timeline, "transitions")
    back = pd.read_csv(io.StringIO(table_csv(t)))
    assert list(back.columns) == list(t.columns) and len(back) == len(t)
    md = table_markdown(t).splitlines()
    assert md[0].startswith("| session | from_job |") and md[1].startswith("|---|")
    assert len(md) == len(t) + 2
    assert "| no |" in md[2] or "| yes |" in md[2]


def test_empty_table_keeps_its_columns() -> None:
    tl = Timeline(Path("x.log"), [pipeline([35_000])])
    g = table_frame(tl, "gaps")
    assert len(g) == 0 and "gap_ms" in g.columns
    assert table_markdown(g).count("\n") == 2
