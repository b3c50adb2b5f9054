"""The verdict: is the run GPU-bound, and if not, what does the GPU wait for?

Reasoning as the Phase 8 analysis did: compare the kernel floor (theoretical
s/proof) with the measured s/proof.  Close to 1 (>= ``GPU_BOUND_RATIO``) the
GPU never waits.  Below, the idle time outside the cold start says why:
mostly starved gaps (or every transition starved) -> synthesis-bound; mostly
dispatch gaps -> dispatch; hardly any idle although kernels fill little of
the GPU calls -> CPU pre/post-processing inside the calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from viewer.analysis.gpus import GpuStats
from viewer.analysis.jobs import Throughput
from viewer.analysis.kernels import KernelStats

GPU_BOUND_RATIO = 0.9
BUSY_EFFICIENCY = 0.95  # GPU calls cover at least this much: no real idle between calls
KINDS = ("gpu-bound", "synthesis-bound", "dispatch", "cpu-prep", "insufficient-data")


@dataclass(frozen=True)
class Verdict:
    kind: str
    sentence: str
    evidence: tuple[str, ...]


def _s(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _efficiency(gpus: list[GpuStats]) -> float:
    busy = sum(g.busy_ms for g in gpus)
    span = sum(g.busy_ms + g.idle_ms for g in gpus)
    return busy / span if span > 0 else float("nan")


def _warm_idle(gaps: pd.DataFrame, cold: pd.DataFrame) -> pd.DataFrame:
    """Idle gaps minus their part inside a cold start (that says nothing about steady state)."""
    if len(gaps) == 0 or len(cold) == 0:
        return gaps
    warm = gaps.reset_index(drop=True)
    start, end, gpu = warm["start"].to_numpy(), warm["end"].to_numpy(), warm["gpu"].to_numpy()
    cut = np.zeros(len(warm))
    for g, a, b in zip(cold["gpu"], cold["start"], cold["end"], strict=True):  # a few regions
        inside = np.minimum(end, b) - np.maximum(start, a)
        cut += np.where(gpu == g, np.maximum(inside, 0.0), 0.0)
    warm = warm.assign(ms=warm["ms"].to_numpy() - cut)
    return warm[warm["ms"] > 0]


def _evidence(
    gpus: list[GpuStats],
    gaps: pd.DataFrame,
    transitions: pd.DataFrame,
    kernel: KernelStats,
    tp: Throughput,
) -> tuple[str, ...]:
    out = []
    active = [g for g in gpus if np.isfinite(g.efficiency)]
    if len(active) == 1:
        out.append(f"GPU efficiency {active[0].efficiency * 100:.1f} % (merged intervals)")
    elif active:
        each = ", ".join(f"GPU {g.gpu} {g.efficiency * 100:.1f} %" for g in active)
        out.append(f"GPU efficiency {each} (merged intervals)")
    cross = gaps[gaps["cross_sector"]] if len(gaps) else gaps
    out.append(f"cross-sector GPU idle {cross['ms'].sum():.0f} ms in {_n(len(cross), 'gap')}")
    cold_t = transitions[transitions["cold_start"]] if len(transitions) else transitions
    cold = f"cold start {sum(g.cold_start_ms for g in gpus):.0f} ms"
    if len(cold_t):
        steps = ", ".join(
            f"sector {a}->{b} {gap:.0f} ms"
            for a, b, gap in zip(
                cold_t["from_job"], cold_t["to_job"], cold_t["gap_ms"], strict=True
            )
        )
        cold += f" (incl. starved {steps})"
    out.append(cold)
    if _never_warm(transitions):
        out.append(f"all {len(transitions)} transitions starved: the pipeline never warmed up")
    if len(gaps):
        starved = gaps.loc[gaps["starved"], "ms"].sum()
        out.append(
            f"idle gaps {gaps['ms'].sum():.0f} ms: {starved:.0f} ms starved, "
            f"{gaps['ms'].sum() - starved:.0f} ms dispatch"
        )
    bound = " (GPU call time: an upper bound, no CUZK_TIMING lines)" if kernel.upper_bound else ""
    out.append(f"mean kernel {kernel.mean_ms:.0f} ms per partition{bound}")
    out.append(
        f"{_n(tp.jobs_completed, 'job')} completed, "
        f"{tp.partitions_per_proof} partitions per proof, {_n(tp.gpus, 'GPU')}"
    )
    return tuple(out)


def decide(
    gpus: list[GpuStats],
    gaps: pd.DataFrame,
    transitions: pd.DataFrame,
    cold: pd.DataFrame,
    kernel: KernelStats,
    tp: Throughput,
) -> Verdict:
    """The verdict from figures already computed for one range."""
    evidence = _evidence(gpus, gaps, transitions, kernel, tp)
    if kernel.partitions == 0 or tp.measured_s_per_proof is None or tp.ratio is None:
        why = (
            "no kernel or GPU-call times"
            if kernel.partitions == 0
            else f"{tp.jobs_completed} job(s) completed, two are needed to measure s/proof"
        )
        return Verdict("insufficient-data", f"Not enough data for a verdict: {why}.", evidence)

    ratio = tp.ratio
    measured = tp.measured_s_per_proof
    floor = tp.theoretical_s_per_proof
    what = "GPU-call time (no CUZK_TIMING lines)" if kernel.upper_bound else "kernel time"
    if tp.gpus > 1:
        floor_txt = f"the {floor:.1f} s of {what} per proof on {tp.gpus} GPUs"
    else:
        floor_txt = f"the {floor:.1f} s of serial {what}"
    eff = _efficiency(gpus)
    all_starved = _never_warm(transitions)
    if kernel.upper_bound and eff >= BUSY_EFFICIENCY and not all_starved:
        return Verdict(
            "gpu-bound",
            f"GPU-bound as far as this log tells: GPU calls cover {eff * 100:.1f} % of the time "
            f"at {measured:.1f} s/proof, but without CUZK_TIMING lines the CPU work inside the "
            "calls cannot be told from kernel time, so CPU pre/post-processing is not ruled out.",
            evidence,
        )
    if ratio >= GPU_BOUND_RATIO and not kernel.upper_bound:
        rel = "equals" if abs(ratio - 1) <= 0.03 else "is close to" if ratio < 1 else "is under"
        return Verdict(
            "gpu-bound",
            f"GPU-bound: measured {measured:.1f} s/proof {rel} {floor_txt} (ratio {ratio:.2f}); "
            "only faster kernels or more GPUs help, more synthesis concurrency cannot.",
            evidence,
        )

    head = f"measured {measured:.1f} s/proof against {floor_txt} (ratio {ratio:.2f})"
    warm = _warm_idle(gaps, cold)
    starved_ms = float(warm.loc[warm["starved"], "ms"].sum()) if len(warm) else 0.0
    dispatch_ms = float(warm["ms"].sum()) - starved_ms if len(warm) else 0.0
    idle = eff < BUSY_EFFICIENCY
    if all_starved or (idle and starved_ms >= dispatch_ms):
        why = (
            "every sector transition was starved, the pipeline never warmed up"
            if all_starved
            else f"the GPU sat idle {_s(starved_ms)} waiting for synthesized partitions"
        )
        return Verdict(
            "synthesis-bound",
            f"Synthesis-bound: {head}; {why}, so more synthesis concurrency or faster "
            "synthesis helps, faster kernels do not.",
            evidence,
        )
    if idle:
        return Verdict(
            "dispatch",
            f"Dispatch overhead: {head}; the GPU sat idle {_s(dispatch_ms)} while partitions "
            "were already queued, so the time goes in handing work to the GPU workers, "
            "not in synthesis.",
            evidence,
        )
    busy = sum(g.busy_ms for g in gpus)
    fill = kernel.total_ms / busy * 100 if busy > 0 else float("nan")
    return Verdict(
        "cpu-prep",
        f"CPU pre/post-processing-bound: {head}; GPU calls cover "
        f"{eff * 100:.0f} % of the time but CUDA kernels fill only {fill:.0f} % "
        "of it, so CPU work inside the calls holds the GPU back (more GPU workers per GPU or "
        "faster prep helps).",
        evidence,
    )


def _never_warm(transitions: pd.DataFrame) -> bool:
    """Every transition starved and none of them a cold start (judged on the whole session:
    a range holding only the cold transitions of a run that warms up later is not this)."""
    return (
        len(transitions) > 0
        and bool(transitions["starved"].all())
        and not bool(transitions["cold_start"].any())
    )
