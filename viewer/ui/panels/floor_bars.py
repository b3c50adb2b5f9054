"""The four floors of a run as horizontal bars: measured above predicted, the binding one in
the accent colour, the value at the end of each bar, a dashed line at the measured s/proof.

One small QPainter widget (eight rectangles at most); tooltips say what each floor is
made of and what relieves it (``viewer.analysis.floors.REMEDY``).
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.floors import FLOORS, LABEL, REMEDY, Floors
from viewer.analysis.units import counted, per_proof
from viewer.ui.palette import mix

Qt = QtCore.Qt
RUNS = ("measured", "predicted")
LEGEND = ("measured", "predicted", "binds", "measured s/proof")
#: Characters a tooltip line holds before it wraps (the remedy can take 150).
TIP_WIDTH = 90


@dataclass(frozen=True)
class BarColors:
    """Plain and binding bars of each run, from the widget's palette (light or dark)."""

    measured: QtGui.QColor
    predicted: QtGui.QColor
    measured_binding: QtGui.QColor
    predicted_binding: QtGui.QColor
    text: QtGui.QColor
    muted: QtGui.QColor
    accent_text: QtGui.QColor

    @classmethod
    def from_palette(cls, palette: QtGui.QPalette) -> BarColors:
        roles = QtGui.QPalette.ColorRole
        base, text = palette.color(roles.Window), palette.color(roles.WindowText)
        accent = palette.color(roles.Highlight)
        dark = base.lightnessF() < 0.5
        return cls(
            measured=mix(base, text, 0.22),
            predicted=mix(base, text, 0.45),
            measured_binding=mix(accent, base, 0.5),
            predicted_binding=accent,
            text=text,
            muted=mix(base, text, 0.6),
            # On a dark window the accent itself may be too deep for text: lighten it.
            accent_text=accent.lighter(140) if dark else accent.darker(115),
        )


def floor_formula(name: str, f: Floors) -> str:
    """How ``f``'s floor ``name`` is made, with its figures (one line)."""
    m, per, value = f.means_ms, f.partitions_per_proof, f.values()[name]
    if math.isnan(value):
        return "not known from this run"

    def ms(key: str) -> str:
        v = m.get(key, math.nan)
        return "?" if v is None or math.isnan(v) else f"{v:.0f}"

    result = f"= {per_proof(value)} s/proof"
    if name == "kernel":
        gpus = counted(f.gpus, "GPU")
        return f"kernel {ms('kernel')} ms × {counted(per, 'partition')} / {gpus} {result}"
    if name == "worker":
        call = (
            f"call {ms('call')} ms"
            if f.upper_bound
            else f"(prep {ms('prep')} + kernel {ms('kernel')} + post {ms('post')}) ms"
        )
        workers = counted(f.workers, "GPU worker")
        return f"{call} × {counted(per, 'partition')} / {workers} {result}"
    if name == "synthesis":
        parts, slots = counted(per, "partition"), counted(f.pw, "slot")
        return f"synthesis {ms('synth')} ms × {parts} / {slots} {result}"
    arrivals = counted(f.inferred_arrivals, "arrival", grouped=True)
    inferred = f" ({arrivals} inferred)" if f.inferred_arrivals else ""
    return f"over {counted(f.jobs, 'job', grouped=True)}{inferred} {result}"


FORMULA = {
    "kernel": "mean CUDA kernel × partitions per proof / GPUs",
    "worker": "mean (CPU prep + kernel + post) × partitions per proof / GPU workers",
    "synthesis": "mean synthesis × partitions per proof / synthesis slots (pw)",
    "arrival": "(last job's arrival − first) / (jobs − 1)",
}


