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
}


@pytest.mark.parametrize("command", ARGV)
@pytest.mark.parametrize("n", ["0", "-2"])
def test_workers_per_gpu_below_one_exits_2_before_reading(
    command: str, n: str, fake_reader: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*ARGV[command], "--workers-per-gpu", n]) == 2
    captured = capsys.readouterr()
    assert f"{command}: --workers-per-gpu must be at least 1" in captured.err
    assert captured.out == "" and fake_reader == {}


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
    assert proc.returncode == 1, err
    assert "Traceback" not in err and "BrokenPipe" not in err
