"""The What if dock driven like a user would: knobs -> replay in the background -> predicted
s/proof, floors as bars, the compare window; and the main window feeding it sessions."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from tests.real_runs import REAL as REAL_RUNS
from viewer.analysis.floors import REMEDY
from viewer.io import open_log
from viewer.ui import MainWindow
from viewer.ui.palette import dark_palette
from viewer.ui.panels import whatif as whatif_module
from viewer.ui.panels import whatif_runner
from viewer.ui.panels.floor_bars import BarColors, FloorBars
from viewer.ui.panels.whatif import WhatIfPanel
from viewer.whatif import Knobs, WhatIf, plan, what_if
from viewer.whatif.replay import stage_means

Qt = QtCore.Qt
SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
PHASE8 = SAMPLES / "phase8_pw10_5sectors.log"
PHASE7 = SAMPLES / "phase7_gw1.log"
DAMAGED = SAMPLES / "damaged.log"  # two daemon runs: two sessions
PHASE9 = {"kernel": 1824, "prep": 1909, "post": 504}  # published Phase 9 timings, ms
COUNTS = ("gw", "pw", "gpus")
TIMEOUT = 30000


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.resize(1500, 900)
    win.show()
    win.docks["whatif"].raise_()
    yield win
    win.cancel_loading()
    win.runner.wait()
    win.whatif_panel.runner.wait()


def open_and_answer(qtbot, win: MainWindow, path: Path):
    """Open ``path`` and wait for the dock's first answer on it."""
    panel = win.whatif_panel
    with qtbot.waitSignal(win.timeline_loaded, timeout=TIMEOUT):
        win.open_paths([path])
    qtbot.waitUntil(
        lambda: panel.answer() is not None and panel.answer().session is win.view.session(),
        timeout=TIMEOUT,
    )
    return panel.answer()


def type_into(qtbot, spin: QtWidgets.QAbstractSpinBox, text: str) -> None:
    """Select the spin box's text and type ``text`` as a user would."""
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)


def set_knobs(qtbot, panel: WhatIfPanel, **values: float):
    """Type each knob's value, then wait for the answer with exactly those knobs."""
    for name, value in values.items():
        type_into(qtbot, panel.spins[name], f"{value:g}")
    want = {n if n in COUNTS else f"{n}_ms": v for n, v in values.items()}
    qtbot.waitUntil(
        lambda: panel.answer() is not None and panel.answer().knobs.changed() == want,
        timeout=TIMEOUT,
    )
    return panel.answer()


def shown(panel: WhatIfPanel, key: str) -> float:
    return float(panel.figures[key].number.text())


# ---------------------------------------------------------------------------- defaults


def test_defaults_are_the_measured_values_of_the_log(qtbot, window) -> None:
    answer = open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    session = window.view.session()
    pl = plan(session)
    means = stage_means(pl)
    assert panel.spins["gw"].value() == pl.cfg.gw == 2
    assert panel.spins["pw"].value() == pl.cfg.pw == 10
    assert panel.spins["gpus"].value() == pl.cfg.gpus == 1
    for name in ("kernel", "prep", "post", "synth"):
        assert panel.spins[name].value() == round(means[name])
        assert panel.measured[name].text() == f"measured {means[name]:.0f} ms"
        assert panel.spins[name].isEnabled()
    assert panel.measured["kernel"].text() == "measured 3746 ms"
    assert panel.measured["gw"].text() == "measured 2"
    assert panel.knobs() == Knobs()
    assert answer.knobs == Knobs()
    assert shown(panel, "measured") == 37.4
    assert shown(panel, "replayed") == pytest.approx(37.4, abs=0.4)
    assert panel.figures["predicted"].number.text() == panel.figures["replayed"].number.text()
    assert panel.bars.binding("measured") == "kernel"
    assert "kernel floor" in panel.sentence.text()


# ------------------------------------------------------------------------------ knobs


