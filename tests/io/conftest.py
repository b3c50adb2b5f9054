"""Fixtures of the reader tests."""

from __future__ import annotations

import pytest
from io_logs import use_python

from viewer.io import scanner as chosen


def _either(request, monkeypatch) -> str:
    if request.param == "python":
        use_python(monkeypatch)
    elif not chosen.compiled():
        pytest.skip("compiled scanner not built or not in use")
    return request.param


@pytest.fixture(params=["compiled", "python"])
def scanner(request, monkeypatch) -> str:
    """Run the test with either scanner (the compiled one only where it is built)."""
    return _either(request, monkeypatch)


@pytest.fixture(params=["compiled", "python"])
def either(request, monkeypatch) -> str:
    """``scanner``, for tests that use the ``viewer.io.scanner`` module by that name."""
    return _either(request, monkeypatch)
