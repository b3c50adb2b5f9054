"""Files from the top-level ``resources/`` folder (the app icon)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6 import QtGui

RESOURCES = Path(__file__).resolve().parents[2] / "resources"


@cache
def app_icon() -> QtGui.QIcon:
    path = RESOURCES / "icon.svg"
    return QtGui.QIcon(str(path)) if path.exists() else QtGui.QIcon()
