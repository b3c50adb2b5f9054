"""What a log's head states about the machine and the daemon's settings: the data
(``viewer.io.facts`` reads it; ``Session.facts`` holds it for the run whose head it is)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Facts:
    """Settings a log states (None: not stated, or not believable)."""

    cpus: int | None = None
    #: A harness's settings (``realpipe config``), or the simulator's partition workers.
    pw: int | None = None
    gw: int | None = None
    kernel_scale: float | None = None
    #: A budget-gated daemon's (``viewer.sim.budget``).
    total_budget_gib: int | None = None
    max_partitions_in_budget: int | None = None
    synth_worker_count: int | None = None
    effective_lookahead: int | None = None
    num_gpus: int | None = None
    gpu_workers_per_device: int | None = None
    budget_gated: bool = False  # the head has a line only a budget-gated daemon writes


NOTHING = Facts()