def test_phase9_timings_predict_a_synthesis_bound_run(qtbot, window) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    answer = set_knobs(qtbot, panel, **PHASE9)
    predicted = answer.result.scenario.s_per_proof
    assert 34.5 <= predicted <= 40.0
    assert shown(panel, "predicted") == round(predicted, 1)
    assert panel.bars.binding("predicted") == "synthesis"
    assert panel.bars.binding("measured") == "kernel"
    assert "synthesis floor" in panel.sentence.text()
    change = panel.figures["predicted"].note.text()
    assert change.endswith("% faster")
    for name in PHASE9:  # a changed knob shows in bold
        assert panel.spins[name].font().bold()
    assert not panel.spins["gw"].font().bold()


def test_one_worker_with_phase9_timings_is_gpu_worker_bound(qtbot, window) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    answer = set_knobs(qtbot, panel, gw=1, **PHASE9)
    predicted = answer.result.scenario.s_per_proof
    assert predicted == pytest.approx(42.9, rel=0.05)  # published: 42.9 s/proof
    assert panel.bars.binding("predicted") == "worker"
    assert panel.figures["predicted"].note.text().endswith("% slower")
    assert "GPU worker floor" in panel.sentence.text()


def test_reset_restores_the_measured_values(qtbot, window) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    set_knobs(qtbot, panel, gw=1, kernel=1824)
    assert panel.spins["gw"].value() == 1
    qtbot.mouseClick(panel.reset_button, Qt.MouseButton.LeftButton)
    assert panel.spins["gw"].value() == 2
    assert panel.spins["kernel"].value() == 3746
    assert panel.knobs() == Knobs()
    assert not panel.spins["kernel"].font().bold()
    qtbot.waitUntil(lambda: panel.answer().knobs == Knobs(), timeout=TIMEOUT)
    assert panel.figures["predicted"].number.text() == panel.figures["replayed"].number.text()
    assert panel.bars.binding("predicted") == "kernel"


def test_edits_are_debounced_into_one_replay(qtbot, window, monkeypatch) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    asked: list[Knobs] = []
    request = panel.runner.request
    monkeypatch.setattr(
        panel.runner, "request", lambda s, k, *rest: (asked.append(k), request(s, k, *rest))
    )
    for value in (3000, 2500, 2000, 1824):
        panel.spins["kernel"].setValue(value)
        qtbot.wait(20)
    assert asked == []  # nothing before the edits settle
    qtbot.waitUntil(lambda: panel.answer().knobs == Knobs(kernel_ms=1824.0), timeout=TIMEOUT)
    assert asked == [Knobs(kernel_ms=1824.0)]


def test_the_latest_request_wins(qtbot) -> None:
    """Requests made while a replay runs collapse into the newest; stale answers are dropped."""
    session = open_log(PHASE8).sessions[0]
    runner = whatif_runner.WhatIfRunner()
    got = []
    runner.answer_ready.connect(got.append)
    for kernel in (3000.0, 2500.0, 2000.0):
        runner.request(session, Knobs(kernel_ms=kernel))
    qtbot.waitUntil(lambda: bool(got), timeout=TIMEOUT)
    runner.wait()
    qtbot.wait(50)
    assert [a.knobs for a in got] == [Knobs(kernel_ms=2000.0)]


def test_values_out_of_range_cannot_be_typed(qtbot, window) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    for name, text in (("gw", "0"), ("gpus", "-3"), ("kernel", "0"), ("pw", "99999")):
        type_into(qtbot, panel.spins[name], text)
        spin = panel.spins[name]
        assert spin.minimum() <= spin.value() <= spin.maximum()
    assert panel.spins["gw"].maximum() == whatif_module.MAX_WORKERS
    assert panel.spins["kernel"].minimum() > 0
    panel.knobs()  # whatever was typed makes valid knobs: no KnobError


def test_a_replay_error_shows_inline_and_the_window_stays_usable(
    qtbot, window, monkeypatch
) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel

    def refuse(session, knobs, pl=None, load=None):
        raise ValueError("the log has no prep time to scale to 1909 ms")

    monkeypatch.setattr(whatif_runner, "what_if", refuse)
    type_into(qtbot, panel.spins["prep"], "1909")
    qtbot.waitUntil(lambda: "no prep time" in panel.error.text(), timeout=TIMEOUT)
    assert "Traceback" not in panel.error.text()
    assert panel.spins["prep"].isEnabled()
    # No figure of earlier knobs stays beside the error.
    assert panel.answer() is None
    assert panel.figures["predicted"].number.text() == "—"
    monkeypatch.undo()
    qtbot.mouseClick(panel.reset_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: panel.answer() is not None and panel.answer().knobs == Knobs(), timeout=TIMEOUT
    )
    assert panel.error.text() == ""


