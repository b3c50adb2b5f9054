"""The ViewBox of the lanes: drag pans time, Ctrl-drag selects a range, Shift- or right-drag
zooms to a span; clicks and right clicks go back to the ``TimelineView``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6 import QtCore

if TYPE_CHECKING:
    from viewer.ui.timeline_view import TimelineView

Qt = QtCore.Qt


class TimeViewBox(pg.ViewBox):
    """Drag pans time; Ctrl-drag selects a range; Shift- or right-drag zooms to a span."""

    def __init__(self, view: TimelineView) -> None:
        super().__init__(enableMenu=False, invertY=True)
        self.setMouseEnabled(x=True, y=False)
        self._view = view
        self._mode: str | None = None

    def mouseDragEvent(self, ev, axis=None) -> None:
        if ev.isStart():
            mods, button = ev.modifiers(), ev.button()
            self._mode = None
            if button == Qt.MouseButton.LeftButton and mods & Qt.KeyboardModifier.ControlModifier:
                self._mode = "select"
            elif button == Qt.MouseButton.RightButton or (
                button == Qt.MouseButton.LeftButton and mods & Qt.KeyboardModifier.ShiftModifier
            ):
                self._mode = "zoom"
            elif button == Qt.MouseButton.LeftButton:
                self._mode = "pan"
        if self._mode == "pan":
            super().mouseDragEvent(ev, axis)
        elif self._mode is not None:
            ev.accept()
            a = self.mapSceneToView(ev.buttonDownScenePos(ev.button())).x()
            b = self.mapSceneToView(ev.scenePos()).x()
            self._view._on_drag_span(self._mode, min(a, b), max(a, b), ev.isFinish())
        else:
            ev.ignore()

    def mouseClickEvent(self, ev) -> None:
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self._view._on_click(self.mapSceneToView(ev.scenePos()), ev.double())
        elif ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            point = self.mapSceneToView(ev.scenePos())
            self._view.context_requested.emit(point, ev.screenPos().toPoint())
        else:
            ev.ignore()
