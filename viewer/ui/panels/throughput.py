"""Throughput panel: theoretical vs measured s/proof, their ratio as a gauge, the verdict."""

from __future__ import annotations

import math

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.ui.panels.common import FormGrid, fmt_pct, fmt_s, section_label

GOOD, FAIR, POOR = QtGui.QColor("#2e9d5b"), QtGui.QColor("#d49a1a"), QtGui.QColor("#d04a3c")


def _per_proof(seconds: float | None) -> str:
    return "—" if seconds is None or math.isnan(seconds) else f"{fmt_s(seconds)}/proof"


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


class ThroughputPanel(QtWidgets.QScrollArea):
    """Theoretical vs measured throughput, GPU efficiency and the verdict with evidence."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        f = self.form = FormGrid()
        f.add_row("theoretical", "Theoretical (kernel floor)", bold=True)
        f.add_row("measured", "Measured", bold=True)
        f.add_row("ratio", "Ratio theoretical / measured", bold=True)
        self.gauge = RatioGauge()
        f.add_widget(self.gauge)
        f.add_row("jobs", "Jobs completed in range")
        f.add_row("ppp", "Partitions per proof")
        f.add_section("GPU efficiency (merged intervals)")
        self.efficiency = QtWidgets.QLabel()
        self.efficiency.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.efficiency.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.efficiency.setContentsMargins(8, 0, 8, 0)
        f.add_widget(self.efficiency)
        self.verdict = QtWidgets.QLabel()
        self.warning = QtWidgets.QLabel()
        self.warning.setObjectName("verdictWarning")
        self.warning.setStyleSheet("color: #c0392b;")
        self.warning.hide()
        self.evidence = QtWidgets.QLabel()
        for label in (self.verdict, self.warning, self.evidence):
            label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
            label.setWordWrap(True)
            label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setContentsMargins(8, 0, 8, 0)
        font = self.verdict.font()
        font.setBold(True)
        self.verdict.setFont(font)
        container = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(container)
        layout.setContentsMargins(0, 0, 0, 6)
        layout.addWidget(f)
        layout.addWidget(section_label("   Verdict"))
        layout.addWidget(self.verdict)
        layout.addWidget(self.warning)
        layout.addWidget(self.evidence)
        layout.addStretch(1)
        self.setWidget(container)

    def clear(self) -> None:
        for label in self.form.values.values():
            label.setText("—")
        self.gauge.set_ratio(None)
        self.efficiency.setText("")
        self.verdict.setText("")
        self.warning.setText("")
        self.warning.hide()
        self.evidence.setText("")

    def set_summary(self, summary) -> None:
        t = summary.throughput
        f = self.form
        f.set("theoretical", _per_proof(t.theoretical_s_per_proof))
        f.set(
            "measured",
            _per_proof(t.measured_s_per_proof)
            if t.measured_s_per_proof is not None
            else "— (needs 2 completed jobs)",
        )
        f.set("ratio", "—" if t.ratio is None else f"{t.ratio:.2f}")
        self.gauge.set_ratio(t.ratio)
        f.set("jobs", str(t.jobs_completed))
        f.set("ppp", f"{t.partitions_per_proof:g}" if t.partitions_per_proof else "—")
        self.efficiency.setText(
            "\n".join(
                f"GPU {g.gpu}: {fmt_pct(g.efficiency)}  (idle {g.idle_ms:,.0f} ms)".replace(
                    ",", " "
                )
                for g in summary.gpus
            )
            or "—"
        )
        self.verdict.setText(summary.verdict.sentence)
        self.warning.setText(f"⚠ {summary.verdict.warning}")
        self.warning.setVisible(bool(summary.verdict.warning))
        self.evidence.setText("\n".join(f"• {e}" for e in summary.verdict.evidence))