def test_a_session_with_nothing_to_replay_says_so(qtbot) -> None:
    from tests.ui.conftest import phase8_calls
    from viewer.model import build_session

    calls = phase8_calls(jobs=1)
    calls = calls.iloc[:0]
    panel = WhatIfPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.set_session(build_session(calls), "empty.log")
    qtbot.waitUntil(lambda: "Nothing to replay" in panel.error.text(), timeout=TIMEOUT)
    assert panel.answer() is None
    assert panel.figures["predicted"].number.text() == "—"
    assert not panel.spins["gw"].isEnabled()
    panel.runner.wait()


def test_a_log_without_cuzk_timing_has_no_prep_or_post_knob(qtbot, window, tmp_path) -> None:
    grepped = tmp_path / "timeline_only.log"
    lines = PHASE8.read_text().splitlines(keepends=True)
    grepped.write_text("".join(line for line in lines if line.startswith("TIMELINE")))
    answer = open_and_answer(qtbot, window, grepped)
    panel = window.whatif_panel
    for name in ("prep", "post", "budget"):
        assert not panel.spins[name].isEnabled()
        assert panel.measured[name].text() == "not in this log"
        assert panel.spins[name].text() == "—"  # no number: its minimum read as a value
    assert panel.spins["kernel"].isEnabled() and panel.spins["kernel"].text().endswith(" ms")
    assert any("upper bound" in n for n in answer.result.notes)
    assert "upper bound" in panel.notes.text()


# ------------------------------------------------------------------- logs, sessions


def test_switching_logs_recomputes_and_never_shows_the_previous_answer(qtbot, window) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    set_knobs(qtbot, panel, kernel=1824)
    shown_answers = []
    panel.prediction_ready.connect(shown_answers.append)
    with qtbot.waitSignal(window.timeline_loaded, timeout=TIMEOUT):
        window.open_paths([PHASE7])
    new = window.view.session()
    # Straight after the switch: nothing of the previous log is on screen.
    assert panel.figures["predicted"].number.text() == "—"
    assert panel.answer() is None
    assert panel.bars.binding("predicted") is None
    qtbot.waitUntil(lambda: panel.answer() is not None, timeout=TIMEOUT)
    assert all(a.session is new for a in shown_answers)
    assert panel.spins["gw"].value() == 1  # Phase 7: one worker per GPU
    assert panel.knobs() == Knobs()  # a new log starts from its own measured values
    assert shown(panel, "measured") == pytest.approx(59.7, abs=0.1)


def test_switching_sessions_recomputes(qtbot, window) -> None:
    first = open_and_answer(qtbot, window, DAMAGED)
    panel = window.whatif_panel
    timeline = window.timeline()
    other = 1 - window.view.session_index()
    window.set_session(other)
    assert panel.answer() is None
    qtbot.waitUntil(
        lambda: panel.answer() is not None and panel.answer().session is timeline.sessions[other],
        timeout=TIMEOUT,
    )
    assert panel.answer().session is not first.session


def test_a_re_read_of_the_same_log_keeps_the_knobs(qtbot) -> None:
    """Follow mode swaps in a newer read of the same log: the user's knobs stay, and the
    answer is recomputed for the new read."""
    panel = WhatIfPanel()
    qtbot.addWidget(panel)
    panel.show()
    first = open_log(PHASE8).sessions[0]
    panel.set_session(first, str(PHASE8))
    qtbot.waitUntil(lambda: panel.answer() is not None, timeout=TIMEOUT)
    set_knobs(qtbot, panel, gw=1)
    again = open_log(PHASE8).sessions[0]
    panel.set_session(again, str(PHASE8))
    assert panel.spins["gw"].isEnabled() and panel.spins["gw"].value() == 1
    qtbot.waitUntil(
        lambda: panel.answer() is not None and panel.answer().session is again, timeout=TIMEOUT
    )
    assert panel.answer().knobs == Knobs(gw=1)
    panel.set_session(open_log(PHASE7).sessions[0], str(PHASE7))  # another log: reset
    assert panel.knobs() == Knobs() and not panel.spins["gw"].isEnabled()
    panel.runner.wait()


