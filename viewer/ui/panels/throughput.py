"""Throughput panel: theoretical vs measured s/proof, their ratio as a gauge, the verdict."""

from __future__ import annotations

import math

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.idle import IdleSplit, idle_split
from viewer.analysis.units import counted, duration, group, seconds
from viewer.ui.panels.common import (
    FormGrid,
    ScopedPanel,
    fmt_pct,
    note_label,
    scope_text,
    section_label,
)

GOOD, FAIR, POOR = QtGui.QColor("#2e9d5b"), QtGui.QColor("#d49a1a"), QtGui.QColor("#d04a3c")


def _per_proof(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else seconds(value, unit="s/proof")


class RatioGauge(QtWidgets.QWidget):
    """A horizontal 0..1.2 gauge of theoretical / measured s/proof (1.0 = GPU-bound)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ratio: float | None = None
        self.setMinimumHeight(34)
        self.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed
        )

    def set_ratio(self, ratio: float | None) -> None:
        self.ratio = None if ratio is None or math.isnan(ratio) else float(ratio)
        self.setToolTip(
            "theoretical / measured s/proof: 1.0 means the GPU never waits"
            if self.ratio is not None
            else "not enough completed jobs in the range to measure"
        )
        self.update()

    @staticmethod
    def color_for(ratio: float) -> QtGui.QColor:
        return GOOD if ratio >= 0.95 else FAIR if ratio >= 0.8 else POOR

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        p = QtGui.QPainter(self)
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        bar = QtCore.QRectF(8, 4, self.width() - 16, 12)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(pal.color(QtGui.QPalette.ColorRole.Mid))
        p.drawRoundedRect(bar, 4, 4)
        full = 1.2

        def x_at(v: float) -> float:
            return bar.left() + bar.width() * min(max(v, 0.0), full) / full

        if self.ratio is not None:
            p.setBrush(self.color_for(self.ratio))
            p.drawRoundedRect(
                QtCore.QRectF(bar.left(), bar.top(), x_at(self.ratio) - bar.left(), bar.height()),
                4,
                4,
            )
        text = pal.color(QtGui.QPalette.ColorRole.WindowText)
        p.setPen(QtGui.QPen(text, 1.5))
        one = x_at(1.0)
        p.drawLine(QtCore.QPointF(one, bar.top() - 3), QtCore.QPointF(one, bar.bottom() + 3))
        font = p.font()
        font.setPointSizeF(max(font.pointSizeF() * 0.85, 7))
        p.setFont(font)
        for v in (0.0, 0.5, 1.0):
            p.drawText(
                QtCore.QRectF(x_at(v) - 20, bar.bottom() + 2, 40, 14),
                QtCore.Qt.AlignmentFlag.AlignCenter,
                f"{v:.1f}",
            )
        p.end()


class ThroughputPanel(ScopedPanel):
    """The verdict first (it is the answer), then theoretical vs measured throughput, GPU
    efficiency, the idle time the verdict weighs, and the evidence; every figure says what
    it covers (the range or the whole session)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)  # ScopedPanel: a frameless scroll area and its scope line
        self.verdict = QtWidgets.QLabel()
        self.warning = QtWidgets.QLabel()
        self.warning.setObjectName("verdictWarning")
        self.warning.setStyleSheet("color: #c0392b;")
        self.warning.hide()
        # The reader's notes on the session (blocks matched by best effort, a cut file): the
        # report prints them under the verdict; the window showed them only for 10 s in the
        # status bar, cut at its width.
        self.notes = QtWidgets.QLabel()
        self.notes.setObjectName("sessionNotes")
        self.notes.hide()
        self.evidence = QtWidgets.QLabel()
        self.efficiency = QtWidgets.QLabel()
        self.idle = QtWidgets.QLabel()
        labels = (self.verdict, self.warning, self.notes, self.evidence, self.efficiency, self.idle)
        for label in labels:
            label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
            label.setWordWrap(True)
            label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setContentsMargins(8, 0, 8, 0)
        font = self.verdict.font()
        font.setBold(True)
        self.verdict.setFont(font)
        f = self.form = FormGrid()
        f.add_row("theoretical", "Kernel floor (theoretical)", bold=True)
        f.add_row("measured", "Measured", bold=True)
        f.add_row("ratio", "Ratio theoretical / measured", bold=True)
        self.gauge = RatioGauge()
        f.add_widget(self.gauge)
        f.add_row("jobs", "Jobs completed")
        f.add_row("ppp", "Partitions per proof")
        self.how = note_label()
        self.efficiency_title = section_label("GPU efficiency (merged intervals)")
        self.idle_title = section_label("GPU idle time")
        container = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(container)
        layout.setContentsMargins(0, 4, 0, 6)
        layout.setSpacing(3)
        for widget in (
            self.scope,
            _indented(section_label("Verdict")),
            self.verdict,
            self.warning,
            self.notes,
            f,
            self.how,
            _indented(self.efficiency_title),
            self.efficiency,
            _indented(self.idle_title),
            self.idle,
            _indented(section_label("Evidence")),
            self.evidence,
        ):
            layout.addWidget(widget)
        layout.addStretch(1)
        self.setWidget(container)

    def clear(self) -> None:
        for label in self.form.values.values():
            label.setText("—")
        self.gauge.set_ratio(None)
        for label in (self.scope, self.how, self.efficiency, self.idle, self.verdict):
            label.setText("")
        for label in (self.warning, self.notes):
            label.setText("")
            label.hide()
        self.evidence.setText("")

    def set_summary(self, summary) -> None:
        t = summary.throughput
        in_range = summary.rng is not None
        where = "in the range" if in_range else "in the session"
        f = self.form
        self._summary = summary
        self.scope.setText(scope_text(summary, self._clock))
        f.set("theoretical", _per_proof(t.theoretical_s_per_proof))
        f.set(
            "measured",
            _per_proof(t.measured_s_per_proof)
            if t.measured_s_per_proof is not None
            else "— (needs 2 completed jobs)"
            if t.jobs_completed < 2
            else "— (all done in the same ms)",
        )
        f.set("ratio", "—" if t.ratio is None else f"{t.ratio:.2f}")
        self.gauge.set_ratio(t.ratio)
        f.set("jobs", group(f"{t.jobs_completed:,}"), f"Jobs completed {where}")
        f.set("ppp", f"{t.partitions_per_proof:g}" if t.partitions_per_proof else "—")
        k = summary.kernel
        touching = "touching the range" if in_range else "of the session"
        jobs = counted(t.jobs_completed, "job", grouped=True)
        parts = counted(k.partitions, "partition", grouped=True)
        self.how.setText(
            f"Measured: time between the completions of the {jobs} "
            f"completed {where}, per interval. Kernel floor: mean kernel {duration(k.mean_ms)} "
            f"of the {parts} {touching} x {t.partitions_per_proof} / {counted(t.gpus, 'GPU')}."
        )
        self.efficiency_title.setText(
            "GPU efficiency (merged intervals" + (", clipped to the range)" if in_range else ")")
        )
        self.efficiency.setText(
            "\n".join(
                f"GPU {g.gpu}: {fmt_pct(g.efficiency)}  (idle {duration(g.idle_ms)} of "
                f"{duration(g.busy_ms + g.idle_ms)})"
                for g in summary.gpus
            )
            or "—"
        )
        self.idle_title.setText("GPU idle time" + (" in the range" if in_range else ""))
        self.idle.setText(idle_text(idle_split(summary.gaps, summary.cold_start)))
        self.verdict.setText(summary.verdict.sentence)
        self.warning.setText(f"⚠ {summary.verdict.warning}")
        self.warning.setVisible(bool(summary.verdict.warning))
        notes = list(dict.fromkeys(summary.session.notes))
        self.notes.setText("\n".join(f"Note: {n}" for n in notes))
        self.notes.setVisible(bool(notes))
        self.evidence.setText("\n".join(f"• {e}" for e in summary.verdict.evidence))


def idle_text(split: IdleSplit) -> str:
    """The idle gaps as the evidence counts them (all) and as the verdict does (outside
    the cold start), adding up."""
    if not split.gaps:
        return "No idle gap between the GPU calls."
    n = f"{split.gaps} gap" + ("s" if split.gaps != 1 else "")
    lines = [
        f"{duration(split.total_ms)} idle in {n}: {duration(split.starved_ms)} starved "
        f"(waiting for synthesis), {duration(split.dispatch_ms)} dispatch."
    ]
    if split.cold_ms > 0:
        lines.append(
            f"{duration(split.cold_ms)} of it falls in the cold start; after it, "
            f"{duration(split.warm_starved_ms)} starved and {duration(split.warm_dispatch_ms)} "
            "dispatch: the idle time the verdict weighs."
        )
    else:
        lines.append("None of it falls in the cold start: the verdict weighs all of it.")
    return "\n".join(lines)


def _indented(label: QtWidgets.QLabel) -> QtWidgets.QLabel:
    label.setContentsMargins(8, 6, 8, 0)
    return label
