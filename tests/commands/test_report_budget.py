"""`report` and `info` on a budget-gated log: the budget and the concurrency it implies."""

from __future__ import annotations

import json
from pathlib import Path

from viewer.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
GATED = SAMPLES / "budget_gated.log"
PLAIN = SAMPLES / "phase8_pw10_5sectors.log"
LINE = (
    "200 GiB -> 14 synthesis workers (logged; budget / 14 GiB, at most 18, at least 2); "
    "9 partitions' 14 GiB fit beside 69 GiB of SRS and PCE: the budget bounds synthesis at 9 "
    "at once"
)


def _out(capsys, *argv: str) -> str:  # noqa: ANN001
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_report_text_and_markdown_give_the_budget(capsys) -> None:
    text = _out(capsys, "report", str(GATED))
    row = next(line for line in text.splitlines() if line.startswith("memory budget"))
    assert row.split(None, 4)[-1].strip() == LINE
    assert f"| memory budget (budget-gated daemon) | {LINE} |" in _out(
        capsys, "report", str(GATED), "--markdown"
    )
    assert "memory budget" not in _out(capsys, "report", str(PLAIN))


def test_report_json_gives_the_budget(capsys) -> None:
    d = json.loads(_out(capsys, "report", str(GATED), "--json"))
    assert d["sessions"][0]["budget"] == {
        "total_gib": 200,
        "synth_workers": 14,
        "workers_logged": True,
        "max_partitions_in_budget": 14,
        "max_parallel_synthesis": 18,
        "baseline_gib": 69.0,
        "partitions_at_once": 9,
        "budget_binds": True,
    }
    d = json.loads(_out(capsys, "report", str(PLAIN), "--json"))
    assert d["sessions"][0]["budget"] is None


def test_info_gives_the_budget(capsys) -> None:
    assert f"  memory budget     {LINE}" in _out(capsys, "info", str(GATED))
    d = json.loads(_out(capsys, "info", str(GATED), "--json"))
    assert d["sessions"][0]["budget"]["total_gib"] == 200
    assert "memory budget" not in _out(capsys, "info", str(PLAIN))
