"""Times written for people: durations, positions, axis ticks, wall-clock times."""

from __future__ import annotations

import pytest

from viewer.analysis.units import (
    clock_steps,
    clock_tick,
    duration,
    position,
    seconds,
    span,
    wall_stamp,
    wall_time,
)

T0 = 1771462800000.0  # 2026-02-19 01:00:00 UTC


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (850, "850 ms"),
        (3746, "3\u2009746 ms"),
        (-4490, "-4\u2009490 ms"),
        (37_480, "37.5 s"),
        (245_000, "4 min 5 s"),
        (240_000, "4 min"),
        (3_599_400, "59 min 59 s"),
        (3_600_000, "1 h"),
        (4_320_000, "1 h 12 min"),
        (2 * 86_400_000 + 3 * 3_600_000, "2 d 3 h"),
        (float("nan"), "—"),
        (None, "—"),
    ],
)
def test_duration_uses_the_unit_its_size_asks(ms, text) -> None:
    assert duration(ms) == text


def test_positions_and_spans_on_the_session_clock() -> None:
    assert position(75_742) == "75.742 s"
    assert position(725_742) == "12:05.742"
    assert position(4_325_742) == "1:12:05.742"
    assert position(90_000_000, decimals=0) == "1 d 01:00:00"
    assert span(64_000, 84_000) == "64.000 s → 84.000 s (20.0 s)"
    assert seconds(37.44, unit="s/proof") == "37.4 s/proof"
    assert seconds(600, unit="s/proof") == "10 min/proof"


def test_clock_steps_are_round_on_a_clock() -> None:
    assert clock_steps(4 * 3_600_000, 8) == (1_800_000, 900_000)  # 30 min, 15 min
    assert clock_steps(10 * 60_000, 8) == (120_000, 60_000)
    assert clock_steps(90 * 86_400_000, 4) == (3_456_000_000, 1_728_000_000)  # 40 d, 20 d
    assert clock_tick(600_000, 600_000) == "10 min"
    assert clock_tick(4_200_000, 600_000) == "1 h 10 min"
    assert clock_tick(270_000, 30_000) == "4 min 30 s"
    assert clock_tick(7_200_000, 3_600_000) == "2 h"
    assert clock_tick(0, 600_000) == "0"


def test_wall_clock_in_utc() -> None:
    assert wall_time(T0 + 72 * 60_000) == "02:12:00"
    assert wall_time(T0 + 250, 250) == "01:00:00.25"
    assert wall_time(T0 + 999.6, 1000) == "01:00:01"  # rounds with the second
    assert wall_stamp(T0 + 999.6) == "2026-02-19 01:00:01.000 UTC"


def test_fixed_and_percent_are_the_one_way_figures_are_written() -> None:
    from viewer.analysis.units import UNKNOWN, fixed, percent
    from viewer.export.format import ms, pct, sec

    assert fixed(37.45) == "37.5 s" and fixed(3746.2, 0, "ms") == "3746 ms"
    assert fixed(43.71, 1, "s/proof") == "43.7 s/proof" and fixed(2.5, 2, "") == "2.50"
    assert percent(0.995) == "99.5 %" and percent(0.026, 0) == "3 %"
    assert percent(-0.143, signed=True) == "-14.3 %" and percent(0.026, signed=True) == "+2.6 %"
    for unknown in (None, float("nan"), float("inf")):
        assert fixed(unknown) == percent(unknown) == UNKNOWN == "\u2014"
        # the report's plain-text cells are the same functions with "-" for unknown
        assert ms(unknown) == sec(unknown) == pct(unknown) == "-"
    assert (ms(3746.2), sec(37.45, "s/proof"), pct(0.995)) == ("3746 ms", "37.5 s/proof", "99.5 %")


@pytest.mark.parametrize(
    ("s", "text"),
    [
        (0.09, "0.090 s/proof"),  # a PoSt daemon's pace: one decimal wrote "0.1"
        (0.1, "0.10 s/proof"),
        (0.0123, "0.012 s/proof"),
        (0.95, "0.95 s/proof"),
        (1.5, "1.5 s/proof"),
        (37.45, "37.5 s/proof"),
        (0.0, "0.0 s/proof"),
        (0.00018, "0.000 s/proof"),  # no finer than the log's milliseconds
    ],
)
def test_seconds_below_one_keep_two_significant_digits(s: float, text: str) -> None:
    from viewer.export.format import sec

    assert seconds(s, unit="s/proof") == sec(s, "s/proof") == text


def test_a_post_daemons_verdict_tells_its_floor_from_its_pace(tmp_path) -> None:  # noqa: ANN001
    """Jobs every 100 ms, kernels of 90: the report read "0.1 s/proof" for both, beside a
    ratio of 0.90."""
    from tests.hostile.dense import dense_jobs
    from viewer.analysis import summarize
    from viewer.io import open_log

    log = dense_jobs(tmp_path / "post.log", 2000)
    s = summarize(open_log(log).sessions[0])
    text = s.verdict.sentence
    assert "0.10 s/proof" in text and "0.1 s/proof" not in text


def test_a_post_daemons_job_counts_are_grouped(tmp_path) -> None:  # noqa: ANN001
    """150 000 jobs read "150000 jobs" in the verdict beside "150 000" partitions."""
    from tests.hostile.dense import dense_jobs
    from viewer.analysis import summarize
    from viewer.io import open_log

    s = summarize(open_log(dense_jobs(tmp_path / "post.log", 2000)).sessions[0])
    assert "(2\u2009000 jobs, the arrival floor)" in s.verdict.sentence