def test_a_hidden_dock_replays_once_shown(qtbot, window) -> None:
    window.docks["transitions"].raise_()
    panel = window.whatif_panel
    with qtbot.waitSignal(window.timeline_loaded, timeout=TIMEOUT):
        window.open_paths([PHASE8])
    qtbot.wait(300)
    assert panel.answer() is None
    action = window.findChild(QtGui.QAction, "action_whatif")
    assert action.shortcut() == QtGui.QKeySequence("Ctrl+I")
    action.trigger()
    qtbot.waitUntil(lambda: panel.answer() is not None, timeout=TIMEOUT)
    assert panel.isVisible()


def test_the_view_menu_toggles_the_dock(qtbot, window) -> None:
    dock = window.docks["whatif"]
    panels = next(a.menu() for a in window.view_menu.actions() if a.menu() and "Panels" in a.text())
    assert dock.toggleViewAction() in panels.actions()
    dock.toggleViewAction().trigger()
    assert dock.isHidden()
    dock.toggleViewAction().trigger()
    assert not dock.isHidden()


# -------------------------------------------------------------------------- compare


def test_show_prediction_beside_opens_both_runs_linked(qtbot, window) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    answer = set_knobs(qtbot, panel, gw=1, kernel=1824)
    with qtbot.waitSignal(panel.compare_opened, timeout=TIMEOUT) as opened:
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    cw = opened.args[0]
    a, b = cw.sessions()
    assert a is window.view.session()
    assert b is answer.result.scenario.session
    assert cw.view_a.lanes() is window.view.lanes()  # the lanes on screen, not rebuilt
    assert "measured" in cw.pane_a.caption.text()
    assert "predicted (gw 1, kernel 1824 ms)" in cw.pane_b.caption.text()
    assert "gw 1, kernel 1824 ms" in cw.windowTitle()
    oa, ob = cw.offsets()
    cw.view_a.set_x_range(oa + 1000, oa + 9000)
    x0, x1 = cw.view_b.x_range()
    assert (x0, x1) == pytest.approx((ob + 1000, ob + 9000), abs=1e-3)
    with qtbot.waitSignal(cw.comparison_ready, timeout=TIMEOUT) as ready:
        pass
    res = ready.args[0]
    assert res.whole.b.session is b
    cw.runner.wait()
    cw.close()


# ----------------------------------------------------------------------- floor bars


def floor_bars(qtbot, w: WhatIf, palette: QtGui.QPalette | None = None) -> FloorBars:
    bars = FloorBars()
    qtbot.addWidget(bars)
    if palette is not None:
        bars.setPalette(palette)
    bars.resize(520, bars.minimumSizeHint().height())
    bars.set_floors(w.measured.floors, w.scenario.floors, w.measured.s_per_proof)
    return bars


@pytest.fixture(scope="module")
def phase9() -> WhatIf:
    """The Phase 8 sample with Phase 9 timings: kernel binds the measured run, synthesis the
    prediction."""
    session = open_log(PHASE8).sessions[0]
    return what_if(session, Knobs(kernel_ms=1824.0, prep_ms=1909.0, post_ms=504.0))


