"""The wall time of each daemon run's start, from its ``cuzk-daemon starting`` line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from viewer.analysis.units import wall_stamp
from viewer.analysis.wallclock import daemon_starts, parse_wall_ms, session_wall_starts
from viewer.io import open_log

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
ESC = "\x1b"
START = (
    f"{ESC}[2m{{when}}{ESC}[0m {ESC}[32m INFO{ESC}[0m cuzk_daemon: cuzk-daemon starting "
    "version=0.8.0\n"
)
EVENTS = (
    "TIMELINE,40,SYNTH_START,job-{n},partition=0\n"
    "TIMELINE,900,SYNTH_END,job-{n},partition=0,synth_ms=860\n"
    "TIMELINE,901,GPU_QUEUE,job-{n},partition=0\n"
    "TIMELINE,905,GPU_START,job-{n},worker=0,partition=0\n"
    "TIMELINE,4000,GPU_END,job-{n},worker=0,partition=0,gpu_ms=3095\n"
)


def test_the_sample_starts_at_its_daemon_line() -> None:
    (wall,) = session_wall_starts(SAMPLES / "phase8_pw10_5sectors.log", 1)
    assert wall_stamp(wall) == "2026-02-19 01:00:00.000 UTC"


@pytest.mark.parametrize(
    ("line", "stamp"),
    [
        (b"2026-02-19T01:00:00.001272Z  INFO x", "2026-02-19 01:00:00.001 UTC"),
        (
            b"Feb 19 03:12:03 host d[1]: 2026-02-19T03:12:02.5+02:00 x",
            "2026-02-19 01:12:02.500 UTC",
        ),
        (b"no time here", None),
        (b"2026-02-30T01:00:00Z impossible date", None),
    ],
)
def test_times_of_tracing_lines(line: bytes, stamp: str | None) -> None:
    wall = parse_wall_ms(line)
    assert (wall_stamp(wall) if wall is not None else None) == stamp


def test_runs_pair_with_sessions_in_order(tmp_path) -> None:
    text = (
        START.format(when="2026-02-19T01:00:00.000000Z")
        + EVENTS.format(n=1)
        + START.format(when="2026-02-19T05:00:00.000000Z")  # a start with no run after it
        + START.format(when="2026-02-19T06:30:00.250000Z")
        + EVENTS.format(n=2)
    )
    log = tmp_path / "two_runs.log"
    log.write_text(text)
    gz = tmp_path / "two_runs.log.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    assert len(open_log(log).sessions) == 2
    for path in (log, gz):
        lead, starts = daemon_starts(path)
        assert not lead and [s.has_events for s in starts] == [True, False, True]
        walls = session_wall_starts(path, 2)
        assert [wall_stamp(w) for w in walls] == [
            "2026-02-19 01:00:00.000 UTC",
            "2026-02-19 06:30:00.250 UTC",
        ]


def test_unknown_where_no_line_says(tmp_path) -> None:
    grepped = tmp_path / "grepped.log"
    grepped.write_text(EVENTS.format(n=1))
    assert session_wall_starts(grepped, 1) == [None]
    rotated = tmp_path / "rotated.log"  # the run before the daemon line has no start
    rotated.write_text(
        EVENTS.format(n=1) + START.format(when="2026-02-19T06:00:00Z") + EVENTS.format(n=2)
    )
    assert len(open_log(rotated).sessions) == 2
    walls = session_wall_starts(rotated, 2)
    assert walls[0] is None and wall_stamp(walls[1]) == "2026-02-19 06:00:00.000 UTC"
    # A restart without its daemon line: which run is which is unknown.
    assert session_wall_starts(rotated, 3) == [None, None, None]
