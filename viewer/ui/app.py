"""Start the Qt application with the main window."""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

from PySide6 import QtCore, QtWidgets

from viewer.ui.resources import app_icon
from viewer.ui.windows.main_window import MainWindow


def make_app(argv: Sequence[str] = ()) -> QtWidgets.QApplication:
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0], *argv])
    QtCore.QCoreApplication.setOrganizationName("cuzk")
    QtCore.QCoreApplication.setApplicationName("Timeline Viewer")
    app.setWindowIcon(app_icon())
    return app


def run_app(paths: Sequence[str], workers_per_gpu: int | None = None, follow: bool = False) -> int:
    app = make_app()
    window = MainWindow(workers_per_gpu=workers_per_gpu)
    window.show()
    if paths:
        window.open_paths(paths)
        if follow:
            window.follow.action.setChecked(True)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl+C in the terminal quits
    return app.exec()
