"""``python -m viewer`` ends a headless command's process without tearing the interpreter
down (``cli.leave_now``): what it wrote must be whole, and its exit status kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from viewer.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "two_gpus.log"


def _viewer(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "viewer", *args], cwd=ROOT, capture_output=True, timeout=120
    )


def test_the_report_written_to_a_pipe_is_whole_and_the_status_zero() -> None:
    done = _viewer("report", str(SAMPLE), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # every byte flushed before the process ended
    assert report["sessions"] and done.stdout.endswith(b"\n")


@pytest.mark.parametrize("args", [["info"], ["report"], ["report", "--markdown"]])
def test_text_written_to_a_pipe_is_what_main_prints(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Text goes through Python's buffered stdout: it must be flushed before the end."""
    done = _viewer(*args, str(SAMPLE))
    assert done.returncode == 0, done.stderr
    assert main([*args, str(SAMPLE)]) == 0
    printed = capsys.readouterr().out
    assert len(printed) > 200
    assert done.stdout.decode("utf-8").replace("\r\n", "\n") == printed


@pytest.mark.parametrize("suffix", [".csv", ".md", ".json"])
def test_an_exported_file_is_whole_when_the_process_has_ended(tmp_path: Path, suffix: str) -> None:
    """The file the leaving process wrote is byte for byte the one ``main`` writes in a
    process that tears down as usual."""
    args = ["--table", "jobs"] if suffix == ".csv" else []
    (tmp_path / "left").mkdir()
    (tmp_path / "stayed").mkdir()
    left, stayed = tmp_path / "left" / f"t{suffix}", tmp_path / "stayed" / f"t{suffix}"
    done = _viewer("export", str(SAMPLE), "--out", str(left), *args)
    assert done.returncode == 0, done.stderr
    assert main(["export", str(SAMPLE), "--out", str(stayed), *args]) == 0
    assert left.read_bytes() == stayed.read_bytes() and len(left.read_bytes()) > 200
    assert [p.name for p in left.parent.iterdir()] == [left.name]  # no temp file left behind


def test_a_failing_command_keeps_its_status_and_message(tmp_path: Path) -> None:
    missing = tmp_path / "gone.log"
    done = _viewer("report", str(missing))
    assert done.returncode == 2
    assert str(missing) in done.stderr.decode() and b"Traceback" not in done.stderr


def test_the_installed_command_leaves_the_same_way() -> None:
    """``cuzk-timeline`` (pyproject's script) runs ``cli.run``, as ``python -m viewer``."""
    script = Path(sys.executable).with_name("cuzk-timeline")
    if not script.exists():
        pytest.skip("the package's scripts are not installed beside this interpreter")
    done = subprocess.run(
        [str(script), "report", str(SAMPLE), "--json"], cwd=ROOT, capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(_viewer("report", str(SAMPLE), "--json").stdout)
