"""`python -m viewer open`: a missing Qt gets a message, a broken import of ours does not
hide behind one (issue 14, item 6)."""

from __future__ import annotations

import sys

import pytest

from viewer.cli import main


def test_a_missing_pyside6_is_said_plainly(monkeypatch, capsys) -> None:
    monkeypatch.delitem(sys.modules, "viewer.ui.app", raising=False)
    monkeypatch.setitem(sys.modules, "PySide6", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "PySide6.QtWidgets", None)
    assert main(["open", "run.log"]) == 2
    err = capsys.readouterr().err
    assert "needs PySide6" in err and "report LOG" in err


def test_an_import_error_of_ours_is_not_hidden(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "viewer.ui.app", None)  # a module of ours that breaks
    with pytest.raises(ImportError) as raised:
        main(["open", "run.log"])
    assert raised.value.name == "viewer.ui.app"
