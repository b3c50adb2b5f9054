"""Options every log-reading command shares: --workers-per-gpu below 1 is refused by all."""

from __future__ import annotations

import pytest

from viewer.cli import main

ARGV = {
    "info": ["info", "run.log"],
    "report": ["report", "run.log"],
    "export": ["export", "run.log", "--out", "-", "--format", "markdown"],
    "compare": ["compare", "run.log", "run.log"],
    "open": ["open", "run.log"],
    "whatif": ["whatif", "run.log"],
}


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``argv``, expect exit status 2 with no output; the error text."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    return captured.err


@pytest.mark.parametrize("command", ARGV)
@pytest.mark.parametrize("n", ["0", "-2", "1025", str(10**30), "nan", "1e3", "two"])
def test_workers_per_gpu_out_of_range_exits_2_before_reading(
    command: str, n: str, fake_reader: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused([*ARGV[command], "--workers-per-gpu", n], capsys)
    assert "--workers-per-gpu" in err and "from 1 to 1024" in err
    assert fake_reader == {}


RANGES = ["nan:5", "0:nan", "0:inf", "-inf:0", "0:1e300", "-1e13:0", "5:1", "x:y", "1:2:3"]


@pytest.mark.parametrize("command", ["report", "export", "compare"])
@pytest.mark.parametrize("text", RANGES)
def test_range_must_be_finite_and_bounded(
    command: str, text: str, fake_reader: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused([*ARGV[command], "--range", text], capsys)
    assert "--range" in err and fake_reader == {}


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("report", "--session"),
        ("export", "--session"),
        ("whatif", "--session"),
        ("compare", "--session-a"),
        ("compare", "--session-b"),
    ],
)
@pytest.mark.parametrize("n", ["0", "-1", str(10**30), "nan"])
def test_session_is_bounded(command: str, option: str, n: str, fake_reader: dict, capsys) -> None:
    """Sessions count from 1 on the command line as in the window: 0 is refused."""
    err = _refused([*ARGV[command], option, n], capsys)
    assert option in err and "from 1 to" in err and fake_reader == {}


def test_a_reader_that_leaves_early_gets_no_traceback():
    """`python -m viewer report LOG | head -1`: a closed pipe is not our error."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "sample_logs" / "damaged.log"  # short output
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write: EPIPE every time
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "viewer", "report", str(sample)],
            stdout=write_end, stderr=subprocess.PIPE, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write_end)
    err = proc.stderr.decode()
    assert proc.returncode == 0, err  # one rule for every form: test_closed_pipe.py
    assert "Traceback" not in err and "BrokenPipe" not in err
