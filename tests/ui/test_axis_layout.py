"""The time axis lays out ticks and labels as pyqtgraph's AxisItem would, in fewer calls,
and the time grid draws lines at the axis' own ticks."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtGui, QtWidgets

from viewer.ui.view.axis import TimeAxisItem

SPANS = [(0.0, 220_000.0), (-2203.8, 226_662.8), (1.2e9, 1.2e9 + 1500.0), (5e6, 5e6 + 0.8)]


@pytest.fixture
def axis(qtbot) -> Iterator[TimeAxisItem]:
    host = QtWidgets.QWidget()  # closed between tests by conftest, with its plot
    qtbot.addWidget(host)
    axis = TimeAxisItem()
    plot = pg.PlotWidget(host, axisItems={"bottom": axis})
    plot.resize(1300, 300)
    host.show()
    qtbot.waitExposed(host)
    yield axis  # the plot stays referenced until the test ends
    del plot


def pyqtgraph_specs(axis: TimeAxisItem):
    picture = QtGui.QPicture()
    painter = QtGui.QPainter(picture)
    try:
        return pg.AxisItem.generateDrawSpecs(axis, painter)
    finally:
        painter.end()


@pytest.mark.parametrize("span", SPANS)
def test_ticks_and_labels_are_pyqtgraphs(axis: TimeAxisItem, span) -> None:
    axis.setRange(*span)
    axis_spec, tick_specs, text_specs = pyqtgraph_specs(axis)
    ours = axis._layout()
    assert ours.axis.p1() == axis_spec[1] and ours.axis.p2() == axis_spec[2]
    want = sorted((p1.x(), p1.y(), p2.y()) for _, p1, p2 in tick_specs)
    got = sorted((x1, y1, y2) for _, lines in ours.ticks for x1, y1, _, y2 in lines.tolist())
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert len(ours.labels) >= 2
    assert [text.text() for _, text in ours.labels] == [text for _, _, text in text_specs]
    for (at, text), (want, _, _) in zip(ours.labels, text_specs, strict=True):
        assert at.x() == pytest.approx(want.x(), abs=0.5)
        assert at.y() == pytest.approx(want.y(), abs=0.5)
        assert text.size().width() == pytest.approx(want.width(), abs=1.0)


def test_tick_levels_drop_the_coarser_levels_ticks(axis: TimeAxisItem) -> None:
    axis.setRange(0.0, 220_000.0)
    levels = axis.current_ticks()
    assert len(levels) >= 2
    everything = np.concatenate([values for _, values in levels])
    assert len(np.unique(np.round(everything, 6))) == len(everything)
    assert [(s, list(v)) for s, v in levels] == [
        (s, list(v)) for s, v in axis.tickValues(0.0, 220_000.0, axis._length())
    ]
