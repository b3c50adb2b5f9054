"""Table panels: sector transitions, idle gaps and jobs; clicking a row frames it."""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtWidgets

from viewer.analysis.units import SESSION_CLOCK, Clock, counted, duration, group
from viewer.model.frame import Frame
from viewer.ui.panels.table_model import CopyableTableView


def _short(job_id: object) -> str:
    text = str(job_id)
    return text if len(text) <= 13 else text[:8] + "…" + text[-4:]


def _times(clock: Clock):
    """A time column's formatter: the session's times on ``clock``, the axis's ("75.742 s",
    "1:12:05.742", "01:01:15.742" on the wall clock, whose header says UTC)."""
    return lambda ms: clock.at(None if ms is None else float(ms))


def _ms(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return group(f"{value:,.0f}")


def _yes(value: object) -> str:
    return "yes" if bool(value) else ""


class TablePanel(QtWidgets.QWidget):
    """A copyable, sortable table; ``frame_requested(start_ms, end_ms)`` on row click."""

    frame_requested = QtCore.Signal(float, float)
    COLUMNS: tuple[tuple[str, str], ...] = ()
    FORMATTERS: dict = {}
    #: Columns whose copied text is not the cell's (``FrameModel.set_frame``'s ``copied``).
    COPIED: dict = {}
    #: Columns of session times: all in seconds, or all on a clock once any passes 2 min.
    TIMES: tuple[str, ...] = ()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = CopyableTableView(self)
        self.count = QtWidgets.QLabel()
        self.count.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addWidget(self.table)
        layout.addWidget(self.count)
        self.table.row_activated.connect(self._on_row_activated)
        self._clock = SESSION_CLOCK
        self.clear()

    def set_clock(self, clock: Clock) -> None:
        """Write times on ``clock``, the one the axis shows."""
        if clock != self._clock:
            self._clock = clock
            self.set_frame(self._frame)

    def clear(self) -> None:
        self.set_frame(Frame({c: np.zeros(0) for c, _ in self.COLUMNS}))

    def set_frame(self, frame: Frame) -> None:
        self._frame = frame
        shown = self.shown(self._frame)
        own, own_copied, text = self.own_formatters()
        formatters = {
            **self.FORMATTERS,
            **dict.fromkeys(self.TIMES, _times(self._clock)),
            **own,
        }
        suffix = self._clock.suffix.strip()
        columns = tuple(
            (key, f"{head} ({suffix})" if key in self.TIMES and suffix else head)
            for key, head in self.COLUMNS
        )
        copied = {**self.COPIED, **own_copied}
        self.table.set_frame(shown, columns, formatters, copied, text)
        self.count.setText(self.count_text(self._frame))

    def own_formatters(self) -> tuple[dict, dict, tuple[str, ...]]:
        """For the frame just ``shown``, beyond the class's own: formatters of the cells and
        of their copied text, and the columns shown as text whatever their values."""
        return {}, {}, ()

    def frame(self) -> Frame:
        return self._frame

    def shown(self, frame: Frame) -> Frame:
        """The frame the table shows: ``frame``, row for row, with any derived columns."""
        return frame

    def count_text(self, frame: Frame) -> str:
        return counted(len(frame), "row")

    #: The columns ``span_of`` reads, None for all (a row click makes no other column of a
    #: lazy table: the transitions' ids were 2 x 78 MB on 1.5 M one-call jobs).
    SPAN_COLUMNS: tuple[str, ...] | None = None

    def span_of(self, row: dict) -> tuple[float, float]:
        raise NotImplementedError

    def _on_row_activated(self, row: int) -> None:
        if 0 <= row < len(self._frame):
            start, end = self.span_of(self._frame.row(row, self.SPAN_COLUMNS))
            if np.isfinite(start) and np.isfinite(end):
                self.frame_requested.emit(float(start), float(end))


class TransitionsPanel(TablePanel):
    COLUMNS = (
        ("sector", "sector"),
        ("from_id", "from"),
        ("to_id", "to"),
        ("time", "at"),
        ("gap_ms", "gap (ms)"),
        ("overlap_ms", "overlap (ms)"),
        ("starved", "starved"),
        ("cold_start", "in cold start"),
        ("worker", "worker"),
        ("worker_idle_ms", "worker idle (ms)"),
    )
    TIMES = ("time",)
    FORMATTERS = {
        "sector": lambda key: f"{int(key) >> 32}->{int(key) & 0xFFFFFFFF}",
        "from_id": _short,
        "to_id": _short,
        "gap_ms": _ms,
        "overlap_ms": _ms,
        "worker_idle_ms": _ms,
        "starved": _yes,
        "cold_start": _yes,
    }
    COPIED = {"from_id": str, "to_id": str}

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        self._ids: tuple[Frame, np.ndarray] | None = None  # a summary's frame, its job ids
        super().__init__(parent)

    def set_summary(self, summary) -> None:
        self._ids = (summary.transitions, summary.session.jobs["job_id"])
        self.set_frame(summary.transitions)

    def shown(self, frame: Frame) -> Frame:
        """With a "sector" column, "0->1" as the status bar and the CLI write it, sorting by
        the first job then the second: one int64 a row, from << 32 | to (a session's job
        numbers are far below 2^31; a column of Python pairs held 130 bytes a row).  A
        summary's ids are its job numbers, each shown as its id when drawn or copied: a
        column of every transition's ids took 52 bytes a row (2 x 78 MB on 1.5 M)."""
        a, b = (np.asarray(frame.get(c, ()), dtype=np.int64) for c in ("from_job", "to_job"))
        shown = frame.assign(sector=(a << 32) | (b & 0xFFFFFFFF))
        if self._ids_of(frame) is not None:
            shown = shown.assign(from_id=frame["from_job"], to_id=frame["to_job"])
        return shown

    def _ids_of(self, frame: Frame) -> np.ndarray | None:
        """The job ids of ``frame`` where it is a summary's (its ids then shown from its job
        numbers), else None."""
        return self._ids[1] if self._ids is not None and self._ids[0] is frame else None

    def own_formatters(self) -> tuple[dict, dict, tuple[str, ...]]:
        ids, names = self._ids_of(self._frame), ("from_id", "to_id")
        if ids is None:
            return {}, {}, ()
        shown, copied = (lambda j: _short(ids[int(j)])), (lambda j: str(ids[int(j)]))
        return dict.fromkeys(names, shown), dict.fromkeys(names, copied), names

    def count_text(self, frame: Frame) -> str:
        if frame.empty:
            return "no sector transitions in range"
        warm = frame[~frame["cold_start"].astype(bool)]
        tail = f"; warm gap mean {duration(float(np.nanmean(warm['gap_ms'])))}" if len(warm) else ""
        return f"{counted(len(frame), 'transition')}{tail}"

    SPAN_COLUMNS = ("time", "gap_ms", "overlap_ms")

    def span_of(self, row: dict) -> tuple[float, float]:
        t = float(row["time"])
        context = max(float(row["gap_ms"]), float(row["overlap_ms"]), 1000.0)
        return t - 2 * context, t + 2 * context


class GapsPanel(TablePanel):
    COLUMNS = (
        ("gpu", "GPU"),
        ("start", "start"),
        ("end", "end"),
        ("ms", "idle (ms)"),
        ("cross_sector", "cross-sector"),
        ("starved", "starved"),
    )
    TIMES = ("start", "end")
    FORMATTERS = {
        "ms": _ms,
        "cross_sector": _yes,
        "starved": _yes,
    }

    def set_summary(self, summary) -> None:
        self.set_frame(summary.gaps)

    def count_text(self, frame: Frame) -> str:
        if frame.empty:
            return "no GPU idle gaps in range"
        cross = int(frame["cross_sector"].sum())
        idle = duration(float(np.nansum(frame["ms"])))
        return f"{counted(len(frame), 'gap')}, {idle} idle; {cross} cross-sector"

    SPAN_COLUMNS = ("start", "end")

    def span_of(self, row: dict) -> tuple[float, float]:
        start, end = float(row["start"]), float(row["end"])
        context = max(end - start, 200.0) * 3
        return start - context, end + context


class JobsPanel(TablePanel):
    COLUMNS = (
        ("job_id", "job"),
        ("kind", "kind"),
        ("partitions", "partitions"),
        ("first_gpu_start", "first GPU start"),
        ("completed", "completed"),
        ("synth_span_ms", "synth span (ms)"),
        ("queue_wait_ms", "queue wait (ms)"),
    )
    TIMES = ("first_gpu_start", "completed")
    FORMATTERS = {
        "synth_span_ms": _ms,
        "queue_wait_ms": _ms,
        "kind": lambda v: "partitioned" if v is None else str(v),
    }

    def set_summary(self, summary) -> None:
        self.set_frame(summary.jobs)

    def count_text(self, frame: Frame) -> str:
        return counted(len(frame), "job")

    SPAN_COLUMNS = ("synth_start", "first_gpu_start", "completed")

    def span_of(self, row: dict) -> tuple[float, float]:
        start = row["synth_start"] if np.isfinite(row["synth_start"]) else row["first_gpu_start"]
        end = row["completed"] if np.isfinite(row["completed"]) else row["first_gpu_start"]
        pad = max(float(end) - float(start), 1000.0) * 0.05
        return float(start) - pad, float(end) + pad
