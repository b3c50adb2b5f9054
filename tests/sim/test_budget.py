"""A budget-gated daemon in the simulator: its concurrency sized from the budget as
engine.rs does, and the budget gate played by the loaded engine (``viewer.sim.budget``)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from viewer.io.facts import from_text
from viewer.sim.budget import (
    check_budget,
    lookahead,
    max_parallel_of,
    partitions_in_budget,
    synth_workers,
)
from viewer.sim.model import SimConfig, budget_gated, simulate
from viewer.sim.writer import WriteOptions, render


@pytest.mark.parametrize(
    ("budget", "partitions", "workers", "ahead"),
    [
        (251, 17, 17, 17),  # a 256 GiB host, auto: RAM less 5 GiB
        (200, 14, 14, 14),
        (160, 11, 11, 11),
        (330, 23, 18, 23),  # max_parallel_synthesis 18 binds
        (507, 36, 18, 32),  # the lookahead stops at 32
        (27.9, 1, 2, 1),  # the daemon's minimum of 2 workers
        (0.5, 0, 2, 1),
        (14, 1, 2, 1),
        (13.999, 0, 2, 1),
    ],
)
def test_the_daemons_sizing(budget: float, partitions: int, workers: int, ahead: int) -> None:
    assert partitions_in_budget(budget) == partitions
    assert synth_workers(budget) == workers
    assert lookahead(budget) == ahead


def test_max_parallel() -> None:
    assert synth_workers(330, max_parallel=24) == 23
    assert synth_workers(330, max_parallel=0) == 18  # 0 means the default, as engine.rs
    assert max_parallel_of(23, 12) == 12  # the cap bound the workers: it was 12
    assert max_parallel_of(14, 14) == 18  # the budget bound them: the default
    assert max_parallel_of(40, 24) == 24
    assert max_parallel_of(None, None) == 18


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0, 0.0, 1e300, True, "200"])
def test_a_budget_past_belief_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="budget must be a finite number"):
        check_budget(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="budget_gib"):
        SimConfig(budget_gib=bad)  # type: ignore[arg-type]


def _held(s) -> tuple[float, int]:  # noqa: ANN001
    """The most GiB partitions held at once (14 from SYNTH_START, 13 of it freed when the
    kernel mutex is released, the last 1 at GPU_END) and the most syntheses at once."""
    ev = sorted(
        [(t, 14) for t in s.synth_start] + [(t, -13) for t in s.release] + [(t, -1) for t in s.end]
    )
    held = np.cumsum([d for _, d in ev])
    syn = sorted([(t, 1) for t in s.synth_start] + [(t, -1) for t in s.synth_end])
    return float(held.max()), int(np.cumsum([d for _, d in syn]).max())


@pytest.mark.parametrize("budget", [100, 160, 200, 260, 330])
def test_the_gate_keeps_reservations_within_the_budget(budget: int) -> None:
    cfg = budget_gated(SimConfig(sectors=6, seed=3), budget)
    s = simulate(cfg)
    held, at_once = _held(s)
    room = budget - 69
    assert held <= room
    assert held > room - 2 * 14  # and it is used: the gate, not the workers, binds
    assert at_once <= min(cfg.pw, room // 14)
    assert (s.end > 0).all()


def test_a_budget_with_room_for_all_plays_the_fixed_engine() -> None:
    cfg = SimConfig(sectors=5, seed=4, pw=10)
    fixed = simulate(cfg)
    gated = simulate(replace(cfg, budget_gib=10_000.0))
    assert np.array_equal(fixed.end, gated.end)
    assert np.array_equal(fixed.synth_start, gated.synth_start)


def test_a_budget_slows_a_synthesis_bound_run() -> None:
    base = SimConfig(sectors=8, seed=3)
    measured = {}
    for budget in (160, 200, 260):
        s = simulate(budget_gated(base, budget))
        done = np.sort([s.end[s.draws.job == j].max() for j in range(8)])
        measured[budget] = (done[-1] - done[0]) / 7 / 1000
    assert measured[160] > measured[200] > measured[260]


@pytest.mark.parametrize("budget", [0.5, 20.0, 60.0, 75.0])
def test_a_partition_larger_than_the_budget_goes_alone(budget: float) -> None:
    """Upstream's acquire would wait for ever (memory.rs ~191): the gate lets a partition
    through when no other partition holds budget, so the run ends, one at a time."""
    cfg = budget_gated(SimConfig(sectors=2, seed=9), budget)
    assert cfg.pw == max(2, int(budget // 14))  # at least the daemon's minimum of 2
    s = simulate(cfg)
    assert (s.end > 0).all()
    # Alone: each synthesis starts once the partition before it has ended its call.
    order = np.argsort(s.synth_start, kind="stable")
    assert (s.synth_start[order][1:] >= s.end[order][:-1]).all()


def test_other_proof_kinds_reserve_their_own_size() -> None:
    """winning-post reserves 0.5 GiB (memory.rs): at a budget of 80 GiB, 11 GiB beside the
    baseline, no porep partition fits beside another but many PoSts do."""
    base = SimConfig(sectors=8, seed=2, kinds=(("winning-post", 1.0),), interval_ms=0.0)
    s = simulate(budget_gated(base, 80))
    syn = sorted([(t, 1) for t in s.synth_start] + [(t, -1) for t in s.synth_end])
    assert int(np.cumsum([d for _, d in syn]).max()) > 1


def test_the_log_states_the_budget_and_concurrency() -> None:
    cfg = budget_gated(SimConfig(sectors=2, seed=1, gpus=2), 330)
    text = render(simulate(cfg), WriteOptions())
    head = text.split("TIMELINE,")[0]
    assert "memory budget initialized" in head and "partition workers started" not in head
    f = from_text(text.encode())
    assert f.budget_gated
    assert (f.total_budget_gib, f.max_partitions_in_budget, f.synth_worker_count) == (330, 23, 18)
    assert (f.effective_lookahead, f.num_gpus, f.gpu_workers_per_device) == (23, 2, 2)
    plain = render(simulate(SimConfig(sectors=2, seed=1)), WriteOptions())
    assert not from_text(plain.encode()).budget_gated
    assert from_text(plain.encode()).pw == 10


def test_the_simulate_command(tmp_path, capsys) -> None:  # noqa: ANN001
    from viewer.cli import main

    out = tmp_path / "gated.log"
    assert main(["simulate", "--budget-gib", "260", "--sectors", "2", "-o", str(out)]) == 0
    f = from_text(out.read_bytes())
    assert (f.total_budget_gib, f.synth_worker_count) == (260, 18)
    assert main(["simulate", "--budget-gib", "200", "--pw", "10", "-o", str(out)]) == 2
    assert "leave out --pw" in capsys.readouterr().err
    for bad in ("nan", "0", "-5", "1e300", "inf"):
        with pytest.raises(SystemExit):
            main(["simulate", "--budget-gib", bad, "-o", str(out)])
        assert "--budget-gib" in capsys.readouterr().err


def test_a_baseline_without_a_budget_is_refused(tmp_path, capsys) -> None:  # noqa: ANN001
    from viewer.cli import main

    out = tmp_path / "s.log"
    assert main(["simulate", "--baseline-gib", "40", "--sectors", "1", "-o", str(out)]) == 2
    assert "--baseline-gib" in capsys.readouterr().err
    args = ["simulate", "--budget-gib", "100", "--baseline-gib", "40", "--sectors", "2"]
    assert main([*args, "-o", str(out)]) == 0
    s = simulate(budget_gated(SimConfig(sectors=2, baseline_gib=40.0), 100))
    assert out.read_text() == render(s, WriteOptions(seed=1))  # 4 reservations at once, not 2
