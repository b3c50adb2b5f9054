"""How well the what-if predicts, on random pairs of simulated runs (``make bench``).

Each pair is two runs of the bundled simulator from one seed that differ in one knob (GPU
workers, synthesis slots, GPUs, kernel / synthesis / prep time, queue bound), over 8-20
jobs (porep, or mixed with snap updates or posts) arriving at once or every 20-40 s on 1-3
GPUs.  Run A's log alone is replayed with
the knob changed, and the prediction is held to run B's measured s/proof.  Where the log
hides when jobs arrived or how long its queue may grow, the what-if also gives the other
ends (``WhatIf.late``, ``.bounded``): the misses are counted with a note on what the log
cannot show, and with run B between the ends.  Not a timed assertion: it
prints rows of the table; it asserts only that no pair raises.
"""

from __future__ import annotations

import random
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from table import add_row

from viewer.analysis import throughput
from viewer.io import open_log
from viewer.model import Session
from viewer.sim.contention import Contention
from viewer.sim.model import SimConfig, simulate
from viewer.sim.writer import WriteOptions, write
from viewer.whatif import Knobs, what_if
from viewer.whatif.load import fit, fixed, sample

pytestmark = pytest.mark.bench
PAIRS = 300
#: Proof kinds of a run: porep alone (half the runs), with snap updates, with window and
#: winning posts (one GPU call each).
KINDS = (
    (("porep-c2", 1.0),),
    (("porep-c2", 1.0),),
    (("porep-c2", 0.6), ("snap-update", 0.4)),
    (("porep-c2", 0.5), ("window-post", 0.3), ("winning-post", 0.2)),
)
CLOSE = 0.05  # a prediction this close (relative) to run B counts as right
#: The notes of a what-if on what the log cannot show: arrivals, a queue bound, slots, ties.
UNSEEN = (
    "the log hides when",
    "queues up to",
    "no partition waited for a synthesis slot",
    "started synthesis in one millisecond",
)


