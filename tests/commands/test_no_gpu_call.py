"""A session with no GPU call has no floors: every report form says so, naming the log and
the session, instead of figures of 0.0; `whatif` refuses it (issue 27, item 18)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from viewer.cli import main
from viewer.export.format import markdown_text

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
#: Two syntheses of one job, then the daemon stopped: nothing ever reached a GPU.
SYNTHESIS_ONLY = (
    "TIMELINE,40,SYNTH_START,job-a,partition=0\n"
    "TIMELINE,50,SYNTH_START,job-a,partition=1\n"
    "TIMELINE,900,SYNTH_END,job-a,partition=0\n"
)


@pytest.fixture
def no_call(tmp_path: Path) -> Path:
    path = tmp_path / "no_gpu_call.log"
    path.write_text(SYNTHESIS_ONLY)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("form", [[], ["--markdown"]])
def test_the_report_says_no_floors_in_place_of_the_floor_table(form, no_call, capsys) -> None:
    code, out, _ = run(capsys, "report", str(no_call), *form)
    assert code == 0
    name = markdown_text(no_call) if form else str(no_call)
    assert f"no GPU call in session 1 of {name}: no floors" in out
    assert "relieved by" not in out  # the floor table's head


def test_the_json_report_notes_it(no_call, capsys) -> None:
    code, out, _ = run(capsys, "report", "--json", str(no_call))
    assert code == 0
    notes = json.loads(out)["sessions"][0]["notes"]
    assert notes == [f"no GPU call in session 1 of {no_call}: no floors"]


def test_a_fleet_row_says_so_instead_of_numbers(no_call, capsys) -> None:
    other = SAMPLES / "phase7_gw1.log"
    code, out, _ = run(capsys, "report", "--table", str(no_call), str(other))
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith(str(no_call)))
    cells = re.split(r"\s{2,}", row.strip())
    # log, session, 6 blanks (knobs, s/proof, efficiency), the note, cold start, skipped
    assert cells == [str(no_call), "1", *["-"] * 6, "no GPU call: no floors", "-", "0"]
    code, out, _ = run(capsys, "report", "--json-lines", str(no_call))
    record = json.loads(out)
    assert record["note"] == f"no GPU call in session 1 of {no_call}: no floors"
    assert record["cold_start_ms"] is None
    assert all(v is None for k, v in record["floors"].items() if k.endswith("_s"))


def test_whatif_refuses_it_in_one_line_naming_the_log(no_call, capsys) -> None:
    code, out, err = run(capsys, "whatif", str(no_call), "--gw", "1")
    assert code == 2 and out == ""
    assert err == f"whatif: no GPU call in session 1 of {no_call}: no floors, nothing to replay\n"
