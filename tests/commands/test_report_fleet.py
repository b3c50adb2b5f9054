"""`report LOG...`: a fleet of logs, in parallel, one record per session in the order given."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from viewer.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["report", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_lines_one_per_session_in_the_order_given(capsys) -> None:
    logs = [SAMPLES / "two_gpus.log", SAMPLES / "damaged.log", SAMPLES / "phase7_gw1.log"]
    code, out, _ = run(capsys, *map(str, logs), "--json-lines", "--jobs", "2")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [(Path(r["log"]).name, r["session"]) for r in records] == [
        ("two_gpus.log", 1),
        ("damaged.log", 1),
        ("damaged.log", 2),
        ("phase7_gw1.log", 1),
    ]
    r = records[0]
    assert r["format"] == "cuzk-timeline-fleet/1" and r["index"] == 0
    assert r["measured_s_per_proof"] == pytest.approx(18.6, abs=0.05)
    assert r["floors"]["bound"] == "kernel" and r["verdict"]["kind"] == "gpu-bound"
    assert records[3]["floors"]["bound"] == "worker"
    # One process or several: the same records.
    code, serial, _ = run(capsys, *map(str, logs), "--json-lines", "--jobs", "1")
    assert serial == out


def test_table_and_globs(capsys, tmp_path: Path) -> None:
    for name in ("phase8_pw10_5sectors.log", "phase8_pw20.log"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    code, out, _ = run(capsys, str(tmp_path / "*.log"))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "log", "session", "pw", "gw", "GPUs", "budget", "s/proof", "efficiency", "bound",
        "cold", "start", "skipped",
    ]  # fmt: skip
    pw10 = next(line for line in lines if "phase8_pw10" in line)
    assert pw10.split()[1:8] == ["1", "10", "2", "1", "-", "37.4", "100.0"]
    assert "kernel (+3 %)" in pw10
    assert "synthesis (+20 %)" in out and len(lines) == 4


def test_the_knobs_a_run_used_are_in_every_record(capsys, tmp_path: Path) -> None:
    """A sweep's table: pw, gw, GPUs stated by a log's head or shown by it, the budget of a
    budget-gated daemon."""
    code, out, _ = run(
        capsys,
        str(SAMPLES / "two_gpus.log"),
        str(SAMPLES / "phase7_gw1.log"),
        str(SAMPLES / "budget_gated.log"),
        "--json-lines",
    )
    assert code == 0
    knobs = [json.loads(line)["knobs"] for line in out.splitlines()]
    assert [(k["pw"], k["gw"], k["gpus"]) for k in knobs[:2]] == [(20, 2, 2), (20, 1, 1)]
    assert knobs[0]["budget_gib"] is None
    assert knobs[2]["budget_gib"] == 200 and "budget" in knobs[2]["stated"]
    assert knobs[2]["kernel_ms"] > 0


def test_a_bad_log_is_a_row_and_an_error_not_the_end(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    code, out, err = run(capsys, str(SAMPLES / "phase7_gw1.log"), str(bad), "--json-lines")
    assert code == 1
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["session"] == 1 and "error" in second and "notes.txt" in second["error"]
    assert "notes.txt" in err
    code, _, _ = run(capsys, str(bad), str(tmp_path / "missing.log"), "--table")
    assert code == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--json"], "several logs: use --json-lines or --table"),
        (["--range", "0:10"], "--range needs one log"),
        (["--jobs", "0"], "--jobs must be a whole number from 1 to 256"),
    ],
)
def test_fleet_options_that_make_no_sense_are_refused(capsys, argv, message) -> None:
    code, out, err = run(
        capsys, str(SAMPLES / "phase7_gw1.log"), str(SAMPLES / "damaged.log"), *argv
    )
    assert code == 2 and out == "" and message in err


def test_a_folder_is_a_fleet_and_an_empty_one_says_so(capsys, tmp_path: Path, monkeypatch) -> None:
    logs = tmp_path / "provers"
    logs.mkdir()
    shutil.copy(SAMPLES / "two_gpus.log", logs / "p1.log")
    (logs / "notes.md").write_text("not a log")
    code, out, _ = run(capsys, str(logs))  # one log in it: still the fleet table
    assert code == 0 and out.splitlines()[0].startswith("log ") and "p1.log" in out

    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, str(empty), str(logs), "--json-lines")
    assert code == 1  # one of two failed
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0]["log"] == str(empty) and "a directory with no .log" in records[0]["error"]
    assert "report: " in err and str(empty) in err

    import os

    real = os.listdir

    def refuse(path):
        if str(path) == str(empty):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", refuse)
    monkeypatch.setattr(Path, "iterdir", lambda self: iter(refuse(self)))
    code, out, err = run(capsys, str(empty), "--table")
    assert code == 2 and "cannot list the folder (Permission denied)" in out + err
    # alone and without --table it is one path: the reader says what it is
    monkeypatch.undo()
    code, _, err = run(capsys, str(empty), "--json")
    assert code == 2 and "is a directory" in err


@pytest.mark.parametrize("jobs", ["0", "257", "-1"])
def test_one_logs_jobs_are_bounded_too(capsys, jobs) -> None:
    """``--jobs`` also sets the processes for the sessions of one log of many daemon runs."""
    code, out, err = run(capsys, str(SAMPLES / "phase7_gw1.log"), "--jobs", jobs)
    assert code == 2 and out == "" and "--jobs must be a whole number from 1 to 256" in err


def test_one_log_with_jobs_reports_as_without(capsys) -> None:
    code, one, _ = run(capsys, str(SAMPLES / "phase8_pw10_5sectors.log"), "--json", "--jobs", "1")
    code2, two, _ = run(capsys, str(SAMPLES / "phase8_pw10_5sectors.log"), "--json", "--jobs", "2")
    assert code == code2 == 0 and one == two


def test_session_counts_from_one_in_a_fleet_too(capsys) -> None:
    """``report A B --session 1`` is session 1 of each log (it once gave session 2, and
    ``--session 2`` failed with "no session 3")."""
    damaged = str(SAMPLES / "damaged.log")
    two = str(SAMPLES / "two_gpus.log")
    for number in (1, 2):
        main(["report", damaged, two, "--session", str(number), "--json-lines"])
        records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert records[0]["session"] == number
        if number == 1:
            assert records[1]["session"] == 1
        else:
            assert "no session 2" in records[1]["error"]


def test_a_folder_that_cannot_be_searched_is_a_row_not_a_traceback(capsys, monkeypatch) -> None:
    """issue 27 item 15: a fleet glob reaching into a folder without search permission gave
    a PermissionError traceback (root ignores permissions, so the refusal is stood in)."""
    import pathlib

    real = pathlib.Path.is_dir

    def is_dir(self):  # noqa: ANN001, ANN202
        if "locked" in str(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(pathlib.Path, "is_dir", is_dir)
    locked = "/nowhere/locked/run.log"
    code, out, err = run(capsys, str(SAMPLES / "phase7_gw1.log"), locked, "--table", "--jobs", "1")
    assert code == 1
    assert "Traceback" not in err
    assert f"report: {locked}: Permission denied" in err
    assert "phase7_gw1.log" in out and "error: " in out


def _records_or_die(path: str, *rest: object) -> list[dict]:
    """``fleet.log_records``, but the process reading phase7_gw1.log is killed (as the OOM
    killer would); module-level, so that a worker process can be handed it."""
    import os
    import signal

    if path.endswith("phase7_gw1.log") and os.getpid() != MAIN_PID:
        os.kill(os.getpid(), signal.SIGKILL)
    return REAL_LOG_RECORDS(path, *rest)


MAIN_PID = __import__("os").getpid()
REAL_LOG_RECORDS = __import__("viewer.export.fleet", fromlist=["log_records"]).log_records


def test_a_killed_reader_is_a_row_and_the_others_come(capsys, monkeypatch) -> None:
    """issue 27 item 14: the fleet goes on when a reading process is killed."""
    from viewer.export import fleet

    monkeypatch.setattr(fleet, "log_records", _records_or_die)
    logs = [str(SAMPLES / n) for n in ("phase8_pw20.log", "phase7_gw1.log", "two_gpus.log")]
    code, out, err = run(capsys, *logs, "--json-lines", "--jobs", "2")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["log"].rsplit("/", 1)[-1] for r in rows] == [
        "phase8_pw20.log", "phase7_gw1.log", "two_gpus.log"
    ]  # fmt: skip
    assert "died twice" in rows[1]["error"] and "error" not in rows[0] and "error" not in rows[2]
    assert code == 1 and "Traceback" not in err
