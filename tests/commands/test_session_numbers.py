"""Sessions are numbered from 1 wherever a person reads or types one (issue 13, item 17): the
number `info` prints is the one `--session` takes, and the one every output names."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from viewer.cli import main
from viewer.io import open_log

DAMAGED = Path(__file__).resolve().parents[2] / "sample_logs" / "damaged.log"


def out_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_the_number_info_prints_is_the_one_every_command_takes(capsys) -> None:
    sessions = open_log(DAMAGED).sessions
    assert len(sessions) == 2
    info = out_of(capsys, "info", str(DAMAGED))
    assert re.findall(r"session (\d+)", info) == ["1", "2"]
    listed = json.loads(out_of(capsys, "info", "--json", str(DAMAGED)))["sessions"]
    assert [(s["session"], s["index"]) for s in listed] == [(1, 0), (2, 1)]

    # --session 2 is the second daemon run, named 2 in text, Markdown, JSON and CSV
    text = out_of(capsys, "report", str(DAMAGED), "--session", "2")
    assert re.findall(r"^Session (\d+)", text, re.M) == ["2"]
    md = out_of(capsys, "report", str(DAMAGED), "--session", "2", "--markdown")
    assert "session 2" in md.lower() and "session 1" not in md.lower()
    (only,) = json.loads(out_of(capsys, "report", str(DAMAGED), "--session", "2", "--json"))[
        "sessions"
    ]
    assert (only["session"], only["index"]) == (2, 1)
    assert only["events"] == sessions[1].events
    rows = list(
        csv.DictReader(
            io.StringIO(
                out_of(
                    capsys,
                    "export",
                    str(DAMAGED),
                    "--out",
                    "-",
                    "--format",
                    "csv",
                    "--table",
                    "jobs",
                )  # fmt: skip
            )
        )
    )
    assert {r["session"] for r in rows} == {"1", "2"}
    assert sum(r["session"] == "2" for r in rows) == len(sessions[1].jobs)

    trace = json.loads(out_of(capsys, "export", str(DAMAGED), "--out", "-", "--format", "trace"))
    names = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"}
    assert {n.split(" · ")[0] for n in names} == {"session 1", "session 2"}

    what = json.loads(out_of(capsys, "whatif", str(DAMAGED), "--session", "2", "--json"))
    assert (what["session"], what["index"]) == (2, 1)

    compared = json.loads(
        out_of(
            capsys,
            "compare",
            str(DAMAGED),
            str(DAMAGED),
            "--session-a",
            "1",
            "--session-b",
            "2",
            "--json",
        )  # fmt: skip
    )
    assert compared["labels"] == {"a": "damaged session 1", "b": "damaged session 2"}


def test_a_session_past_the_last_names_the_numbers_there_are(capsys) -> None:
    for argv in (
        ["report", str(DAMAGED), "--session", "3"],
        ["whatif", str(DAMAGED), "--session", "3"],
        ["export", str(DAMAGED), "--out", "-", "--format", "markdown", "--session", "3"],
        ["compare", str(DAMAGED), str(DAMAGED), "--session-b", "3"],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "no session 3 in" in err and "damaged.log" in err, argv
        assert "(sessions are numbered 1-2)" in err, argv
