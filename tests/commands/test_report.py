from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.analysis.builders import REFERENCE_MARKDOWN_ROWS
from viewer.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


def test_json_output(fake_reader: dict, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "run.log", "--json", "--workers-per-gpu", "2"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schema"] == "cuzk-timeline-report/1"
    assert d["sessions"][0]["verdict"]["kind"] == "gpu-bound"
    assert fake_reader["workers_per_gpu"] == 2


def test_markdown_and_text(fake_reader: dict, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "run.log", "--markdown", "--range", "0:100000"]) == 0
    assert "| metric | value |" in capsys.readouterr().out
    assert main(["report", "run.log"]) == 0
    assert "Verdict (gpu-bound)" in capsys.readouterr().out


def test_bad_log_and_bad_session_exit_2(fake_reader: dict, capsys) -> None:
    assert main(["report", "x.bad"]) == 2
    assert "not a cuzk log" in capsys.readouterr().err
    assert main(["report", "run.log", "--session", "3"]) == 2
    assert "no session 3" in capsys.readouterr().err


def test_bad_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["report", "run.log", "--range", "9:1"])
    assert exc.value.code == 2
    assert "after its end" in capsys.readouterr().err


def test_help_documents_the_range_rules(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    out = capsys.readouterr().out
    assert "clipped to the range" in out and "completed inside the range" in out


@pytest.mark.skipif(not SAMPLE.exists(), reason="sample log not generated yet (make samples)")
def test_sample_log_reproduces_the_published_reference(capsys) -> None:
    assert main(["report", str(SAMPLE), "--markdown"]) == 0
    md = capsys.readouterr().out
    for row in REFERENCE_MARKDOWN_ROWS:
        assert row in md
    assert "**Verdict (gpu-bound):** GPU-bound: measured 37.4 s/proof equals the 37.5 s" in md
