"""Open hostile inputs in the real main window, offscreen, one after the other.

``python tests/hostile/window_probe.py PATHS.json`` opens each path through
``MainWindow.open_paths`` (the way File > Open and drag and drop go), waits until it is
shown or refused (``PER_FILE_S`` at most), and prints one JSON line per path: the outcome,
the banner's text and how many annotations are on screen.  An exception in any slot is
recorded.  The harness runs it in a subprocess with a timeout and checks the exit status.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback

PER_FILE_S = 60.0


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtCore, QtWidgets

    from viewer.ui import MainWindow

    errors: list[str] = []
    sys.excepthook = lambda *exc: errors.append("".join(traceback.format_exception(*exc)))
    app = QtWidgets.QApplication(["hostile-window"])
    folder = tempfile.mkdtemp(prefix="hostile-window-")
    settings = QtCore.QSettings(f"{folder}/settings.ini", QtCore.QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    window.resize(1200, 800)
    window.show()
    outcome: list[str] = []
    window.timeline_loaded.connect(lambda timeline: outcome.append("loaded"))
    window.load_failed.connect(lambda message: outcome.append("failed: " + message))
    with open(sys.argv[1], encoding="utf-8") as fh:
        paths = json.load(fh)
    for path in paths:
        outcome.clear()
        window.banner.hide()
        print(json.dumps({"path": path, "started": True}), flush=True)
        window.open_paths([path])
        timer = QtCore.QElapsedTimer()
        timer.start()
        while (not outcome or window.is_loading()) and timer.elapsed() < PER_FILE_S * 1000:
            app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 50)
        for _ in range(20):  # let the sidecar load and the panels settle
            app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 10)
        ups = window.write_ups
        result = {
            "path": path,
            "outcome": outcome[0] if outcome else "timeout",
            "banner": window.banner.label.text() if window.banner.isVisible() else "",
            "annotations": len(ups.controller.annotations),
            "annotations_log": None
            if ups.controller.log_path is None
            else os.fspath(ups.controller.log_path),
            "errors": list(errors),
        }
        errors.clear()
        print(json.dumps(result), flush=True)
    window.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
