"""The compare window: linked aligned views both ways, the alignment selector, the diff panel,
exports, and the main-window hooks (File > Compare…, Shift+drop)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from tests.ui.conftest import phase8_calls
from viewer.analysis.compare import Alignment, alignment_offset
from viewer.model import Session, build_session
from viewer.ui import MainWindow
from viewer.ui.panels.compare_panel import judgement_colors
from viewer.ui.windows.compare_window import CompareWindow, install

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
TIMES = ["synth_start", "synth_end", "queued", "pickup", "gpu_start", "gpu_end", "kernel_start"]
SHIFT = 7_000.0


def run(workers_per_gpu: int, shift: float = 0.0) -> Session:
    calls = phase8_calls(jobs=4, workers_per_gpu=workers_per_gpu, job_prefix=f"gw{workers_per_gpu}")
    calls[TIMES] = calls[TIMES] + shift
    return build_session(calls)


@pytest.fixture
def cw(qtbot):
    """Phase 7 (gw=1) as A; Phase 8 (gw=2) as B, starting SHIFT ms later in its log."""
    w = CompareWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    with qtbot.waitSignal(w.comparison_ready, timeout=15000):
        w.set_runs(run(1), run(2, SHIFT), "Phase 7", "Phase 8")
    yield w
    w.runner.wait()


def close(a: tuple[float, float], b: tuple[float, float], tol: float = 1e-3) -> bool:
    return abs(a[0] - b[0]) <= tol and abs(a[1] - b[1]) <= tol


def test_offsets_come_from_the_alignment(cw) -> None:
    a, b = cw.sessions()
    assert cw.alignment() == Alignment()
    oa, ob = cw.offsets()
    assert ob - oa == pytest.approx(SHIFT)
    assert oa == alignment_offset(a, Alignment())
    assert "first GPU_START" in cw.pane_a.caption.text()
    assert "Phase 8" in cw.pane_b.caption.text()


def test_zoom_or_pan_in_a_moves_b_through_the_offset_and_back(cw) -> None:
    oa, ob = cw.offsets()
    cw.view_a.set_x_range(oa + 1000, oa + 9000)
    assert close(cw.view_b.x_range(), (ob + 1000, ob + 9000))
    cw.view_a.zoom(0.5)
    assert close(cw.view_b.x_range(), (ob + 3000, ob + 7000))
    cw.view_b.pan(0.25)
    assert close(cw.view_a.x_range(), (oa + 4000, oa + 8000))


def test_select_in_b_selects_in_a_and_the_diff_follows(qtbot, cw) -> None:
    oa, ob = cw.offsets()
    with qtbot.waitSignal(cw.comparison_ready, timeout=15000) as ready:
        cw.view_b.set_selection(ob + 20_000, ob + 120_000)
        qtbot.waitUntil(lambda: cw.view_a.selection() is not None, timeout=5000)
    assert close(cw.view_a.selection(), (oa + 20_000, oa + 120_000))
    qtbot.waitUntil(
        lambda: (
            cw.result().ranged is not None and close(cw.result().ranged.rng, (20_000.0, 120_000.0))
        ),
        timeout=15000,
    )
    ranged = cw.result().ranged
    assert ranged.a.rng == pytest.approx((oa + 20_000, oa + 120_000))
    assert ranged.b.rng == pytest.approx((ob + 20_000, ob + 120_000))
    assert ready.args[0] is not None
    assert cw.panel.cell("range", "measured_s_per_proof", 0).text() == "measured s/proof"
    assert (
        cw.panel.table.item(cw.panel._sections["range"]["measured_s_per_proof"] - 1, 0)
        .text()
        .startswith("Selected range: 20.0 s → 120.0 s")
    )
    cw.view_a.clear_selection()
    qtbot.waitUntil(lambda: cw.view_b.selection() is None, timeout=5000)


def test_alignment_selector_realigns_and_refuses_a_missing_point(qtbot, cw) -> None:
    a, b = cw.sessions()
    cw.align_combo.setCurrentIndex(cw.align_combo.findData("completion"))
    cw.align_combo.activated.emit(cw.align_combo.currentIndex())
    assert cw.align_n.isEnabled()
    cw.align_n.setValue(2)
    want = Alignment("completion", 2)
    assert cw.alignment() == want
    oa, ob = cw.offsets()
    assert (oa, ob) == (alignment_offset(a, want), alignment_offset(b, want))
    cw.view_a.set_x_range(oa - 500, oa + 500)
    assert close(cw.view_b.x_range(), (ob - 500, ob + 500))
    cw.align_n.setValue(99)  # only 4 jobs: refused, the previous alignment stays
    assert cw.alignment() == want and cw.align_n.value() == 2
    assert "cannot align on completion #99" in cw.status.text()
    with qtbot.waitSignal(cw.comparison_ready, timeout=15000) as ready:
        assert cw.set_alignment(Alignment("session"))
    assert ready.args[0].whole.alignment == Alignment("session")
    assert cw.align_combo.currentData() == "session" and not cw.align_n.isEnabled()


def test_diff_panel_colours_better_green_and_worse_red(cw) -> None:
    res = cw.result()
    measured = res.whole.row("measured_s_per_proof")
    assert measured.b < measured.a  # two workers prove faster
    panel = cw.panel
    assert panel.judgement("whole", "measured_s_per_proof") == "better"
    colors = judgement_colors(panel.palette())
    assert panel.cell("whole", "measured_s_per_proof", 4).foreground().color() == colors["better"]
    worse = [r.figure.key for r in res.whole.rows if r.judgement == "worse"]
    for key in worse:
        assert panel.cell("whole", key, 3).foreground().color() == colors["worse"]
    assert panel.cell("whole", "measured_s_per_proof", 1).text() == f"{measured.a:.1f}"
    assert panel.headline.text().startswith("Phase 7 vs Phase 8: ")
    assert panel.verdict_b.text().startswith("B (Phase 8): ")


@pytest.mark.parametrize("base", ["#ffffff", "#1e1e1e"])
def test_judgement_colours_read_on_light_and_dark(base: str) -> None:
    palette = QtGui.QPalette()
    palette.setColor(QtGui.QPalette.ColorRole.Base, QtGui.QColor(base))
    bg = QtGui.QColor(base).lightnessF()
    for color in judgement_colors(palette).values():
        assert abs(color.lightnessF() - bg) > 0.3


def test_export_png_markdown_and_csv(cw, tmp_path) -> None:
    png = tmp_path / "c.png"
    cw.export_to(png)
    image = QtGui.QImage(str(png))
    # Both runs and the diff: not the toolbar above them nor the status line below
    runs = cw.splitter
    assert (image.width(), image.height()) == (2 * runs.width(), 2 * runs.height())
    assert image.height() < 2 * cw.height() - 2 * cw.export_button.height()
    assert len({image.pixel(x, image.height() // 4) for x in range(0, image.width(), 7)}) > 3
    md = tmp_path / "c.md"
    cw.export_to(md)
    assert md.read_text().startswith("# Phase 7 vs Phase 8: ")
    assert "| figure | Phase 7 | Phase 8 | delta | relative |" in md.read_text()
    csv = tmp_path / "c.csv"
    cw.export_to(csv)
    lines = csv.read_text().splitlines()
    assert lines[0].startswith("section,figure,label,a,b,delta,relative,better")
    assert any(line.startswith("whole runs,measured_s_per_proof,") for line in lines)


def test_load_reads_paths_and_labels_them_by_file_stem(qtbot) -> None:
    w = CompareWindow()
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.comparison_ready, timeout=30000) as ready:
        w.load(SAMPLES / "phase7_pw20.log", SAMPLES / "phase8_pw20.log")
    res = ready.args[0]
    assert (res.label_a, res.label_b) == ("phase7_pw20", "phase8_pw20")
    assert res.whole.row("measured_s_per_proof").a == pytest.approx(51.03, abs=0.01)
    assert res.whole.row("measured_s_per_proof").b == pytest.approx(43.74, abs=0.01)
    w.close()


# ------------------------------------------------------------------ main window hooks


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    action = install(win)
    win.show()
    yield win, action
    for child in win.findChildren(CompareWindow):
        child.close()
    win.cancel_loading()
    win.runner.wait()


def _open(qtbot, win, path: Path) -> None:
    with qtbot.waitSignal(win.timeline_loaded, timeout=15000):
        win.open_paths([path])


def _drop(win, path: Path, mods) -> QtGui.QDropEvent:
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(path))])
    pos = QtCore.QPointF(win.width() / 2, win.height() / 2)
    copy, none = QtCore.Qt.DropAction.CopyAction, QtCore.Qt.MouseButton.NoButton
    QtWidgets.QApplication.sendEvent(
        win, QtGui.QDragEnterEvent(pos.toPoint(), copy, mime, none, mods)
    )
    event = QtGui.QDropEvent(pos, copy, mime, none, mods)
    QtWidgets.QApplication.sendEvent(win, event)
    return event


def test_install_puts_compare_after_open_recent(window) -> None:
    win, action = window
    actions = win.file_menu.actions()
    assert action.objectName() == "action_compare"
    i = actions.index(action)
    assert actions[i - 1].menu() is win.recent_menu


def test_compare_menu_asks_for_b_and_compares_with_the_current_run(qtbot, window, monkeypatch):
    win, action = window
    _open(qtbot, win, SAMPLES / "phase7_pw20.log")
    chosen = str(SAMPLES / "phase8_pw20.log")
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (chosen, ""))
    action.trigger()
    (cw,) = win.findChildren(CompareWindow)
    qtbot.waitUntil(lambda: cw.result() is not None, timeout=30000)
    assert cw.sessions()[0] is win.session()
    assert (cw.result().label_a, cw.result().label_b) == ("phase7_pw20", "phase8_pw20")


def test_shift_drop_compares_and_a_plain_drop_still_opens(qtbot, window) -> None:
    win, _ = window
    _open(qtbot, win, SAMPLES / "phase7_pw20.log")
    shift = QtCore.Qt.KeyboardModifier.ShiftModifier
    event = _drop(win, SAMPLES / "phase8_pw20.log", shift)
    assert event.isAccepted()
    (cw,) = win.findChildren(CompareWindow)
    qtbot.waitUntil(lambda: cw.result() is not None, timeout=30000)
    assert cw.result().label_b == "phase8_pw20"
    assert win.timeline().source.name == "phase7_pw20.log"  # the main window kept its log
    with qtbot.waitSignal(win.timeline_loaded, timeout=15000):
        _drop(win, SAMPLES / "phase8_pw20.log", QtCore.Qt.KeyboardModifier.NoModifier)
    assert len(win.findChildren(CompareWindow)) == 1


def test_shift_drop_is_open_paths_compare_mode(qtbot, window) -> None:
    """One open path (issue 14, item 4): Shift+drop is ``open_paths(paths, "compare")``; with
    nothing shown yet it opens the log instead, and no event filter of its own is left."""
    win, _ = window
    assert not [f for f in win.children() if type(f).__name__ == "_ShiftDropFilter"]
    with qtbot.waitSignal(win.timeline_loaded, timeout=15000):
        _drop(win, SAMPLES / "phase7_pw20.log", QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert not win.findChildren(CompareWindow)
    win.open_paths([SAMPLES / "phase8_pw20.log"], "compare")
    (cw,) = win.findChildren(CompareWindow)
    qtbot.waitUntil(lambda: cw.result() is not None, timeout=30000)
    assert cw.result().label_b == "phase8_pw20"
    with pytest.raises(ValueError, match="mode"):
        win.open_paths([SAMPLES / "phase8_pw20.log"], "replace")


def test_export_shows_no_scroll_bar_and_leaves_them_as_they_were(cw) -> None:
    cw.resize(1400, 500)  # short panes: the lanes scroll
    bars = [b for b in cw.splitter.findChildren(QtWidgets.QScrollBar) if b.isVisible()]
    assert bars
    image = cw.grab_image()
    assert all(b.isVisible() for b in bars)  # shown again after
    # The strip where A's scroll bar stands is the background in the image
    bar = bars[0]
    at = bar.mapTo(cw.splitter, bar.rect().center())
    colour = image.pixelColor(2 * at.x(), 2 * at.y())
    assert colour == cw.palette().color(QtGui.QPalette.ColorRole.Window)


def test_axes_speak_aligned_time_like_the_range_header(qtbot, cw) -> None:
    oa, ob = cw.offsets()
    axis_a = cw.view_a.plot.getPlotItem().getAxis("bottom")
    assert "aligned time (0 = first GPU_START)" in axis_a.labelText
    # the tick at A's alignment point reads 0, and B's at its own point too
    assert axis_a.tickStrings([oa], 1.0, 10_000.0) == ["0 s"]
    axis_b = cw.view_b.plot.getPlotItem().getAxis("bottom")
    assert axis_b.tickStrings([ob + 20_000], 1.0, 10_000.0) == ["20 s"]
    # A run past 2 min writes its times on m:ss, in aligned time too.
    assert cw.view_a.format_time(oa - 12_000) == "-0:12.000 aligned"


def test_the_range_section_only_when_it_differs_from_the_whole_runs(qtbot, cw) -> None:
    cw.fit()
    with qtbot.waitSignal(cw.comparison_ready, timeout=15000) as done:
        cw._diff_timer.start(0)
    assert done.args[0].ranged is None  # every figure would repeat the whole-run one
    oa, _ = cw.offsets()
    with qtbot.waitSignal(cw.comparison_ready, timeout=15000) as done:
        cw.view_a.set_selection(oa + 1000, oa + 60_000)
    assert done.args[0].ranged is not None


def test_section_titles_read_in_the_dark_palette(cw) -> None:
    """A dark palette that keeps Qt's light AlternateBase made 'Whole runs' light on light."""
    from viewer.ui.palette import dark_palette

    palette = dark_palette()
    palette.setColor(QtGui.QPalette.ColorRole.AlternateBase, QtGui.QColor("#f7f7f7"))
    cw.panel.setPalette(palette)
    cw.panel.set_result(cw.result())
    item = cw.panel.table.item(0, 0)
    assert item.text() == "Whole runs"
    fg, bg = item.foreground().color(), item.background().color()
    assert abs(fg.lightnessF() - bg.lightnessF()) > 0.5


def test_the_png_draws_the_lane_names_at_its_own_scale(cw) -> None:
    """The lane names' pixmap cache (for pans) is 1x: the 2x PNG showed it scaled up,
    blurred. The export draws them anew, as with no cache at all."""
    headers = [view._header for view in (cw.view_a, cw.view_b)]
    cached = QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache
    assert all(h.cacheMode() == cached for h in headers)
    with_cache = cw.grab_image()
    for h in headers:
        h.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.NoCache)
    without = cw.grab_image()
    for h in headers:
        h.setCacheMode(cached)
    assert with_cache == without
