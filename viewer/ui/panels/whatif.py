"""The What if dock: the knobs (workers, GPUs, stage means; the measured values as defaults),
the predicted against the measured s/proof, and the four floors of both runs as bars.

Replays run off the GUI thread (``viewer.ui.panels.whatif_runner.WhatIfRunner``: one at a time,
the latest request wins, a new log or session drops what is pending).  ``install(window)``
wires the dock into the main window: it follows the session on screen, View > What if
(Ctrl+I) raises it, and "Show prediction beside" opens the compare window with the
measured and predicted runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import counted, percent
from viewer.export.whatif import gib_range
from viewer.heap import release_free_memory
from viewer.lanes.data import SessionLanes
from viewer.model import Session
from viewer.ui.actions import make_action
from viewer.ui.panels.common import fmt_pct, section_label
from viewer.ui.panels.compare_panel import judgement_colors
from viewer.ui.panels.floor_bars import FloorBars
from viewer.ui.panels.whatif_runner import Answer, WhatIfRunner
from viewer.whatif import KnobError, Knobs, sentence, span_text
from viewer.whatif.knobs import MAX_GPUS, MAX_MS, MAX_PW, MAX_WORKERS, STAGES
from viewer.whatif.load import CLASS_WORDS, LoadFit, fixed
from viewer.whatif.predict import figure, wall_clause

Qt = QtCore.Qt
#: Knob edits within this long collapse into one replay.
DEBOUNCE_MS = 300
GAP = 16  # between the dock's parts
#: Whole-number knobs: name, caption, upper bound, tooltip.
COUNTS = (
    ("gw", "GPU workers / GPU", MAX_WORKERS, "GPU workers per GPU (gw): 2 since Phase 8"),
    ("pw", "Synthesis slots", MAX_PW, "partitions synthesized at once on the CPU (pw)"),
    ("gpus", "GPUs", MAX_GPUS, "GPUs; all their workers share one queue"),
)
#: The knob of a budget-gated daemon's memory budget (``Knobs.budget_gib``).
BUDGET = "budget"
MAX_BUDGET_SHOWN = 99_999.0  # GiB: the box stays narrow; --budget-gib takes up to a PiB
#: Stage means: name, caption.
MEANS = (
    ("kernel", "Kernel"),
    ("prep", "CPU prep"),
    ("post", "Post"),
    ("synth", "Synthesis"),
)


def _label(text: str = "", *, wrap: bool = False, scale: float = 1.0, bold: bool = False):
    label = QtWidgets.QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setWordWrap(wrap)
    if scale != 1.0 or bold:
        font = label.font()
        font.setPointSizeF(font.pointSizeF() * scale)
        font.setBold(bold)
        label.setFont(font)
    return label


def _signed_pct(fraction: float) -> str:
    text = f"{percent(fraction, signed=True)}"
    return "0.0 %" if text[1:] == "0.0 %" else text


def _per_proof(seconds: float | None) -> str:
    return "—" if seconds is None or math.isnan(seconds) else figure(seconds)


class _Figure(QtWidgets.QWidget):
    """A caption above a big number with its unit, and a small line below."""

    def __init__(self, caption: str, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption = _label(caption)
        self.number = _label("—", scale=1.9, bold=True)
        self.unit = _label("s/proof")
        self.note = _label()
        self.aside = _label()  # a quieter line below the note (hidden when empty)
        self.aside.setVisible(False)
        row = QtWidgets.QHBoxLayout()
        row.setSpacing(4)
        row.addWidget(self.number, 0, Qt.AlignmentFlag.AlignBaseline)
        row.addWidget(self.unit, 0, Qt.AlignmentFlag.AlignBaseline)
        row.addStretch(1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.caption)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addWidget(self.aside)


class WhatIfPanel(QtWidgets.QScrollArea):
    """Knobs -> a replay in the background -> predicted against measured s/proof and floors.

    ``set_session(session, source)`` follows the session on screen; ``prediction_ready(answer)``
    fires when a new answer is shown; ``compare_opened(window)`` when "Show prediction
    beside" has opened the compare window.  ``measured_lanes(session)`` may give the lanes
    already built for the measured session (the main window's view); ``open_runs`` is the
    window's ``compare_window.open_runs`` (given by ``install``: a panel opens no window of its
    own making), and without it "Show prediction beside" stays off.
    """

    prediction_ready = QtCore.Signal(object)
    compare_opened = QtCore.Signal(object)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.measured_lanes = lambda session: None
        self.open_runs: Callable[..., QtWidgets.QWidget] | None = None
        self._session: Session | None = None
        self._key: tuple | None = None
        self._source = ""
        self._cpus: int | None = None  # the CPU threads the log's head states
        self._defaults: dict[str, float] = {}
        self._defaults_key: tuple | None = None  # the (log, session) they were measured on
        self._edited: dict[str, float | int] = {}  # Knobs field -> value, set by the user
        self._answer: Answer | None = None
        self._stale = False  # a replay is due once the panel is on screen
        self._on_screen = True  # False while its dock is closed or behind another tab
        self._compare_answer: Answer | None = None
        self._compare_measured_lanes: SessionLanes | None = None

        self._load: LoadFit | None = None  # a calibration over more logs (None: this log's)
        self._calibration: list[str] = []  # the logs it was fitted from, besides this one
        # Drops land on the viewport (a scroll area hands them to ``viewportEvent``, which
        # calls the handlers below).
        self.setAcceptDrops(True)
        self.viewport().setAcceptDrops(True)

        self.runner = WhatIfRunner(self)
        self.runner.calibrated.connect(self._on_calibrated)
        self.runner.answer_ready.connect(self._on_answer)
        self.runner.lanes_ready.connect(self._on_lanes)
        self.runner.failed.connect(self._on_failed)
        self._timer = QtCore.QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self._request)

        self.spins: dict[str, QtWidgets.QAbstractSpinBox] = {}
        self.measured: dict[str, QtWidgets.QLabel] = {}
        self._build()
        self._clear_results("Open a log to replay it with other workers, GPUs or timings.")

    # ---------------------------------------------------------------- building
    def _build(self) -> None:
        counts = QtWidgets.QWidget()
        grid = QtWidgets.QGridLayout(counts)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(section_label("Pipeline"), 0, 0, 1, 3)
        for row, (name, caption, top, tip) in enumerate(COUNTS, start=1):
            spin = QtWidgets.QSpinBox()
            spin.setRange(1, top)
            self._add_knob(grid, row, name, caption, spin, tip)
        budget = QtWidgets.QDoubleSpinBox()
        budget.setDecimals(0)
        budget.setRange(1.0, MAX_BUDGET_SHOWN)
        budget.setSuffix(" GiB")
        budget.setSingleStep(10.0)
        tip = (
            "a budget-gated daemon's memory budget: the synthesis workers it sizes from it "
            "(budget / 14 GiB, at most 18, at least 2) and partitions waiting for room for "
            "their 14 GiB beside SRS and PCE (only for logs that state a budget)"
        )
        self._add_knob(grid, len(COUNTS) + 1, BUDGET, "Memory budget", budget, tip)
        self.reset_button = QtWidgets.QPushButton("Reset to measured")
        self.reset_button.setToolTip("Every knob back to what the log measured")
        self.reset_button.clicked.connect(self.reset)
        grid.addWidget(self.reset_button, len(COUNTS) + 2, 0, 1, 3, Qt.AlignmentFlag.AlignLeft)

        means = QtWidgets.QWidget()
        grid = QtWidgets.QGridLayout(means)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(section_label("Mean per partition"), 0, 0, 1, 3)
        for row, (name, caption) in enumerate(MEANS, start=1):
            spin = QtWidgets.QDoubleSpinBox()
            spin.setDecimals(0)
            spin.setRange(1.0, MAX_MS)
            spin.setSuffix(" ms")
            spin.setSingleStep(50.0)
            tip = f"{STAGES[name]}: each partition is scaled to this mean (its spread kept)"
            self._add_knob(grid, row, name, caption, spin, tip)

        load = QtWidgets.QWidget()
        col = QtWidgets.QVBoxLayout(load)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(3)
        col.addWidget(section_label("Load (how stages slow down beside one another)"))
        self.load_text = _label(wrap=True)
        self.load_text.setMinimumWidth(self.load_text.fontMetrics().horizontalAdvance("x") * 34)
        self.load_text.setMaximumWidth(self.load_text.fontMetrics().horizontalAdvance("x") * 60)
        col.addWidget(self.load_text)
        buttons = QtWidgets.QHBoxLayout()
        self.calibrate_button = QtWidgets.QPushButton("Calibrate with logs…")
        self.calibrate_button.setToolTip(
            "Fit the load model over this log and runs of the same machine at other "
            "settings (or drop their files here): predictions past this log's load need them"
        )
        self.calibrate_button.clicked.connect(self._choose_calibration)
        self.own_button = QtWidgets.QPushButton("This log only")
        self.own_button.setToolTip("Forget the other logs: the load model this log shows")
        self.own_button.clicked.connect(lambda: self.set_calibration([]))
        buttons.addWidget(self.calibrate_button)
        buttons.addWidget(self.own_button)
        buttons.addStretch(1)
        col.addLayout(buttons)
        self.fixed_check = QtWidgets.QCheckBox("Fixed durations (no load model)")
        self.fixed_check.setToolTip(
            "Every stage takes its measured time whatever runs beside it: right for knobs "
            "that leave the load alone (kernel time, GPUs), wrong for pw and gw on real machines"
        )
        self.fixed_check.toggled.connect(lambda _on: self._request())
        col.addWidget(self.fixed_check)
        self.calibrate_button.setEnabled(False)
        self.own_button.setEnabled(False)

        self.figures = {k: _Figure(k.capitalize()) for k in ("measured", "replayed", "predicted")}
        self.figures["replayed"].setToolTip(
            "The replay of the log unchanged: how far it is from the measured s/proof says "
            "how far to trust the prediction"
        )
        self.efficiency = _label()
        self.sentence = _label(wrap=True)
        self.notes = _label(wrap=True)
        self.error = _label(wrap=True)
        self.status = _label(wrap=True)
        self.compare_button = QtWidgets.QPushButton("Show prediction beside")
        self.compare_button.setToolTip(
            "Open the compare window: the measured run (A) and the predicted run (B), "
            "their lanes linked"
        )
        self.compare_button.clicked.connect(self.show_prediction_beside)
        numbers = QtWidgets.QHBoxLayout()
        numbers.setSpacing(12)
        for fig in self.figures.values():
            numbers.addWidget(fig, 0, Qt.AlignmentFlag.AlignTop)
        numbers.addStretch(1)
        # Messages come and go: they must not widen the column (that would re-arrange).
        self.status.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred
        )
        head = QtWidgets.QHBoxLayout()
        head.addWidget(section_label("Seconds per proof"))
        head.addStretch(1)
        head.addWidget(self.compare_button, 0, Qt.AlignmentFlag.AlignBottom)
        results = QtWidgets.QWidget()
        col = QtWidgets.QVBoxLayout(results)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(3)
        col.addLayout(head)
        col.addLayout(numbers)
        for w in (self.efficiency, self.sentence, self.notes, self.error, self.status):
            col.addWidget(w)
        col.addStretch(1)

        self.bars = FloorBars()
        floors = QtWidgets.QWidget()
        col = QtWidgets.QVBoxLayout(floors)
        col.setContentsMargins(0, 0, 0, 0)
        col.addWidget(section_label("Floors (s/proof; the highest binds)"))
        col.addWidget(self.bars)
        col.addStretch(1)

        self._knobs_box = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        self._results_box = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        self._main_box = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        top_left = Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft
        for part in (counts, means, load):
            self._knobs_box.addWidget(part, 0, top_left)
        self._knobs_box.addStretch(1)  # side by side, the two grids keep to the left
        self._results_box.addWidget(results, 3, Qt.AlignmentFlag.AlignTop)
        self._results_box.addWidget(floors, 4, Qt.AlignmentFlag.AlignTop)
        self._results_box.addStretch(1)  # past their widest, the space goes to the right
        for box in (self._knobs_box, self._results_box, self._main_box):
            box.setSpacing(GAP)
        # On wide screens the figures and bars stop growing: labels stay near their values.
        results.setMaximumWidth(results.fontMetrics().horizontalAdvance("x") * 110)
        floors.setMaximumWidth(floors.fontMetrics().horizontalAdvance("x") * 130)
        self._main_box.addLayout(self._knobs_box)
        self._main_box.addLayout(self._results_box, 1)
        self._parts = (counts, means, load, results, floors)
        container = QtWidgets.QWidget()
        outer = QtWidgets.QVBoxLayout(container)
        outer.setContentsMargins(8, 2, 8, 4)
        outer.addLayout(self._main_box)
        outer.addStretch(1)
        self.setWidget(container)

    def _add_knob(self, grid, row: int, name: str, caption: str, spin, tip: str) -> None:
        spin.setKeyboardTracking(True)
        spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        spin.setAccelerated(True)
        spin.setToolTip(tip)
        spin.setEnabled(False)
        spin.valueChanged.connect(lambda _v, n=name: self._on_knob_changed(n))
        # As wide as its widest value, so the grid keeps still as values change.
        widest = f"{spin.maximum():.0f}{spin.suffix()}"
        spin.setFixedWidth(spin.fontMetrics().horizontalAdvance(widest) + 36)
        measured = _label()
        if isinstance(spin, QtWidgets.QDoubleSpinBox):  # room for any measured mean
            measured.setMinimumWidth(measured.fontMetrics().horizontalAdvance("measured 99999 ms"))
        label = _label(caption)
        label.setBuddy(spin)
        label.setToolTip(tip)
        grid.addWidget(label, row, 0)
        grid.addWidget(spin, row, 1)
        grid.addWidget(measured, row, 2)
        self.spins[name] = spin
        self.measured[name] = measured

    # --------------------------------------------------------------- layout
    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        self._arrange()

    def _arrange(self) -> None:
        """One row when everything fits, else knobs above results, else one column."""
        width = self.viewport().width() - 16
        widths = [p.minimumSizeHint().width() for p in self._parts]
        Dir = QtWidgets.QBoxLayout.Direction
        knobs, results = sum(widths[:3]) + 2 * GAP, sum(widths[3:]) + GAP
        if knobs + results + GAP <= width:
            dirs = (Dir.LeftToRight, Dir.LeftToRight, Dir.LeftToRight)
        elif max(knobs, results) <= width:
            dirs = (Dir.TopToBottom, Dir.LeftToRight, Dir.LeftToRight)
        else:
            dirs = (Dir.TopToBottom, Dir.TopToBottom, Dir.TopToBottom)
        for box, d in zip((self._main_box, self._knobs_box, self._results_box), dirs, strict=True):
            if box.direction() != d:
                box.setDirection(d)

    def arrangement(self) -> str:
        """The layout in use: "row", "two rows" or "column" (tests and screenshots)."""
        if self._main_box.direction() == QtWidgets.QBoxLayout.Direction.LeftToRight:
            return "row"
        if self._knobs_box.direction() == QtWidgets.QBoxLayout.Direction.LeftToRight:
            return "two rows"
        return "column"

    # ---------------------------------------------------------------- session
    def session(self) -> Session | None:
        return self._session

    def answer(self) -> Answer | None:
        """The answer on screen (None while the first one for this session is computed)."""
        return self._answer

    def set_session(
        self, session: Session | None, source: str | Path = "", cpus: int | None = None
    ) -> None:
        """Follow ``session`` of the log ``source``, whose head states ``cpus`` CPU threads
        (the load model's machine).  The user's knobs are kept while the log and session
        stay the same (follow mode's re-reads), else reset."""
        self._cpus = cpus
        if session is self._session:
            return
        key = None if session is None else (str(source), session.index)
        same = key is not None and key == self._key
        self._session, self._key, self._source = session, key, str(source)
        self.runner.cancel()
        self._timer.stop()
        if not same:  # a re-read of the same run keeps its knobs usable meanwhile
            self._load, self._calibration = None, []
            self._defaults_key = None
            for spin in self.spins.values():
                spin.setEnabled(False)
            self._edited.clear()
            self._answer = None
            self._clear_results(
                "computing…"
                if session is not None
                else "Open a log to replay it with other workers, GPUs or timings."
            )
        if session is not None:
            self._request()

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._request()

    def set_on_screen(self, visible: bool) -> None:
        """Whether the dock shows the panel (its tab raised, not closed): replays wait for it."""
        self._on_screen = visible
        if visible and self._stale:
            self._request()

    # ------------------------------------------------------------------ knobs
    def knobs(self) -> Knobs:
        """The knobs the user changed (KnobError when one is out of range)."""
        return Knobs(**self._edited)

    def reset(self) -> None:
        self._edited.clear()
        self._show_defaults()
        self._request()

    def _field(self, name: str) -> str:
        if name == BUDGET:
            return "budget_gib"
        return name if name in self._count_names() else f"{name}_ms"

    def _name(self, field: str) -> str:
        """The knob shown for a ``Knobs`` field (``_field`` the other way)."""
        return BUDGET if field == "budget_gib" else field.removesuffix("_ms")

    @staticmethod
    def _count_names() -> tuple[str, ...]:
        return tuple(c[0] for c in COUNTS)

    def _is_default(self, name: str, value: float) -> bool:
        default = self._defaults.get(name)
        if default is None or not math.isfinite(default):
            return True
        return round(value) == round(default)

    def _on_knob_changed(self, name: str) -> None:
        if self._defaults_key != self._key:
            return
        spin = self.spins[name]
        value = spin.value()
        key = self._field(name)
        if self._is_default(name, value):
            self._edited.pop(key, None)
        else:
            self._edited[key] = int(value) if name in self._count_names() else float(value)
        self._mark(name)
        self.status.setText("")
        self._timer.start()

    def _mark(self, name: str) -> None:
        """A knob changed from its measured value shows in bold."""
        spin = self.spins[name]
        font = spin.font()
        font.setBold(self._field(name) in self._edited)
        spin.setFont(font)

    def _show_defaults(self) -> None:
        for name, spin in self.spins.items():
            default = self._defaults.get(name, math.nan)
            known = math.isfinite(default) and default > 0
            value = self._edited.get(self._field(name), default if known else spin.minimum())
            if spin.value() != round(value):  # leave a spin box being typed in alone
                spin.blockSignals(True)
                spin.setValue(value)
                spin.blockSignals(False)
            spin.setEnabled(known)
            # A knob the log does not have shows no number (its minimum read as a value).
            spin.setSpecialValueText("" if known else "—")
            unit = "" if name in self._count_names() else " GiB" if name == BUDGET else " ms"
            self.measured[name].setText(
                f"measured {default:.0f}{unit}" if known else "not in this log"
            )
            self._mark(name)
        self._arrange()

    def _request(self) -> None:
        self._timer.stop()
        if self._session is None:
            return
        if not (self.isVisible() and self._on_screen):
            self._stale = True  # replayed when the dock is shown
            return
        self._stale = False
        try:
            knobs = self.knobs()
        except KnobError as exc:
            self.error.setText(str(exc))
            return
        self.error.setText("")
        self.status.setText("computing…")
        load = fixed() if self.fixed_check.isChecked() else self._load
        self.runner.request(self._session, knobs, load, self._cpus)

    # ---------------------------------------------------------------- answers
    def _on_answer(self, answer: Answer) -> None:
        if answer.session is not self._session:
            return  # an earlier log's (never shown)
        fresh = self._defaults_key != self._key or answer.defaults != self._defaults
        if answer.defaults and fresh:
            self._defaults = answer.defaults
            self._defaults_key = self._key
            for key in [k for k in self._edited if self._name(k) not in self._defaults]:
                del self._edited[key]
            self._show_defaults()
        self.status.setText("")
        if answer.error:  # no figures for these knobs: none of earlier ones either
            self._answer = None
            self._clear_results("")
            self.error.setText(answer.error)
            return
        self.error.setText("")
        self._answer = answer  # the one answer kept: the one before is freed here
        release_free_memory()
        self._show(answer)
        self.prediction_ready.emit(answer)

    def _on_failed(self, message: str) -> None:
        self.status.setText("")
        self.error.setText(f"The replay failed: {message}")

    def _clear_results(self, status: str) -> None:
        for fig in self.figures.values():
            fig.number.setText("—")
            fig.note.setText("")
            fig.aside.setText("")
            fig.aside.setVisible(False)
        self.efficiency.setText("")
        self.sentence.setText("")
        self.notes.setText("")
        self.error.setText("")
        self.status.setText(status)
        self.bars.clear()
        self.compare_button.setEnabled(False)

    def _show(self, answer: Answer) -> None:
        w = answer.result
        m, b, s = w.measured, w.baseline, w.scenario
        f = self.figures
        f["measured"].number.setText(_per_proof(m.s_per_proof))
        f["measured"].note.setText(counted(m.floors.jobs, "job"))
        f["replayed"].number.setText(_per_proof(b.s_per_proof))
        err = w.replay_error
        f["replayed"].note.setText("" if err is None else f"{_signed_pct(err)} vs measured")
        f["predicted"].number.setText(_per_proof(s.s_per_proof))
        change = w.change
        note = f["predicted"].note
        band = w.span if w.beyond else None
        if change is None:
            note.setText("")
            note.setStyleSheet("")
        elif wall_clause(w):
            # The two throughput figures move apart: neither a gain nor a loss in colour.
            wall = w.scenario.wall_s_per_proof / w.baseline.wall_s_per_proof - 1
            note.setText(f"{_signed_pct(change)}, wall time {_signed_pct(wall)}")
            note.setStyleSheet("font-weight: bold;")
        elif band is not None and b.s_per_proof:
            # Past the loads the logs show the band is the answer: no gain or loss in colour.
            lo, hi = (x / b.s_per_proof - 1 for x in band)
            note.setText(f"{_signed_pct(lo)} to {_signed_pct(hi)}")
            note.setStyleSheet("font-weight: bold;")
        else:
            colors = judgement_colors(self.palette())
            word = "faster" if change < 0 else "slower"
            same = abs(change) < 0.005
            note.setText("no change" if same else f"{percent(abs(change))} {word}")
            tone = "" if same else colors["better" if change < 0 else "worse"].name()
            note.setStyleSheet(f"color: {tone}; font-weight: bold;" if tone else "")
        self.efficiency.setText(
            f"GPU efficiency: measured {fmt_pct(m.gpu_efficiency)}, "
            f"predicted {fmt_pct(s.gpu_efficiency)}\n"
            f"Memory held at most: measured {gib_range(w.memory_gib(m))} GiB, "
            f"predicted {gib_range(w.memory_gib(s))} GiB"
        )
        self.efficiency.setToolTip(
            "The most the pipeline holds at once, from what each partition is doing: "
            + w.memory_model.describe()
            + ". A range, because a log does not show how fast a synthesis grows its memory."
        )
        span = w.span
        aside = f["predicted"].aside
        where = "past the loads seen" if w.beyond else "range"
        aside.setText("" if span is None else f"{where} {figure(span[0])}–{figure(span[1])}")
        aside.setVisible(span is not None)
        aside.setToolTip(
            "" if span is None else f"{span_text(span)}: the notes below say what each end assumes"
        )
        self.sentence.setText(sentence(w))
        self.notes.setText("\n".join(f"• {n}" for n in w.notes))
        self.notes.setVisible(bool(w.notes))
        self.bars.set_floors(m.floors, s.floors, m.s_per_proof, answer.remedies)
        self.compare_button.setEnabled(self.open_runs is not None)
        self._show_load(w)

    # ------------------------------------------------------------ calibration
    def calibration(self) -> list[str]:
        """The logs the load model is fitted from besides the one on screen."""
        return list(self._calibration)

    def set_calibration(self, paths: list[str]) -> None:
        """Fit the load model over the log on screen and ``paths`` (in the background); an
        empty list goes back to what the log on screen shows."""
        if self._session is None:
            return
        paths = [str(p) for p in paths if str(p) != self._source]
        self._calibration = paths
        if not paths:
            self._load = None
            self._request()
            return
        self.status.setText(f"fitting the load over {len(paths) + 1} logs…")
        self.runner.calibrate(self._session, self._source, self._cpus, paths)

    def _choose_calibration(self) -> None:
        start = str(Path(self._source).parent) if self._source else ""
        paths, _ = QtWidgets.QFileDialog.getOpenFileNames(
            self, "Logs of the same machine at other settings", start,
            "cuzk logs (*.log *.log.gz *.gz *.zst *.txt);;All files (*)",
        )  # fmt: skip
        if paths:
            self.set_calibration(self._calibration + paths)

    def _on_calibrated(self, session: Session, load: LoadFit | None, message: str) -> None:
        if session is not self._session:
            return
        self.status.setText("")
        if load is None:
            self._calibration = []
            self.error.setText(message)
            return
        self._load = load
        self._request()

    def dragEnterEvent(self, event: QtGui.QDragEnterEvent) -> None:
        if self._session is not None and event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dropEvent(self, event: QtGui.QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if self._session is None or not paths:
            super().dropEvent(event)
            return
        event.acceptProposedAction()
        self.set_calibration(self._calibration + paths)

    def _show_load(self, w) -> None:  # noqa: ANN001
        f = w.load
        self.calibrate_button.setEnabled(True)
        self.own_button.setEnabled(bool(self._calibration))
        if f is None or self.fixed_check.isChecked():
            self.load_text.setText("Fixed durations: each stage takes its measured time.")
            return
        logs = "this log" if len(f.logs) <= 1 else f"{len(f.logs)} logs"
        unshown = [k for k, v in f.shown.items() if not v]
        lines = [f"From {logs}: {f.contention.describe()}."]
        if f.seen:
            lo = min(v[0] for v in f.seen.values())
            hi = max(v[1] for v in f.seen.values())
            lines.append(f"Loads seen: {lo:.0f}-{hi:.0f} busy threads.")
        if unshown:
            lines.append(
                "Not shown (their load never varied): "
                + ", ".join(CLASS_WORDS[k] for k in unshown)
                + ". "
                "Drop logs of this machine at other settings here to learn them."
            )
        if w.beyond:
            lines.append("Past what the logs show: " + "; ".join(w.beyond) + ".")
        self.load_text.setText(" ".join(lines))

    # ---------------------------------------------------------------- compare
    def _source_name(self) -> str:
        return Path(self._source).name if self._source else ""

    def show_prediction_beside(self) -> None:
        """Open the compare window: measured (A) against predicted (B), lanes built off the
        GUI thread first."""
        a = self._answer
        if a is None or a.result is None or self.open_runs is None:
            return
        self._compare_answer = a
        self.compare_button.setEnabled(False)
        self.status.setText("preparing the lanes…")
        measured = self.measured_lanes(a.session)
        self._compare_measured_lanes = measured
        w = a.result
        self.runner.request_lanes(
            (w.scenario,) if measured is not None else (w.measured, w.scenario)
        )

    def _on_lanes(self, lanes: tuple[SessionLanes, ...]) -> None:
        a, self._compare_answer = self._compare_answer, None
        self.status.setText("")
        self.compare_button.setEnabled(self._answer is not None and self.open_runs is not None)
        if a is None or a.session is not self._session:
            return
        pair = (self._compare_measured_lanes, *lanes) if len(lanes) == 1 else lanes
        self._compare_measured_lanes = None
        # Short: the compare table heads its columns with these labels.
        label_a = "measured" if not a.session.index else f"measured session {a.session.number}"
        cw = self.open_runs(
            self.window(),
            a.session,
            lanes[-1].session,  # the predicted run, made with its lanes
            label_a,
            "predicted",
            source_a=self._source,
            lanes=pair,
            details=(self._source_name(), a.knobs.describe()),
        )
        cw.setWindowTitle(f"{label_a} vs predicted ({a.knobs.describe()}) — cuzk Timeline Viewer")
        self.compare_opened.emit(cw)


# ---------------------------------------------------------------- main window hooks


def _lanes_on_screen(window, session: Session) -> SessionLanes | None:
    lanes = window.view.lanes()
    return lanes if lanes is not None and lanes.session is session else None


def _follow(window, panel: WhatIfPanel) -> None:
    timeline = window.view.timeline()
    if timeline is None or not timeline.sessions:
        panel.set_session(window.view.session())
    else:  # a log's head is read with its first session
        panel.set_session(window.view.session(), timeline.source, timeline.sessions[0].facts.cpus)


def _raise(window, dock: QtWidgets.QDockWidget) -> None:
    dock.show()
    dock.raise_()
    first = window.whatif_panel.spins["gw"]
    if first.isEnabled():
        first.setFocus()


def install(window, open_runs: Callable[..., QtWidgets.QWidget]) -> QtGui.QAction:
    """Make ``window.whatif_panel`` (in ``window.docks["whatif"]``) follow the session on
    screen and open "Show prediction beside" with ``open_runs`` (the compare window's), and
    add View > What if (Ctrl+I), which shows and raises its dock."""
    panel: WhatIfPanel = window.whatif_panel
    panel.open_runs = open_runs
    dock = window.docks["whatif"]
    panel.measured_lanes = lambda session: _lanes_on_screen(window, session)
    dock.visibilityChanged.connect(panel.set_on_screen)
    window.view.session_changed.connect(lambda _index: _follow(window, panel))
    action = make_action(
        window,
        "What &if…",
        lambda: _raise(window, dock),
        "Ctrl+I",
        "Replay the run with other workers, GPUs or timings: what would help",
    )
    action.setObjectName("action_whatif")
    window.view_menu.addAction(action)
    _follow(window, panel)
    return action
