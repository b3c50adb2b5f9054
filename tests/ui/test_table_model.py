"""The panels' table model and view: cells, alignment and column sizing."""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6 import QtCore

from viewer.ui.panels.table_model import RIGHT, CopyableTableView
from viewer.ui.panels.tables import GapsPanel, JobsPanel

COLUMNS = (("job_id", "job"), ("ms", "idle (ms)"), ("n", "count"), ("ok", "ok"), ("mixed", "mixed"))


def mixed_frame(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    mixed = [None if i % 3 == 0 else (i * 1000 if i % 3 == 1 else "text") for i in range(n)]
    return pd.DataFrame(
        {
            "job_id": [f"job-{'x' * (i % 17)}-{i}" for i in range(n)],
            "ms": rng.uniform(0, 10**6, n).round(1),
            "n": rng.integers(0, 10**5, n),
            "ok": rng.random(n) < 0.5,
            "mixed": mixed,
        }
    )


def test_columns_fit_as_qt_would_fit_them(qtbot):
    """Our one-pass sizing gives Qt's own ``resizeColumnsToContents`` widths."""
    view = CopyableTableView()
    qtbot.addWidget(view)
    view.resize(900, 300)
    view.show()
    view.set_frame(mixed_frame(), COLUMNS)
    ours = [view.columnWidth(c) for c in range(len(COLUMNS))]
    view.resizeColumnsToContents()
    assert ours == [view.columnWidth(c) for c in range(len(COLUMNS))]
    # Sorted, the first displayed rows are others: sizing follows what is shown.
    view.sortByColumn(0, QtCore.Qt.SortOrder.DescendingOrder)
    view.fit_columns()
    ours = [view.columnWidth(c) for c in range(len(COLUMNS))]
    view.resizeColumnsToContents()
    assert ours == [view.columnWidth(c) for c in range(len(COLUMNS))]


def test_panel_columns_fit_their_summary_tables(qtbot, phase8_session):
    from viewer.analysis import summarize

    summary = summarize(phase8_session)
    for panel, frame in ((JobsPanel(), summary.jobs), (GapsPanel(), summary.gaps)):
        qtbot.addWidget(panel)
        panel.show()
        panel.set_frame(frame)
        ours = [panel.table.columnWidth(c) for c in range(len(panel.COLUMNS))]
        panel.table.resizeColumnsToContents()
        assert ours == [panel.table.columnWidth(c) for c in range(len(panel.COLUMNS))]


def test_numbers_align_right_and_text_left(qtbot):
    view = CopyableTableView()
    qtbot.addWidget(view)
    view.set_frame(mixed_frame(6), COLUMNS)
    model = view.model()
    align = QtCore.Qt.ItemDataRole.TextAlignmentRole

    def aligned(row: int, column: int):
        return model.data(model.index(row, column), align)

    assert [aligned(0, c) for c in range(4)] == [None, RIGHT, RIGHT, None]
    # An object column decides per cell: None and text left, numbers right.
    assert [aligned(r, 4) for r in range(3)] == [None, RIGHT, None]
    assert model.data(model.index(1, 4)) == "1 000"
    assert model.data(model.index(0, 4)) == "—"
    assert model.data(model.index(0, 0), QtCore.Qt.ItemDataRole.ToolTipRole) is None


def test_an_unsorted_table_holds_nothing_per_row_and_sorts_back(qtbot):
    """Unsorted, the model shows the frame's rows in order without a row-order array (it
    cost 8 bytes a row: 12 MB for each of three tables of 1.5 M rows); sorted and back, the
    cells are the frame's."""
    import tracemalloc

    from viewer.model.frame import Frame

    view = CopyableTableView()
    qtbot.addWidget(view)
    n = 1_000_000
    frame = Frame({"ms": np.arange(n, dtype=np.float64)[::-1].copy(), "n": np.arange(n)})
    tracemalloc.start()
    view.source.set_frame(frame, [("ms", "ms"), ("n", "n")])
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert held < 1_000_000  # not 8 MB
    model = view.source
    assert model.rowCount() == n and model.frame_row(5) == 5
    view.sortByColumn(0, QtCore.Qt.SortOrder.AscendingOrder)
    assert model.frame_row(0) == n - 1
    view.sortByColumn(-1, QtCore.Qt.SortOrder.AscendingOrder)
    assert [model.frame_row(r) for r in (0, 1, n - 1)] == [0, 1, n - 1]
    assert model.column_texts(1, 3) == [model.copy_text(r, 1) for r in range(3)]


def test_transition_ids_are_shown_from_job_numbers_not_a_copy_of_every_id(qtbot):
    """The transitions panel holds a summary's job numbers for "from" and "to" and shows
    (and copies) each as its id: a column of every transition's ids took 52 bytes a row
    (2 x 78 MB on 1.5 M one-call jobs).  "from" sorts by job number: the session's order."""
    from pathlib import Path

    from viewer.analysis import summarize
    from viewer.io import open_log
    from viewer.ui.panels.tables import TransitionsPanel

    log = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"
    s = open_log(log).sessions[0]
    summary = summarize(s)
    panel = TransitionsPanel()
    qtbot.addWidget(panel)
    panel.set_summary(summary)
    model = panel.table.source
    column = [c for c, _ in panel.COLUMNS].index("from_id")
    assert model._arrays[column].dtype.kind == "i"
    ids = s.jobs["job_id"]
    t = summary.transitions
    for row in range(len(t)):
        assert model.copy_text(row, column) == ids[int(t["from_job"][row])]
        shown = model.data(model.index(row, column))
        assert shown.startswith(ids[int(t["from_job"][row])][:8]) and "…" in shown
    panel.table.sortByColumn(column, QtCore.Qt.SortOrder.DescendingOrder)
    firsts = [int(t["from_job"][model.frame_row(r)]) for r in range(len(t))]
    assert firsts == sorted(firsts, reverse=True)


def test_a_row_click_reads_only_the_span_and_ids_align_as_text(qtbot):
    """Clicking a transition frames it from its time, gap and overlap: the ids, made when
    read, stay unmade (2 x 78 MB on 1.5 M jobs); the ids drawn from job numbers align left
    like the text they are."""
    from types import SimpleNamespace

    from viewer.model.frame import Frame
    from viewer.model.keys import text_array
    from viewer.ui.panels.table_model import ALIGNMENT
    from viewer.ui.panels.tables import TransitionsPanel

    n, made = 3, []

    def col(name, values):
        def make():
            made.append(name)
            return values

        return make

    frame = Frame.lazy(
        {
            "from_job": col("from_job", np.arange(n)),
            "to_job": col("to_job", np.arange(1, n + 1)),
            "from_id": col("from_id", text_array([f"job-{i:04d}-aaaaaaaa" for i in range(n)])),
            "to_id": col("to_id", text_array([f"job-{i:04d}-aaaaaaaa" for i in range(1, n + 1)])),
            **{c: col(c, np.full(n, 5000.0)) for c in ("time", "gap_ms", "overlap_ms")},
            "worker_idle_ms": col("worker_idle_ms", np.zeros(n)),
            **{c: col(c, np.zeros(n, bool)) for c in ("starved", "cold_start")},
            "worker": col("worker", np.zeros(n, np.int32)),
        },
        n,
    )
    ids = text_array([f"job-{i:04d}-aaaaaaaa" for i in range(n + 1)])
    summary = SimpleNamespace(transitions=frame, session=SimpleNamespace(jobs={"job_id": ids}))
    panel = TransitionsPanel()
    qtbot.addWidget(panel)
    asked = []
    panel.frame_requested.connect(lambda a, b: asked.append((a, b)))
    panel.set_summary(summary)
    panel.table.row_activated.emit(1)
    assert asked and "from_id" not in made and "to_id" not in made
    model = panel.table.source
    column = [c for c, _ in panel.COLUMNS].index("from_id")
    assert model.data(model.index(0, column), ALIGNMENT) is None  # left, as text
    assert model.copy_text(0, column) == "job-0000-aaaaaaaa"