def _measured(cfg: SimConfig) -> tuple[Session, float | None]:
    """Run ``cfg`` through the simulator, its log through the reader: (session, s/proof)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "run.log"
        write(simulate(cfg), path, WriteOptions())
        session = open_log(path).sessions[0]
    return session, throughput(session).measured_s_per_proof


def _pair(rnd: random.Random) -> tuple[SimConfig, Knobs, SimConfig]:
    """Run A, the knob, run B."""
    a = SimConfig(
        sectors=rnd.choice([8, 12, 20]), pw=rnd.choice([4, 6, 10, 14, 20, 30]),
        gw=rnd.choice([1, 2, 3]), gpus=rnd.choice([1, 1, 2, 3]),
        synth_ms=rnd.choice([20_000.0, 37_000.0, 50_000.0]),
        kernel_ms=rnd.choice([1873.0, 3746.0]),
        interval_ms=rnd.choice([0.0, 0.0, 20_000.0, 40_000.0]),
        queue_cap=rnd.choice([None, None, 4, 12]), jitter=rnd.choice([0.04, 0.1]),
        warmup_ms=rnd.choice([0.0, 2000.0]), seed=rnd.randrange(1000),
        dispatch_ms=rnd.choice([4.0, 40.0]), kinds=rnd.choice(KINDS),
    )  # fmt: skip
    knob = rnd.choice(["gw", "pw", "gpus", "kernel", "synth", "prep", "queue_cap"])
    if knob in ("gw", "pw", "gpus", "queue_cap"):
        values = {"gw": (1, 2, 3, 4), "pw": (4, 6, 10, 14, 20, 30, 40), "gpus": (1, 2, 3, 4)}
        v = rnd.choice([x for x in values.get(knob, (2, 4, 12, 100)) if x != getattr(a, knob)])
        return a, Knobs(**{knob: v}), replace(a, **{knob: v})
    scale = rnd.choice({"prep": [0.3, 0.5, 2.0]}.get(knob, [0.5, 0.7, 1.5]))
    field = f"{knob}_ms"
    return a, Knobs(**{f"{knob}_scale": scale}), replace(a, **{field: getattr(a, field) * scale})


def test_one_knob_predictions_against_the_simulated_runs() -> None:
    rnd = random.Random(20261204)
    close = misses = between = hidden = replayed = 0
    for _ in range(PAIRS):
        a, knobs, b = _pair(rnd)
        session, _ = _measured(a)
        _, truth = _measured(b)
        w = what_if(session, knobs)
        error = w.replay_error
        replayed += error is not None and abs(error) <= 0.03
        predicted = w.scenario.s_per_proof
        if truth is None or predicted is None:
            continue
        if abs(predicted / truth - 1) <= CLOSE:
            close += 1
            continue
        misses += 1
        ends = [o.s_per_proof for o in (w.scenario, w.late, w.bounded, w.swapped) if o]
        ends = [x for x in ends if x is not None]
        between += min(ends) * (1 - CLOSE) <= truth <= max(ends) * (1 + CLOSE)
        hidden += any(any(key in n for key in UNSEEN) for n in w.notes)
    add_row(
        f"what-if on {PAIRS} random one-knob pairs of simulated runs",
        f"{close} within {CLOSE:.0%} of run B",
        f"{PAIRS} pairs",
        close / PAIRS,
    )
    add_row(
        "... of the others: a note on what the log cannot show / run B between the ends",
        f"{hidden} / {between} of {misses}",
        "",
    )
    add_row(
        "... run A replayed unchanged within 3 % of its measured s/proof",
        f"{replayed} of {PAIRS}",
        f"{PAIRS} pairs",
        replayed / PAIRS,
    )


LOADED_PAIRS = 60
#: Machines whose stages slow down with load (viewer.sim.contention): synthesis and the
#: GPU workers' CPU work per added busy thread, and where they time-share.
SLOPES = ((0.02, 0.0), (0.04, 0.03), (0.06, 0.06))
CORES = (None, 12.0, 16.0, 24.0)


def test_predictions_where_stages_slow_down_with_load() -> None:
    """Run B is run A with one knob changed on a machine whose durations grow with load, so
    B's durations differ from A's by more than the knob.  Three predictions of B from A:
    fixed durations (the replay before the load model), A's own log, and A calibrated with
    two runs of the machine at pw 5 and 24 (never B)."""
    rnd = random.Random(20261205)
    counts = {"fixed": [0, 0], "own": [0, 0], "calibrated": [0, 0]}
    in_band = {"own": 0, "calibrated": 0}
    for _ in range(LOADED_PAIRS):
        synth, cpu = rnd.choice(SLOPES)
        machine = Contention(synth=synth, cpu=cpu, cores=rnd.choice(CORES))
        a = SimConfig(
            sectors=rnd.choice([8, 12]), pw=rnd.choice([6, 10, 14]), gw=rnd.choice([1, 2]),
            seed=rnd.randrange(1000), contention=machine,
            kinds=rnd.choice(KINDS), interval_ms=rnd.choice([0.0, 0.0, 20_000.0]),
        )  # fmt: skip
        knob = rnd.choice(["pw", "gw", "kernel", "synth"])
        if knob == "pw":
            value = rnd.choice([x for x in (4, 8, 12, 16, 20) if x != a.pw])
            knobs, b = Knobs(pw=value), replace(a, pw=value)
        elif knob == "gw":
            knobs, b = Knobs(gw=3 - a.gw), replace(a, gw=3 - a.gw)
        else:
            field = f"{knob}_ms"
            knobs = Knobs(**{f"{knob}_scale": 0.5})
            b = replace(a, **{field: getattr(a, field) * 0.5})
        session, _ = _measured(a)
        _, truth = _measured(b)
        if truth is None:
            continue
        others = [_measured(replace(a, pw=x))[0] for x in (5, 24)]
        calibrated = fit(
            [sample(session, "A")] + [sample(s, f"c{i}") for i, s in enumerate(others)]
        )
        for name, load in (("fixed", fixed()), ("own", None), ("calibrated", calibrated)):
            w = what_if(session, knobs, load=load)
            p = w.scenario.s_per_proof
            if p is None:
                continue
            counts[name][0] += abs(p / truth - 1) <= 0.03
            counts[name][1] += abs(p / truth - 1) <= CLOSE
            if name in in_band:
                lo, hi = w.band
                in_band[name] += lo * (1 - 0.01) <= truth <= hi * (1 + 0.01)
    for name, (three, five) in counts.items():
        add_row(
            f"what-if on {LOADED_PAIRS} pairs with load-dependent durations: {name}",
            f"{three} within 3 %, {five} within {CLOSE:.0%} of run B"
            + (f"; B in the band {in_band[name]}" if name in in_band else ""),
            f"{LOADED_PAIRS} pairs",
            five / LOADED_PAIRS,
        )
