"""Cells written for people: a figure in ms past six digits says its duration too."""

from __future__ import annotations

import numpy as np
import orjson
import pytest

from viewer.analysis.compare import FIGURES, FigureDiff
from viewer.export import format as format_module
from viewer.export.compare import delta_text, value_text
from viewer.export.format import (
    Rows,
    bools,
    ints,
    json_bytes,
    json_parts,
    materialized,
    ms,
    nums,
    strs,
    strs_or_none,
)


def test_a_long_figure_in_ms_is_followed_by_the_duration_people_read() -> None:
    """issue 28 item 8: the CLI and compare printed "381705445 ms" where people read
    "4 d 10 h"; the number stays (grep, copy), the duration follows it."""
    assert ms(381_705_445.0) == "381705445 ms (4 d 10 h)"
    assert ms(4_300_000.0) == "4300000 ms (1 h 12 min)"
    assert ms(37_750.0) == "37750 ms"  # short figures as before
    assert ms(None) == "-" and ms(float("nan")) == "-"
    cold = next(f for f in FIGURES if f.unit == "ms" and "cold" in f.label)
    row = FigureDiff(cold, 37_750.0, 381_705_445.0)
    assert value_text(row, row.b) == "381705445 (4 d 10 h)"
    assert value_text(row, row.a) == "37750"
    assert delta_text(row) == "+381667695 (+4 d 10 h)"
    assert delta_text(FigureDiff(cold, 381_705_445.0, 0.0)) == "-381705445 (-4 d 10 h)"


def test_the_cold_start_figure_names_its_parts() -> None:
    """issue 28 item 8: "cold start" read as two things, the wait before the first GPU call
    (37 750 ms) and the first transition's gap (4 490 ms, marked "cold start"); the figure
    is their sum (domain.md) and now says so."""
    from pathlib import Path

    from viewer.analysis import summarize
    from viewer.export.report import metric_rows, transition_rows
    from viewer.io import open_log

    sample = Path(__file__).parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"
    sm = summarize(open_log(sample).sessions[0])
    rows = dict(metric_rows(sm))
    assert rows["cold start"] == (
        "37750 ms: 33260 ms to the first GPU call + 4490 ms in 1 transition while filling"
    )
    assert transition_rows(sm)[0][1] == "4490 ms (cold start)"  # as the published table


# ---- tables written a chunk of rows at a time ------------------------------------------


def _doc(n: int) -> dict:
    rng = np.random.default_rng(n)
    times = rng.uniform(0, 1e6, n)
    times[::7] = np.nan  # unknown: null
    return {
        "head": {"nul in a name": "\x00" + "0" + "\x00", "n": n},
        "jobs": Rows(
            job_id=(np.array([f"job-{i}" for i in range(n)], dtype=object), strs),
            kind=(np.array([None if i % 3 else "porep" for i in range(n)], dtype=object),
                  strs_or_none),
            at_ms=(times, nums),
            done=(rng.random(n) > 0.5, bools),
            worker=(rng.integers(0, 9, n), ints),
            constant="x",
        ),
        "gpus": [{"gpu": 0, "gaps": Rows(ms=(times[: n // 2], nums))}, {"gpu": 1, "gaps": Rows()}],
    }  # fmt: skip


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 9, 100])
def test_a_table_written_in_chunks_is_the_same_bytes(n: int, monkeypatch) -> None:
    """``json_parts`` writes each ``Rows`` a chunk at a time (3 rows here, so that every
    boundary is crossed): the bytes are those of the whole document made at once, and a
    string of the marks' shape in the document is no mark."""
    monkeypatch.setattr(format_module, "ROWS_CHUNK", 3)
    doc = _doc(n)
    whole = json_bytes(materialized(doc))
    assert b"".join(json_parts(doc)) == whole
    assert orjson.loads(whole)["head"]["nul in a name"] == "\x000\x00"
    assert len(orjson.loads(whole)["jobs"]) == n


def test_the_columns_of_a_table_are_of_one_length() -> None:
    with pytest.raises(ValueError, match="unequal length"):
        Rows(a=np.zeros(3), b=(np.zeros(4), nums))


def test_a_string_shaped_as_a_table_mark_never_splices_a_table(monkeypatch) -> None:
    """Were a string of the document its table's mark (the token is drawn per document: no
    log can know it), the document is made whole, never spliced into the string."""
    monkeypatch.setattr(format_module, "ROWS_CHUNK", 3)
    monkeypatch.setattr(format_module.secrets, "token_hex", lambda n: "ab" * n)
    doc = {"note": 'x"' + "\x00" + "ab" * 8 + ".0\x00", **_doc(9)}
    whole = json_bytes(materialized(doc))
    assert b"".join(json_parts(doc)) == whole
    assert orjson.loads(whole)["note"].endswith(".0\x00")
