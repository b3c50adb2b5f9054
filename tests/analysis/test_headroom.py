"""The verdict and the floors say what more synthesis concurrency gains as the log's own
load shows it (issue 25 item 5, ``viewer.analysis.headroom``).

Three kinds of log: one that shows synthesis slowing with the syntheses beside it (a
simulated run whose jobs arrive every 9 s, so its syntheses ran beside 4 to 12 busy
threads, on a machine with contention), where the gain is the floors' with synthesis so
slowed and the runs at those settings hold it; the same run on a machine without
contention, where the verdict is today's; and logs whose syntheses all ran beside about
as many threads (the Phase 8 sample, the real H200 base run), which cannot tell and say
what run would settle it.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from tests.real_runs import REAL as REAL_RUNS
from viewer.analysis import summarize
from viewer.analysis.headroom import headroom
from viewer.analysis.verdict import decide
from viewer.export.report import floor_rows, summary_dict
from viewer.io import open_log
from viewer.model import Session
from viewer.sim.contention import Contention
from viewer.sim.model import SimConfig, simulate
from viewer.sim.writer import WriteOptions, write

ROOT = Path(__file__).resolve().parents[2]
PHASE8 = ROOT / "sample_logs" / "phase8_pw10_5sectors.log"
REAL = REAL_RUNS  # ../shared/real_h200, copied into the tests' data

#: The shape of sample_logs/monolithic_mixed.log (README there): mixed proof kinds, a job
#: every 9 s, pw 10; without its line noise.
MIXED = SimConfig(
    sectors=14,
    kinds=(("porep-c2", 1.0), ("snap-update", 1.0), ("window-post", 1.5), ("winning-post", 2.0)),
    seed=5,
    interval_ms=9000.0,
)


def _read(cfg: SimConfig) -> Session:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "run.log"
        write(simulate(cfg), path, WriteOptions())
        return open_log(path).sessions[0]


def _today(sm) -> str:  # noqa: ANN001
    """The verdict as it was before the load was read (the floors alone)."""
    return decide(
        sm.gpus, sm.gaps, sm.transitions, sm.cold_start, sm.cold_start_ms, sm.kernel,
        sm.throughput, sm.floors,
    ).sentence  # fmt: skip


def test_phase8_cannot_tell_and_names_the_run_that_would() -> None:
    """cuzk-project.md, Phase 7+8 "Partition Workers Sweep": pw 10 -> 30 lost 39 % ("CPU
    contention").  The Phase 8 log's syntheses all ran beside 11-12 busy threads: it no
    longer says that beyond faster kernels it takes more synthesis concurrency, but that
    it cannot tell whether that would help, and which run would settle it."""
    sm = summarize(open_log(PHASE8).sessions[0])
    assert sm.headroom is not None and sm.headroom.state == "unknown"
    said = sm.verdict.sentence
    assert "it takes more synthesis concurrency" in _today(sm)  # what it said
    assert "it takes more synthesis concurrency" not in said
    assert "gains at most 2.6 %" in said  # the floors' margin stands (faster synthesis)
    assert "this log cannot tell (its syntheses all ran beside 11-12 busy threads)" in said
    assert "a run at pw 20 would settle it" in said
    relieved = dict((r[0], r[3]) for r in floor_rows(sm.floors, sm.headroom))["synthesis"]
    assert "this log cannot tell" in relieved
    assert summary_dict(sm)["synthesis_concurrency"]["settle_pw"] == 20


@pytest.mark.parametrize(
    ("machine", "slope"),
    [(Contention(synth=0.05, cpu=0.03, cores=8.0), None), (Contention(synth=0.08, cpu=0.03), 0.08)],
)
def test_a_log_that_shows_synthesis_slowing_bounds_the_gain(
    machine: Contention, slope: float | None
) -> None:
    """A machine that time-shares past 8 threads, and one whose synthesis slows 8 % per
    busy thread: the one log shows it (its fit finds 7 threads; 7.2 %), and the gain the
    verdict gives for more synthesis concurrency is the floors' at the higher setting with
    synthesis so slowed, not the floors' margin.  The runs at those settings, simulated on
    the same machine, hold it: their synthesis floor within 12 % of the one predicted (the
    time-sharing machine's at pw 20: 14.6 s/proof against 16.2, the fit's 7 threads being
    8), and no run gains more than the verdict says, +1 point (pw 12 on the time-sharing
    machine: 3.6 % for 3.3 %)."""
    base = replace(MIXED, contention=machine)
    sm = summarize(_read(base))
    h = sm.headroom
    assert h is not None and h.state == "slows"
    if slope is None:
        assert h.load.contention.cores == pytest.approx(7, abs=1)
        assert h.gain < 0.05 < sm.floors.margin  # today: 38.6 %; the runs: 3 %
    else:
        assert h.load.contention.synth == pytest.approx(slope, abs=0.015)
    said = sm.verdict.sentence
    assert f"More synthesis concurrency gains at most {100 * h.gain:.1f} %" in said
    assert "so faster synthesis helps" in said
    measured = sm.throughput.measured_s_per_proof
    for pw in (12, 15, 20):
        run = summarize(_read(replace(base, pw=pw)))
        i = pw - h.pw
        assert run.floors.synthesis_s == pytest.approx(h.point.synthesis[i], rel=0.12), pw
        assert 1 - run.throughput.measured_s_per_proof / measured < h.gain + 0.01, pw


def test_a_log_that_shows_synthesis_keeping_its_speed_keeps_todays_verdict() -> None:
    """The same run on a machine without contention: its syntheses ran beside 4 to 12 busy
    threads at the same speed; the verdict, its floors and their remedies are today's."""
    sm = summarize(_read(MIXED))
    assert sm.headroom is not None and sm.headroom.state == "keeps"
    assert sm.verdict.sentence == _today(sm)
    assert "more synthesis concurrency or faster synthesis helps" in sm.verdict.sentence
    assert floor_rows(sm.floors, sm.headroom) == floor_rows(sm.floors)
    assert headroom(sm.session, sm.floors).gain == 0.0  # the kernel floor binds


def test_the_real_base_run_says_what_it_cannot_tell() -> None:
    """shared/real_h200 base1 (pw 8, 16 CPU threads stated): synthesis-bound, 5.8 % ahead
    of the kernel floor.  Its syntheses ran beside 7-10 busy threads, so it cannot show
    how synthesis slows (pw 16 lost 3.5 %, pw 32 7 %): the gain from more concurrency is
    said as an 'if', with the run that would settle it, never past the 16 threads."""
    sm = summarize(open_log(REAL / "base1.log.gz").sessions[0])
    said = sm.verdict.sentence
    assert sm.verdict.kind == "synthesis-bound"
    assert "more synthesis concurrency or faster synthesis helps" not in said
    assert "up to 16 busy threads, which this log cannot tell" in said
    assert "a run at pw 9 would settle it" in said
