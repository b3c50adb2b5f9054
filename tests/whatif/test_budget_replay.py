"""The what-if's memory budget (``--budget-gib``): a budget-gated log is replayed with its
own budget, and another budget sizes the synthesis workers and plays the budget gate as
upstream's daemon does (``viewer.sim.budget``).

Simulated pairs from one seed differing only in the budget (160, 200, 260, 330 GiB on a
machine whose synthesis is the bottleneck: 80 s a partition alone, 10 sectors): each run
predicted from each other one.  Measured (s/proof, error of the prediction):

    no contention         truth    worst pair error (of 12)
                          142.93 / 93.61 / 67.35 / 48.25    +0.18 % (200 -> 330)
    contention (synth 0.04, cpu 0.03, 12 cores), calibrated with the two other runs
                          168.84 / 120.11 / 99.08 / 92.24    +0.11 % (200 -> 260)

Replayed as a fixed pw without the gate (the log's budget lines taken away, --pw set to
the workers the budget sizes), the same pairs are off by 29-190 %.
"""

from __future__ import annotations

import itertools
import math
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from viewer.analysis import throughput
from viewer.io import open_log
from viewer.model import Session
from viewer.model.facts import Facts
from viewer.sim.budget import synth_workers
from viewer.sim.contention import Contention
from viewer.sim.model import SimConfig, budget_gated, simulate
from viewer.sim.samples import budget_gated_200
from viewer.sim.writer import WriteOptions, write
from viewer.whatif import KnobError, Knobs, plan, what_if
from viewer.whatif.load import fit, sample
from viewer.whatif.replay import with_knobs

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "budget_gated.log"
BUDGETS = (160, 200, 260, 330)
MACHINE = Contention(synth=0.04, cpu=0.03, cores=12.0)
BASE = SimConfig(sectors=10, seed=17, synth_ms=80000.0)


def _read(cfg: SimConfig) -> Session:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "run.log"
        write(simulate(cfg), path, WriteOptions())
        return open_log(path).sessions[0]


@cache
def _runs(loaded: bool) -> dict[int, Session]:
    base = replace(BASE, contention=MACHINE) if loaded else BASE
    return {b: _read(budget_gated(base, b)) for b in BUDGETS}


def _measured(s: Session) -> float:
    return throughput(s).measured_s_per_proof


@pytest.mark.parametrize("bad", [math.nan, math.inf, 1e300, 0.0, -200.0, True, 2e6])
def test_the_knob_is_checked(bad: float) -> None:
    with pytest.raises(KnobError, match="--budget-gib must be a finite number more than 0"):
        Knobs(budget_gib=bad)


def test_the_knob_in_words() -> None:
    assert Knobs(budget_gib=260).describe({"budget_gib": 200.0}) == "budget 200 -> 260 GiB"
    assert Knobs(budget_gib=260).describe() == "budget 260 GiB"
    assert Knobs(budget_gib=260).changed() == {"budget_gib": 260}


def test_a_budget_gated_log_replays_with_its_own_budget() -> None:
    session = open_log(SAMPLE).sessions[0]
    pl = plan(session)
    assert (pl.cfg.budget_gib, pl.cfg.pw, pl.cfg.baseline_gib) == (200.0, 14, 69.0)
    w = what_if(session)
    assert w.replay_error == pytest.approx(0.0, abs=0.005)
    assert w.was["budget_gib"] == 200.0
    assert plan(replace(session, facts=Facts())).cfg.budget_gib is None


@pytest.mark.parametrize("budget", [160, 260])
def test_another_budget_predicts_the_run_at_it(budget: int) -> None:
    session = open_log(SAMPLE).sessions[0]
    w = what_if(session, Knobs(budget_gib=budget))
    cfg = budget_gated(budget_gated_200()[0].config, budget)
    assert w.schedule.config.budget_gib == budget
    assert w.schedule.config.pw == cfg.pw == synth_workers(budget)
    truth = _measured(_read(cfg))
    assert w.scenario.s_per_proof == pytest.approx(truth, rel=0.01)
    assert w.scenario.session.facts.total_budget_gib == budget