@pytest.mark.parametrize("palette", [None, dark_palette()], ids=["light", "dark"])
def test_floor_bars_paint_the_binding_floor_in_the_accent(qtbot, phase9, palette) -> None:
    bars = floor_bars(qtbot, phase9, palette)
    image = bars.grab().toImage()
    colors = BarColors.from_palette(bars.palette())
    accent = bars.palette().color(QtGui.QPalette.ColorRole.Highlight)

    def at(floor: str, run: str) -> int:
        r = bars.bar_rect(floor, run)
        return image.pixel(int(r.left() + 5), int(r.center().y()))

    assert at("synthesis", "predicted") == accent.rgb()  # binds the prediction
    assert at("kernel", "predicted") == colors.predicted.rgb()
    assert at("kernel", "measured") == colors.measured_binding.rgb()  # binds the measured run
    assert at("synthesis", "measured") == colors.measured.rgb()
    background = bars.palette().color(QtGui.QPalette.ColorRole.Window)
    for c in (colors.measured, colors.predicted, accent):
        assert abs(c.lightnessF() - background.lightnessF()) > 0.12 or c == accent
    # Bars are to scale: kernel 37.5 against 18.2 s/proof.
    w = phase9
    ratio = (
        bars.bar_rect("kernel", "measured").width() / bars.bar_rect("kernel", "predicted").width()
    )
    assert ratio == pytest.approx(w.measured.floors.kernel_s / w.scenario.floors.kernel_s, rel=0.02)
    # The dashed line at the measured s/proof: a foreground pixel between the rows.
    x = bars.measured_line_x()
    assert x is not None
    r = bars.bar_rect("kernel", "measured")
    assert bars.bar_rect("kernel", "measured").right() == pytest.approx(x, abs=3)
    column = [image.pixelColor(round(x), y) for y in range(int(r.top()), int(r.top()) + 60)]
    assert any(abs(c.lightnessF() - background.lightnessF()) > 0.4 for c in column)


def test_floor_tooltips_say_what_each_floor_is_and_what_relieves_it(qtbot, phase9) -> None:
    bars = floor_bars(qtbot, phase9)
    text = bars.tooltip_text("kernel")
    assert "measured: kernel 3746 ms × 10 partitions / 1 GPU = 37.5 s/proof  (binds)" in text
    assert "predicted: kernel 1824 ms × 10 partitions / 1 GPU = 18.2 s/proof" in text
    assert REMEDY["kernel"] in text
    synth = bars.tooltip_text("synthesis")
    assert "/ 10 slots" in synth and REMEDY["synthesis"] in synth
    assert "GPU workers" in bars.tooltip_text("worker")
    assert REMEDY["arrival"] in bars.tooltip_text("arrival")
    r = bars.bar_rect("worker", "predicted")
    assert bars.floor_at(r.center()) == "worker"
    assert bars.floor_at(QtCore.QPointF(5, 1)) is None  # the legend


def test_the_dock_arranges_itself_to_its_width(qtbot) -> None:
    panel = WhatIfPanel()
    qtbot.addWidget(panel)
    panel.resize(1900, 260)
    panel.show()
    qtbot.waitUntil(lambda: panel.arrangement() == "row", timeout=5000)
    panel.resize(420, 900)
    qtbot.waitUntil(lambda: panel.arrangement() == "column", timeout=5000)


def test_the_range_of_what_the_log_cannot_show_sits_under_the_prediction(
    qtbot, window, tmp_path
) -> None:
    """A run whose queue bound and arrivals the log does not show: under the predicted
    s/proof, the range its other ends give; the notes say what each end assumes.  With no
    knob changed, no range."""
    from viewer.sim.model import SimConfig, simulate
    from viewer.sim.writer import WriteOptions, write

    log = tmp_path / "run.log"
    cfg = SimConfig(sectors=8, pw=14, gw=2, seed=664, jitter=0.1, synth_ms=50_000.0,
                    kernel_ms=1873.0, warmup_ms=2000.0, queue_cap=12)  # fmt: skip
    write(simulate(cfg), log, WriteOptions())
    open_and_answer(qtbot, window, log)
    panel = window.whatif_panel
    w = set_knobs(qtbot, panel, pw=40).result
    lo, hi = w.span
    aside = panel.figures["predicted"].aside
    where = "past the loads seen" if w.beyond else "range"
    assert aside.isVisible() and aside.text() == f"{where} {lo:.1f}–{hi:.1f}"
    assert lo < w.scenario.s_per_proof < hi
    if w.beyond:  # pw 40 also runs past the loads the log shows: its band leads
        llo, lhi = w.load_band
        assert f"{llo:.1f}-{lhi:.1f} s/proof, past the loads" in panel.sentence.text()
        assert f"{lo:.1f}-{hi:.1f} by what the log cannot show" in panel.sentence.text()
    else:
        assert f"({lo:.1f}-{hi:.1f} by what the log cannot show)" in panel.sentence.text()
    assert "queues up to" in panel.notes.text() and "the log hides" in panel.notes.text()
    open_and_answer(qtbot, window, PHASE8)  # nothing changed: one replay, no range
    assert not aside.isVisible() and "by what the log" not in panel.sentence.text()


