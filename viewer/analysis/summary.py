"""Everything about one session in one range: the single call panels, report and export use."""

from __future__ import annotations

from dataclasses import dataclass, replace

from viewer.analysis.floors import Floors, floors
from viewer.analysis.gaps import idle_gaps
from viewer.analysis.gpus import GpuStats, gpu_stats
from viewer.analysis.intervals import Range, check_range
from viewer.analysis.jobs import Throughput, job_table, throughput
from viewer.analysis.kernels import KernelStats, kernel_stats
from viewer.analysis.transitions import cold_start_regions, transitions
from viewer.analysis.verdict import Verdict, decide, skipped_warning
from viewer.model import Session
from viewer.model.frame import Frame


@dataclass(frozen=True, eq=False)
class SessionSummary:
    """All figures of ``session`` in ``rng`` (None = the whole session)."""

    session: Session
    rng: Range
    gpus: list[GpuStats]
    gaps: Frame
    transitions: Frame
    cold_start: Frame
    kernel: KernelStats
    throughput: Throughput
    jobs: Frame
    floors: Floors
    verdict: Verdict

    @property
    def index(self) -> int:
        return self.session.index

    @property
    def events(self) -> int:
        return self.session.events

    @property
    def skipped_lines(self) -> int:
        return int(sum(self.session.skipped.values()))

    @property
    def open_intervals(self) -> int:
        return self.session.open_intervals


def summarize(session: Session, rng: Range = None) -> SessionSummary:
    """Compute every figure of ``session`` in ``rng`` once."""
    rng = check_range(rng)
    gpus = gpu_stats(session, rng)
    gaps = idle_gaps(session, rng)
    trans = transitions(session, rng)
    cold = cold_start_regions(session)
    kernel = kernel_stats(session, rng)
    tp = throughput(session, rng, kernel)
    fl = floors(session, rng, kernel, tp)
    return SessionSummary(
        session=session,
        rng=rng,
        gpus=gpus,
        gaps=gaps,
        transitions=trans,
        cold_start=cold,
        kernel=kernel,
        throughput=tp,
        jobs=job_table(session, rng),
        floors=fl,
        verdict=replace(
            decide(gpus, gaps, trans, cold, kernel, tp, fl),
            warning=skipped_warning(session),
        ),
    )


def verdict(session: Session, rng: Range = None) -> Verdict:
    """Is the run GPU-bound, and if not what does the GPU wait for (see ``analysis.verdict``)."""
    return summarize(session, rng).verdict
