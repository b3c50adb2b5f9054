"""`python -m viewer simulate`: options reach the log."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.sim.logparse import parse
from viewer.cli import main


def test_simulate_writes_the_asked_log(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "x.log"
    args = ["simulate", "-o", str(out), "--sectors", "2", "--gw", "1", "--gpus", "2"]
    assert main([*args, "--journald", "--crlf", "--noise", "0.5", "--era", "old"]) == 0
    data = out.read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n")
    assert b"cuzk-daemon[4242]: TIMELINE," in data
    events = parse(data.decode()).events
    assert len(events) == 2 * 10 * 6
    assert {e[1] for e in events} >= {"CHAN_SEND"}
    assert {e[3]["worker"] for e in events if "worker" in e[3]} == {0, 1}
    assert "MB/s" in capsys.readouterr().err


def test_events_option_sizes_the_run(tmp_path: Path) -> None:
    out = tmp_path / "x.log.gz"
    assert main(["simulate", "-o", str(out), "--events", "300", "--no-tracing"]) == 0
    with gzip.open(out, "rt") as f:
        events = parse(f.read()).events
    assert len(events) == 300


def test_help_teaches_units(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = capsys.readouterr().out
    for flag in ("--synth-ms", "--kernel-ms", "--noise", "--gw", "--pw", "--journald"):
        assert flag in text
    assert "ms" in text and "fraction" in text


def test_unknown_kind_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "-o", str(tmp_path / "x"), "--kinds", "porep-c3=1"])
    assert "unknown kind" in capsys.readouterr().err


def test_bad_numbers_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["simulate", "-o", str(tmp_path / "x"), "--gw", "0"]) == 2
    assert "gw must be at least 1" in capsys.readouterr().err
