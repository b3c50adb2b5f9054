"""The What if dock's background work: replays of a session with knobs, and the lanes of
the compare window, off the GUI thread.

One replay runs at a time; requests made meanwhile collapse into the newest, so a burst of
knob edits costs at most one stale replay, and stale answers are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6 import QtCore

from viewer.model import Session
from viewer.ui.background import BackgroundWorker
from viewer.ui.lane_data import build_lanes
from viewer.whatif import Knobs, WhatIf, plan, what_if
from viewer.whatif.replay import stage_means


@dataclass(frozen=True, eq=False)
class Answer:
    """One replay of ``session`` with ``knobs``: the what-if, or why there is none."""

    session: Session
    knobs: Knobs
    defaults: dict[str, float] = field(default_factory=dict)  # knob -> measured value
    result: WhatIf | None = None
    error: str = ""


class WhatIfRunner(QtCore.QObject):
    """``request(session, knobs)`` -> ``answer_ready(Answer)`` for the latest request only.

    One replay runs at a time on a background thread; requests made meanwhile collapse
    into the newest, so a burst of edits costs at most one stale replay.  The plan of
    the last session is kept (on the worker thread) for the next knobs.
    ``request_lanes(sessions)`` -> ``lanes_ready(tuple)`` builds lanes off the GUI thread.
    """

    answer_ready = QtCore.Signal(object)
    lanes_ready = QtCore.Signal(object)
    failed = QtCore.Signal(str)

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._worker = BackgroundWorker(self, "whatif")
        self._worker.finished.connect(self._on_done)
        self._generation = 0
        self._lanes_generation = 0
        self._pending: tuple | None = None
        self._busy = False
        self._plan: tuple | None = None  # (session, Plan): worker thread only

    def request(self, session: Session, knobs: Knobs) -> None:
        self._generation += 1
        self._pending = (self._generation, session, knobs)
        self._submit()

    def cancel(self) -> None:
        """Drop what is pending; a replay already running finishes unseen."""
        self._generation += 1
        self._lanes_generation += 1
        self._pending = None

    def request_lanes(self, sessions: tuple[Session, ...]) -> None:
        self._lanes_generation += 1
        token = ("lanes", self._lanes_generation)
        self._worker.submit(token, lambda: tuple(build_lanes(s) for s in sessions))

    def _submit(self) -> None:
        if self._busy or self._pending is None:
            return
        generation, session, knobs = self._pending
        self._pending = None
        self._busy = True
        self._worker.submit(("whatif", generation), self._compute, session, knobs)

    def _compute(self, session: Session, knobs: Knobs) -> Answer:
        """On the worker thread."""
        if self._plan is None or self._plan[0] is not session:
            self._plan = None
            try:
                self._plan = (session, plan(session))
            except ValueError as exc:
                return Answer(session, knobs, error=f"Nothing to replay: {exc}.")
        pl = self._plan[1]
        defaults = {"gw": pl.cfg.gw, "pw": pl.cfg.pw, "gpus": pl.cfg.gpus, **stage_means(pl)}
        try:
            result = what_if(session, knobs, pl=pl)
        except ValueError as exc:  # KnobError included
            return Answer(session, knobs, defaults, error=str(exc))
        return Answer(session, knobs, defaults, result)

    def _on_done(self, token: tuple, result, error: str) -> None:
        kind, generation = token
        if kind == "lanes":
            if generation != self._lanes_generation:
                return
            if error:
                self.failed.emit(error)
            else:
                self.lanes_ready.emit(result)
            return
        self._busy = False
        self._submit()
        if generation != self._generation:
            return  # superseded by a newer request
        if error:
            self.failed.emit(error)
        else:
            self.answer_ready.emit(result)

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the background work is done (tests and shutdown)."""
        return self._worker.wait(msecs)
