"""One rule for a closed stdout pipe (`... | head -1`), every command and form: the command
stops quietly with status 0.  The reader leaving is not the command's failure, and whether
a write sees it is only timing: a table that fits the pipe's buffer was written whole
before `head` left (status 0), JSON lines written one by one were not (status 1): issue 27,
item 18."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.hostile.files import ROOT, cli_env

SAMPLES = ROOT / "sample_logs"
LOG, OTHER = str(SAMPLES / "phase7_gw1.log"), str(SAMPLES / "phase7_pw20.log")
FORMS = {
    "info": ["info", LOG],
    "info --json": ["info", "--json", LOG],
    "report": ["report", LOG],
    "report --json": ["report", "--json", LOG],
    "report --markdown": ["report", "--markdown", LOG],
    "report --table": ["report", LOG, OTHER, "--table"],
    "report --json-lines": ["report", LOG, OTHER, "--json-lines"],
    "compare": ["compare", LOG, OTHER],
    "whatif": ["whatif", LOG, "--gw", "2"],
    "whatif --json": ["whatif", "--json", LOG],
    "sweep": ["sweep", str(SAMPLES / "phase8_pw10_5sectors.log"), str(SAMPLES / "phase8_pw20.log")],
    "export --out -": ["export", LOG, "--out", "-", "--format", "markdown"],
    "export --table --out -": ["export", LOG, "--out", "-", "--table", "transitions",
                               "--format", "csv"],
}  # fmt: skip


def _closed_before(argv: list[str], **env: str) -> subprocess.CompletedProcess:
    """``argv`` with a stdout whose reader is gone before the first write (EPIPE at once)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "viewer", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=cli_env(**env),
            cwd=ROOT,
            timeout=120,
        )
    finally:
        os.close(write_end)


def _head_1(argv: list[str]) -> tuple[int, bytes, bytes]:
    """``argv | head -1``: the reader takes one line and leaves."""
    with subprocess.Popen(
        [sys.executable, "-m", "viewer", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=cli_env(),
        cwd=ROOT,
    ) as proc:
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read()
        return proc.wait(timeout=120), first, err


@pytest.fixture(scope="module")
def closed_runs() -> dict[str, subprocess.CompletedProcess]:
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(FORMS, pool.map(_closed_before, FORMS.values()), strict=True))


@pytest.mark.parametrize("form", FORMS)
def test_a_reader_gone_before_the_first_write(form: str, closed_runs) -> None:
    proc = closed_runs[form]
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Errno" not in err, err


@pytest.mark.parametrize("form", ["report --table", "report --json-lines", "report"])
def test_head_1_gets_one_line_and_every_form_the_same_status(form: str) -> None:
    code, first, err = _head_1(FORMS[form])
    assert first.strip() and code == 0, err
    assert b"Traceback" not in err


@pytest.mark.parametrize("form", ["export --out -", "export --table --out -", "report --json"])
def test_outputs_written_in_parts_stop_quietly_unbuffered_too(form: str) -> None:
    """Tables and reports go out a chunk of rows at a time: with an unbuffered stdout each
    part meets the closed pipe inside the command, which must stop as quietly as the flush
    at its end does (an export said 'cannot write -: Broken pipe', status 2)."""
    proc = _closed_before(FORMS[form], PYTHONUNBUFFERED="1")
    err = proc.stderr.decode()
    assert proc.returncode == 0 and not err.strip(), err
