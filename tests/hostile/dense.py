"""Dense logs of many short jobs, as a daemon serving mostly PoSt proofs writes them (issue
27, item 9): every job one monolithic GPU call, TIMELINE lines only, at any size (the tests
build a moderate one, the benchmarks the issue's 1.5 M jobs).

The run is a steady pipeline of known figures: job ``i`` arrives (its SYNTH_START) at
``i * PERIOD_MS``, synthesizes SYNTH_MS, is queued, and is proved on worker ``i % 2`` of
one GPU for GPU_MS, so a job completes every PERIOD_MS (measured s/proof PERIOD_MS / 1000)
and the GPU is busy GPU_MS of every PERIOD_MS.  The lines are written in the order of their
offsets, as a daemon writes them.

``varied``: each job's synthesis and GPU call last their own time (``varied_ms``: spread
over SYNTH_SPREAD and GPU_SPREAD ms about the figures above, the same mean), as a real
daemon's do: no column of the log is one value, as a what-if's plan could hold once.
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


SYNTH_SPREAD = 41  # varied: synthesis SYNTH_MS - 20 .. SYNTH_MS + 20 ms
GPU_SPREAD = 11  # varied: the call GPU_MS - 5 .. GPU_MS + 5 ms (a worker's next call is 200 ms on)


def varied_ms(i: int) -> tuple[int, int]:
    """Job ``i``'s (synthesis, GPU call) ms in a varied log: spread evenly over their ranges
    (multiplicative hashing), means SYNTH_MS and GPU_MS over whole cycles."""
    return (
        SYNTH_MS - SYNTH_SPREAD // 2 + (i * 7919) % SYNTH_SPREAD,
        GPU_MS - GPU_SPREAD // 2 + (i * 104_729) % GPU_SPREAD,
    )


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


def varied_text(jobs: int, first: int, last: int) -> str:
    """``dense_text`` of a varied log (module docstring): the lines whose offsets fall in
    the periods ``first`` to ``last``, in offset order (a job's own in event order)."""
    reach = (SYNTH_MS + SYNTH_SPREAD + GPU_MS + GPU_SPREAD + 2) // PERIOD_MS + 1
    lo, hi = first * PERIOD_MS, last * PERIOD_MS
    out = []
    for i in range(max(0, first - reach), min(jobs, last)):
        synth, gpu = varied_ms(i)
        t0, j, w, k = i * PERIOD_MS, job_id(i), i % WORKERS, KINDS[i % 20 == 0]
        lines = (
            (t0, f"TIMELINE,{t0},SYNTH_START,{j},kind={k}\n"),
            (t0 + synth, f"TIMELINE,{t0 + synth},SYNTH_END,{j},synth_ms={synth}\n"),
            (t0 + synth, f"TIMELINE,{t0 + synth},GPU_QUEUE,{j},monolithic\n"),
            (t0 + synth + 1, f"TIMELINE,{t0 + synth + 1},GPU_PICKUP,{j},worker={w}\n"),
            (t0 + synth + 2, f"TIMELINE,{t0 + synth + 2},GPU_START,{j},worker={w}\n"),
            (
                t0 + synth + 2 + gpu,
                f"TIMELINE,{t0 + synth + 2 + gpu},GPU_END,{j},worker={w},gpu_ms={gpu}\n",
            ),
        )
        out.extend((t, i, e, line) for e, (t, line) in enumerate(lines) if lo <= t < hi)
    out.sort()
    return "".join(line for *_, line in out)


def dense_jobs(path: Path, jobs: int, varied: bool = False) -> Path:
    """A log of ``jobs`` one-call jobs at ``path``, gzip-compressed when it ends in .gz
    (~310 B a job as text; 1.5 M jobs: ~465 MB, ~13 MB compressed); ``varied``: each job's
    durations its own (module docstring)."""
    opener = gzip.open if path.suffix == ".gz" else open
    kwargs = {"compresslevel": 6} if path.suffix == ".gz" else {}
    periods = jobs + _EVENTS[-1][0] // PERIOD_MS + 1
    if varied:
        periods = jobs + (SYNTH_MS + SYNTH_SPREAD + GPU_MS + GPU_SPREAD + 2) // PERIOD_MS + 1
    text = varied_text if varied else dense_text
    with opener(path, "wt", encoding="utf-8", newline="\n", **kwargs) as out:
        out.write(f"{DAEMON_START}\n{worker_lines()}")
        step = 20_000
        for k in range(0, periods, step):
            out.write(text(jobs, k, min(k + step, periods)))
    return path
