from __future__ import annotations

from pathlib import Path

import pytest

import viewer.io
from tests.analysis.builders import pipeline
from viewer.model import Timeline


class FakeLogError(Exception):
    pass


@pytest.fixture
def fake_reader(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Stand in for viewer.io.open_log: the command is tested apart from the reader."""
    seen: dict = {}

    def open_log(path, *, workers_per_gpu=None, **_):
        seen.update(path=path, workers_per_gpu=workers_per_gpu)
        if str(path).endswith(".bad"):
            raise FakeLogError(f"{path}: not a cuzk log")
        return Timeline(Path(path), [pipeline([35_000 + 10 * j for j in range(3)])])

    monkeypatch.setattr(viewer.io, "open_log", open_log)
    monkeypatch.setattr(viewer.io, "LogError", FakeLogError)
    return seen
