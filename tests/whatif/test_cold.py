"""The first synthesis of each slot runs cold (``viewer.whatif.cold``): the replay with
other slots makes the first ``pw'`` partitions the cold ones."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from tests.real_runs import REAL as REAL_RUNS
from viewer.io import open_log
from viewer.sim.contention import Contention
from viewer.sim.model import SimConfig, simulate
from viewer.sim.writer import WriteOptions, write
from viewer.whatif import Knobs, what_if
from viewer.whatif.cold import cold_factors, cold_ratio, straggler_note, was_cold
from viewer.whatif.replay import cycled, plan, with_knobs

REAL = REAL_RUNS  # ../shared/real_h200, copied into the tests' data
SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def test_the_first_wave_is_the_earliest_synthesis_of_each_slot() -> None:
    starts = np.array([5.0, 0.0, 0.0, np.nan, 9.0, 1.0])
    assert was_cold(starts, 3).tolist() == [False, True, True, False, False, True]
    assert was_cold(starts, 9).tolist() == [True, True, True, False, True, True]


def test_a_first_wave_no_slower_than_noise_is_not_cold() -> None:
    rng = np.random.default_rng(1)
    synth = rng.normal(1000.0, 100.0, 96)
    cold = np.arange(96) < 8
    kind = np.zeros(96, np.int64)
    assert cold_ratio(synth, kind, cold) == 1.0
    synth[cold] *= 1.2
    assert cold_ratio(synth, kind, cold) == pytest.approx(1.2, abs=0.08)


def _plan(path: Path):  # noqa: ANN202
    return plan(open_log(path).sessions[0])


def test_more_slots_make_more_partitions_cold_and_fewer_fewer() -> None:
    """base1 (pw 8) ran its first wave 1.19x its warm synthesis: at pw 16 the second job's
    partitions start slots and take that much more; at pw 4 the first job's last four are a
    slot's second and take that much less; the first four keep their own (stragglers too)."""
    pl = _plan(REAL / "base1.log.gz")
    cold = was_cold(pl.session.partitions["synth_start"][pl.rows], pl.cfg.pw)
    assert cold.tolist()[:10] == [True] * 8 + [False] * 2

    def factors(played, slots):  # noqa: ANN001, ANN202
        return cold_factors(pl.synth_start, pl.synth_ms, pl.cfg.pw, pl.draws, played, slots)

    up = factors(pl.draws, 16)
    assert up[:8].tolist() == [1.0] * 8
    assert up[8:16] == pytest.approx(np.full(8, 1.189), abs=0.01)
    assert (up[16:] == 1.0).all()
    down = factors(pl.draws, 4)
    assert down[4:8] == pytest.approx(np.full(4, 1 / 1.189), abs=0.01)
    assert (down[:4] == 1.0).all() and (down[8:] == 1.0).all()
    assert factors(pl.draws, 8) is None
    # A closed loop of more jobs: the copies of the first job are warm.
    longer = cycled(pl.draws, 30)
    k = factors(longer, 8)
    n = len(pl.draws.job)
    assert (k[:n] == 1.0).all()
    assert k[n : n + 8] == pytest.approx(np.full(8, 1 / 1.189), abs=0.01)
    _, d = with_knobs(pl, Knobs(pw=16))
    assert d.synth[8:16].sum() > 1.15 * pl.draws.synth[8:16].sum()


def test_a_first_wave_slower_only_in_a_load_models_work_is_not_cold() -> None:
    """A simulated machine without a cold start (2.5 % a busy thread, time-sharing past
    11), its load fitted on its own log: the first wave, with the GPUs idle, ran 6 % faster
    in time; the fit (no slope, time-sharing past 10) reads it 6 % slower in work, its own
    error at a load no warm partition ran.  Not cold."""
    from viewer.whatif.predict import loaded, own_load

    m = Contention(synth=0.025, cpu=0.025, cores=11.0)
    cfg = SimConfig(sectors=20, concurrency=15, pw=10, gw=2, synth_ms=29000.0,
                    kernel_ms=1824.0, prep_ms=1909.0, b_g2_ms=484.0, epilogue_ms=20.0,
                    contention=m, seed=7)  # fmt: skip
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "run.log"
        write(simulate(cfg), path, WriteOptions())
        session = open_log(path).sessions[0]
    pl = loaded(plan(session), own_load(session).contention)
    cold = was_cold(pl.session.partitions["synth_start"][pl.rows], pl.cfg.pw)
    kind = np.zeros(len(cold), np.int64)
    assert cold_ratio(pl.draws.synth.astype(float), kind, cold) > 1.03  # in work
    assert cold_factors(pl.synth_start, pl.synth_ms, pl.cfg.pw, pl.draws, pl.draws, 20) is None


def test_a_cold_straggler_that_sets_the_first_completion_is_said() -> None:
    pl = _plan(REAL / "base1.log.gz")
    starts = pl.session.partitions["synth_start"][pl.rows]
    note = straggler_note(starts, pl.draws.synth.astype(float), 8, 12, 2.46)
    assert "cold, 3.8 s in this log (1.54x the warm ones" in note
    w = what_if(pl.session, Knobs(kernel_scale=0.5))
    assert any("waits for the first job's slowest synthesis" in n for n in w.notes)


def test_a_simulated_log_has_no_cold_start_to_move() -> None:
    """The simulator's syntheses run warm from the first: the replay at other slots plays
    them as measured, and no note is made."""
    pl = _plan(SAMPLES / "phase8_pw10_5sectors.log")
    assert cold_factors(pl.synth_start, pl.synth_ms, pl.cfg.pw, pl.draws, pl.draws, 20) is None
    w = what_if(pl.session, Knobs(pw=20))
    assert not any("slowest synthesis" in n for n in w.notes)
