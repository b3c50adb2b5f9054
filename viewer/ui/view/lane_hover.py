"""What the mouse points at in the lanes, and the plain-text tooltip that says it."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.lanes.data import SessionLanes

Qt = QtCore.Qt
#: A hover or click this many pixels beside a bar still picks it.
PICK_SLACK_PX = 3.0
#: Which layers answer a hover or click, per lane kind, in priority order.
PICK_LAYERS = {
    "worker": ("bar", "open", "pickup"),
    "synth": ("synth", "open", "queue"),
    "busy": ("gap",),
    "counter": (),
}


def pick(lanes: SessionLanes, x_ms: float, y: float, ms_per_px: float) -> tuple[str, int]:
    """What lies at view point (x ms, y px): ("partition", row), ("gap", index) or ("", -1)."""
    lane = lanes.lane_at(y)
    if lane is None:
        return "", -1
    slack = PICK_SLACK_PX * ms_per_px
    for layer in PICK_LAYERS[lane.kind]:
        iv = lane.layers[layer]
        pos = iv.at(x_ms, slack)
        if pos >= 0:
            return ("gap" if layer == "gap" else "partition"), int(iv.row[pos])
    return "", -1


class HoverTip(QtWidgets.QLabel):
    """A child label rather than QToolTip: plain text guaranteed, no extra top-level window."""

    def __init__(self, parent: QtWidgets.QWidget) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setPalette(QtWidgets.QToolTip.palette())
        self.setBackgroundRole(QtGui.QPalette.ColorRole.ToolTipBase)
        self.setForegroundRole(QtGui.QPalette.ColorRole.ToolTipText)
        self.setAutoFillBackground(True)
        self.setMargin(4)
        self.setFrameStyle(QtWidgets.QFrame.Shape.Box | QtWidgets.QFrame.Shadow.Plain)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.hide()

    def show_text(self, text: str, cursor: QtCore.QPoint) -> None:
        """Show ``text`` beside ``cursor`` (parent coordinates), inside the parent; hide
        when there is nothing to say."""
        if not text:
            self.hide()
            return
        self.setText(text)
        self.adjustSize()
        at = cursor + QtCore.QPoint(14, 18)
        size, parent = self.size(), self.parentWidget()
        # Keep it inside the view: flip to the other side of the cursor near an edge.
        if at.x() + size.width() > parent.width():
            at.setX(max(0, at.x() - size.width() - 28))
        if at.y() + size.height() > parent.height():
            at.setY(max(0, at.y() - size.height() - 36))
        self.move(at)
        self.show()
        self.raise_()
