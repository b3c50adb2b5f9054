"""The details of the clicked partition: its whole life (synthesis, queue, dispatch, prep,
mutex wait, kernels, post) drawn to scale and listed with every figure, and its job.

The figures are ``viewer.analysis.life``'s, which reads ``stages``: the same numbers as
the hover text, the panels and the report.
"""

from __future__ import annotations

import math

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.life import Life, life
from viewer.analysis.units import SESSION_CLOCK, Clock, counted, duration
from viewer.model import Session
from viewer.ui.palette import Theme, mix, with_alpha
from viewer.ui.panels.common import text_label

Qt = QtCore.Qt
#: The stages inside the GPU call, drawn again to their own scale under the whole life.
CALL_STAGES = ("prep", "mutex", "kernel", "post")


def stage_color(theme: Theme, key: str, job: int) -> QtGui.QColor:
    """The colour of a stage in the life bar: the lanes' colours where they draw it."""
    neutral = mix(theme.background, theme.foreground, 0.35)
    return {
        "synthesis": theme.job(job),
        "held": with_alpha(theme.wait, 0.55),
        "queue": theme.wait,
        "dispatch": theme.gap[0],
        "prep": neutral,
        "mutex": mix(theme.background, theme.gap[1], 0.55),
        "kernel": theme.kernel(job),
        "post": mix(theme.background, theme.foreground, 0.55),
    }[key]


