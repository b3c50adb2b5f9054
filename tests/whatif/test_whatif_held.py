"""What a what-if holds (issue 28 item 5): its figures, the played schedule, and a played
run's Session only while something else holds it; nothing keeps a plan past its use."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from viewer.io import open_log
from viewer.whatif import Knobs, plan, what_if
from viewer.whatif.predict import Throughput

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.fixture(scope="module")
def session():
    return open_log(SAMPLES / "phase8_pw10_5sectors.log").sessions[0]


def test_a_played_session_is_made_when_asked_and_kept_while_held(session) -> None:
    w = what_if(session, Knobs(gw=1, kernel_ms=1824))
    played = w.scenario.session
    assert w.scenario.session is played  # the same run while it is held
    assert len(played.partitions) == len(session.partitions)
    assert w.scenario.facts == played.facts
    made = weakref.ref(played)
    del played
    assert made() is None  # no cycle: freed at once, not by the collector
    again = w.scenario.session  # made anew, the same figures
    assert w.scenario.s_per_proof == pytest.approx(39.839, abs=1e-3)
    assert len(again.partitions) == len(session.partitions)


def test_the_ends_are_their_throughput_alone(session) -> None:
    w = what_if(session, Knobs(gw=1, kernel_ms=1824))
    for end in (w.late, w.bounded, w.swapped):
        assert end is None or isinstance(end, Throughput)
    assert w.memory_gib(w.scenario) == w.scenario.memory_gib(w.memory_model)


def test_nothing_keeps_a_plan_or_its_runs_past_their_use(session) -> None:
    pl = plan(session)
    w = what_if(session, Knobs(pw=3), pl=pl)
    assert what_if(session, Knobs(pw=4), pl=pl).baseline is w.baseline  # shared per plan
    held = weakref.ref(pl), weakref.ref(w), weakref.ref(w.schedule)
    del pl, w
    gc.collect()
    assert [r() for r in held] == [None, None, None]
