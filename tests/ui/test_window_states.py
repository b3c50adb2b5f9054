"""The window before a log, and the small states around one: the empty window, Esc, the
skipped lines in the status bar, transition steps in the status bar."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui

from tests.ui.conftest import load_and_wait
from tests.ui.test_main_window import PHASE8, SAMPLES, window  # noqa: F401
from viewer.ui.windows.empty_state import TITLE
from viewer.ui.windows.skipped_lines import skipped_text


def test_empty_window_says_where_to_drop_and_lists_recent_files(qtbot, tmp_path) -> None:
    from viewer.ui import MainWindow

    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    gone = str(tmp_path / "gone.log")
    settings.setValue("recent_files", [str(PHASE8), gone])
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    empty = win.empty_state
    assert empty.isVisible() and not win.view.isVisible()  # no axis without a log
    assert empty.title.text() == TITLE == "Drop a cuzk log here, or File > Open"
    # One quiet status bar: no message over the range and cursor labels.
    assert win.statusBar().currentMessage() == ""
    assert not win.range_label.isVisible() and not win.cursor_label.isVisible()
    assert not win.skipped_button.isVisible()
    names = [b.text() for b in empty.recent_buttons]
    assert PHASE8.name in names[0] and "missing" in names[1]
    assert empty.recent_buttons[0].isEnabled() and not empty.recent_buttons[1].isEnabled()
    with qtbot.waitSignal(win.timeline_loaded, timeout=15000):
        qtbot.mouseClick(empty.recent_buttons[0], QtCore.Qt.MouseButton.LeftButton)
    assert win.view.isVisible() and not empty.isVisible()
    assert win.range_label.isVisible()
    win.cancel_loading()
    win.runner.wait()


def test_esc_leaves_the_annotation_tool_before_clearing_the_range(qtbot, window) -> None:  # noqa: F811
    load_and_wait(qtbot, window, PHASE8)
    action = window.clear_selection_action
    assert action.shortcut() == QtGui.QKeySequence("Esc")
    window.view.set_selection(60_000, 90_000)
    ctl = window.write_ups.controller
    ctl.set_tool("ruler")
    action.trigger()
    assert ctl.tool == ""
    assert not window.write_ups.actions["tool_ruler"].isChecked()
    assert window.view.selection() is not None  # the first Esc only left the tool
    action.trigger()
    assert window.view.selection() is None


def test_skipped_lines_show_in_the_status_bar_by_reason(qtbot, window, tmp_path) -> None:  # noqa: F811
    log = tmp_path / "damaged_three_ways.log"
    junk = (
        b"TIMELINE,12x,GPU_START,job,worker=0,partition=1\n" * 2
        + b"TIMELINE,500,WARP_DRIVE,job,partition=1\n" * 3
        + b"CUZK_TIMING: ntt_msm_h_ms=\n"
    )
    lines = PHASE8.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:40]) + junk + b"".join(lines[40:]))
    timeline = load_and_wait(qtbot, window, log)
    total = sum(sum(s.skipped.values()) for s in timeline.sessions)
    total += sum(timeline.skipped.values())
    assert total >= 5
    assert len(timeline.sessions[0].skipped) >= 2
    button = window.skipped_button
    assert button.isVisible()
    assert button.text() == f"⚠ {total} lines skipped"
    box = button.show_details()
    text = box.informativeText()
    for session in timeline.sessions:
        for reason, n in session.skipped.items():
            assert f"{n}  {reason}: " in text
    assert text == skipped_text(timeline)
    box.close()
    load_and_wait(qtbot, window, PHASE8)
    assert not button.isVisible()


def test_transition_steps_are_said_in_the_status_bar(qtbot, window) -> None:  # noqa: F811
    load_and_wait(qtbot, window, PHASE8)
    window.fit_action.trigger()
    window.next_action.trigger()
    assert window.statusBar().currentMessage().startswith("transition 1 of 4: sector 0->1")
    for _ in range(4):
        window.next_action.trigger()
    assert window.statusBar().currentMessage() == "last transition"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_at_1366x768_verdict_follow_and_kernel_figures_are_in_sight(qtbot, tmp_path, dark) -> None:
    from viewer.ui import MainWindow
    from viewer.ui.palette import dark_palette

    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    if dark:
        win.setPalette(dark_palette())
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    load_and_wait(qtbot, win, PHASE8)
    qtbot.wait(50)  # the default dock sizes apply after the first show
    tools = win.toolbar
    follow = tools.widgetForAction(win.follow.action)
    assert follow is not None and follow.isVisible()  # not in the overflow menu
    assert follow.geometry().right() <= tools.width()
    panel = win.throughput_panel
    port = panel.viewport()
    top = panel.verdict.mapTo(port, QtCore.QPoint(0, 0)).y()
    assert panel.verdict.text().startswith("GPU-bound")
    assert top >= 0 and top + 3 * panel.verdict.fontMetrics().height() <= port.height()
    kernel = win.kernel_panel
    port = kernel.viewport()
    for key, label in kernel.form.values.items():
        right = label.mapTo(port, QtCore.QPoint(label.width(), 0)).x()
        assert right <= port.width(), key
        assert label.width() >= label.sizeHint().width(), key  # nothing cut off
    win.cancel_loading()
    win.runner.wait()


def test_a_note_under_the_verdict_leaves_the_status_bar_alone(qtbot, window) -> None:  # noqa: F811
    """A two-GPU log's note is under the verdict of the Throughput panel: the status bar
    keeps the cursor and range labels (it hid them for 10 s to say the same)."""
    with qtbot.waitSignal(window.summary_ready, timeout=15000):
        window.open_paths([SAMPLES / "two_gpus.log"])
    qtbot.wait(50)
    assert "best effort" in window.throughput_panel.notes.text()
    assert window.statusBar().currentMessage() == ""
    assert window.range_label.isVisible() and window.cursor_label.isVisible()


def test_a_notes_message_stands_in_for_the_range_label_not_over_it(qtbot, window) -> None:  # noqa: F811
    """With the Throughput panel closed, a two-GPU log's note goes to the status bar for a
    while: the cursor and range labels hide meanwhile (they were drawn over the message)
    and come back after it."""
    window.docks["throughput"].close()
    with qtbot.waitSignal(window.summary_ready, timeout=15000):
        window.open_paths([SAMPLES / "two_gpus.log"])
    qtbot.wait(50)
    assert "best effort" in window.statusBar().currentMessage()
    assert not window.range_label.isVisible() and not window.cursor_label.isVisible()
    window.statusBar().clearMessage()
    assert window.range_label.isVisible() and window.cursor_label.isVisible()
    assert "whole session" in window.range_label.text()


def test_a_load_s_notes_read_as_sentences(qtbot, window) -> None:  # noqa: F811
    """Two notes were joined by "; " after their full stops ("exact.; 1 of 8")."""
    log = Path(__file__).resolve().parents[1] / "io" / "data"
    window.docks["throughput"].close()  # else the notes are under its verdict alone
    with qtbot.waitSignal(window.summary_ready, timeout=15000):
        window.open_paths([log / "two_gpus_block_without_its_gpu_start.log"])
    message = window.statusBar().currentMessage()
    assert "best effort" in message and "matched no GPU call" in message
    assert ".;" not in message and "exact. 1 of 8" in message


def test_a_replaced_log_s_pages_are_handed_back_once_its_panels_let_go(
    qtbot,
    window,  # noqa: F811
    monkeypatch,
) -> None:
    """The panels hold the previous log's summary until the new one fills them, so its
    tables were freed on the GUI thread, after the load's own hand-back: a reload of the
    10^6-event log kept ~100 MB more (310 MB against 205 MB after the first open)."""
    import threading

    from viewer.ui.windows import main_window

    calls: list[str] = []
    monkeypatch.setattr(
        main_window, "release_free_memory", lambda: calls.append(threading.current_thread().name)
    )
    load_and_wait(qtbot, window, PHASE8)
    window.runner.wait()
    assert calls == []  # nothing was replaced
    load_and_wait(qtbot, window, SAMPLES / "two_gpus.log")
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=5000)
    assert calls[0] != threading.main_thread().name  # off the GUI thread
    window.runner.wait()
    qtbot.wait(50)
    assert len(calls) == 1  # once per replaced log, not per range


def test_notes_of_another_session_still_go_to_the_status_bar(qtbot, window, tmp_path) -> None:  # noqa: F811
    """The panel holds the shown session's notes alone: a note of another daemon run in the
    log is said in the status bar."""
    from tests.io.io_logs import daemon_start

    data = Path(__file__).resolve().parents[1] / "io" / "data"
    path = tmp_path / "two_runs.log"
    path.write_text(
        PHASE8.read_text()
        + daemon_start()
        + "\n"
        + (data / "two_gpus_block_without_its_gpu_start.log").read_text()
    )
    with qtbot.waitSignal(window.summary_ready, timeout=15000):
        window.open_paths([path])
    qtbot.wait(50)
    shown = window.session()
    assert shown is not None and not shown.notes  # the Phase 8 run, the longer one
    assert "best effort" in window.statusBar().currentMessage()
