"""Job ids held as numpy's UTF-8 strings (``keys.TEXT``): read back as str, searched, written
to CSV, and copied from the reader's list without holding the ids twice."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from tests.analysis.builders import call, session
from viewer.analysis.search import find
from viewer.model import keys
from viewer.model.keys import TEXT, TEXT_STEP, text_array, text_take


def test_ids_are_text_and_read_back_as_str() -> None:
    s = session(call("73b04127-aaaa", 0, 0, 10, 0), call("Ünïcode-id", 0, 20, 30, 1))
    ids = s.jobs["job_id"]
    assert ids.dtype == TEXT
    assert ids.tolist() == ["73b04127-aaaa", "Ünïcode-id"] and isinstance(ids[1], str)
    assert find(s, "ün").rows.tolist() == [1]  # any case, beyond ASCII


@pytest.mark.parametrize(
    "values",
    [
        ["ok", "a\udcffb"],  # surrogate-escaped bytes: not UTF-8
        ["ok", None],
        ["ok", 7],
    ],
)
def test_what_utf8_cannot_hold_stays_objects(values) -> None:
    out = text_array(values)
    assert out.dtype == object and out.tolist() == values


def test_a_session_of_surrogate_ids_searches_as_before() -> None:
    s = session(call("a\udcffb-1", 0, 0, 10, 0), call("c-2", 0, 20, 30, 1))
    assert s.jobs["job_id"].dtype == object
    assert find(s, "c-").rows.tolist() == [1]


def test_take_in_slices_consuming_lets_each_entry_go_after_its_last_copy() -> None:
    n = 3 * TEXT_STEP + 17
    values = [f"job-{i}" for i in range(n)]
    rng = np.random.default_rng(5)
    rows = rng.permutation(n)
    rows = np.concatenate([rows, rows[:500]])  # some copied twice (a job in two sessions)
    kept = list(values)
    out = text_take(values, rows, consume=True)
    assert out.dtype == TEXT and out.tolist() == [kept[i] for i in rows.tolist()]
    assert all(v is None for v in values)  # every entry went, none before its last copy
    never = [f"x{i}" for i in range(10)]
    assert text_take(never, np.array([3, 3, 4]), consume=True).tolist() == ["x3", "x3", "x4"]
    assert never[3] is None and never[4] is None and never[0] == "x0"  # never copied: kept


def test_copying_ids_from_the_readers_list_holds_them_once(monkeypatch) -> None:
    """The ids as text while the list lets them go: above the list's strings, the copy
    takes the text's 16 bytes an id, 4 to know each id's last copy and a slice, not the
    whole text (~57 bytes an id)."""
    n = 1 << 19
    monkeypatch.setattr(keys, "TEXT_STEP", 1 << 12)
    tracemalloc.start()
    values = [f"{i:08x}-5d1e-4c3b-8a2f-0e9d8c7b6a5f" for i in range(n)]
    rows = np.arange(n)
    strings = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    out = text_take(values, rows, consume=True)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    text = held - (strings - 85 * n)  # what is left once the strings went: the text
    assert len(out) == n and all(v is None for v in values)
    assert peak - strings < 0.5 * text


def test_take_ids_of_every_row_in_order_is_the_array_itself() -> None:
    ids = text_array(["a", "b", "c"])
    assert keys.take_ids(ids, np.arange(3)) is ids
    assert keys.take_ids(ids, np.array([2, 0])).tolist() == ["c", "a"]
    assert keys.take_ids(["a", "b", "c"], np.array([1, 1])) == ["b", "b"]


def test_a_replay_plays_the_logs_ids_without_a_copy_of_them() -> None:
    """The plan's ids are the log's own array (a list of str beside it took 127 MB on
    1.5 M jobs), and the played run's session reads them."""
    from pathlib import Path

    from viewer.io import open_log
    from viewer.whatif import Knobs, plan
    from viewer.whatif.replay import predicted_session, replay

    log = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"
    s = open_log(log).sessions[0]
    pl = plan(s)
    assert pl.draws.job_ids is s.jobs["job_id"]
    played = predicted_session(pl, replay(pl, Knobs(gw=3)))
    assert played.jobs["job_id"].dtype == TEXT
    assert sorted(played.jobs["job_id"].tolist()) == sorted(s.jobs["job_id"].tolist())
