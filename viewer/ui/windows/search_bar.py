"""Find partitions: a query line above the lanes, its matches highlighted on them, and
next / previous (Enter / Shift+Enter, F3 / Shift+F3).  The query language is
``viewer.analysis.search``'s: a job id prefix, ``p:3``, ``w:1``, ``gpu:0``, an event, ``open``.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.search import HELP, MAX_QUERY_CHARS, Matches, SearchError, find
from viewer.ui.view.timeline_view import TimelineView

Qt = QtCore.Qt
#: Typing pauses this long before the lanes are searched.
DEBOUNCE_MS = 200


class SearchBar(QtWidgets.QFrame):
    """The query field, "3 of 50", previous / next and close, driving ``view``."""

    def __init__(self, view: TimelineView, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("searchBar")
        self.view = view
        self._matches = Matches()
        self._current = -1
        self.field = QtWidgets.QLineEdit()
        self.field.setPlaceholderText(f"Find partitions: {HELP}")
        self.field.setClearButtonEnabled(True)
        self.field.setToolTip(
            "Words that must all hold: a job id prefix (any case), p:3 (partition), w:1 "
            "(worker), gpu:0, an event (SYNTH_START, SYNTH_END, GPU_QUEUE, GPU_PICKUP, "
            "GPU_START, GPU_END) to go to its time, open (never ended); p:0,1 means either"
        )
        self.field.installEventFilter(self)
        self.dim = QtWidgets.QCheckBox("Dim the rest")
        self.dim.setToolTip("Filter: fade every bar but the matches, which keep their colours")
        self.dim.toggled.connect(self._on_dim)
        self.count = QtWidgets.QLabel()
        self.count.setTextFormat(Qt.TextFormat.PlainText)
        self.count.setMinimumWidth(120)
        self.prev_button = self._button("◀", "Previous match (Shift+Enter, Shift+F3)", self.prev)
        self.next_button = self._button("▶", "Next match (Enter, F3)", self.next)
        close = self._button("✕", "Close (Esc)", self.close_bar)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.dim)
        layout.addWidget(self.count)
        for button in (self.prev_button, self.next_button, close):
            layout.addWidget(button)
        self._timer = QtCore.QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self.search)
        self.field.setMaxLength(MAX_QUERY_CHARS + 1)  # past it the search says why
        self.field.textChanged.connect(lambda _text: self._timer.start())
        view.session_changed.connect(lambda _index: self.isVisible() and self.search())
        self.hide()

    def _button(self, text: str, tip: str, slot) -> QtWidgets.QToolButton:
        button = QtWidgets.QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(slot)
        return button

    # ------------------------------------------------------------ public
    def open(self) -> None:
        """Show the bar with the query selected, ready to type."""
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()
        if self.field.text():
            self.search()

    def close_bar(self) -> None:
        self._timer.stop()
        self.hide()
        self.view.set_matches(None)
        self.view.setFocus()

    def matches(self) -> Matches:
        return self._matches

    def current(self) -> int:
        """Position of the match shown last in ``matches()`` (-1: none yet)."""
        return self._current

    def search(self) -> None:
        """Search the session on screen for the query now and highlight what matches."""
        self._timer.stop()
        self._matches, self._current = Matches(), -1
        session = self.view.session()
        text = self.field.text().strip()
        self._set_error(False)
        if session is None or not text:
            self.view.set_matches(None)
            self.count.setText("")
            return
        try:
            self._matches = find(session, text)
        except SearchError as exc:
            self.view.set_matches(None)
            self.count.setText(str(exc))
            self._set_error(True)
            return
        n = len(self._matches)
        self.view.set_matches(self._matches.rows if n else None, self.dim.isChecked())
        self.count.setText(
            f"{n:,} match{'es' if n != 1 else ''}".replace(",", " ") if n else "no match"
        )

    def next(self) -> None:
        self._step(+1)

    def prev(self) -> None:
        self._step(-1)

    # ----------------------------------------------------------- private
    def _step(self, step: int) -> None:
        """The next match after the one shown (after the view's left edge at first), or the
        previous one before it (before the right edge); past the last it wraps."""
        if self._timer.isActive() or (not len(self._matches) and self.field.text().strip()):
            self.search()
        n = len(self._matches)
        if not n:
            return
        wrapped = False
        if self._current >= 0:
            i = self._current + step
        else:
            x0, x1 = self.view.x_range()
            times = self._matches.times
            i = (
                int(np.searchsorted(times, x0, side="left"))
                if step > 0
                else int(np.searchsorted(times, x1, side="right")) - 1
            )
        if not 0 <= i < n:
            i, wrapped = i % n, True
        self._current = i
        self.view.show_match(int(self._matches.rows[i]), float(self._matches.times[i]))
        text = f"{i + 1} of {n}".replace(",", " ")
        self.count.setText(text + ("  (wrapped)" if wrapped else ""))

    def _on_dim(self, on: bool) -> None:
        item = self.view.match_item()
        if item is not None:
            item.set_dim(on)

    def _set_error(self, error: bool) -> None:
        self.count.setStyleSheet("color: #d04a3c;" if error else "")

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        own = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape)
        override = event.type() == QtCore.QEvent.Type.ShortcutOverride
        if watched is self.field and override and event.key() in own:
            event.accept()  # the field's keys, not the window's Esc (clear range)
            return True
        if watched is self.field and event.type() == QtCore.QEvent.Type.KeyPress:
            key = event.key()
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                shift = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
                self.prev() if shift else self.next()
                return True
            if key == Qt.Key.Key_Escape:
                self.close_bar()
                return True
        return super().eventFilter(watched, event)

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close_bar()
        else:
            super().keyPressEvent(event)
