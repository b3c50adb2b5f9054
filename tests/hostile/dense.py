"""Dense logs of many short jobs, as a daemon serving mostly PoSt proofs writes them (issue
27, item 9): every job one monolithic GPU call, TIMELINE lines only, at any size (the tests
build a moderate one, the benchmarks the issue's 1.5 M jobs).

The run is a steady pipeline of known figures: job ``i`` arrives (its SYNTH_START) at
``i * PERIOD_MS``, synthesizes SYNTH_MS, is queued, and is proved on worker ``i % 2`` of
one GPU for GPU_MS, so a job completes every PERIOD_MS (measured s/proof PERIOD_MS / 1000)
and the GPU is busy GPU_MS of every PERIOD_MS.  The lines are written in the order of their
offsets, as a daemon writes them.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from tests.hostile.shapes import DAEMON_START

PERIOD_MS = 100  # between two jobs' arrivals, and between two completions
SYNTH_MS = 120  # every event within 22 ms after a job's arrival: no arrival is inferred
GPU_MS = 90  # GPU_START -> GPU_END on worker i % 2: the GPU busy 90 % of the time
WORKERS = 2
KINDS = ("window-post", "winning-post")  # job i's kind: KINDS[i % 20 == 0] (1 in 20 winning)


def job_id(i: int) -> str:
    """Job ``i``'s id, a UUID as the daemon's clients send (one per proof)."""
    return f"{i:08x}-5d1e-4c3b-8a2f-0e9d8c7b6a5f"


def worker_lines() -> str:
    return "".join(
        "2026-02-19T01:00:00.001272Z  INFO cuzk_core::engine: pipeline GPU worker started "
        f"worker_id={w} gpu=0 sub_id={w}\n"
        for w in range(WORKERS)
    )


#: One job's events: (ms after its arrival, the line's format, fields ``t``, ``j``, ``w``,
#: ``k`` filled per job).
_EVENTS = (
    (0, "TIMELINE,{t},SYNTH_START,{j},kind={k}\n"),
    (SYNTH_MS, f"TIMELINE,{{t}},SYNTH_END,{{j}},synth_ms={SYNTH_MS}\n"),
    (SYNTH_MS, "TIMELINE,{t},GPU_QUEUE,{j},monolithic\n"),
    (SYNTH_MS + 1, "TIMELINE,{t},GPU_PICKUP,{j},worker={w}\n"),
    (SYNTH_MS + 2, "TIMELINE,{t},GPU_START,{j},worker={w}\n"),
    (SYNTH_MS + 2 + GPU_MS, f"TIMELINE,{{t}},GPU_END,{{j}},worker={{w}},gpu_ms={GPU_MS}\n"),
)
#: The events written in one period ``[k * PERIOD_MS, (k + 1) * PERIOD_MS)``, in offset
#: order: (ms into the period, how many periods before job k the job arrived, format).
_PERIOD = sorted(
    ((d % PERIOD_MS, d // PERIOD_MS, form) for d, form in _EVENTS), key=lambda e: (e[0], -e[1])
)


def dense_text(jobs: int, first: int = 0, last: int | None = None) -> str:
    """The TIMELINE lines of the periods ``first`` to ``last`` (all: ``jobs`` and those the
    last jobs end in) of a run of ``jobs`` jobs."""
    last = jobs + _EVENTS[-1][0] // PERIOD_MS + 1 if last is None else last
    out = []
    for k in range(first, last):
        for into, back, form in _PERIOD:
            i = k - back
            if 0 <= i < jobs:
                t = k * PERIOD_MS + into
                out.append(form.format(t=t, j=job_id(i), w=i % WORKERS, k=KINDS[i % 20 == 0]))
    return "".join(out)


def dense_jobs(path: Path, jobs: int) -> Path:
    """A log of ``jobs`` one-call jobs at ``path``, gzip-compressed when it ends in .gz
    (~310 B a job as text; 1.5 M jobs: ~465 MB, ~13 MB compressed)."""
    opener = gzip.open if path.suffix == ".gz" else open
    kwargs = {"compresslevel": 6} if path.suffix == ".gz" else {}
    periods = jobs + _EVENTS[-1][0] // PERIOD_MS + 1
    with opener(path, "wt", encoding="utf-8", newline="\n", **kwargs) as out:
        out.write(f"{DAEMON_START}\n{worker_lines()}")
        step = 20_000
        for k in range(0, periods, step):
            out.write(dense_text(jobs, k, min(k + step, periods)))
    return path