class FloorBars(QtWidgets.QWidget):
    """``set_floors(measured, predicted, measured_s)``: eight bars, two per floor.

    ``bar_rect(floor, run)`` gives where a bar is painted (tests probe its pixels),
    ``floor_at(point)`` which floor's row a point is in (tooltips).
    """

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._floors: dict[str, Floors | None] = {"measured": None, "predicted": None}
        self._measured_s: float | None = None
        self._remedies: dict[str, str] = {}
        self.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Minimum
        )
        self.setMouseTracking(True)

    # ------------------------------------------------------------------ data
    def set_floors(
        self,
        measured: Floors | None,
        predicted: Floors | None,
        measured_s: float | None,
        remedies: dict[str, str] | None = None,
    ) -> None:
        """``remedies``: what relieves a floor where the log says more than ``REMEDY`` (the
        synthesis floor on a log whose load shows how synthesis slows beside more of it)."""
        self._floors = {"measured": measured, "predicted": predicted}
        self._measured_s = measured_s
        self._remedies = dict(remedies or {})
        self.update()

    def clear(self) -> None:
        self.set_floors(None, None, None)

    def binding(self, run: str) -> str | None:
        f = self._floors[run]
        return None if f is None else f.bound

    def value(self, floor: str, run: str) -> float:
        f = self._floors[run]
        return math.nan if f is None else f.values()[floor]

    # ---------------------------------------------------------------- geometry
    def _metrics(self) -> tuple[int, int, int, int]:
        """(line height, bar height, row height, legend height) in pixels for the font."""
        line = self.fontMetrics().height()
        bar = max(10, round(line * 0.8))
        return line, bar, 2 * bar + 2 + round(line * 0.7), line + 10

    def _label_width(self) -> int:
        bold = QtGui.QFont(self.font())
        bold.setBold(True)
        fm = QtGui.QFontMetrics(bold)
        return max(fm.horizontalAdvance(LABEL[k]) for k in FLOORS) + 14

    def _value_width(self) -> int:
        return self.fontMetrics().horizontalAdvance("000.0 s  binds") + 8

    def sizeHint(self) -> QtCore.QSize:
        return self.minimumSizeHint() + QtCore.QSize(120, 0)

    def minimumSizeHint(self) -> QtCore.QSize:
        line, bar, row, legend = self._metrics()
        fm = self.fontMetrics()
        words = sum(fm.horizontalAdvance(t) + bar + 14 for t in LEGEND)
        width = max(self._label_width() + self._value_width() + 120, words)
        return QtCore.QSize(width, legend + 4 * row + 4)

    def _scale(self) -> tuple[float, float, float]:
        """(x of 0 s, pixels per s/proof, top of the first row)."""
        _, _, _, legend = self._metrics()
        left = self._label_width()
        right = self.width() - self._value_width()
        values = [self.value(k, r) for k in FLOORS for r in RUNS]
        if self._measured_s is not None:
            values.append(self._measured_s)
        top = max((v for v in values if math.isfinite(v)), default=1.0)
        return left, max(right - left, 10) / max(top, 1e-9), legend

    def bar_rect(self, floor: str, run: str) -> QtCore.QRectF:
        """Where the bar of ``floor`` for ``run`` is painted (empty when unknown)."""
        _, bar, row, _ = self._metrics()
        x0, px, top = self._scale()
        y = top + FLOORS.index(floor) * row + (0 if run == "measured" else bar + 2)
        v = self.value(floor, run)
        width = v * px if math.isfinite(v) else 0.0
        return QtCore.QRectF(x0, y, max(width, 1.0 if math.isfinite(v) else 0.0), bar)

    def floor_at(self, point: QtCore.QPointF | QtCore.QPoint) -> str | None:
        _, _, row, _ = self._metrics()
        _, _, top = self._scale()
        i = math.floor((point.y() - top) / row)
        return FLOORS[i] if 0 <= i < len(FLOORS) else None

    def measured_line_x(self) -> float | None:
        if self._measured_s is None or not math.isfinite(self._measured_s):
            return None
        x0, px, _ = self._scale()
        return x0 + self._measured_s * px

    # ---------------------------------------------------------------- tooltips
    def tooltip_text(self, floor: str) -> str:
        lines = [f"{LABEL[floor]} floor: {FORMULA[floor]}"]
        for run in RUNS:
            f = self._floors[run]
            if f is not None:
                bound = "  (binds)" if f.bound == floor else ""
                lines.append(f"{run}: {floor_formula(floor, f)}{bound}")
        helps = f"When it binds, what helps: {self._remedies.get(floor, REMEDY[floor])}."
        lines.append(textwrap.fill(helps, TIP_WIDTH))  # a tooltip does not wrap itself
        if any(f is not None and f.upper_bound for f in self._floors.values()):
            lines.append("No CUZK_TIMING in this log: kernel and worker floors are upper bounds.")
        return "\n".join(lines)

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.ToolTip:
            floor = self.floor_at(event.pos())
            if floor is None or self._floors["measured"] is None:
                QtWidgets.QToolTip.hideText()
                event.ignore()
            else:
                QtWidgets.QToolTip.showText(event.globalPos(), self.tooltip_text(floor), self)
            return True
        return super().event(event)

    # ------------------------------------------------------------------ paint
    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        colors = BarColors.from_palette(self.palette())
        p = QtGui.QPainter(self)
        try:
            self._paint_legend(p, colors)
            if self._floors["measured"] is None and self._floors["predicted"] is None:
                return
            self._paint_bars(p, colors)
            self._paint_measured_line(p, colors)
            self._paint_text(p, colors)
        finally:
            p.end()

    def _paint_legend(self, p: QtGui.QPainter, c: BarColors) -> None:
        line, bar, _, _ = self._metrics()
        fm = self.fontMetrics()
        x, y = 0.0, 2.0
        swatches = (c.measured, c.predicted, c.predicted_binding)
        for text, color in zip(LEGEND[:-1], swatches, strict=True):
            p.fillRect(QtCore.QRectF(x, y + (line - bar) / 2, bar, bar), color)
            x += bar + 4
            p.setPen(c.muted)
            p.drawText(QtCore.QPointF(x, y + fm.ascent()), text)
            x += fm.horizontalAdvance(text) + 10
        p.setPen(QtGui.QPen(c.text, 1, Qt.PenStyle.DashLine))
        p.drawLine(QtCore.QPointF(x + 4, y + 1), QtCore.QPointF(x + 4, y + line - 1))
        p.setPen(c.muted)
        p.drawText(QtCore.QPointF(x + 9, y + fm.ascent()), LEGEND[-1])

    def _paint_bars(self, p: QtGui.QPainter, c: BarColors) -> None:
        for floor in FLOORS:
            for run in RUNS:
                rect = self.bar_rect(floor, run)
                if rect.width() > 0:
                    p.fillRect(rect, self.bar_color(floor, run, c))

    def bar_color(self, floor: str, run: str, c: BarColors) -> QtGui.QColor:
        if self.binding(run) == floor:
            return c.measured_binding if run == "measured" else c.predicted_binding
        return c.measured if run == "measured" else c.predicted

    def _paint_text(self, p: QtGui.QPainter, c: BarColors) -> None:
        """Row labels (bold when the floor binds either run, in the accent colour when it
        binds the prediction) and each bar's value, on a backing so the line never
        crosses them."""
        _, bar, row, _ = self._metrics()
        _, _, top = self._scale()
        fm = self.fontMetrics()
        bold = QtGui.QFont(self.font())
        bold.setBold(True)
        backing = self.palette().color(QtGui.QPalette.ColorRole.Window)
        for i, floor in enumerate(FLOORS):
            binds = [self.binding(run) == floor for run in RUNS]
            p.setFont(bold if any(binds) else self.font())
            p.setPen(c.accent_text if binds[1] else c.text)
            p.drawText(
                QtCore.QRectF(0, top + i * row, self._label_width() - 8, 2 * bar + 2),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                LABEL[floor],
            )
            p.setFont(self.font())
            for run, bound in zip(RUNS, binds, strict=True):
                rect = self.bar_rect(floor, run)
                v = self.value(floor, run)
                text = (f"{per_proof(v)} s" if math.isfinite(v) else "—") + (
                    "  binds" if bound else ""
                )
                box = QtCore.QRectF(
                    rect.right() + 4,
                    rect.center().y() - fm.height() / 2,
                    fm.horizontalAdvance(text) + 4,
                    fm.height(),
                )
                p.fillRect(box, backing)
                p.setPen(c.accent_text if bound and run == "predicted" else c.text)
                p.drawText(box, Qt.AlignmentFlag.AlignCenter, text)

    def _paint_measured_line(self, p: QtGui.QPainter, c: BarColors) -> None:
        x = self.measured_line_x()
        if x is None:
            return
        _, _, row, _ = self._metrics()
        _, _, top = self._scale()
        p.setPen(QtGui.QPen(c.text, 1, Qt.PenStyle.DashLine))
        p.drawLine(QtCore.QPointF(x, top - 3), QtCore.QPointF(x, top + 4 * row - 4))
