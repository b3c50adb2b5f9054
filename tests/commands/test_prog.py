"""The program's name in usage lines and in the commands a message tells the user to type is
the name it was started as: ``cuzk-timeline`` (the installed script), ``python -m viewer``
(the module)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from viewer.commands.common import named, prog

SCRIPT = Path(sys.executable).parent / "cuzk-timeline"
needs_script = pytest.mark.skipif(not SCRIPT.exists(), reason="cuzk-timeline is not installed")
ROOT = Path(__file__).resolve().parents[2]


def _run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False
    )


@needs_script
def test_the_script_names_itself_in_its_usage_and_examples() -> None:
    out = _run(str(SCRIPT), "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: cuzk-timeline [-h] COMMAND ...")
    assert "  cuzk-timeline report run.log " in out.stdout
    assert "Run `cuzk-timeline COMMAND --help`" in out.stdout
    assert "python -m viewer" not in out.stdout


def test_the_module_names_itself_in_its_usage() -> None:
    out = _run(sys.executable, "-m", "viewer", "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: python -m viewer [-h] COMMAND ...")
    assert "Run `python -m viewer COMMAND --help`" in out.stdout
    assert "cuzk-timeline" not in out.stdout


@needs_script
def test_a_commands_help_and_its_hints_use_the_name() -> None:
    out = _run(str(SCRIPT), "sweep", "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: cuzk-timeline sweep ")
    assert "  cuzk-timeline sweep runs/pw*.log.gz" in out.stdout
    assert "see `cuzk-timeline whatif --help`" in out.stdout
    assert "python -m viewer" not in out.stdout


@needs_script
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the hint is for Linux")
def test_the_no_display_hint_names_the_script() -> None:
    drop = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    out = _run(str(SCRIPT), "run.log", env=env)
    assert out.returncode == 2
    assert "  cuzk-timeline report run.log\n" in out.stderr
    assert "xvfb-run cuzk-timeline LOG" in out.stderr
    assert "python -m viewer" not in out.stderr


@pytest.mark.parametrize(
    ("argv0", "name"),
    [
        ("/work/.venv/lib/python3.11/site-packages/viewer/__main__.py", "python -m viewer"),
        ("/usr/local/bin/cuzk-timeline", "cuzk-timeline"),
        ("timeline-viewer.exe", "timeline-viewer"),
        ("-c", "python -m viewer"),
        ("", "python -m viewer"),
    ],
)
def test_prog_is_the_name_it_was_started_as(monkeypatch, argv0: str, name: str) -> None:  # noqa: ANN001
    monkeypatch.setattr(sys, "argv", [argv0, "report"])
    assert prog() == name
    assert named("see `{prog} report --help`") == f"see `{name} report --help`"
