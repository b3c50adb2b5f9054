"""The What if dock on a big log, in a fresh process, printed as JSON (resident memory is per
process): the window opens the log, the dock answers, knob edits replay it, and "Show
prediction beside" opens the compare window.

``python whatif_probe.py LOG``: ``open_s`` (open request to the panels filled), ``loaded``
(RSS once loaded, the dock not yet answering), ``answered`` (after its first answer),
``edits`` (RSS after each edit's answer), ``edit_s``, ``beside_drawn_s`` (the click to
the predicted run's lanes drawn), ``beside_s`` (to its diff filled too), ``beside_peak``
and ``beside`` (RSS after), in MB and seconds.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from viewer import heap  # noqa: E402

#: Knob edits in turn, each kept (as a user tries one thing after another).
EDITS = (("pw", 12), ("gw", 1), ("kernel", 1800), ("gpus", 3), ("pw", 14), ("gw", 3))
MB = 1 << 20


def rss() -> float:
    """Resident MB now, after the collector and a trim (what the window would give back)."""
    gc.collect()
    heap.release_free_memory()
    return _vm("VmRSS")


def _vm(key: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024 / MB
    return float("nan")


class Peak:
    """The highest RSS sampled every 20 ms since ``reset``."""

    def __init__(self) -> None:
        self.peak = 0.0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, _vm("VmRSS"))
            time.sleep(0.02)

    def reset(self) -> None:
        self.peak = _vm("VmRSS")


def wait(app, done, limit: float = 600.0) -> None:
    """Run the event loop until ``done()`` (sleeping between events, as the app does)."""
    t = time.perf_counter()
    while not done():
        if time.perf_counter() - t > limit:
            raise TimeoutError("the window did not answer")
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)


def main(path: str) -> None:
    heap.one_arena()  # as viewer.commands.gui does before any thread starts
    heap.reuse_big_blocks()
    app = QtWidgets.QApplication([])
    from viewer.ui import MainWindow

    ini = Path(os.environ.get("TMPDIR", "/tmp")) / f"whatif-probe-{os.getpid()}.ini"
    settings = QtCore.QSettings(str(ini), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    win.resize(1600, 900)
    win.show()
    dock, panel = win.docks["whatif"], win.whatif_panel
    dock.hide()  # the dock replays once shown: the loaded log measured alone first
    out: dict = {}
    filled: list[int] = []
    win.summary_ready.connect(lambda *_: filled.append(1))
    t = time.perf_counter()
    win.open_paths([Path(path)])
    wait(app, lambda: bool(filled))
    out["open_s"] = time.perf_counter() - t
    win.runner.wait()
    app.processEvents()
    out["loaded"] = rss()

    dock.show()
    dock.raise_()
    wait(app, lambda: panel.answer() is not None)
    panel.runner.wait()
    app.processEvents()
    out["answered"] = rss()

    out["edits"], out["edit_s"] = [], []
    for name, value in EDITS:
        before = panel.answer()
        t = time.perf_counter()
        panel.spins[name].setValue(value)
        wait(app, lambda b=before: panel.answer() is not None and panel.answer() is not b)
        out["edit_s"].append(time.perf_counter() - t)
        panel.runner.wait()
        app.processEvents()
        out["edits"].append(rss())

    peak = Peak()
    peak.reset()
    drawn: list[float] = []
    diffed: list[float] = []

    class Drawn(QtCore.QObject):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
            if event.type() == QtCore.QEvent.Type.Paint and not drawn:
                drawn.append(time.perf_counter())
            return False

    spy = Drawn()

    def opened(cw) -> None:  # before the window's first paint
        cw.view_b.plot.viewport().installEventFilter(spy)
        cw.comparison_ready.connect(lambda *_: diffed.append(time.perf_counter()))

    panel.compare_opened.connect(opened)
    t = time.perf_counter()
    panel.compare_button.click()
    wait(app, lambda: bool(drawn) and bool(diffed))
    out["beside_drawn_s"] = drawn[0] - t
    out["beside_s"] = max(drawn[0], diffed[0]) - t
    out["beside_peak"] = peak.peak
    out["beside"] = rss()
    print(json.dumps(out))
    ini.unlink(missing_ok=True)


if __name__ == "__main__":
    main(sys.argv[1])
