"""Cells written for people: a figure in ms past six digits says its duration too."""

from __future__ import annotations

from viewer.analysis.compare import FIGURES, FigureDiff
from viewer.export.compare import delta_text, value_text
from viewer.export.format import ms


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
