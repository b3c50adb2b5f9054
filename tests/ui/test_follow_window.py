"""View > Follow on a real window: a log written while it is shown."""

from __future__ import annotations

import gzip
import re
import time
from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui

from viewer.io import open_log
from viewer.ui import MainWindow
from viewer.ui.windows.follow import install

PHASE8 = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    install(win)
    qtbot.addWidget(win)
    win.resize(1400, 850)
    win.show()
    yield win
    win.follow.stop()
    win.follow.wait()
    win.cancel_loading()
    win.runner.wait()


@pytest.fixture
def half_log(tmp_path) -> tuple[Path, bytes]:
    """A copy of the Phase 8 sample cut in half at a line end, and the bytes still to come."""
    data = PHASE8.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    path = tmp_path / "live.log"
    path.write_bytes(data[:cut])
    return path, data[cut:]


def open_and_wait(qtbot, win: MainWindow, path: Path) -> None:
    with qtbot.waitSignal(win.timeline_loaded, timeout=15000):
        win.open_paths([path])
    qtbot.waitUntil(lambda: win.current_summary() is not None, timeout=15000)


def append(path: Path, data: bytes) -> float:
    with open(path, "ab") as f:
        f.write(data)
    return time.perf_counter()


def all_events(win: MainWindow, n: int) -> bool:
    timeline = win.view.timeline()
    return timeline is not None and timeline.events == n


def test_action_in_view_menu_and_toolbar_with_a_free_shortcut(window):
    action = window.follow.action
    assert action.isCheckable() and not action.isChecked()
    assert action in window.view_menu.actions()
    assert action in window.toolbar.actions()
    assert window.findChild(QtGui.QAction, "action_follow") is action
    taken = [
        a.shortcut()
        for a in window.findChildren(QtGui.QAction)
        if a is not action and not a.shortcut().isEmpty()
    ]
    assert action.shortcut() == QtGui.QKeySequence("Ctrl+F")
    assert action.shortcut() not in taken
    assert install(window) is window.follow  # installing twice adds nothing


def test_appended_events_show_and_zoom_is_kept(qtbot, window, half_log):
    path, rest = half_log
    open_and_wait(qtbot, window, path)
    x0, x1 = 20_000.0, 60_000.0  # early in the run: not at the live edge
    window.view.set_x_range(x0, x1)
    window.follow.action.trigger()
    assert window.follow.is_following()
    qtbot.waitUntil(lambda: "following live.log" in window.follow.label.text(), timeout=5000)

    full = open_log(PHASE8).events
    written = append(path, rest)
    qtbot.waitUntil(lambda: all_events(window, full), timeout=5000)
    latency = time.perf_counter() - written
    print(f"append -> visible: {latency * 1000:.0f} ms")
    assert latency < 2.0
    assert window.view.x_range() == pytest.approx((x0, x1))
    assert window.timeline() is window.view.timeline()
    assert f"{full} events" in window.follow.label.text()
    qtbot.waitUntil(
        lambda: window.throughput_panel.form.text("measured") == "37.4 s/proof", timeout=5000
    )


def test_selection_is_kept_and_panels_follow_it(qtbot, window, half_log):
    path, rest = half_log
    open_and_wait(qtbot, window, path)
    window.view.set_selection(10_000.0, 90_000.0)
    window.follow.action.setChecked(True)
    append(path, rest)
    qtbot.waitUntil(lambda: all_events(window, open_log(PHASE8).events), timeout=5000)
    assert window.view.selection() == pytest.approx((10_000.0, 90_000.0))
    qtbot.waitUntil(lambda: window.current_summary().session is window.session(), timeout=5000)
    assert window.current_summary().rng == pytest.approx((10_000.0, 90_000.0))


def test_live_edge_is_kept_in_view(qtbot, window, half_log):
    path, rest = half_log
    open_and_wait(qtbot, window, path)
    old_end = window.view.lanes().x_max
    window.view.set_x_range(old_end - 30_000, old_end + 1_000)  # zoomed in, at the edge
    window.follow.action.setChecked(True)
    append(path, rest)
    qtbot.waitUntil(lambda: all_events(window, open_log(PHASE8).events), timeout=5000)
    new_end = window.view.lanes().x_max
    x0, x1 = window.view.x_range()
    assert new_end > old_end + 10_000
    assert x1 >= new_end  # slid along with the data
    assert x1 - x0 == pytest.approx(31_000, rel=1e-6)  # the zoom is kept


