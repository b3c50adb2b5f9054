"""One command or one window open, timed in a fresh process after its imports; prints
JSON: seconds, peak RSS and the RSS its imports already took (bytes).

``python shape_probe.py cli ARGS...``: ``python -m viewer ARGS`` (its modules imported
first, so the time is the command's work);
``python shape_probe.py window LOG``: a shown window (offscreen) opens LOG; seconds to
the plot's first paint with the log drawn, and to the panels filled.
"""

from __future__ import annotations

import json
import os
import sys
import time

from probe import _peak_rss


def cli(argv: list[str]) -> dict[str, float]:
    import viewer.ui.writeups.image_export  # noqa: F401 - the image exports import it late
    from viewer.cli import main

    base = _peak_rss()
    t = time.perf_counter()
    try:
        main(argv)
    except SystemExit as exc:
        if exc.code:
            raise
    return {"seconds": time.perf_counter() - t, "peak": _peak_rss(), "base": base}


def window(path: str) -> dict[str, float]:
    import tempfile

    from first_frame import watch_open  # Qt: not in the command line's process
    from PySide6 import QtCore, QtWidgets

    # The process as ``python -m viewer`` makes it: its heap settings (``viewer.heap``: one
    # malloc arena, big blocks reused) are the command line's, made before any thread.
    import viewer.cli  # noqa: F401
    from viewer.ui import MainWindow

    app = QtWidgets.QApplication(["shape-probe"])
    ini = os.path.join(tempfile.mkdtemp(prefix="shape-probe-"), "settings.ini")
    win = MainWindow(settings=QtCore.QSettings(ini, QtCore.QSettings.Format.IniFormat))
    win.resize(1600, 900)
    win.show()
    app.processEvents()
    base = _peak_rss()
    marks, loop = watch_open(win)
    win.load_failed.connect(lambda message: (print(message, file=sys.stderr), loop.quit()))
    QtCore.QTimer.singleShot(590_000, loop.quit)
    t = time.perf_counter()
    win.open_paths([path])
    loop.exec()
    for _ in range(20):  # the frames that follow the first
        app.processEvents()
    return {
        "seconds": marks["drawn"] - t,
        "filled": marks["filled"] - t,
        "peak": _peak_rss(),
        "base": base,
    }


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    out = window(sys.argv[2]) if sys.argv[1] == "window" else cli(sys.argv[2:])
    print(json.dumps(out), flush=True)
    os._exit(0)  # no teardown of the window: its time is not the figure
