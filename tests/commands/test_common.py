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
