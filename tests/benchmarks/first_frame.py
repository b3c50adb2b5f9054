"""When a window's open of a log is seen: the plot's first paint with the log drawn and
the panels filled (the in-process and the fresh-process window benchmarks both time it)."""

from __future__ import annotations

import time

from PySide6 import QtCore


class _Drawn(QtCore.QObject):
    """Notes the time of the first paint of the object it filters."""

    def __init__(self, marks: dict[str, float], parent: QtCore.QObject) -> None:
        super().__init__(parent)
        self.marks = marks

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QtCore.QEvent.Type.Paint:
            self.marks.setdefault("drawn", time.perf_counter())
        return False


def watch_open(win) -> tuple[dict[str, float], QtCore.QEventLoop]:
    """``marks`` gets "drawn" and "filled" (``time.perf_counter`` times) as ``win`` opens a
    log; the loop, an event loop that sleeps until an event as the app's does (a
    processEvents() spin would take a core and the GIL from the reader), quits once the
    panels are filled."""
    marks: dict[str, float] = {}
    spy = _Drawn(marks, win)
    win.timeline_loaded.connect(lambda _: win.view.plot.viewport().installEventFilter(spy))
    loop = QtCore.QEventLoop()
    win.summary_ready.connect(
        lambda *_: (marks.setdefault("filled", time.perf_counter()), loop.quit())
    )
    return marks, loop
