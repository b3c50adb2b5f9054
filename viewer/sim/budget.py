"""Upstream's memory budget: how many syntheses a budget-gated daemon runs, and when a
partition may start one (pure: no Qt, no viewer imports).

Upstream's current engine (curio ``extern/cuzk/cuzk-core/src``, read at e0294b0) sizes its
synthesis concurrency from one memory budget instead of a fixed partition-worker count:

- config.rs ~100 ``resolve_total_budget``: the budget is the machine's RAM less a 5 GiB
  safety margin, unless set; engine.rs ~1196 logs it, ``memory budget initialized
  total_budget_gib=N`` (bytes / GiB, rounded down).
- engine.rs ~1412-1437: ``max_partitions_in_budget = total / POREP_PARTITION_FULL_BYTES``
  (14 GiB), ``lookahead = max(configured, min(max_partitions_in_budget, 32))``,
  ``max_parallel = max_parallel_synthesis`` (18 when 0), ``synth_worker_count =
  max(min(max_partitions_in_budget, max_parallel), 2)``; engine.rs ~1839 logs them
  (``starting pipeline: synthesis task + GPU workers (budget-gated)``; that line's
  ``num_gpus`` is the GPU *workers*, ``num_workers``: engine.rs ~1338's ``initializing
  GPU workers`` has the GPUs).
- engine.rs ~1628: one dispatcher, in (job, partition) order, acquires a partition's
  ``proof_kind_full_bytes`` (memory.rs) before its synthesis and blocks while the budget
  has no room: the backpressure.  engine.rs ~3165 releases ``proof_kind_abc_bytes`` when
  ``gpu_prove_start`` returns (after the kernel mutex is released), the rest when the call
  finishes (its GPU_END).  SRS and PCE hold budget too: about 44 + 25.7 GiB for PoRep 32G.
- memory.rs ~191: a request larger than the whole budget is warned of ("will block until
  possible") and then waits for ever.  ``Gate`` lets such a partition through alone
  instead (when no other partition holds budget), so that a replay always ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

GIB = 1 << 30
#: Per proof kind, (full, a/b/c) GiB a partition reserves (memory.rs ``proof_kind_*_bytes``);
#: a kind the table lacks reserves a PoRep partition's.
RESERVATION_GIB: dict[str, tuple[float, float]] = {
    "porep-c2": (14.0, 13.0),
    "window-post": (14.0, 13.0),
    "snap-update": (9.0, 8.0),
    "winning-post": (0.5, 0.25),
}
PARTITION_FULL_GIB = RESERVATION_GIB["porep-c2"][0]
DEFAULT_MAX_PARALLEL = 18  # engine.rs: max_parallel_synthesis 0 means 18 (config.rs default)
MIN_WORKERS = 2  # engine.rs: .max(2)
LOOKAHEAD_MAX = 32  # engine.rs: max_partitions_in_budget.min(32)
#: SRS and PCE of PoRep 32G, held from the first proof on (cuzk-project.md's idle 69 GiB).
BASELINE_GIB = 69.0
#: A budget past a pebibyte is a typo.
MAX_BUDGET_GIB = float(1 << 20)


def check_budget(budget_gib: float, name: str = "budget") -> float:
    """``budget_gib`` as a float, or ValueError naming ``name`` when it is not a finite
    number more than 0 and at most ``MAX_BUDGET_GIB``."""
    ok = isinstance(budget_gib, int | float) and not isinstance(budget_gib, bool)
    if not (ok and math.isfinite(budget_gib) and 0 < budget_gib <= MAX_BUDGET_GIB):
        raise ValueError(
            f"{name} must be a finite number more than 0 and at most {MAX_BUDGET_GIB:g} GiB, "
            f"not {budget_gib!r}"
        )
    return float(budget_gib)


def partitions_in_budget(budget_gib: float) -> int:
    """engine.rs ~1413: PoRep partitions whose full reservation the whole budget holds,
    in whole bytes as the daemon divides them."""
    return int(check_budget(budget_gib) * GIB) // int(PARTITION_FULL_GIB * GIB)


def synth_workers(budget_gib: float, max_parallel: int = DEFAULT_MAX_PARALLEL) -> int:
    """engine.rs ~1433-1437: the synthesis workers a budget-gated daemon starts."""
    if max_parallel < 1:
        max_parallel = DEFAULT_MAX_PARALLEL  # engine.rs: 0 means the default
    return max(min(partitions_in_budget(budget_gib), max_parallel), MIN_WORKERS)


def lookahead(budget_gib: float, configured: int = 1) -> int:
    """engine.rs ~1412-1414: the effective synthesis lookahead it logs."""
    return max(max(configured, 1), min(partitions_in_budget(budget_gib), LOOKAHEAD_MAX))


def partitions_beside(budget_gib: float, baseline_gib: float = BASELINE_GIB) -> int:
    """PoRep partitions whose full reservations fit in the budget beside SRS and PCE: the
    most that synthesize (or wait for a GPU) at once; at least one, let through alone."""
    room = check_budget(budget_gib) - baseline_gib
    return max(1, int(math.floor(room / PARTITION_FULL_GIB + 1e-9)))


def max_parallel_of(partitions: int | None, workers: int | None) -> int:
    """The ``max_parallel_synthesis`` a daemon ran with, from what it logged: its workers
    where they are fewer than the budget holds (the cap bound them), else the default (or
    the workers, where they are more than the default)."""
    if workers is None or workers < 1:
        return DEFAULT_MAX_PARALLEL
    if partitions is not None and MIN_WORKERS < workers < partitions:
        return workers
    return max(workers, DEFAULT_MAX_PARALLEL)


@dataclass(frozen=True, eq=False)
class Gate:
    """The budget a run plays under: its total, what SRS and PCE hold from the start, and
    each task's full and a/b/c reservation (GiB)."""

    total_gib: float
    baseline_gib: float
    full_gib: np.ndarray
    abc_gib: np.ndarray


def gate(total_gib: float, baseline_gib: float, kinds: list[str]) -> Gate:
    """The ``Gate`` of tasks of proof kinds ``kinds`` (one per task)."""
    sizes = np.array(
        [RESERVATION_GIB.get(k, RESERVATION_GIB["porep-c2"]) for k in kinds], dtype=np.float64
    ).reshape(len(kinds), 2)
    return Gate(check_budget(total_gib), float(baseline_gib), sizes[:, 0], sizes[:, 1])
