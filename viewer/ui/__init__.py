"""The Qt user interface: ``MainWindow`` and the embeddable ``TimelineView``."""

from viewer.ui.main_window import MainWindow
from viewer.ui.timeline_view import TimelineView

__all__ = ["MainWindow", "TimelineView"]
