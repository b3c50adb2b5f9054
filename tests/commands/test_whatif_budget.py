"""`whatif --budget-gib` on a budget-gated log: its own budget replayed, another one
predicted, the budget and workers in the table and the JSON, bad budgets refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viewer.cli import main
from viewer.io import open_log

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
GATED = SAMPLES / "budget_gated.log"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["whatif", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_gives_each_runs_budget_and_workers(capsys) -> None:
    code, out, _ = run(capsys, str(GATED), "--budget-gib", "260", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["knobs"] == {"budget_gib": 260.0}
    assert (d["measured"]["budget_gib"], d["measured"]["synth_workers"]) == (200, 14)
    assert (d["baseline"]["budget_gib"], d["baseline"]["synth_workers"]) == (200, 14)
    assert (d["scenario"]["budget_gib"], d["scenario"]["synth_workers"]) == (260, 18)
    assert d["replay_error"] == pytest.approx(0.0, abs=0.005)
    assert d["scenario"]["s_per_proof"] == pytest.approx(37.2, rel=0.01)  # simulated: 37.20
    assert d["sentence"].startswith("With budget 200 -> 260 GiB")


def test_the_table_has_a_budget_row(capsys) -> None:
    code, out, _ = run(capsys, str(GATED), "--budget-gib", "160")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("memory budget"))
    assert row.split()[-3:] == ["160", "/", "11"]
    assert "200 / 14" in row
    code, out, _ = run(capsys, str(SAMPLES / "phase8_pw10_5sectors.log"))
    assert "memory budget" not in out  # no budget stated, none played


def test_the_predicted_log_is_budget_gated(capsys, tmp_path: Path) -> None:
    out = tmp_path / "pred.log"
    code, _, _ = run(capsys, str(GATED), "--budget-gib", "330", "--out", str(out))
    assert code == 0
    facts = open_log(out).sessions[0].facts
    assert (facts.total_budget_gib, facts.synth_worker_count) == (330, 18)


@pytest.mark.parametrize("bad", ["nan", "inf", "1e300", "0", "-200", "1e7"])
def test_a_bad_budget_is_refused_naming_the_option(capsys, bad: str) -> None:
    code, out, err = run(capsys, str(GATED), "--budget-gib", bad)
    assert code == 2 and not out
    assert "--budget-gib must be a finite number more than 0" in err
    assert "Traceback" not in err
