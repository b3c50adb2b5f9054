"""The logs a command is named (folders, globs, several spellings): what a folder holds that
cannot be read is said, and a log reached twice is read once, with a note (issue 27,
item 18)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from viewer.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder of one log, a dangling symlink and a symlink loop."""
    logs = tmp_path / "provers"
    logs.mkdir()
    shutil.copy(SAMPLES / "phase7_gw1.log", logs / "p1.log")
    (logs / "p2.log").symlink_to("p2-deleted.log")
    (logs / "p3.log").symlink_to("p3.log")
    return logs


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("form", ["--table", "--json-lines"])
def test_a_fleet_names_the_broken_links_it_skipped(form: str, folder: Path, capsys) -> None:
    code, out, err = run(capsys, "report", str(folder), form)
    assert code == 0
    assert f"report: skipped {folder / 'p2.log'}: dangling symlink (to p2-deleted.log)\n" in err
    assert f"report: skipped {folder / 'p3.log'}: symlink loop\n" in err
    assert "p1.log" in out and "p2.log" not in out and "p3.log" not in out


def test_a_folder_reached_twice_is_read_once(folder: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(folder.parent)
    glob = str(folder.parent / "prov*")
    code, out, err = run(capsys, "report", "provers", f"{folder}/", glob, "--json-lines")
    assert code == 0
    assert [json.loads(line)["log"] for line in out.splitlines()] == ["provers/p1.log"]
    assert "report: dropped 2 duplicates: the same log reached again" in err
    assert err.count("symlink loop") == 1  # each skipped link named once


def test_one_log_under_two_names_is_one_row(folder: Path, capsys) -> None:
    (folder.parent / "again.log").symlink_to(folder / "p1.log")
    code, out, err = run(capsys, "report", str(folder / "p1.log"), str(folder.parent / "again.log"))
    assert code == 0
    head, rule, *rows = out.splitlines()  # still the fleet table: two logs were named
    assert head.startswith("log ") and len(rows) == 1 and rows[0].startswith(str(folder))
    assert "report: dropped 1 duplicate: the same log reached again" in err


def test_sweep_reads_a_folder_as_report_does(folder: Path, capsys) -> None:
    code, _, err = run(capsys, "sweep", str(folder), str(folder / "p1.log"), "--values", "8,16")
    assert code == 0, err
    assert f"sweep: skipped {folder / 'p2.log'}: dangling symlink" in err
    assert "sweep: dropped 1 duplicate" in err
