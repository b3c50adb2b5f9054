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


def test_sample_log_floors_say_faster_kernels_alone_gain_little(capsys) -> None:
    """The Phase 8 lesson: GPU-bound, but the synthesis floor is 2.6 % behind the kernel
    floor, so halving the kernels gains at most that (upstream measured no gain)."""
    assert main(["report", str(SAMPLE), "--json"]) == 0
    (s,) = json.loads(capsys.readouterr().out)["sessions"]
    f = s["floors"]
    assert set(f) >= {"kernel_s", "worker_s", "synthesis_s", "arrival_s", "pw", "bound"}
    assert (f["bound"], f["runner_up"], f["pw"]) == ("kernel", "synthesis", 10)
    assert f["kernel_s"] == pytest.approx(37.46) and f["synthesis_s"] == pytest.approx(36.5, 0.01)
    assert f["margin"] == pytest.approx(0.026, abs=0.002)
    sentence = s["verdict"]["sentence"]
    assert sentence.startswith("GPU-bound")
    assert "Next is the synthesis floor, 36.5 s/proof (2.6 % behind)" in sentence
    assert "gains at most 2.6 %" in sentence
    assert main(["report", str(SAMPLE), "--markdown"]) == 0
    md = capsys.readouterr().out
    assert "| floor | value | from | relieved by |" in md
    assert "| kernel (binding) | 37.5 s/proof | mean kernel 3746 ms x 10 / 1 GPU |" in md


def test_the_collector_is_back_on_after_a_report(capsys, tmp_path) -> None:
    """``report`` runs with the garbage collector off (its ~10^5 row objects hold no
    cycles); whoever called it gets the collector back, after a report or a failed one."""
    import gc

    assert gc.isenabled()
    assert main(["report", str(SAMPLE), "--json"]) == 0
    assert gc.isenabled()
    assert main(["report", str(tmp_path / "missing.log")]) == 2
    assert gc.isenabled()
    capsys.readouterr()


def test_a_range_starting_below_zero_needs_no_equals_sign(capsys) -> None:  # noqa: ANN001
    """issue 27 item 18: `--range -5:5` was read as an option ("expected one argument")."""
    from pathlib import Path

    from viewer.cli import main

    log = str(Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw20.log")
    assert main(["report", log, "--range", "-5000:50000"]) == 0
    spaced = capsys.readouterr().out
    assert main(["report", log, "--range=-5000:50000"]) == 0
    assert capsys.readouterr().out == spaced
