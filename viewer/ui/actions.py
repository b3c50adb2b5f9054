"""One way to make a menu / toolbar action, for the window and the features it installs."""

from __future__ import annotations

from collections.abc import Callable

from PySide6 import QtCore, QtGui


def make_action(
    parent: QtCore.QObject,
    text: str,
    slot: Callable[..., object],
    shortcut: str | QtGui.QKeySequence.StandardKey | None = None,
    tip: str | None = None,
) -> QtGui.QAction:
    """An action with an optional shortcut and a tip shown as tooltip and status text."""
    action = QtGui.QAction(text, parent)
    if shortcut is not None:
        action.setShortcut(QtGui.QKeySequence(shortcut))
    if tip:
        action.setStatusTip(tip)
        action.setToolTip(tip)
    action.triggered.connect(slot)
    return action
