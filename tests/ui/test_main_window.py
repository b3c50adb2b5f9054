"""The main window driven like a user would: drop a log, select a range, read the panels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis import kernel_stats, throughput
from viewer.analysis.units import duration
from viewer.ui import MainWindow

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
PHASE8 = SAMPLES / "phase8_pw10_5sectors.log"
TWO_GPUS = SAMPLES / "two_gpus.log"


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.resize(1400, 850)
    win.show()
    yield win
    win.cancel_loading()
    win.runner.wait()


def open_and_wait(qtbot, win: MainWindow, path: Path):
    with qtbot.waitSignal(win.timeline_loaded, timeout=15000) as blocker:
        win.open_paths([path])
    with qtbot.waitSignal(win.summary_ready, timeout=15000):
        pass
    return blocker.args[0]


def drop(win: QtWidgets.QWidget, paths: list[Path]) -> None:
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(p)) for p in paths])
    pos = QtCore.QPointF(win.width() / 2, win.height() / 2)
    actions = QtCore.Qt.DropAction.CopyAction
    buttons, mods = QtCore.Qt.MouseButton.NoButton, QtCore.Qt.KeyboardModifier.NoModifier
    enter = QtGui.QDragEnterEvent(pos.toPoint(), actions, mime, buttons, mods)
    QtWidgets.QApplication.sendEvent(win, enter)
    assert enter.isAccepted()
    event = QtGui.QDropEvent(pos, actions, mime, buttons, mods)
    QtWidgets.QApplication.sendEvent(win, event)


def test_drop_opens_log_and_fills_panels(qtbot, window):
    with qtbot.waitSignal(window.timeline_loaded, timeout=15000) as loaded:
        drop(window, [PHASE8])
    timeline = loaded.args[0]
    assert timeline.source.name == PHASE8.name
    assert PHASE8.name in window.windowTitle()
    qtbot.waitUntil(lambda: window.current_summary() is not None, timeout=15000)
    session = timeline.sessions[0]
    k = kernel_stats(session)
    assert window.kernel_panel.form.text("total") == duration(k.total_ms)
    assert window.kernel_panel.form.text("mean") == "3\u2009746 ms"
    assert window.throughput_panel.form.text("measured") == "37.4 s/proof"
    assert len(window.transitions_panel.frame()) == 4
    assert str(PHASE8.resolve()) in window.recent_files()


def test_range_selection_updates_every_panel(qtbot, window):
    timeline = open_and_wait(qtbot, window, PHASE8)
    session = timeline.sessions[0]
    a = session.partitions["gpu_start"][12] + 500
    b = session.partitions["gpu_end"][30] - 250
    with qtbot.waitSignal(window.summary_ready, timeout=15000) as ready:
        window.view.set_selection(a, b)
    summary = ready.args[0]
    k = kernel_stats(session, (a, b))
    t = throughput(session, (a, b))
    assert summary.kernel.total_ms == pytest.approx(k.total_ms)
    assert window.kernel_panel.form.text("total") == duration(k.total_ms)
    assert window.throughput_panel.form.text("theoretical") == (
        f"{t.theoretical_s_per_proof:.1f} s/proof"
    )
    assert "range" in window.range_label.text() and "length" in window.range_label.text()
    # Whole-session figures differ from the range's: the panels really followed the range.
    assert k.total_ms < kernel_stats(session).total_ms


def test_bad_file_shows_message_and_keeps_view(qtbot, window, tmp_path):
    timeline = open_and_wait(qtbot, window, PHASE8)
    bad = tmp_path / "not_a_log.txt"
    bad.write_bytes(b"hello\nthis is not a cuzk log\n")
    with qtbot.waitSignal(window.load_failed, timeout=15000) as failed:
        window.open_paths([bad])
    assert "not_a_log.txt" in failed.args[0]
    assert window.banner.isVisible()
    assert "not_a_log.txt" in window.banner.label.text()
    assert window.timeline() is timeline
    assert PHASE8.name in window.windowTitle()
    assert bad.read_bytes() == b"hello\nthis is not a cuzk log\n"


def test_missing_file_and_empty_folder_are_reported(qtbot, window, tmp_path):
    with qtbot.waitSignal(window.load_failed, timeout=15000) as failed:
        window.open_paths([tmp_path / "nope.log"])
    assert "nope.log" in failed.args[0]
    window.open_paths([tmp_path])  # a folder with no logs
    assert "no .log" in window.banner.label.text()


def test_transition_row_click_frames_it(qtbot, window):
    open_and_wait(qtbot, window, PHASE8)
    frame = window.transitions_panel.frame()
    row = frame.row(2)
    table = window.transitions_panel.table
    table.sortByColumn(-1, QtCore.Qt.SortOrder.AscendingOrder)
    index = table.model().index(2, 0)
    rect = table.visualRect(index)
    qtbot.mouseClick(table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    lo, hi = window.view.x_range()
    assert lo < row["time"] < hi
    assert hi - lo < 60_000


def test_copy_table_as_tsv(qtbot, window):
    open_and_wait(qtbot, window, PHASE8)
    table = window.transitions_panel.table
    table.selectRow(0)
    table.copy_selection()
    text = QtWidgets.QApplication.clipboard().text()
    lines = text.splitlines()
    assert lines[0].split("\t")[:3] == ["sector", "from", "to"]
    assert len(lines) == 2
    assert "\t4490\t" in lines[1]  # no thousands separator: spreadsheets read it as a number
    gap_column = lines[0].split("\t").index("gap (ms)")
    assert table.model().index(0, gap_column).data() == "4\u2009490"  # shown grouped


def test_copies_whole_job_ids_and_names_the_sectors(qtbot, window):
    """Issue 28, item 7: Ctrl+C copied the elided ids ("73b04127…64b0"), which no grep
    finds; and the table had no sector numbers where the status bar says "sector 0->1"."""
    open_and_wait(qtbot, window, PHASE8)
    panel = window.transitions_panel
    table = panel.table
    headers = [h for _, h in panel.COLUMNS]
    frame = panel.frame()
    table.selectRow(1)
    table.setFocus()
    qtbot.keyClick(table, QtCore.Qt.Key.Key_C, QtCore.Qt.KeyboardModifier.ControlModifier)
    header, row = (
        line.split("\t") for line in QtWidgets.QApplication.clipboard().text().splitlines()
    )
    assert row[header.index("from")] == frame["from_id"][1]
    assert row[header.index("to")] == frame["to_id"][1]
    assert len(frame["from_id"][1]) > 13  # a whole id, where the cell shows it elided
    shown = table.model().index(1, headers.index("from")).data()
    assert "…" in shown and frame["from_id"][1].startswith(shown[:8])
    sector = f"{frame['from_job'][1]}->{frame['to_job'][1]}"
    assert row[header.index("sector")] == sector == "1->2"
    assert table.model().index(1, headers.index("sector")).data() == sector
    window.view.next_transition()
    window.view.next_transition()
    assert f"sector {sector}," in window.statusBar().currentMessage()


def test_sector_column_sorts_by_job_numbers_and_holds_one_int_a_row(qtbot):
    """Sectors sort by their first job, then their second, as numbers (10 after 2); the
    column is one int64 a row (a column of Python pairs held 13 MB on 105 000 transitions,
    issue 27 item 9)."""
    from viewer.model.frame import Frame
    from viewer.ui.panels.tables import TransitionsPanel

    panel = TransitionsPanel()
    qtbot.addWidget(panel)
    pairs = [(2, 10), (10, 3), (2, 3), (2_000_000_000, 4_000_000_000)]
    n = len(pairs)
    panel.set_frame(
        Frame(
            {
                "from_job": np.array([a for a, _ in pairs]),
                "to_job": np.array([b for _, b in pairs]),
                **{c: np.array([f"job-{i}" for i in range(n)]) for c in ("from_id", "to_id")},
                **{c: np.zeros(n) for c in ("time", "gap_ms", "overlap_ms", "worker_idle_ms")},
                **{c: np.zeros(n, bool) for c in ("starved", "cold_start")},
                "worker": np.zeros(n, np.int64),
            }
        )
    )
    model = panel.table.model()
    column = [c for c, _ in panel.COLUMNS].index("sector")
    assert model._arrays[column].dtype == np.int64
    model.sort(column)
    texts = [model.index(r, column).data() for r in range(n)]
    assert texts == ["2->3", "2->10", "10->3", "2000000000->4000000000"]


def test_counts_of_one_are_singular(qtbot, window, tmp_path):
    """Issue 28, item 8: "1 transitions", "1 jobs", "1 lines"."""
    from viewer.sim.model import SimConfig, simulate
    from viewer.sim.writer import WriteOptions, write
    from viewer.ui.windows.skipped_lines import skipped_text

    log = tmp_path / "one.log"
    write(simulate(SimConfig(sectors=1, seed=1)), log, WriteOptions())
    with open(log, "a") as fh:
        fh.write("TIMELINE,12x,GPU_START\n")  # one torn line
    timeline = open_and_wait(qtbot, window, log)
    assert window.jobs_panel.count.text() == "1 job"
    assert window.session_combo.itemText(0).startswith("1: 1 job, ")
    assert skipped_text(timeline).startswith("session 1: 1 line\n")
    assert window.skipped_button.text() == "⚠ 1 line skipped"
    open_and_wait(qtbot, window, SAMPLES / "phase7_gw1.log")  # one with idle gaps
    panels = window.transitions_panel, window.gaps_panel, window.jobs_panel
    for panel in panels:
        panel.set_frame(panel.frame().take([0]))
    texts = [panel.count.text() for panel in panels]
    assert texts[0].split(";")[0] == "1 transition"
    assert texts[1].startswith("1 gap, ") and texts[2] == "1 job"


def test_open_compare_and_sweep_dialogs_start_in_the_logs_folder(
    qtbot, window, tmp_path, monkeypatch
):
    """Issue 28, item 8: the Open, Compare and Sweep dialogs started in $HOME (or wherever
    File > Open last went), not in the folder of the log on screen."""
    starts: list[str] = []

    def ask_many(parent, title, start, filters):
        starts.append(start)
        return [], ""

    def ask_one(parent, title, start, filters):
        starts.append(start)
        return "", ""

    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileNames", staticmethod(ask_many))
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", staticmethod(ask_one))
    actions = [window.open_action] + [
        window.findChild(QtGui.QAction, name) for name in ("action_compare", "action_sweep")
    ]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    window.settings.setValue("last_dir", str(elsewhere))
    for action in actions:  # nothing open: where File > Open last went
        action.trigger()
    assert starts == [str(elsewhere)] * 3
    window.settings.setValue("last_dir", str(tmp_path / "gone"))
    window.open_action.trigger()
    assert starts[-1] == str(Path.home())
    open_and_wait(qtbot, window, PHASE8)  # a drop, the command line or Open Recent alike
    starts.clear()
    for action in actions:
        action.trigger()
    assert starts == [str(SAMPLES)] * 3


def test_two_gpu_log_shows_both_gpus(qtbot, window):
    timeline = open_and_wait(qtbot, window, TWO_GPUS)
    assert set(timeline.sessions[0].gpus) == {0, 1}
    assert len(window.throughput_panel.efficiency.text().splitlines()) == 2


def test_session_switch_shows_the_other_run(qtbot, window):
    timeline = open_and_wait(qtbot, window, SAMPLES / "damaged.log")
    shown = timeline.main_session_position()  # the one with the most GPU calls
    other = 1 - shown
    assert window.view.session_index() == shown
    with qtbot.waitSignal(window.summary_ready, timeout=15000) as ready:
        window.set_session(other)
    session = timeline.sessions[other]
    assert window.view.session_index() == other and window.session() is session
    assert ready.args[0].session is session
    assert window.session_combo.currentIndex() == other
    assert f"session {other + 1}" in window.throughput_panel.scope.text().lower()
    lo, hi = window.view.x_range()
    assert lo <= session.start_ms + 1 and hi >= session.end_ms - 1  # framed on that run
    with qtbot.waitSignal(window.summary_ready, timeout=15000) as ready:
        window.set_session(shown)
    assert ready.args[0].session is timeline.sessions[shown]
    assert f"session {shown + 1}" in window.throughput_panel.scope.text().lower()


def test_layout_and_recent_files_persist(qtbot, tmp_path):
    path = str(tmp_path / "settings.ini")
    settings = QtCore.QSettings(path, QtCore.QSettings.Format.IniFormat)
    first = MainWindow(settings=settings)
    qtbot.addWidget(first)
    first.show()
    with qtbot.waitSignal(first.timeline_loaded, timeout=15000):
        first.open_paths([PHASE8])
    first.docks["jobs"].close()
    first.close()
    second = MainWindow(settings=QtCore.QSettings(path, QtCore.QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    second.show()
    assert second.recent_files()[0] == str(PHASE8.resolve())
    assert not second.docks["jobs"].isVisible()
    assert second.docks["throughput"].isVisible()
    second.close()


def test_sorted_table_copies_and_frames_what_it_shows(qtbot, window):
    open_and_wait(qtbot, window, PHASE8)
    table = window.transitions_panel.table
    gap_column = [h for _, h in window.transitions_panel.COLUMNS].index("gap (ms)")
    table.sortByColumn(gap_column, QtCore.Qt.SortOrder.DescendingOrder)
    gaps = [table.model().index(r, gap_column).data() for r in range(4)]
    assert gaps == ["4\u2009490", "244", "45", "21"]
    table.selectRow(1)
    table.copy_selection()
    assert "\t244\t" in QtWidgets.QApplication.clipboard().text()
    rect = table.visualRect(table.model().index(1, 0))
    qtbot.mouseClick(table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    lo, hi = window.view.x_range()
    frame = window.transitions_panel.frame()
    row = frame.take(np.argsort(-frame["gap_ms"], kind="stable")).row(1)
    assert lo < row["time"] < hi


def test_large_tables_fill_quickly_enough_to_stay_interactive(qtbot, window):
    """10^4 rows: filling and sorting a panel must not walk every cell in Python."""
    import numpy as np
    import pandas as pd

    n = 10_000
    frame = pd.DataFrame(
        {
            "gpu": np.zeros(n, dtype=np.int32),
            "start": np.arange(n) * 1000.0,
            "end": np.arange(n) * 1000.0 + 50,
            "ms": np.full(n, 50.0),
            "cross_sector": np.zeros(n, dtype=bool),
            "starved": np.ones(n, dtype=bool),
        }
    )
    calls = []
    model = window.gaps_panel.table.model()
    original = model.data

    def counting(index, role=QtCore.Qt.ItemDataRole.DisplayRole):
        calls.append(1)
        return original(index, role)

    model.data = counting
    window.gaps_panel.set_frame(frame)
    window.gaps_panel.table.sortByColumn(3, QtCore.Qt.SortOrder.DescendingOrder)
    qtbot.wait(20)
    assert model.rowCount() == n
    # The sizing sample (64 rows x 6 columns x the roles Qt asks) and the visible rows,
    # not every one of the 6 x 10^4 cells.
    assert len(calls) < 6 * 64 * 16


def test_a_loaded_timeline_is_kept_out_of_the_collector_and_freed_after_the_next(qtbot, window):
    """After a load everything alive is pinned (``gc.freeze``: full collections stop
    walking the big tables), and a new load unpins it.  Nothing of the window keeps the
    previous timeline alive: once unpinned, even a copy caught in a reference cycle is
    freed by a collection."""
    import gc
    import weakref

    def load(name: str) -> None:
        with qtbot.waitSignals([window.timeline_loaded, window.summary_ready], timeout=15000):
            window.open_paths([SAMPLES / name])  # the summary may come with it

    gc.unfreeze()
    load("phase8_pw10_5sectors.log")
    assert gc.get_freeze_count() > 0
    first = window.timeline()
    first.cycle = first  # garbage only the collector can free
    gone = weakref.ref(first)
    del first
    load("two_gpus.log")
    assert window.timeline().source.name == "two_gpus.log"
    frozen = gc.get_freeze_count()
    window._queue.append(SAMPLES / "two_gpus.log")  # a load starting: unpins first
    window._start_next()
    assert gc.get_freeze_count() < frozen
    qtbot.waitSignal(window.summary_ready, timeout=15000).wait()
    gc.unfreeze()
    gc.collect()
    assert gone() is None
