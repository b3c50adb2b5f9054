"""The ViewBox of the lanes: drag pans time, Ctrl-drag selects a range, Shift- or right-drag
zooms to a span; drags, clicks and right clicks go to the callables its owner gives it."""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6 import QtCore

Qt = QtCore.Qt

#: ``(mode, t0, t1, finished)``: a Ctrl-drag ("select") or a zoom drag ("zoom") over [t0, t1].
OnSpan = Callable[[str, float, float, bool], None]
#: ``(point in view coordinates, double click)``.
OnClick = Callable[[QtCore.QPointF, bool], None]
#: ``(point in view coordinates, screen position)``.
OnContext = Callable[[QtCore.QPointF, QtCore.QPoint], None]


class TimeViewBox(pg.ViewBox):
    """Drag pans time; Ctrl-drag selects a range; Shift- or right-drag zooms to a span."""

    def __init__(self, on_span: OnSpan, on_click: OnClick, on_context: OnContext) -> None:
        super().__init__(enableMenu=False, invertY=True)
        self.setMouseEnabled(x=True, y=False)
        self._on_span, self._on_click, self._on_context = on_span, on_click, on_context
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
            self._on_span(self._mode, min(a, b), max(a, b), ev.isFinish())
        else:
            ev.ignore()

    def mouseClickEvent(self, ev) -> None:
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self._on_click(self.mapSceneToView(ev.scenePos()), ev.double())
        elif ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            point = self.mapSceneToView(ev.scenePos())
            self._on_context(point, ev.screenPos().toPoint())
        else:
            ev.ignore()
