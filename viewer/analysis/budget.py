"""A budget-gated daemon's memory budget and the synthesis concurrency it implies (no Qt).

Upstream's current daemon sizes synthesis from a memory budget, not a fixed pw
(``viewer.sim.budget`` follows its engine.rs): the log's head states the budget and what
the daemon sized from it (``Session.facts``).  Here: the budget, the synthesis workers it
started, and how many partitions' reservations fit beside SRS and PCE at once, which is
what bounds the syntheses when it is fewer than the workers.
"""

from __future__ import annotations

from dataclasses import dataclass

from viewer.model import Session
from viewer.sim.budget import (
    BASELINE_GIB,
    PARTITION_FULL_GIB,
    max_parallel_of,
    partitions_beside,
    partitions_in_budget,
    synth_workers,
)


@dataclass(frozen=True)
class Budget:
    """What a budget-gated session's head states and implies (None: not stated)."""

    total_gib: int | None
    workers: int | None  # synthesis workers: as logged, else as the daemon sizes them
    partitions_in_budget: int | None  # the whole budget / 14 GiB
    max_parallel: int  # max_parallel_synthesis, as the log shows it (default 18)
    baseline_gib: float  # SRS and PCE, held beside the partitions
    at_once: int | None  # partitions whose 14 GiB fit beside the baseline
    workers_logged: bool  # the workers are the log's, not derived

    @property
    def binds(self) -> bool:
        """The budget, not the workers, bounds the syntheses at once."""
        return None not in (self.at_once, self.workers) and self.at_once < self.workers

    def describe(self) -> str:
        """ "200 GiB -> 14 synthesis workers (logged; budget / 14 GiB, at most 18, at least
        2); 9 partitions' 14 GiB fit beside 69 GiB of SRS and PCE: the budget bounds
        synthesis at 9 at once"."""
        if self.total_gib is None:
            shown = "no believable budget stated"
            return shown if self.workers is None else f"{shown}; {self.workers} synthesis workers"
        how = "logged" if self.workers_logged else "as the daemon sizes them"
        out = (
            f"{self.total_gib} GiB -> {self.workers} synthesis workers ({how}; budget / "
            f"{PARTITION_FULL_GIB:g} GiB, at most {self.max_parallel}, at least 2); "
            f"{self.at_once} partitions' {PARTITION_FULL_GIB:g} GiB fit beside "
            f"{self.baseline_gib:g} GiB of SRS and PCE"
        )
        return out + (
            f": the budget bounds synthesis at {self.at_once} at once" if self.binds else ""
        )


def budget(session: Session, baseline_gib: float = BASELINE_GIB) -> Budget | None:
    """The budget of a budget-gated ``session`` (its head says so), else None."""
    f = session.facts
    if not f.budget_gated:
        return None
    max_parallel = max_parallel_of(f.max_partitions_in_budget, f.synth_worker_count)
    total = f.total_budget_gib
    workers = f.synth_worker_count
    if total is None:
        return Budget(None, workers, f.max_partitions_in_budget, max_parallel, baseline_gib,
                      None, workers is not None)  # fmt: skip
    return Budget(
        total_gib=total,
        workers=workers if workers is not None else synth_workers(total, max_parallel),
        partitions_in_budget=partitions_in_budget(total),
        max_parallel=max_parallel,
        baseline_gib=baseline_gib,
        at_once=partitions_beside(total, baseline_gib),
        workers_logged=workers is not None,
    )
