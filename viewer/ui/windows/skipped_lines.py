"""Lines the reader skipped, in the status bar: how many, and by reason on a click."""

from __future__ import annotations

from collections import Counter

from PySide6 import QtCore, QtWidgets

from viewer.analysis.units import counted, group, percent
from viewer.model import Timeline

#: What each skip reason means (``grammar.SKIP_REASONS``), for people.
REASONS = {
    "malformed_timeline": "TIMELINE lines that could not be parsed (torn or mangled)",
    "bad_number": "numbers too long for their column",
    "binary": "binary data",
    "unknown_event": "TIMELINE events the viewer does not know",
    "duplicate_event": "events seen twice for one partition (the first one counts)",
    "gpu_end_before_start": "GPU_END before its GPU_START (the call is left open)",
    "oversized_line": "lines of 64 MB or more",
    "cut_line": "a last line cut short (a file still being written, or damaged)",
    "malformed_cuzk_timing": "CUZK_TIMING lines that could not be parsed",
    "orphan_cuzk_timing": "CUZK_TIMING lines no kernel block or GPU call took",
    "offset_out_of_order": "events whose offset breaks their partition's order (torn)",
    "offset_outside_session": "events whose offset lies far outside their session (torn)",
    "cuzk_timing_misfit": "CUZK_TIMING blocks that cannot fit their GPU call (torn numbers)",
}


def skipped_counts(timeline: Timeline) -> list[tuple[str, Counter[str]]]:
    """(where, reason -> lines) for each session with skipped lines, then the lines outside
    any session."""
    out = [
        (f"session {s.number}", Counter(s.skipped))
        for s in timeline.sessions
        if sum(s.skipped.values())
    ]
    if sum(timeline.skipped.values()):
        out.append(("outside any session", Counter(timeline.skipped)))
    return out


def skipped_text(timeline: Timeline) -> str:
    """The skipped lines by session and reason, as plain text."""
    lines = []
    for where, counts in skipped_counts(timeline):
        lines.append(f"{where}: {counted(sum(counts.values()), 'line', grouped=True)}")
        for reason, n in counts.most_common():
            lines.append(f"    {group(f'{n:,}'):>9}  {reason}: {REASONS.get(reason, reason)}")
    share = timeline.skipped_share()
    if lines:
        lines.append("")
        lines.append(
            f"{percent(share, 2)} of the TIMELINE-looking lines were skipped; "
            "every figure is computed from the lines that were read."
        )
    return "\n".join(lines) or "No line was skipped."


class SkippedButton(QtWidgets.QToolButton):
    """A flat status-bar button, "⚠ 12 lines skipped", hidden when nothing was skipped;
    a click shows the counts by reason."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("skippedLines")
        self.setAutoRaise(True)
        self.timeline: Timeline | None = None
        self.clicked.connect(self.show_details)
        self.hide()

    def set_timeline(self, timeline: Timeline | None) -> None:
        self.timeline = timeline
        counts = skipped_counts(timeline) if timeline is not None else []
        total = sum(sum(c.values()) for _, c in counts)
        self.setText(f"⚠ {counted(total, 'line', grouped=True)} skipped")
        self.setToolTip("Lines the reader could not use, by reason: click for details")
        self.setVisible(total > 0)

    def show_details(self) -> QtWidgets.QMessageBox | None:
        if self.timeline is None:
            return None
        box = QtWidgets.QMessageBox(self.window())
        box.setWindowTitle("Skipped lines")
        box.setIcon(QtWidgets.QMessageBox.Icon.Information)
        box.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        box.setText(f"{self.text().removeprefix('⚠ ')} in {self.timeline.source.name}")
        box.setInformativeText(skipped_text(self.timeline))
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setModal(False)
        box.show()
        return box
