"""A Phase 8 run whose figures equal the published reference table exactly.

The simulation is jittered like any other; a few of its drawn durations are
then pinned, in time order, so that each published figure comes out exact:

- sector 1's request arrives late, though before the first GPU_END (the pipeline
  is still filling), and its synthesis is a little slower: the 0->1 gap, a
  starved cold start;
- the dispatch overhead of the first call of sectors 2, 3, 4: their gaps;
- the proof-assembly epilogue of each sector's last call: the overlaps, and
  for sector 4 the measured s/proof;
- the kernel times: their mean, with a slower first sector (warm-up) so that
  measured s/proof can sit just under the serial CUDA time, as published.

Every pinned value stays in the range the model draws from, and each knob only
moves events after the figures already fitted, so fitting is one pass.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from viewer.sim.metrics import Figures, calls_of, figures, transitions
from viewer.sim.model import Draws, Schedule, SimConfig, draw, run, set_kernel

GAPS_MS = (4490, 21, 244, 45)
OVERLAPS_MS = (761, 4048, 4834, 3916)
KERNEL_MEAN_MS = 3746
MEASURED_MS = 149_600  # sector 4 done - sector 0 done = 4 x 37.4 s
ASSEMBLE_TARGET_MS = 900  # what the last sector's epilogue should come out near
ARRIVAL_LEAD_MS = 300  # sector 1 arrives this long before the run's first GPU_END


class FitError(RuntimeError):
    """The pinned schedule cannot reach the published figures (bad seed or config)."""


def phase8_config(seed: int = 10) -> SimConfig:
    """The published run: one GPU, gw=2, pw=10, 5 porep-c2 sectors, a mean partition
    synthesis of ~36.5 s as published (so its synthesis floor is 36.5 s/proof)."""
    return SimConfig(sectors=5, pw=10, gw=2, gpus=1, seed=seed, synth_ms=36500.0, warmup_ms=1400.0)


def _fit(
    cfg: SimConfig,
    d: Draws,
    nudge: Callable[[int], None],
    measure: Callable[[Schedule], int],
    target: int,
) -> Schedule:
    """``nudge`` a drawn duration until ``measure`` hits ``target`` (slope 1, so a few steps)."""
    err = 0
    for _ in range(12):
        s = run(cfg, d)
        err = target - measure(s)
        if err == 0:
            return s
        nudge(err)
    raise FitError(f"could not fit {target}: stuck at {target - err}")


def _at(knob: np.ndarray, index: int | np.ndarray) -> Callable[[int], None]:
    """A nudge that moves ``knob[index]``."""

    def nudge(err: int) -> None:
        knob[index] += err

    return nudge


def _first_call(s: Schedule, job: int) -> int:
    idx = np.flatnonzero(s.draws.job == job)
    return int(idx[np.argmin(s.start[idx])])


def _done(s: Schedule, job: int) -> int:
    return int(s.end[s.draws.job == job].max())


def _pin_kernels(d: Draws, shift: int, warmup_ms: float) -> None:
    """Kernel total exactly 50 x the mean, with ``shift`` ms moved into sector 0."""
    k = d.kernel.copy()
    first = d.job == 0
    k[first] += shift // int(first.sum())
    k[~first] -= shift // int((~first).sum())
    residual = KERNEL_MEAN_MS * len(k) - int(k.sum()) - int(warmup_ms)
    k += residual // len(k)
    k[: residual % len(k)] += 1
    for i, total in enumerate(k.tolist()):
        set_kernel(d, i, total)


def solve(cfg: SimConfig | None = None) -> Schedule:
    """The schedule of the reference run; raises FitError when the seed cannot make it."""
    cfg = cfg or phase8_config()
    shift = 0
    for _ in range(6):
        d = draw(cfg)
        _pin_kernels(d, shift, cfg.warmup_ms)
        s = run(cfg, d)
        for k in range(4):

            def gap(s: Schedule, k: int = k) -> int:
                return transitions(calls_of(s))[k].gap_ms

            def overlap(s: Schedule, k: int = k) -> int:
                return transitions(calls_of(s))[k].overlap_ms

            if k == 0:
                # Sector 1 is submitted late, just before sector 0's first call ends (so
                # the pipeline is still filling: a cold start), and synthesizes a little
                # slower while sector 0's calls load the CPU: its first partition is
                # queued after a worker went idle.
                d.arrival[1] = int(s.end.min()) - ARRIVAL_LEAD_MS
                s = _fit(cfg, d, _at(d.synth, d.job == 1), gap, GAPS_MS[0])
            else:
                s = _fit(cfg, d, _at(d.dispatch, _first_call(s, k + 1)), gap, GAPS_MS[k])
            s = _fit(cfg, d, _at(d.assemble, k), overlap, OVERLAPS_MS[k])

        def measured(s: Schedule) -> int:
            return _done(s, 4) - _done(s, 0)

        s = _fit(cfg, d, _at(d.assemble, 4), measured, MEASURED_MS)
        miss = int(d.assemble[4]) - ASSEMBLE_TARGET_MS
        if abs(miss) <= 150:
            check(s)
            return s
        shift -= miss * 10 // 9
    raise FitError("kernel warm-up shift did not converge")


def check(s: Schedule) -> Figures:
    """Raise FitError unless ``s`` shows every published figure; return them."""
    f = figures(calls_of(s))
    got = dict(
        kernel=f.kernel_mean_ms,
        measured=round(f.measured_ms / 1000, 1),
        efficiency=round(100 * f.efficiency[0], 1),
        cross=f.cross_sector_idle_ms,
        gaps=tuple(t.gap_ms for t in f.transitions),
        overlaps=tuple(t.overlap_ms for t in f.transitions),
        starved=tuple(t.starved for t in f.transitions),
    )
    want = dict(
        kernel=float(KERNEL_MEAN_MS),
        measured=37.4,
        efficiency=100.0,
        cross=0,
        gaps=GAPS_MS,
        overlaps=OVERLAPS_MS,
        starved=(True, False, False, False),
    )
    if got != want:
        raise FitError(f"figures {got} != published {want}")
    # Pinned durations must stay plausible, or the sample would be a forgery.
    if s.draws.assemble.min() < 100 or s.draws.assemble.max() > 2500:
        raise FitError(f"proof-assembly epilogues out of range: {s.draws.assemble}")
    cfg = s.config
    slowest = cfg.synth_ms * (1 + 3 * 1.5 * cfg.jitter)  # what ``draw`` can give
    if s.draws.synth.max() > slowest:
        raise FitError(f"a synthesis of {s.draws.synth.max()} ms is beyond the drawn range")
    if s.synth_start[s.draws.job == 1].min() >= s.end.min():
        raise FitError("sector 1 must start synthesis before the first GPU_END (a cold start)")
    return f
