"""The Qt user interface: ``MainWindow`` and the embeddable ``TimelineView``."""

from viewer.ui.view.timeline_view import TimelineView
from viewer.ui.windows.main_window import MainWindow

__all__ = ["MainWindow", "TimelineView"]
