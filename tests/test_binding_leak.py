"""PySide6 6.12.0 on CPython 3.11 drops a reference to None on every
void-returning call and aborts long sessions (none_dealloc): catch it here."""

from __future__ import annotations

import sys

from PySide6 import QtCore


def test_void_binding_calls_do_not_leak_none() -> None:
    point = QtCore.QPointF(1.0, 2.0)
    before = sys.getrefcount(None)
    for _ in range(1000):
        point.setX(3.0)
    after = sys.getrefcount(None)
    # On 3.12+ None is immortal (huge constant count); on 3.11 a leak shows as -1000.
    assert before - after < 10, f"PySide6 {QtCore.__version__} leaks None references"
