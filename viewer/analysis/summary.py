"""Everything about one session in one range: the single call panels, report and export use."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from viewer.analysis.floors import Floors, floors
from viewer.analysis.gaps import idle_gaps
from viewer.analysis.gpus import GpuStats, gpu_stats
from viewer.analysis.headroom import Headroom, headroom
from viewer.analysis.intervals import Range, calls, check_range
from viewer.analysis.jobs import Throughput, job_table, throughput
from viewer.analysis.kernels import KernelStats, kernel_stats
from viewer.analysis.stages import stages
from viewer.analysis.transitions import cold_start_ms, cold_start_regions, transitions
from viewer.analysis.verdict import Verdict, decide, mentions_synthesis, skipped_warning
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
    cold_start: Frame  # the regions, per GPU (lanes, panels)
    cold_start_ms: float  # the session's figure in the range (``transitions.cold_start_ms``)
    kernel: KernelStats
    throughput: Throughput
    jobs: Frame
    floors: Floors
    verdict: Verdict
    #: What more synthesis concurrency gains by the log's own load, where the verdict says
    #: (``viewer.analysis.headroom``); None where it does not.
    headroom: Headroom | None = None

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


#: Partitions from which a session's figures are computed on two threads, and from which
#: on one again: past it the two threads' temporaries side by side weigh more than the
#: time they save (1.5 M one-call jobs: a report's peak 765-791 MB on two, 748 on one,
#: 9.3-9.7 s against 9.7-10.1 s).
TWO_THREADS_ROWS = 50_000
ONE_THREAD_ROWS = 500_000


def summarize(session: Session, rng: Range = None) -> SessionSummary:
    """Compute every figure of ``session`` in ``rng`` once.  A big session's kernel,
    throughput and floor figures are computed on a second thread beside the GPU, gap and
    transition ones (numpy work that lets the GIL go; the tables both read are made
    first); a huge one's on one thread, in the memory of one."""
    rng = check_range(rng)
    if TWO_THREADS_ROWS <= len(session.partitions) < ONE_THREAD_ROWS:
        stages(session)
        calls(session)
        with ThreadPoolExecutor(1, thread_name_prefix="cuzk-summary") as pool:
            side = pool.submit(_kernel_figures, session, rng)
            gpus, gaps, trans, cold = _gpu_figures(session, rng)
            kernel, tp, fl = side.result()
    else:
        gpus, gaps, trans, cold = _gpu_figures(session, rng)
        kernel, tp, fl = _kernel_figures(session, rng)
    cold_ms = cold_start_ms(session, rng)
    whole = rng is None
    room = headroom(session, fl) if mentions_synthesis(fl, trans, whole) else None
    return SessionSummary(
        session=session,
        rng=rng,
        gpus=gpus,
        gaps=gaps,
        transitions=trans,
        cold_start=cold,
        cold_start_ms=cold_ms,
        kernel=kernel,
        throughput=tp,
        jobs=job_table(session, rng),
        floors=fl,
        verdict=replace(
            decide(gpus, gaps, trans, cold, cold_ms, kernel, tp, fl, whole, room),
            warning=skipped_warning(session),
        ),
        headroom=room,
    )


def _gpu_figures(session: Session, rng: Range) -> tuple[list[GpuStats], Frame, Frame, Frame]:
    return (
        gpu_stats(session, rng),
        idle_gaps(session, rng),
        transitions(session, rng),
        cold_start_regions(session),
    )


def _kernel_figures(session: Session, rng: Range) -> tuple[KernelStats, Throughput, Floors]:
    kernel = kernel_stats(session, rng)
    tp = throughput(session, rng, kernel)
    return kernel, tp, floors(session, rng, kernel, tp)


def verdict(session: Session, rng: Range = None) -> Verdict:
    """Is the run GPU-bound, and if not what does the GPU wait for (see ``analysis.verdict``)."""
    return summarize(session, rng).verdict
