"""A budget-gated session's budget and the concurrency it implies (``analysis.budget``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from viewer.analysis.budget import budget
from viewer.io import open_log
from viewer.model.facts import Facts

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _session(facts: Facts):  # noqa: ANN202
    s = open_log(SAMPLES / "budget_gated.log").sessions[0]
    return replace(s, facts=facts)


def test_what_the_sample_states() -> None:
    b = budget(open_log(SAMPLES / "budget_gated.log").sessions[0])
    assert b is not None
    assert (b.total_gib, b.workers, b.partitions_in_budget, b.at_once) == (200, 14, 14, 9)
    assert b.workers_logged and b.binds
    assert budget(open_log(SAMPLES / "phase8_pw10_5sectors.log").sessions[0]) is None


def test_workers_not_logged_are_sized_as_the_daemon_does() -> None:
    b = budget(_session(Facts(total_budget_gib=500, budget_gated=True)))
    assert (b.workers, b.partitions_in_budget, b.at_once) == (18, 35, 30)
    assert not b.workers_logged and not b.binds
    assert "as the daemon sizes them" in b.describe()


def test_a_capped_daemon_keeps_its_cap() -> None:
    gated = Facts(
        total_budget_gib=500, max_partitions_in_budget=35, synth_worker_count=12, budget_gated=True
    )
    b = budget(_session(gated))
    assert (b.workers, b.max_parallel) == (12, 12)
    assert "at most 12" in b.describe()


def test_a_budget_too_small_for_one_partition() -> None:
    b = budget(_session(Facts(total_budget_gib=20, budget_gated=True)))
    assert (b.workers, b.at_once) == (2, 1)  # the daemon's minimum; one let through alone


def test_no_believable_budget() -> None:
    b = budget(_session(Facts(synth_worker_count=14, budget_gated=True)))
    assert b.total_gib is None and b.at_once is None and not b.binds
    assert b.describe() == "no believable budget stated; 14 synthesis workers"