REAL = REAL_RUNS  # ../shared/real_h200, copied into the tests' data


def test_logs_dropped_on_the_dock_calibrate_the_load(qtbot, window) -> None:
    """base1 alone does not show how synthesis slows with load: pw 16 is a band past its
    loads.  Dropping runs of the same machine at pw 4 and 32 on the dock fits the load over
    the three: the dock says so, and pw 16 gets a number from the loads they cover."""
    open_and_answer(qtbot, window, REAL / "base1.log.gz")
    panel = window.whatif_panel
    alone = set_knobs(qtbot, panel, pw=16).result
    assert alone.beyond and "synth" in panel.load_text.text()
    assert "Not shown" in panel.load_text.text() and "past the loads seen" in (
        panel.figures["predicted"].aside.text()
    )
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(REAL / f"{n}.log.gz")) for n in ("pw4", "pw32")])
    pos = QtCore.QPointF(panel.rect().center())
    for event in (
        QtGui.QDragEnterEvent(pos.toPoint(), Qt.DropAction.CopyAction, mime,
                              Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier),
        QtGui.QDropEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                         Qt.KeyboardModifier.NoModifier),
    ):  # fmt: skip
        QtWidgets.QApplication.sendEvent(panel.viewport(), event)
    qtbot.waitUntil(
        lambda: panel.answer() is not None and len(panel.answer().result.load.logs) == 3,
        timeout=TIMEOUT,
    )
    calibrated = panel.answer().result
    assert calibrated.knobs == Knobs(pw=16)  # the knobs stay
    assert not calibrated.beyond
    assert "From 3 logs" in panel.load_text.text()
    assert panel.own_button.isEnabled()
    qtbot.mouseClick(panel.own_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.answer().result.load.logs) == 1, timeout=TIMEOUT)
    assert panel.calibration() == []


def test_fixed_durations_turn_the_load_model_off(qtbot, window) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    panel.fixed_check.setChecked(True)
    qtbot.waitUntil(
        lambda: panel.answer() is not None and not panel.answer().result.load.logs,
        timeout=TIMEOUT,
    )
    assert panel.load_text.text().startswith("Fixed durations")


def test_a_calibration_log_that_cannot_be_read_is_named(qtbot, window, tmp_path) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    bad = tmp_path / "not-a-log.txt"
    bad.write_text("hello\n")
    panel.set_calibration([str(bad)])
    qtbot.waitUntil(lambda: "not-a-log.txt" in panel.error.text(), timeout=TIMEOUT)
    assert "Traceback" not in panel.error.text()
    assert panel.calibration() == []


# ------------------------------------------------------------------- memory budget


def test_a_budget_gated_log_has_its_budget_as_a_knob(qtbot, window) -> None:
    answer = open_and_answer(qtbot, window, SAMPLES / "budget_gated.log")
    panel = window.whatif_panel
    assert panel.spins["budget"].isEnabled()
    assert panel.spins["budget"].value() == 200
    assert panel.measured["budget"].text() == "measured 200 GiB"
    assert panel.spins["pw"].value() == 14  # the workers it logged
    assert answer.result.replay_error == pytest.approx(0.0, abs=0.005)
    type_into(qtbot, panel.spins["budget"], "260")
    qtbot.waitUntil(
        lambda: (
            panel.answer() is not None and panel.answer().knobs.changed() == {"budget_gib": 260.0}
        ),
        timeout=TIMEOUT,
    )
    result = panel.answer().result
    assert result.schedule.config.pw == 18  # sized from the budget, as the daemon does
    assert result.scenario.s_per_proof == pytest.approx(37.2, rel=0.01)  # simulated: 37.20
    assert shown(panel, "predicted") == round(result.scenario.s_per_proof, 1)
    assert panel.spins["budget"].font().bold()
    panel.reset()
    assert panel.knobs() == Knobs() and panel.spins["budget"].value() == 200


