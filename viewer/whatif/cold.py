"""The first synthesis of each slot runs cold, whatever the knobs (domain.md "Load").

A slot's first partition pays what the later ones do not: first allocations and page
faults, caches and (in a pool of processes) the imports of each process.  The log shows it:
its first wave (one partition per slot, ``pw`` of them) against the rest.  The replay
keeps every partition's measured synthesis, so with ``pw`` slots changed to ``pw'`` the
first wave is no longer the first ``pw'`` partitions: with more slots, the partitions that
now start a slot were measured warm; with fewer, some that were measured cold are now a
slot's second.  Each such partition's synthesis is set to what a first one takes: its
work times the log's cold ratio (the first wave's mean work against the warm partitions'
of the same proof kind), or divided by it.  Partitions cold in both keep their own work
(their stragglers too); a log whose first wave does not run measurably slower (by two
standard errors, in time and in work) changes nothing.

On the real H200 runs (``shared/real_h200``) the first wave took 1.11-1.19 times the warm
synthesis (k05's, 1.20 with one 1.95 straggler, is not significant); replayed at pw 16
from a pw 8 log, the second job's partitions, warm in the log, were cold in the run (its
first completions 2.8 s apart, 1.8 replayed).
"""

from __future__ import annotations

import numpy as np

from viewer.sim.model import Draws

#: A first wave counts as cold where its mean work exceeds the warm mean by this many
#: standard errors.
SIGNIFICANT = 2.0
#: A straggler of the first wave worth less than this of the predicted s/proof is not said.
ENDS_MATTER = 0.01


def was_cold(synth_start: np.ndarray, pw: int) -> np.ndarray:
    """Per task, whether it was its slot's first in the log: the ``pw`` earliest
    SYNTH_STARTs (``synth_start``: per task, NaN where the log shows none)."""
    out = np.zeros(len(synth_start), bool)
    ok = np.flatnonzero(np.isfinite(synth_start))
    if len(ok) <= pw:
        out[ok] = True
    elif pw > 0:
        out[ok[np.argpartition(synth_start[ok], pw - 1)[:pw]]] = True
    return out


def cold_ratio(synth: np.ndarray, kind: np.ndarray, cold: np.ndarray) -> float:
    """The first wave's mean synthesis work against the warm partitions' of the same kind
    (``kind``: per task, a code); 1.0 where it is not measurably slower, or cannot be told."""
    ratios = []
    for k in np.unique(kind[cold]):
        warm = synth[(kind == k) & ~cold]
        if len(warm) < max(2, int((cold & (kind == k)).sum())) or not warm.mean() > 0:
            continue
        ratios.append(synth[(kind == k) & cold] / warm.mean())
    if not ratios:
        return 1.0
    r = np.concatenate(ratios)
    if len(r) < 2:
        return 1.0
    se = r.std(ddof=1) / np.sqrt(len(r))
    mean = float(r.mean())
    return mean if mean - 1.0 > SIGNIFICANT * se else 1.0


def cold_factors(
    synth_start: np.ndarray,
    measured: np.ndarray,
    pw: int,
    log: Draws,
    played: Draws,
    slots: int,
) -> np.ndarray | None:
    """Per task of ``played`` (``log``'s tasks, its jobs cycled as ``replay.cycled`` does
    where it has more), the factor on its synthesis that makes the first task of each of
    ``slots`` slots the cold one (module docstring).  ``log``: the plan's tasks (of a log
    that ran ``pw`` slots; per task its SYNTH_START ``synth_start`` and its synthesis as
    measured, NaN where unknown), their synthesis as work where a load model plays them.
    None where nothing changes.

    The first wave ran with the GPUs idle, less beside it than later: it counts as cold
    where it ran slower in time as well as in work.  Where only the load model says so it
    may be the model's error at a load no warm partition ran (a simulated machine without a
    cold start, fitted on its own log, reads 6 % in work and -6 % in time)."""
    cold = was_cold(synth_start, pw)
    _, codes = np.unique(np.asarray(log.job_kind, dtype=str), return_inverse=True)
    kind = codes.reshape(-1)[log.job]
    measured = np.asarray(measured, dtype=np.float64)
    measured = np.where(np.isfinite(measured), measured, log.synth)
    r = min(cold_ratio(log.synth.astype(np.float64), kind, cold), cold_ratio(measured, kind, cold))
    if r == 1.0:
        return None
    n = len(log.arrival)
    starts = np.searchsorted(log.job, np.arange(n + 1))
    pstarts = np.searchsorted(played.job, np.arange(len(played.arrival) + 1))
    tasks = np.arange(len(played.job))
    source = starts[played.job % n] + tasks - pstarts[played.job]
    now = tasks < slots  # slot order: the first tasks start the slots
    before = cold[source]
    if (now == before).all():
        return None
    return np.power(r, now.astype(np.float64) - before.astype(np.float64))


def straggler_note(synth_start: np.ndarray, synth: np.ndarray, pw: int, jobs: int, s: float) -> str:
    """Where the log's first wave ran cold and a slow one of it sets the first completion:
    what the interval between completions of ``jobs`` jobs rests on ("" otherwise).
    ``synth_start``, ``synth``: per task of the log, ms; ``s``: the predicted s/proof.

    The interval counts from the first completion, which waits for the first job's slowest
    synthesis; cold, that one varies from run to run more than any later (the real H200
    runs' first waves peaked at 1.2-1.6 times their warm synthesis, k05's at 1.95: its
    first completion came 1.1 s late, its interval over 12 jobs 5 % short)."""
    cold = was_cold(synth_start, pw)
    if jobs < 2 or not s > 0 or cold.sum() < 2 or cold.all():
        return ""
    if cold_ratio(synth, np.zeros(len(synth), np.int64), cold) == 1.0:
        return ""
    wave = synth[cold]
    late = (float(wave.max()) - float(np.median(wave))) / 1000.0
    shift = late / (jobs - 1)
    if shift < ENDS_MATTER * s:
        return ""
    warm = float(np.mean(synth[~cold]))
    return (
        f"the interval between completions counts from the first, which waits for the "
        f"first job's slowest synthesis: cold, {wave.max() / 1000:.1f} s in this log "
        f"({wave.max() / warm:.2f}x the warm ones, {late:.1f} s after its wave's middle), "
        f"worth {shift:.2f} s/proof over {jobs} jobs; another run's cold start is as likely "
        "to be slower or faster, and wall time / proofs does not rest on it"
    )
