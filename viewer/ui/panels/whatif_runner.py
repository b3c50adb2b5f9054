"""The What if dock's background work: replays of a session with knobs, and the lanes of
the compare window, off the GUI thread.

One replay runs at a time; requests made meanwhile collapse into the newest, so a burst of
knob edits costs at most one stale replay, and stale answers are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6 import QtCore

from viewer.analysis.floors import REMEDY
from viewer.analysis.headroom import headroom, remedy
from viewer.analysis.transitions import transitions
from viewer.analysis.verdict import mentions_synthesis
from viewer.io import LogError, open_log
from viewer.io.paths import file_identity
from viewer.lanes.data import build_lanes
from viewer.model import Session
from viewer.ui.background import LatestTask
from viewer.whatif import Knobs, Outcome, WhatIf, plan, what_if
from viewer.whatif.load import LoadFit, fit, sample
from viewer.whatif.predict import own_load
from viewer.whatif.replay import stage_means


@dataclass(frozen=True, eq=False)
class Answer:
    """One replay of ``session`` with ``knobs``: the what-if, or why there is none."""

    session: Session
    knobs: Knobs
    defaults: dict[str, float] = field(default_factory=dict)  # knob -> measured value
    result: WhatIf | None = None
    error: str = ""
    #: Floor -> what relieves it, where this log's load says more than ``floors.REMEDY``.
    remedies: dict[str, str] = field(default_factory=dict)


class WhatIfRunner(QtCore.QObject):
    """``request(session, knobs)`` -> ``answer_ready(Answer)`` for the latest request only.

    One replay runs at a time on a background thread; requests made meanwhile collapse
    into the newest, so a burst of edits costs at most one stale replay.  The plan of
    the last session is kept (on the worker thread) for the next knobs.
    ``request_lanes(runs)`` -> ``lanes_ready(tuple)`` builds lanes off the GUI thread.
    """

    answer_ready = QtCore.Signal(object)
    lanes_ready = QtCore.Signal(object)
    failed = QtCore.Signal(str)
    #: (session, LoadFit or None, message): a calibration over more logs, or why not.
    calibrated = QtCore.Signal(object, object, str)

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._replays = LatestTask(self, "whatif")
        self._replays.ready.connect(lambda _, answer: self.answer_ready.emit(answer))
        self._replays.failed.connect(lambda _, message: self.failed.emit(message))
        self._lanes = LatestTask(self, "whatif-lanes")
        self._lanes.ready.connect(lambda _, lanes: self.lanes_ready.emit(lanes))
        self._lanes.failed.connect(lambda _, message: self.failed.emit(message))
        self._plan: tuple | None = None  # (session, Plan): the replays' thread only
        self._fits = LatestTask(self, "whatif-load")
        self._fits.ready.connect(lambda _, got: self.calibrated.emit(*got))
        self._fits.failed.connect(lambda _, message: self.failed.emit(message))

    def request(
        self, session: Session, knobs: Knobs, load: LoadFit | None = None, cpus: int | None = None
    ) -> None:
        """Replay ``session`` with ``knobs`` under ``load`` (None: what its own log shows, on
        a machine of ``cpus`` threads as its head states them)."""
        self._replays.request(None, self._compute, session, knobs, load, cpus)

    def calibrate(self, session: Session, source: str, cpus: int | None, paths: list[str]) -> None:
        """Fit the load model over ``session`` (of the log ``source``, whose head states
        ``cpus``) and the main session of each of ``paths`` (off the GUI thread):
        ``calibrated(session, fit, "")`` or ``(session, None, why)``."""
        self._fits.request(None, _calibrate, session, source, cpus, list(paths))

    def cancel(self) -> None:
        """Drop what is pending; a replay already running finishes unseen."""
        self._replays.cancel()
        self._lanes.cancel()

    def request_lanes(self, runs: tuple[Outcome, ...]) -> None:
        """The lanes of each run's Session (a played one is made there, off the GUI thread;
        the lanes hold it)."""
        self._lanes.request(None, lambda: tuple(build_lanes(o.session) for o in runs))

    def _compute(
        self, session: Session, knobs: Knobs, load: LoadFit | None = None, cpus: int | None = None
    ) -> Answer:
        """On the worker thread."""
        if self._plan is None or self._plan[0] is not session:
            self._plan = None
            try:
                self._plan = (session, plan(session))
            except ValueError as exc:
                return Answer(session, knobs, error=f"Nothing to replay: {exc}.")
        pl = self._plan[1]
        defaults = {"gw": pl.cfg.gw, "pw": pl.cfg.pw, "gpus": pl.cfg.gpus, **stage_means(pl)}
        if pl.cfg.budget_gib is not None:  # a budget-gated log: its budget is a knob
            defaults["budget"] = pl.cfg.budget_gib
        try:
            if load is None:
                load = own_load(session, cpus)
            result = what_if(session, knobs, pl=pl, load=load)
            for o in (result.measured, result.scenario):  # here, not on the GUI thread
                result.memory_gib(o)
        except ValueError as exc:  # KnobError included
            return Answer(session, knobs, defaults, error=str(exc))
        return Answer(session, knobs, defaults, result, remedies=_remedies(session, result))

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the background work is done (tests and shutdown)."""
        return all(t.wait(msecs) for t in (self._replays, self._lanes, self._fits))


def _remedies(session: Session, result: WhatIf) -> dict[str, str]:
    """The synthesis floor's remedy as the verdict says it (how far more synthesis
    concurrency helps, by this log's own load), where the verdict speaks of it: the fit
    costs seconds on 10^5 partitions synthesizing at once, and a tooltip's words never
    cost the answer (on any failure the floor keeps ``REMEDY``'s)."""
    f = result.measured.floors
    try:
        if not mentions_synthesis(f, transitions(session)):
            return {}
        return {"synthesis": remedy(headroom(session, f), REMEDY["synthesis"])}
    except Exception:  # noqa: BLE001 - words for a tooltip, see above
        return {}


def _calibrate(session: Session, source: str, cpus: int | None, paths: list[str]) -> tuple:
    """(session, LoadFit, "") over ``session`` and ``paths``, or (session, None, why)."""
    from viewer.export.format import display_path

    samples = [sample(session, display_path(source) if source else "this log", cpus)]
    seen = {file_identity(source)} if source else set()
    for path in paths:
        if file_identity(path) in seen:
            continue  # the log on screen, or one given twice
        seen.add(file_identity(path))
        try:
            timeline = open_log(path)
            other = timeline.numbered(None)
        except (LogError, ValueError, OSError) as exc:
            return session, None, f"Not calibrated: {display_path(path)}: {exc}"
        samples.append(sample(other, display_path(path), timeline.sessions[0].facts.cpus))
    try:
        return session, fit(samples), ""
    except ValueError as exc:
        return session, None, f"Not calibrated: {exc}"