def test_a_log_without_a_budget_has_no_budget_knob(qtbot, window) -> None:
    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    assert not panel.spins["budget"].isEnabled()
    assert panel.measured["budget"].text() == "not in this log"


def test_the_dock_gives_the_memory_each_run_holds(qtbot, window) -> None:
    """issue 26: the memory a setting needs, beside its s/proof; more synthesis slots hold
    more partitions at once."""
    answer = open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    lo, hi = answer.result.memory_gib(answer.result.measured)
    assert f"Memory held at most: measured {round(lo)}-{round(hi)} GiB" in panel.efficiency.text()
    assert "baseline 69 GiB" in panel.efficiency.toolTip()
    more = set_knobs(qtbot, panel, pw=20)
    lo2, hi2 = more.result.memory_gib(more.result.scenario)
    assert hi2 > hi and lo2 > lo
    assert f"predicted {round(lo2)}-{round(hi2)} GiB" in panel.efficiency.text()


def test_a_gain_wall_time_contradicts_is_not_green(qtbot, window) -> None:
    """issue 27 item 6: interval s/proof faster, wall time / proofs slower: no colour.
    (``--gw 16`` on two_gpus.log was such a run while calls went to GPU 0's workers first;
    with free work spread over the GPUs no sample gives one, so the answer of a real gain is
    shown with a wall time that goes the other way, as a short run's bunched completions
    give it.)"""
    import dataclasses

    open_and_answer(qtbot, window, PHASE8)
    panel = window.whatif_panel
    panel.fixed_check.setChecked(True)  # no band: a plain gain, shown in colour
    qtbot.waitUntil(
        lambda: panel.answer() is not None and not panel.answer().result.load.logs,
        timeout=TIMEOUT,
    )
    answer = set_knobs(qtbot, panel, kernel=1824)  # Phase 9's kernels
    w = answer.result
    shown = panel.figures["predicted"].note
    assert w.change < -0.005 and "faster" in shown.text() and "color" in shown.styleSheet()
    later = dataclasses.replace(w.scenario, wall_s_per_proof=w.baseline.wall_s_per_proof * 1.1)
    panel._show(dataclasses.replace(answer, result=dataclasses.replace(w, scenario=later)))
    note = panel.figures["predicted"].note
    assert "wall time +10.0 %" in note.text()
    assert "color" not in note.styleSheet()


def test_the_machines_threads_come_from_the_loaded_log_not_a_second_read(
    qtbot, window, tmp_path
) -> None:
    """The load model takes the machine's CPU threads from the head of the log as it was
    loaded (``cpus=16`` in base1's ``realpipe config``), as ``whatif`` does, and still has
    them once the file is gone (the dock used to read the file's head again for them)."""
    import shutil

    log = tmp_path / "base1.log.gz"
    shutil.copy(REAL / "base1.log.gz", log)
    first = open_and_answer(qtbot, window, log)
    assert first.result.load.contention.cores == 16
    log.unlink()  # the file is gone: what was loaded still says 16 threads
    panel = window.whatif_panel
    again = set_knobs(qtbot, panel, gw=3)
    assert again.error == "" and again.result.load.contention.cores == 16


def test_the_synthesis_floor_tooltip_says_what_the_logs_load_says(qtbot, window) -> None:
    """issue 25 item 5: the floors and the verdict use the same knowledge.  On the Phase 8
    log, which cannot show how synthesis slows beside more of it, the tooltip does not
    promise "more synthesis concurrency" bare: it says what the report says (the run that
    would settle it)."""
    from viewer.analysis.headroom import headroom, remedy

    answer = open_and_answer(qtbot, window, PHASE8)
    text = window.whatif_panel.bars.tooltip_text("synthesis")
    room = headroom(answer.session, answer.result.measured.floors)
    assert room is not None and room.state == "unknown"
    said = remedy(room, REMEDY["synthesis"])
    flat = " ".join(text.split())
    assert f"When it binds, what helps: {said}." in flat
    assert "a run at pw 20 would" in said and REMEDY["synthesis"] not in flat
    assert max(len(line) for line in text.splitlines()) <= 90  # a tooltip does not wrap
