from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd
import pytest

from tests.analysis.builders import call, pipeline, session
from viewer.analysis import idle_gaps, job_table, transitions
from viewer.export.format import CSV_FORMULA_START
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
    assert list(t["session"]) == [1] * len(transitions(a)) + [2] * len(transitions(b))
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
    with pytest.raises(ValueError, match="no session 6 .*numbered 1-2"):
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


#: Job ids a log can carry that a spreadsheet would run or a Markdown viewer would render.
HOSTILE_IDS = (
    "=1+2",
    "+SUM(A1:A9)",
    "-2+3",
    "@cmd",
    "\tHYPERLINK",
    "\r=1",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "a|b",
    "**bold** [x](javascript:alert(1)) `code`",
)


def _hostile_timeline() -> Timeline:
    rows = [call(job, 0, 1000.0 * i, 1000.0 * i + 500, i % 2) for i, job in enumerate(HOSTILE_IDS)]
    return Timeline(Path("run.log"), [session(*rows)])


def _formula_like(cell: str) -> bool:
    if not cell.startswith(CSV_FORMULA_START):
        return False
    try:
        float(cell)  # a negative number is a number, not a formula
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("name", TABLES)
def test_csv_never_starts_a_text_cell_like_a_formula(name: str) -> None:
    text = table_csv(table_frame(_hostile_timeline(), name))
    cells = [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]
    assert not [c for c in cells if _formula_like(c)]
    if name == "jobs":
        assert {"'=1+2", "'-2+3", "'@cmd", "'\tHYPERLINK", "'\r=1"} <= set(cells)


@pytest.mark.parametrize("name", TABLES)
def test_markdown_carries_no_html_and_no_markup_from_job_ids(name: str) -> None:
    md = table_markdown(table_frame(_hostile_timeline(), name))
    assert "<" not in md and ">" not in md.replace("->", "")
    assert "**" not in md and "](" not in md.replace("\\](", "")
    assert "`" not in md.replace("\\`", "")
    rows = md.splitlines()
    pipes = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
    assert len(pipes) == 1  # no id splits a cell
    if name == "jobs":
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md and "a\\|b" in md


def test_records_are_rows_of_columns_and_constants() -> None:
    """``format.records``, which the report's JSON and the trace share: columns (lists or
    arrays) give each row its value, anything else is the same in every row; columns of
    different lengths are refused rather than cut to the shortest."""
    import numpy as np

    from viewer.export.format import records

    got = records(a=[1, 2], **{"from": np.array([0.5, 1.5])}, ph="X")
    assert got == [{"a": 1, "from": 0.5, "ph": "X"}, {"a": 2, "from": 1.5, "ph": "X"}]
    assert list(got[0]) == ["a", "from", "ph"]  # keys in the order given
    assert records(ph="X") == [] and records() == []
    with pytest.raises(ValueError, match="unequal length"):
        records(a=[1, 2], b=[1])


@pytest.mark.parametrize("chunk", [1, 2, 3, 1000])
@pytest.mark.parametrize("name", TABLES)
def test_tables_written_a_chunk_of_rows_at_a_time_are_the_same_text(
    name: str, chunk: int, timeline: Timeline, monkeypatch
) -> None:
    """CSV and Markdown tables go out a chunk of rows at a time (``*_parts``): joined, the
    text of the whole table, at every chunk size (1.5 M transitions as cells at once, and
    their text, were over the memory bound)."""
    from viewer.export import format as format_module
    from viewer.export import tables
    from viewer.export.format import markdown_table
    from viewer.export.tables import _cell, _csv_cells

    monkeypatch.setattr(tables, "ROWS_CHUNK", chunk)  # the CSV's chunks
    monkeypatch.setattr(format_module, "ROWS_CHUNK", chunk)  # the Markdown table's
    for frame in (table_frame(timeline, name), table_frame(_hostile_timeline(), name)):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(frame.columns)
        writer.writerows(zip(*(_csv_cells(v) for _, v in frame.items()), strict=True))
        assert "".join(tables.table_csv_parts(frame)) == out.getvalue()
        whole = markdown_table(tuple(frame.columns), [tuple(map(_cell, r)) for r in frame.rows()])
        assert "".join(tables.table_markdown_parts(frame)) == whole + "\n"


def test_a_table_of_one_session_is_that_sessions_own(timeline: Timeline) -> None:
    one = table_frame(timeline, "transitions", session=0)
    assert list(one["session"]) == [1] * len(one)
    assert list(one["gap_ms"]) == list(transitions(timeline.sessions[0])["gap_ms"])


def test_a_table_that_fails_half_written_leaves_the_old_file(tmp_path) -> None:
    from viewer.export.files import write_output

    out = tmp_path / "t.csv"
    out.write_text("old\n")

    def parts():
        yield "a,b\r\n"
        raise ValueError("a row could not be made")

    with pytest.raises(ValueError):
        write_output(out, parts())
    assert out.read_text() == "old\n" and list(tmp_path.iterdir()) == [out]
    write_output(out, iter(["a,b\r\n", b"1,2\r\n"]))
    assert out.read_bytes() == b"a,b\r\n1,2\r\n"