def test_whole_session_view_extends(qtbot, window, half_log):
    path, rest = half_log
    open_and_wait(qtbot, window, path)
    window.view.fit()
    x0, _ = window.view.x_range()
    window.follow.action.setChecked(True)
    append(path, rest)
    qtbot.waitUntil(lambda: all_events(window, open_log(PHASE8).events), timeout=5000)
    lanes = window.view.lanes()
    nx0, nx1 = window.view.x_range()
    assert nx0 == pytest.approx(x0)
    assert nx1 >= lanes.x_max


def test_unchecking_stops_and_another_file_stops(qtbot, window, half_log, tmp_path):
    path, rest = half_log
    open_and_wait(qtbot, window, path)
    window.follow.action.setChecked(True)
    window.follow.action.setChecked(False)
    assert not window.follow.is_following() and not window.follow.label.isVisible()

    window.follow.action.setChecked(True)
    other = tmp_path / "other.log"
    other.write_bytes(PHASE8.read_bytes())
    open_and_wait(qtbot, window, other)
    assert not window.follow.is_following()
    assert not window.follow.action.isChecked()
    append(path, rest)
    qtbot.wait(800)
    assert window.view.timeline().source == other


def test_checked_while_loading_follows_the_loaded_file(qtbot, window, half_log):
    path, _ = half_log
    with qtbot.waitSignal(window.timeline_loaded, timeout=15000):
        window.open_paths([path])
        window.follow.action.setChecked(True)
    assert window.follow.is_following()
    assert window.follow.follower.path == path


def test_nothing_open_says_so(window):
    window.follow.action.setChecked(True)
    assert not window.follow.action.isChecked()
    assert "Open a log first" in window.banner.label.text()


def test_compressed_log_stops_with_a_clear_message(qtbot, window, tmp_path):
    path = tmp_path / "run.log.gz"
    path.write_bytes(gzip.compress(PHASE8.read_bytes()))
    open_and_wait(qtbot, window, path)
    window.follow.action.setChecked(True)
    qtbot.waitUntil(lambda: not window.follow.action.isChecked(), timeout=5000)
    assert window.banner.isVisible()
    assert "gzip-compressed log cannot be followed" in window.banner.label.text()


def test_rotation_adds_a_session_after_the_old_one(qtbot, window, half_log):
    path, _ = half_log
    open_and_wait(qtbot, window, path)
    window.view.fit()  # at the live edge: the new file's session takes over the view
    window.follow.action.setChecked(True)
    qtbot.waitUntil(lambda: re.search(r"last update \d", window.follow.label.text()), timeout=5000)
    old = window.view.timeline().sessions[0]
    path.rename(path.with_suffix(".log.1"))
    path.write_bytes(PHASE8.read_bytes())
    qtbot.waitUntil(lambda: len(window.view.timeline().sessions) == 2, timeout=5000)
    assert window.view.session_index() == 1
    assert window.session_combo.count() == 2
    assert len(window.view.timeline().sessions[0].partitions) == len(old.partitions)
    assert window.follow.is_following()


def test_a_restart_moves_to_the_new_session_and_says_so(qtbot, window, half_log):
    """Issue 16, item 10: zoomed into the middle of the run (not at the live edge) when the
    daemon restarts, the view used to stay on the dead session."""
    path, rest = half_log
    open_and_wait(qtbot, window, path)
    lo, hi = window.view.x_range()
    window.view.set_x_range(lo + (hi - lo) * 0.3, lo + (hi - lo) * 0.4)  # not the live edge
    window.follow.action.setChecked(True)
    qtbot.waitUntil(lambda: re.search(r"last update \d", window.follow.label.text()), timeout=5000)
    append(path, rest + PHASE8.read_bytes())  # the run ends, then 'cuzk-daemon starting' again
    qtbot.waitUntil(lambda: len(window.view.timeline().sessions) == 2, timeout=5000)
    assert window.view.session_index() == 1
    assert window.session_combo.currentIndex() == 1
    message = window.statusBar().currentMessage()
    assert "restarted" in message and "session 2" in message and "session 1 ended" in message
    assert window.follow.is_following()


def test_a_session_chosen_further_back_is_kept_through_a_restart(qtbot, window, tmp_path):
    path = tmp_path / "two.log"
    data = PHASE8.read_bytes()
    path.write_bytes(data + data)  # two sessions already
    open_and_wait(qtbot, window, path)
    window.set_session(0)  # as the session list does
    qtbot.waitUntil(lambda: window.view.session_index() == 0, timeout=5000)
    window.follow.action.setChecked(True)
    qtbot.waitUntil(lambda: re.search(r"last update \d", window.follow.label.text()), timeout=5000)
    append(path, data)
    qtbot.waitUntil(lambda: len(window.view.timeline().sessions) == 3, timeout=5000)
    assert window.view.session_index() == 0