def test_pw_set_beside_the_budget_wins() -> None:
    pl = plan(open_log(SAMPLE).sessions[0])
    cfg, _ = with_knobs(pl, Knobs(budget_gib=330, pw=6))
    assert (cfg.budget_gib, cfg.pw) == (330, 6)
    cfg, _ = with_knobs(pl, Knobs(budget_gib=330))
    assert (cfg.budget_gib, cfg.pw) == (330, 18)
    cfg, _ = with_knobs(pl, Knobs(pw=6))  # the log's own budget stays
    assert (cfg.budget_gib, cfg.pw) == (200.0, 6)


@pytest.mark.parametrize(("a", "b"), list(itertools.permutations(BUDGETS, 2)))
def test_pairs_without_contention_within_1_percent(a: int, b: int) -> None:
    runs = _runs(False)
    w = what_if(runs[a], Knobs(budget_gib=b))
    assert w.scenario.s_per_proof == pytest.approx(_measured(runs[b]), rel=0.01)


@pytest.mark.parametrize(("a", "b"), list(itertools.permutations(BUDGETS, 2)))
def test_pairs_with_contention_calibrated_within_1_percent(a: int, b: int) -> None:
    """The load model fitted over A and the two runs at the other budgets (never B)."""
    runs = _runs(True)
    others = [c for c in BUDGETS if c not in (a, b)]
    load = fit([sample(runs[a], "A")] + [sample(runs[c], str(c)) for c in others])
    w = what_if(runs[a], Knobs(budget_gib=b), load=load)
    assert w.scenario.s_per_proof == pytest.approx(_measured(runs[b]), rel=0.01)


def test_without_the_gate_the_pairs_are_far_off() -> None:
    """What a fixed-pw replay would say: the workers the budget sizes, no gate."""
    runs = _runs(False)
    for a, b in ((200, 260), (260, 200), (330, 160)):
        s = replace(runs[a], facts=Facts())
        w = what_if(s, Knobs(pw=synth_workers(b)))
        assert abs(w.scenario.s_per_proof / _measured(runs[b]) - 1) > 0.25


def test_a_budget_too_small_for_one_partition_runs_one_at_a_time() -> None:
    session = open_log(SAMPLE).sessions[0]
    w = what_if(session, Knobs(budget_gib=20))
    cfg = w.schedule.config
    assert cfg.pw == 2  # the daemon's minimum
    s = w.schedule
    assert (s.end >= 0).all()  # no deadlock
    order = s.synth_start.argsort(kind="stable")
    assert (s.synth_start[order][1:] >= s.end[order][:-1]).all()
    assert w.scenario.s_per_proof > 5 * w.baseline.s_per_proof


@pytest.mark.parametrize(
    "field", ["total_budget_gib=" + "1" + "0" * 30, "total_budget_gib=-200", ""], ids=str
)
def test_a_budget_gated_log_without_a_believable_budget(tmp_path: Path, field: str) -> None:
    text = SAMPLE.read_text().replace("\x1b[3mtotal_budget_gib\x1b[0m\x1b[2m=\x1b[0m200", field)
    path = tmp_path / "gated.log"
    path.write_text(text)
    session = open_log(path).sessions[0]
    assert session.facts.budget_gated and session.facts.total_budget_gib is None
    pl = plan(session)
    assert pl.cfg.budget_gib is None
    assert any("states no believable budget" in n for n in pl.notes)


def test_a_budget_line_in_a_later_session_only(tmp_path: Path) -> None:
    plain = (SAMPLE.parent / "phase8_pw10_5sectors.log").read_text()
    path = tmp_path / "two.log"
    path.write_text(plain + SAMPLE.read_text())
    sessions = open_log(path).sessions
    assert len(sessions) == 2
    assert not sessions[0].facts.budget_gated and not sessions[1].facts.budget_gated
    assert plan(sessions[1]).cfg.budget_gib is None
