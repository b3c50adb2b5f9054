"""The verdict: which floor binds the run, what relieving it can gain, and what the GPU waits for.

The floors (``viewer.analysis.floors``) say which change helps: the highest one
binds, and the runner-up's margin is the most relieving it can gain.  When the
binding floor explains the measured s/proof (>= ``EXPLAINED`` of it) the verdict
names it.  Below that the run loses time beyond every floor, and the idle time
outside the cold start says why: mostly starved gaps (or most transitions
starved) -> synthesis-bound; mostly dispatch gaps -> dispatch; hardly any idle
although kernels fill little of the GPU calls -> CPU pre/post-processing.

Where it says what synthesis concurrency would do, it says what the log's own load shows
(``viewer.analysis.headroom``): where synthesis slows beside more syntheses, the gain
is the floors' at the higher concurrency with synthesis so slowed; where the log cannot
show how synthesis slows, it says so and names the run that would settle it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewer.analysis.floors import LABEL, REMEDY, Floors
from viewer.analysis.gpus import GpuStats, overall_efficiency
from viewer.analysis.headroom import Headroom, words
from viewer.analysis.jobs import Throughput, no_spacing_reason
from viewer.analysis.kernels import KernelStats
from viewer.analysis.units import counted, duration, fixed, per_proof, percent
from viewer.model import Session
from viewer.model.frame import Frame

EXPLAINED = 0.9  # the binding floor is at least this share of the measured s/proof
BUSY_EFFICIENCY = 0.95  # GPU calls cover at least this much: no real idle between calls
#: Verdict kind when each floor binds and explains the run.
BOUND_KIND = {
    "kernel": "gpu-bound",
    "worker": "worker-bound",
    "synthesis": "synthesis-bound",
    "arrival": "arrival-bound",
}
KINDS = (*BOUND_KIND.values(), "dispatch", "cpu-prep", "insufficient-data")


#: Over this share of TIMELINE-looking lines skipped as damaged, the verdict warns.
SKIPPED_WARN = 0.01


@dataclass(frozen=True)
class Verdict:
    kind: str
    sentence: str
    evidence: tuple[str, ...]
    warning: str = ""  # what may make the verdict wrong (damaged lines), shown beside it


def skipped_warning(session: Session) -> str:
    """A warning when over ``SKIPPED_WARN`` of the session's TIMELINE-looking lines were
    skipped as damaged."""
    share = session.skipped_share()
    if share <= SKIPPED_WARN:
        return ""
    skipped = session.skipped_timeline_lines
    return (
        f"{skipped} of {skipped + session.events} TIMELINE lines ({percent(share)}) were "
        "skipped as damaged: the figures and this verdict may be wrong (`info` says why)."
    )


def _s(ms: float) -> str:
    return fixed(ms / 1000)


def warm_idle(gaps: Frame, cold: Frame) -> Frame:
    """Idle gaps minus their part inside a cold start (that says nothing about steady state)."""
    if len(gaps) == 0 or len(cold) == 0:
        return gaps
    start, end, gpu = gaps["start"], gaps["end"], gaps["gpu"]
    cut = np.zeros(len(gaps))
    regions = zip(cold["gpu"].tolist(), cold["start"].tolist(), cold["end"].tolist(), strict=True)
    for g, a, b in regions:  # a few regions
        inside = np.minimum(end, b) - np.maximum(start, a)
        cut += np.where(gpu == g, np.maximum(inside, 0.0), 0.0)
    ms = gaps["ms"] - cut
    keep = np.flatnonzero(ms > 0)
    return gaps.take(keep).assign(ms=ms[keep])


def _evidence(
    gpus: list[GpuStats],
    gaps: Frame,
    transitions: Frame,
    cold_ms: float,
    kernel: KernelStats,
    tp: Throughput,
    floors: Floors,
    never_warm: bool,
) -> tuple[str, ...]:
    out = []
    active = [g for g in gpus if np.isfinite(g.efficiency)]
    if len(active) == 1:
        out.append(f"GPU efficiency {percent(active[0].efficiency)} (merged intervals)")
    elif active:
        each = ", ".join(f"GPU {g.gpu} {percent(g.efficiency)}" for g in active)
        out.append(f"GPU efficiency {each} (merged intervals)")
    gap_ms = gaps["ms"].astype(np.float64, copy=False)
    cross = gap_ms[gaps["cross_sector"].astype(bool, copy=False)]
    out.append(f"cross-sector GPU idle {duration(cross.sum())} in {counted(len(cross), 'gap')}")
    is_cold = transitions["cold_start"].astype(bool, copy=False)
    cold = f"cold start {duration(cold_ms)}"
    if is_cold.any():
        steps = ", ".join(
            f"sector {a}->{b} {duration(gap)}"
            for a, b, gap in zip(
                transitions["from_job"][is_cold],
                transitions["to_job"][is_cold],
                transitions["gap_ms"][is_cold],
                strict=True,
            )
        )
        cold += f" (incl. starved {steps})"
    out.append(cold)
    if never_warm:
        starved = int(transitions["starved"].astype(bool, copy=False).sum())
        out.append(
            f"{starved} of {counted(len(transitions), 'transition')} starved: the pipeline "
            "never warmed up"
        )
    if len(gaps):
        starved = gap_ms[gaps["starved"].astype(bool, copy=False)].sum()
        out.append(
            f"idle gaps {duration(gap_ms.sum())}: {duration(starved)} starved, "
            f"{duration(gap_ms.sum() - starved)} dispatch"
        )
    bound = " (GPU call time: an upper bound, no CUZK_TIMING lines)" if kernel.upper_bound else ""
    out.append(f"mean kernel {duration(kernel.mean_ms)} per partition{bound}")
    out.append(floors_line(floors))
    out.append(
        f"{counted(tp.jobs_completed, 'job')} completed, "
        f"{_per_proof(tp.partitions_per_proof)}, {counted(tp.gpus, 'GPU')}"
    )
    return tuple(out)


def _per_proof(n: int | float) -> str:
    """ "10 partitions per proof", "1 partition per proof", "2.5 partitions per proof"."""
    return f"{n:g} partition{'' if n == 1 else 's'} per proof"


def floors_line(f: Floors) -> str:
    """The four floors in one line, the binding one marked."""
    parts = []
    for name, v in f.values().items():
        mark = " (binding)" if name == f.bound else ""
        parts.append(f"{LABEL[name]} {'-' if not np.isfinite(v) else f'{per_proof(v)} s'}{mark}")
    jobs, inferred = counted(f.jobs, "job", grouped=True), f.inferred_arrivals
    arrivals = f"{jobs}, {counted(inferred, 'arrival', grouped=True)} inferred"
    at_once = "1 synthesis" if f.pw == 1 else f"{f.pw} syntheses"
    return (
        f"floors (s/proof): {', '.join(parts)}; {at_once} at once at most, "
        f"{counted(f.workers, 'GPU worker')}, {arrivals}"
    )


def decide(
    gpus: list[GpuStats],
    gaps: Frame,
    transitions: Frame,
    cold: Frame,
    cold_ms: float,
    kernel: KernelStats,
    tp: Throughput,
    floors: Floors,
    whole_run: bool = True,
    headroom: Headroom | None = None,
) -> Verdict:
    """The verdict from figures already computed for one range (``cold``: the cold-start
    regions per GPU; ``cold_ms``: the session's cold start in the range; ``whole_run``:
    the range is the whole session, see ``_never_warm``; ``headroom``: what more synthesis
    concurrency gains by the log's own load, where ``mentions_synthesis``)."""
    if headroom is not None and headroom.state == "keeps":
        headroom = None  # the log shows synthesis keeping its speed: the floors stand
    # Sectors that waited because their jobs came no faster (the arrival floor binds) are not
    # a pipeline that never warmed up: nothing in it would help.
    never_warm = _never_warm(transitions, whole_run) and floors.bound != "arrival"
    evidence = _evidence(gpus, gaps, transitions, cold_ms, kernel, tp, floors, never_warm)
    if kernel.partitions == 0 or tp.measured_s_per_proof is None or tp.ratio is None:
        why = (
            "no kernel or GPU-call times"
            if kernel.partitions == 0
            else no_spacing_reason(tp.jobs_completed)
        )
        return Verdict("insufficient-data", f"Not enough data for a verdict: {why}.", evidence)

    ratio = tp.ratio
    measured = tp.measured_s_per_proof
    floor = tp.theoretical_s_per_proof
    what = "GPU-call time (no CUZK_TIMING lines)" if kernel.upper_bound else "kernel time"
    if tp.gpus > 1:
        floor_txt = f"the {per_proof(floor)} s of {what} per proof on {tp.gpus} GPUs"
    else:
        floor_txt = f"the {per_proof(floor)} s of serial {what}"
    eff = overall_efficiency(gpus)
    if kernel.upper_bound and eff >= BUSY_EFFICIENCY and not never_warm:
        return Verdict(
            "gpu-bound",
            f"GPU-bound as far as this log tells: GPU calls cover {percent(eff)} of the time "
            f"at {per_proof(measured)} s/proof, but without CUZK_TIMING lines the CPU work "
            "inside the calls cannot be told from kernel time, so CPU pre/post-processing is "
            "not ruled out." + _runner_up(floors, headroom),
            evidence,
        )
    bound = floors.bound
    values = floors.values()
    share = values[bound] / measured if bound else 0.0
    if bound and share >= EXPLAINED and not (never_warm and bound != "synthesis"):
        return Verdict(
            BOUND_KIND[bound],
            _bound_sentence(bound, floors, measured, ratio, floor_txt, kernel, gpus, headroom)
            + _runner_up(floors, headroom)
            + (_concurrency(floors, headroom, True) if bound == "synthesis" else ""),
            evidence,
        )

    head = f"measured {per_proof(measured)} s/proof against {floor_txt} (ratio {ratio:.2f})"
    if bound:
        head += f", {percent(share, 0)} of the highest floor "
        head += f"({LABEL[bound]}, {per_proof(values[bound])} s)"
    warm = warm_idle(gaps, cold)
    warm_ms = warm["ms"].astype(np.float64, copy=False)
    starved_ms = float(warm_ms[warm["starved"].astype(bool, copy=False)].sum())
    dispatch_ms = float(warm_ms.sum()) - starved_ms
    idle = eff < BUSY_EFFICIENCY
    if never_warm or (idle and starved_ms >= dispatch_ms):
        why = (
            "most sector transitions were starved, the pipeline never warmed up"
            if never_warm
            else f"the GPU sat idle {_s(starved_ms)} waiting for synthesized partitions"
        )
        helps = (
            "more synthesis concurrency or faster synthesis"
            if headroom is None
            else ("faster synthesis")
        )
        return Verdict(
            "synthesis-bound",
            f"Synthesis-bound: {head}; {why}, so {helps} helps, faster kernels do not."
            + _concurrency(floors, headroom, floors.bound == "synthesis"),
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
    return Verdict(
        "cpu-prep",
        f"CPU pre/post-processing-bound: {head}; GPU calls cover "
        f"{percent(eff, 0)} of the time but CUDA kernels fill only {_fill(kernel, gpus):.0f} % "
        "of it, so CPU work inside the calls holds the GPU back (more GPU workers per GPU or "
        "faster prep helps).",
        evidence,
    )


def _fill(kernel: KernelStats, gpus: list[GpuStats]) -> float:
    """Kernel time as a share of the time GPU calls were open, in %."""
    busy = sum(g.busy_ms for g in gpus)
    return kernel.total_ms / busy * 100 if busy > 0 else float("nan")


def _bound_sentence(
    bound: str,
    f: Floors,
    measured: float,
    ratio: float,
    floor_txt: str,
    kernel: KernelStats,
    gpus: list[GpuStats],
    headroom: Headroom | None = None,
) -> str:
    """What binds, as the share of the measured s/proof it explains, and what helps."""
    value = f.values()[bound]
    share = percent(value / measured, 0)
    m = f.means_ms
    if bound == "kernel":
        rel = "equals" if abs(ratio - 1) <= 0.03 else "is close to" if ratio < 1 else "is under"
        return (
            f"GPU-bound: measured {per_proof(measured)} s/proof {rel} {floor_txt} "
            f"(ratio {ratio:.2f}), the binding floor; {REMEDY['kernel']} help, more synthesis "
            "concurrency cannot."
        )
    if bound == "worker":
        per_call = (
            f"prep {_s(m['prep'])} + kernel {_s(m['kernel'])} + post {_s(m['post'])} per call"
            if not f.upper_bound
            else f"{_s(m['call'])} per GPU call"
        )
        return (
            f"GPU-worker-bound: the GPU worker floor, {per_proof(value)} s/proof ({per_call}, "
            f"{f.partitions_per_proof} calls per proof on {counted(f.workers, 'worker')}), is "
            f"{share} of the measured {per_proof(measured)} s/proof; CUDA kernels fill only "
            f"{_fill(kernel, gpus):.0f} % of the GPU calls, so {REMEDY['worker']} helps, "
            "faster kernels alone barely."
        )
    if bound == "synthesis":
        return (
            f"Synthesis-bound: the synthesis floor, {per_proof(value)} s/proof (mean synthesis "
            f"{_s(m['synth'])} x {f.partitions_per_proof} partitions / {f.pw} running at once), "
            f"is {share} of the measured {per_proof(measured)} s/proof; "
            f"{REMEDY['synthesis'] if headroom is None else 'faster synthesis'} helps, "
            "faster kernels do not."
        )
    jobs = counted(f.jobs, "job", grouped=True)
    return (
        f"Not saturated: jobs arrived every {per_proof(value)} s ({jobs}, "
        f"the arrival floor), {share} of the measured {per_proof(measured)} s/proof; nothing in "
        "the pipeline helps, more work would."
    )


def _runner_up(f: Floors, headroom: Headroom | None = None) -> str:
    """The runner-up floor and its margin: the most relieving the binding floor can gain
    (``headroom``: where the synthesis floor comes next, more synthesis concurrency is
    left to ``_concurrency``)."""
    if f.runner_up is None or f.bound is None or not np.isfinite(f.margin):
        return ""
    second = f.values()[f.runner_up]
    then = REMEDY[f.runner_up]
    if f.runner_up == "synthesis" and headroom is not None:
        then = "faster synthesis"
    return (
        f" Next is the {LABEL[f.runner_up]} floor, {per_proof(second)} s/proof "
        f"({percent(f.margin)} behind), so relieving the {LABEL[f.bound]} floor alone "
        f"gains at most {percent(f.margin)}; beyond that, it takes {then} as well."
        + (_concurrency(f, headroom, False) if f.runner_up == "synthesis" else "")
    )


def _concurrency(f: Floors, headroom: Headroom | None, bound: bool) -> str:
    """What more synthesis concurrency gains by the log's load (a sentence; empty where
    the log shows nothing against the floors): the binding floor's gain where the
    synthesis floor binds (``bound``), else the synthesis floor's own."""
    if headroom is None:
        return ""
    return " " + words(headroom, "bound" if bound else "next")


def mentions_synthesis(f: Floors, transitions: Frame, whole_run: bool = True) -> bool:
    """Whether the verdict on these figures says what synthesis concurrency would do (the
    synthesis floor binds or comes next, or the pipeline never warmed up): only then is
    the log's load fitted for it."""
    if not np.isfinite(f.synthesis_s):
        return False
    starved = _never_warm(transitions, whole_run) and f.bound != "arrival"  # as ``decide``
    return "synthesis" in (f.bound, f.runner_up) or starved


def _never_warm(transitions: Frame, whole_run: bool) -> bool:
    """Most transitions starved: the pipeline never warms up (domain.md).  Over the whole
    run every starved transition counts, cold ones too (a run whose every sector waited
    for its synthesis never warmed up); in a range, only those outside the cold start (a
    range holding only the cold transitions of a run that warms up later is not this)."""
    starved = transitions["starved"].astype(bool, copy=False)
    if not whole_run:
        starved = starved & ~transitions["cold_start"].astype(bool, copy=False)
    return len(transitions) > 0 and int(starved.sum()) * 2 > len(transitions)
