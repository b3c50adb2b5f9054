"""A plain-text summary of a schedule's figures, for sample_logs/README.md."""

from __future__ import annotations

from collections import Counter

import numpy as np

from viewer.analysis.units import percent
from viewer.sim.metrics import calls_of, figures
from viewer.sim.model import Schedule


def describe(s: Schedule) -> str:
    """Jobs, calls, kernel mean, s/proof, efficiency, idle and transitions of ``s``."""
    c = calls_of(s)
    f = figures(c)
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(Counter(s.draws.job_kind).items()))
    gpus = s.config.gpus
    theo = f.kernel_mean_ms * s.config.partitions / gpus / 1000
    eff = ", ".join(f"GPU {g} {percent(e)}" for g, e in f.efficiency.items())
    idle = ", ".join(f"GPU {g} {ms} ms" for g, ms in f.idle_ms.items())
    worker_gaps = []
    for w in np.unique(c.worker):
        mine = np.flatnonzero(c.worker == w)
        mine = mine[np.argsort(c.start[mine])]
        worker_gaps.append(c.start[mine][1:] - c.end[mine][:-1])
    wg = np.concatenate(worker_gaps)
    lines = [
        f"- jobs: {len(s.draws.job_ids)} ({kinds}); GPU calls: {len(c.job)}; "
        f"TIMELINE events: {6 * len(c.job)}",
        f"- mean kernel (gpu_total_ms): {f.kernel_mean_ms:.1f} ms; theoretical "
        f"{theo:.1f} s/proof (x{s.config.partitions} partitions / {gpus} GPU); "
        f"measured {f.measured_ms / 1000:.1f} s/proof",
        f"- efficiency: {eff}; idle inside the busy span: {idle}; "
        f"cross-sector idle: {f.cross_sector_idle_ms} ms",
        f"- worker idle between its consecutive calls: {int(wg.min())}-{int(wg.max())} ms "
        f"(median {int(np.median(wg))})",
        "- transitions (gap/overlap ms, * = starved): "
        + ", ".join(
            f"{t.from_job}->{t.to_job} {t.gap_ms}{'*' if t.starved else ''}/{t.overlap_ms}"
            for t in f.transitions
        ),
    ]
    return "\n".join(lines)