class LifeBar(QtWidgets.QWidget):
    """The stages of one partition to scale: the whole life on top, the GPU call below."""

    ROW = 22

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.life: Life | None = None
        self.setMinimumHeight(2 * self.ROW + 3 * self.fontMetrics().height() + 10)
        self.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed
        )

    def set_life(self, value: Life | None) -> None:
        self.life = value
        self.update()

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        if self.life is None:
            return
        theme = Theme.from_palette(self.palette())
        painter = QtGui.QPainter(self)
        metrics = self.fontMetrics()
        line = metrics.height()
        stages = [s for s in self.life.stages if math.isfinite(s.start) and math.isfinite(s.end)]
        rows = (
            (stages, 0),
            ([s for s in stages if s.key in CALL_STAGES], 2 * line + self.ROW),
        )
        for shown, top in rows:
            if not shown:
                continue
            a = min(s.start for s in shown)
            b = max(s.end for s in shown)
            scale = (self.width() - 12) / max(b - a, 1.0)
            right = -1.0
            for s in shown:
                x0, x1 = 6 + (s.start - a) * scale, 6 + (s.end - a) * scale
                rect = QtCore.QRectF(x0, top + line, max(x1 - x0, 1.0), self.ROW)
                painter.fillRect(rect, stage_color(theme, s.key, self.life.job))
                text = f"{s.name} {duration(s.ms)}"
                if metrics.horizontalAdvance(text) + 6 > rect.width():
                    text = duration(s.ms)
                width = metrics.horizontalAdvance(text)
                # Names above their bar, left to right, kept inside the widget, skipping
                # those that would overlap the one before.
                at = max(min(x0, self.width() - width - 2), 0.0)
                if at >= right:
                    painter.setPen(theme.foreground)
                    painter.drawText(QtCore.QPointF(at, top + line - 3), text)
                    right = at + width + 8
            if top:  # the call's row: its kernels under the CUDA region
                kernel = self.life.stage("kernel")
                if kernel is not None and math.isfinite(kernel.start):
                    self._paint_kernels(painter, theme, kernel.start, a, scale, top + line)
        painter.end()

    def _paint_kernels(self, painter, theme, k0: float, a: float, scale: float, top: float):
        x = 6 + (k0 - a) * scale
        for k, (name, ms) in enumerate(self.life.kernels.items()):
            rect = QtCore.QRectF(x, top + self.ROW * 0.55, ms * scale, self.ROW * 0.45)
            painter.fillRect(rect, theme.kernel_part(k))
            if self.fontMetrics().horizontalAdvance(name) + 4 < rect.width():
                painter.setPen(QtGui.QColor("#1a1a1a"))
                painter.drawText(rect.adjusted(2, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, name)
            x += ms * scale


class DetailsPane(QtWidgets.QScrollArea):
    """Who the clicked partition is, its life to scale, and a row per stage."""

    frame_requested = QtCore.Signal(int)  # partition row

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.life: Life | None = None
        self._session: Session | None = None
        self._clock = SESSION_CLOCK
        self.header = text_label(bold=True)
        self.job = text_label()
        self.hint = text_label("Click a bar in the lanes to see its partition's whole life.")
        self.bar = LifeBar()
        self.frame_button = QtWidgets.QPushButton("Frame it")
        self.frame_button.clicked.connect(
            lambda: self.life is not None and self.frame_requested.emit(self.life.row)
        )
        # Stages across, as in the bar above it: the dock is wide and short.
        self.table = QtWidgets.QTableWidget(3, 0)
        self.table.setVerticalHeaderLabels(["from", "to", "duration"])
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSizeAdjustPolicy(
            QtWidgets.QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents
        )
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.figures = text_label()
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.frame_button)
        body = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(body)
        layout.setSpacing(4)
        layout.addWidget(self.hint)
        layout.addLayout(top)
        layout.addWidget(self.job)
        layout.addWidget(self.bar)
        layout.addWidget(self.table)
        layout.addWidget(self.figures)
        layout.addStretch(1)
        self.setWidget(body)
        self.set_partition(None, -1)

    def set_clock(self, clock: Clock) -> None:
        """Write times on ``clock``, the one the axis shows."""
        if clock != self._clock:
            self._clock = clock
            if self.life is not None:
                self._fill(self._session, self.life)

    def set_partition(self, session: Session | None, row: int) -> None:
        """Show partition ``row`` of ``session`` (-1 or None: the hint)."""
        ok = session is not None and 0 <= row < len(session.partitions)
        self.life = life(session, row) if ok else None
        self._session = session if ok else None
        for widget in (self.header, self.job, self.bar, self.table, self.figures):
            widget.setVisible(ok)
        self.frame_button.setVisible(ok)
        self.hint.setVisible(not ok)
        self.bar.set_life(self.life)
        if self.life is not None:
            self._fill(session, self.life)

    def _fill(self, session: Session, lf: Life) -> None:
        clock = self._clock
        what = (
            f"partition {lf.partition}" if lf.partition >= 0 else f"monolithic {lf.kind or 'job'}"
        )
        worker = lf.worker if lf.worker >= 0 else "?"
        gpu = lf.gpu if lf.gpu >= 0 else "?"
        state = " · GPU call never ended" if lf.gpu_open else ""
        state += " · synthesis never ended" if lf.synth_open else ""
        self.header.setText(f"job {lf.job_id} · {what} · worker {worker} · GPU {gpu}{state}")
        jobs = session.partitions["job"] == lf.job
        ends = session.partitions["gpu_end"][jobs]
        done = (
            f"completed at {clock.stamp(float(ends.max()))}"
            if len(ends) and not session.partitions["gpu_open"][jobs].any()
            and math.isfinite(float(ends.max()))
            else "not completed"
        )  # fmt: skip
        self.job.setText(
            f"sector {lf.job} of the session ({counted(len(session.jobs), 'job', grouped=True)}): "
            f"{counted(int(jobs.sum()), 'GPU call')}, {done}; this one from "
            f"{clock.at(lf.start)} to {clock.stamp(lf.end)} ({duration(lf.end - lf.start)})"
        )
        self.table.setColumnCount(len(lf.stages))
        unit = f" ({clock.suffix.strip()})" if clock.suffix else ""
        self.table.setVerticalHeaderLabels([f"from{unit}", f"to{unit}", "duration"])
        self.table.setHorizontalHeaderLabels([s.name for s in lf.stages])
        for j, s in enumerate(lf.stages):
            for i, text in enumerate((clock.at(s.start), clock.at(s.end), duration(s.ms))):
                item = QtWidgets.QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.table.setFixedHeight(
            self.table.horizontalHeader().height()
            + sum(self.table.rowHeight(i) for i in range(3))
            + 2 * self.table.frameWidth()
        )
        kernels = " · ".join(f"{k} {duration(ms)}" for k, ms in lf.kernels.items())
        figures = " · ".join(
            f"{name} {value:g}" if name == "num_circuits" else f"{name} {duration(value)}"
            for name, value in lf.figures.items()
        )
        self.figures.setText(
            f"CUDA kernels: {kernels or 'no CUZK_TIMING breakdown'}\nFigures of the call: {figures}"
        )

    def stage_texts(self) -> list[tuple[str, str]]:
        """(stage, duration) as listed (tests, copy)."""
        return [
            (self.table.horizontalHeaderItem(j).text(), self.table.item(2, j).text())
            for j in range(self.table.columnCount())
        ]
