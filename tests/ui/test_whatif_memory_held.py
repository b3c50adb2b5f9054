"""What the What if dock keeps while knobs are edited (issue 28 item 5): only the answer on
screen, no played run's Session unless the compare window shows it, and "Show prediction
beside" shows the figures the dock does."""

from __future__ import annotations

import weakref
from pathlib import Path

import pytest

from tests.ui.test_whatif_panel import window  # noqa: F401  (the What if window)
from viewer.ui import MainWindow
from viewer.whatif import predict, replay

PHASE8 = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"
TIMEOUT = 30000
#: Knob edits in turn, each kept, as a user tries one thing after another.
EDITS = (("pw", 12), ("gw", 1), ("kernel", 1824), ("gpus", 2), ("pw", 14), ("gw", 3))


class Made(weakref.WeakSet):
    """Sessions held weakly (those alive), and how many were ever added (``made``)."""

    made = 0

    def add(self, item) -> None:
        self.made += 1
        super().add(item)


@pytest.fixture
def played(monkeypatch) -> Made:
    """Every played run's Session made from now on."""
    made = Made()
    real = replay.played_session

    def counted(*args, **kwargs):
        session = real(*args, **kwargs)
        made.add(session)
        return session

    monkeypatch.setattr(replay, "played_session", counted)
    monkeypatch.setattr(predict, "played_session", counted)
    return made


def edit_in_turn(qtbot, win: MainWindow) -> list[weakref.ref]:
    """Open the sample, wait for the dock's first answer, then make each edit of EDITS and
    wait for its answer; a weak reference to every answer's what-if."""
    panel = win.whatif_panel
    answers: list[weakref.ref] = []
    panel.runner.answer_ready.connect(lambda a: answers.append(weakref.ref(a.result)))
    with qtbot.waitSignal(win.timeline_loaded, timeout=TIMEOUT):
        win.open_paths([PHASE8])
    qtbot.waitUntil(lambda: panel.answer() is not None, timeout=TIMEOUT)
    for name, value in EDITS:
        before = panel.answer()
        panel.spins[name].setValue(value)
        qtbot.waitUntil(
            lambda b=before: panel.answer() is not None and panel.answer() is not b,
            timeout=TIMEOUT,
        )
    panel.runner.wait()
    qtbot.wait(10)  # the last answer's queued signals delivered
    return answers


def test_edits_keep_only_the_answer_on_screen(qtbot, window, played) -> None:  # noqa: F811
    answers = edit_in_turn(qtbot, window)
    panel = window.whatif_panel
    assert len(answers) >= len(EDITS) + 1
    # Without a collector pass: what an answer made is freed once it is replaced (a cycle
    # would hold a played run's tables until the collector ran, ~100 MB at 10^6 events).
    alive = [r() for r in answers if r() is not None]
    assert alive == [panel.answer().result]
    assert played.made >= len(EDITS)  # each edit played a run and made its Session...
    assert len(played) == 0  # ...for its figures only: none is kept for the dock
    assert panel.answer().knobs.changed() == {"gw": 3, "pw": 14, "kernel_ms": 1824, "gpus": 2}


def test_prediction_beside_holds_one_played_run_with_the_docks_figures(
    qtbot,
    window,  # noqa: F811
    played,
) -> None:
    edit_in_turn(qtbot, window)
    panel = window.whatif_panel
    w = panel.answer().result
    with qtbot.waitSignal(panel.compare_opened, timeout=TIMEOUT) as opened:
        panel.compare_button.click()
    cw = opened.args[0]
    with qtbot.waitSignal(cw.comparison_ready, timeout=TIMEOUT) as ready:
        pass
    a, b = cw.sessions()
    assert a is window.view.session()
    assert list(played) == [b]  # the one the compare window shows
    assert b is w.scenario.session  # asked again, the same run
    res = ready.args[0]
    row = res.whole.row
    assert float(panel.figures["predicted"].number.text()) == round(w.scenario.s_per_proof, 1)
    assert row("measured_s_per_proof").b == pytest.approx(w.scenario.s_per_proof, rel=1e-9)
    assert row("measured_s_per_proof").a == pytest.approx(w.measured.s_per_proof, rel=1e-9)
    assert row("efficiency").b == pytest.approx(w.scenario.gpu_efficiency, rel=1e-9)
    floors = w.scenario.floors.values()
    assert row("worker_floor_s").b == pytest.approx(floors["worker"], rel=1e-9)
    assert row("synthesis_floor_s").b == pytest.approx(floors["synthesis"], rel=1e-9)
    cw.close()
