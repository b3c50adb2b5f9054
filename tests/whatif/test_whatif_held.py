"""What a what-if holds (issue 28 item 5): its figures, the played schedule, and a played
run's Session only while something else holds it; nothing keeps a plan past its use."""

from __future__ import annotations

import gc
import weakref
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest

from viewer.io import open_log
from viewer.sim.model import run
from viewer.whatif import Knobs, plan, what_if
from viewer.whatif.load import intervals
from viewer.whatif.predict import Throughput
from viewer.whatif.replay import NARROW_MS, held, played_intervals, predicted_session, replay

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


CONSUMED = [
    ("phase8_pw10_5sectors.log", Knobs(gw=1, kernel_ms=1824)),
    ("two_gpus.log", Knobs(gw=3)),
    ("budget_gated.log", Knobs(budget_gib=300)),
    ("monolithic_mixed.log", Knobs(pw=2, jobs=9)),
    ("phase7_pw20.log", Knobs()),
]


@pytest.mark.parametrize(("name", "knobs"), CONSUMED)
def test_a_consumed_session_gives_the_same_what_if(name: str, knobs: Knobs) -> None:
    """``consume`` (the command line's) lets the log's tables go before the replays play,
    and changes no figure, note or band."""
    from viewer.export.whatif import whatif_dict

    path = SAMPLES / name
    kept = open_log(path).sessions[0]
    w = what_if(kept, knobs)
    given = [open_log(path).sessions[0]]
    c = what_if(given.pop(), knobs, consume=True)
    assert whatif_dict(c, path, c.measured.session) == whatif_dict(w, path, kept)
    assert c.memory_gib(c.measured) == w.memory_gib(w.measured)
    assert len(c.measured.session.partitions) == 0  # its tables are gone


def test_a_consumed_session_is_let_go_before_the_replays_play(monkeypatch) -> None:
    from viewer.whatif import predict

    session = open_log(SAMPLES / "phase8_pw10_5sectors.log").sessions[0]
    held = weakref.ref(session.partitions)
    seen = []
    replay = predict.replay

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen.append(held() is None)
        return replay(*args, **kwargs)

    monkeypatch.setattr(predict, "replay", spy)
    given = [session]
    del session
    what_if(given.pop(), Knobs(gw=1), consume=True)
    assert seen and all(seen)


def _dead_as_replays_start(monkeypatch, refs: list) -> list[list[bool]]:  # noqa: ANN001
    """Filled as each replay of a what-if starts (``predict.replay`` spied): whether each
    of ``refs`` (weak references) is dead by then."""
    from viewer.whatif import predict

    seen: list[list[bool]] = []
    replay = predict.replay

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        gc.collect()
        seen.append([ref() is None for ref in refs])
        return replay(*args, **kwargs)

    monkeypatch.setattr(predict, "replay", spy)
    return seen


def test_a_consumed_logs_columns_are_let_go_before_the_replays_play(monkeypatch) -> None:
    """Not only the session's tables: the log's own columns they are rows of (the bare
    session a consumed what-if keeps once held them all through its empty tables: 136 MB
    at 1.5 M one-call jobs)."""

    timeline = open_log(SAMPLES / "phase8_pw10_5sectors.log")
    session = timeline.sessions[0]
    assert session.partitions._base is not None  # rows of the log's columns
    columns = [weakref.ref(session.partitions._base[name]) for name in ("gpu_start", "job")]
    columns.append(weakref.ref(session.jobs._base["job_id"]))
    seen = _dead_as_replays_start(monkeypatch, columns)
    given = [session]
    del session, timeline
    what_if(given.pop(), Knobs(gw=1), consume=True)
    assert seen and all(all(dead) for dead in seen)


def test_a_take_of_a_sessions_table_holds_none_of_the_logs_columns() -> None:
    from viewer.model.frame import Frame

    log = Frame({"a": np.arange(10.0), "b": np.arange(10)})
    part = log.rows_of(2, 8)
    ref = weakref.ref(log._cols["a"])
    rows = part.take(np.array([0, 3]))
    empty = part.take(np.zeros(0, np.intp))
    del log, part
    gc.collect()
    assert ref() is None
    assert rows["a"].tolist() == [2.0, 5.0] and len(empty) == 0 and empty.columns == ["a", "b"]


def _wide(d):
    """``d`` with every column a full int64 array (as plans held them before ``held``)."""
    skip = ("job_ids", "job_kind")
    return replace(
        d,
        **{f.name: np.array(getattr(d, f.name), np.int64) for f in fields(d) if f.name not in skip},
    )


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")))
def test_a_plan_holds_its_whole_ms_compacted_and_plays_them_as_they_were(name: str) -> None:
    for s in open_log(SAMPLES / name).sessions:
        try:
            pl = plan(s)
        except ValueError:
            continue
        for f in fields(pl.draws):
            col = getattr(pl.draws, f.name)
            if f.name not in ("job_ids", "job_kind"):
                # int32, or one value held once (stride 0)
                assert col.dtype == np.int32 or col.strides == (0,), f.name
        assert pl.rows.dtype == np.int32
        a, b = run(pl.cfg, pl.draws), run(pl.cfg, _wide(pl.draws))
        for k in ("synth_start", "queued", "start", "acquire", "end", "worker"):
            assert np.array_equal(getattr(a, k), getattr(b, k)), k
        assert pl.draws.kernel.sum() == _wide(pl.draws).kernel.sum()  # summed in int64


def test_a_plan_keeps_int64_where_its_ms_lie_past_2_to_the_28() -> None:
    pl = plan(open_log(SAMPLES / "phase8_pw10_5sectors.log").sessions[0])
    late = _wide(pl.draws)
    late = held(replace(late, arrival=late.arrival + NARROW_MS))
    assert late.arrival.dtype == np.int64 and late.synth.dtype == np.int32
    assert np.array_equal(late.arrival, pl.draws.arrival.astype(np.int64) + NARROW_MS)


@pytest.mark.parametrize(("name", "knobs"), CONSUMED)
def test_a_played_runs_intervals_are_its_sessions_without_the_session(name, knobs) -> None:
    """``played_intervals``: per stage, the spans ``load.intervals`` reads from the played
    run's Session (its rows sorted otherwise), from the schedule alone."""
    pl = plan(open_log(SAMPLES / name).sessions[0])
    s = replay(pl, knobs)
    got, want = played_intervals(s), intervals(predicted_session(pl, s))
    assert got.keys() == want.keys() == {"synth", "prep", "kernel", "post"}
    for stage, (a, b) in want.items():
        pairs = sorted(zip(a.tolist(), b.tolist(), strict=True))
        assert sorted(zip(*(x.tolist() for x in got[stage]), strict=True)) == pairs, stage


def test_a_consuming_what_if_lets_the_unchanged_replay_go_and_keeps_its_figures() -> None:
    """The command line's what-if holds one played schedule, not two: the baseline keeps its
    figures, facts and memory, and says why it cannot give its run again."""
    path = SAMPLES / "budget_gated.log"
    kept = what_if(open_log(path).sessions[0], Knobs(budget_gib=300))
    given = [open_log(path).sessions[0]]
    c = what_if(given.pop(), Knobs(budget_gib=300), consume=True)
    assert c.baseline.run is None and kept.baseline.run is not None
    assert c.baseline.facts == kept.baseline.facts and c.baseline.facts.budget_gated
    assert c.memory_gib(c.baseline) == kept.memory_gib(kept.baseline)
    assert c.baseline.floors == kept.baseline.floors
    with pytest.raises(ValueError, match="let go"):
        _ = c.baseline.session
    assert c.scenario.session is not None  # the scenario's schedule stays: --out writes it
    unchanged = what_if(open_log(path).sessions[0], Knobs(), consume=True)
    assert unchanged.baseline.run is not None  # the scenario is the unchanged replay


def test_a_plan_lets_go_of_the_tables_it_made_and_keeps_the_callers() -> None:
    """The plan's own whole-session tables go once read; those a window had made stay."""
    from viewer.analysis.cache import made
    from viewer.analysis.floors import arrivals
    from viewer.analysis.intervals import busy_blocks, calls
    from viewer.analysis.stages import stages

    mine = {f.__wrapped__ for f in (stages, calls, busy_blocks, arrivals)}
    fresh = open_log(SAMPLES / "two_gpus.log").sessions[0]
    pl = plan(fresh)
    assert not made(fresh) & mine
    window = open_log(SAMPLES / "two_gpus.log").sessions[0]
    stages(window), calls(window)  # the window's own, made before
    again = plan(window)
    assert {stages.__wrapped__, calls.__wrapped__} <= made(window)
    assert not made(window) & {busy_blocks.__wrapped__, arrivals.__wrapped__}
    assert again.cfg == pl.cfg and np.array_equal(again.rows, pl.rows)


def test_a_consumed_what_if_lets_the_unchanged_replay_go_before_the_scenario_plays(
    monkeypatch,  # noqa: ANN001
) -> None:
    """Its figures are all a changed what-if reads of the unchanged replay: the schedule
    (1.5 M calls: 66 MB) is not held beside the scenario's replay."""
    from viewer.whatif import predict

    played, alive = [], []
    replay = predict.replay

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        gc.collect()
        alive.append([ref() is not None for ref in played])  # the earlier replays, as this plays
        out = replay(*args, **kwargs)
        played.append(weakref.ref(out))
        return out

    monkeypatch.setattr(predict, "replay", spy)
    given = [open_log(SAMPLES / "phase8_pw10_5sectors.log").sessions[0]]
    what_if(given.pop(), Knobs(gw=1), consume=True)
    assert len(alive) >= 2 and alive[1] == [False]  # the scenario's: the unchanged one gone


SWEPT = [
    ("h200_shared", ["base1", "pw4", "pw16", "pw32", "gw1", "k05"], {}),
    ("h200_fourth", ["base4a", "k025", "k05c", "k15"], {"knob": "kernel"}),
    ("h200_shared", ["base1"], {"knob": "gw", "values": [1.0, 3.0]}),
    ("../../../sample_logs", ["damaged"], {"values": [2.0, 6.0]}),  # two sessions, the first swept
]


def _runs(folder: str, names: list[str]) -> list:
    from viewer.whatif.sweep import read_runs

    data = Path(__file__).resolve().parent / "data" / folder
    return read_runs([next(data.glob(f"{n}.log*")) for n in names], None, str)


@pytest.mark.parametrize(("folder", "names", "how"), SWEPT)
def test_a_consumed_sweep_gives_the_same_sweep(folder: str, names: list, how: dict) -> None:
    """``consume`` (the command line's, the window's) lets each log's tables go once its
    figures are taken, and changes no row, band, note or run named."""
    from viewer.export.sweep import sweep_dict
    from viewer.whatif.sweep import sweep

    kept = sweep(_runs(folder, names), **how)
    runs = _runs(folder, names)
    numbers = {r.name: r.session.number for r in runs}
    consumed = sweep(runs, **how, consume=True)
    assert runs == []  # the caller's list is emptied: it holds no log
    assert sweep_dict(consumed) == sweep_dict(kept)
    assert consumed.base in [r.run for r in consumed.rows]  # the base run, as the rows name it
    swept = {r.run.name: r.run for r in consumed.rows if r.run} | {
        r.name: r for r, _ in consumed.apart
    }
    assert all(len(r.session.partitions) == 0 for r in swept.values())  # their tables gone
    assert {name: r.session.number for name, r in swept.items()} == numbers


def test_a_consumed_sweep_lets_every_log_go_before_the_base_run_replays(monkeypatch) -> None:  # noqa: ANN001
    """Every log, swept or set apart, its session and its columns (a sweep of 1.5 M one-call
    jobs held the log's ~370 MB beside each value's played run: 1.25x item 9's bound)."""
    from viewer.whatif.sweep import sweep

    runs = _runs("h200_shared", ["base1", "pw4", "pw16", "gw1", "k05"])
    refs = [weakref.ref(r.session) for r in runs]
    refs += [weakref.ref(r.session.partitions._base["gpu_start"]) for r in runs]
    refs += [weakref.ref(r.session.jobs._base["job_id"]) for r in runs]
    seen = _dead_as_replays_start(monkeypatch, refs)
    s = sweep(runs, consume=True)
    assert [Path(r.name).name for r, _ in s.apart] == ["gw1.log.gz", "k05.log.gz"]
    assert seen and all(all(dead) for dead in seen)


def test_a_consumed_sweep_of_a_later_session_keeps_its_number(tmp_path) -> None:  # noqa: ANN001
    """A log of two daemon runs whose second is swept: the bare session is that one."""
    import gzip

    from viewer.export.sweep import sweep_dict
    from viewer.whatif.sweep import read_runs, sweep

    data = Path(__file__).resolve().parent / "data" / "h200_shared"
    both = tmp_path / "both.log"
    both.write_bytes(
        b"".join(gzip.decompress((data / f"{n}.log.gz").read_bytes()) for n in ("pw32", "base1"))
    )
    paths = [both, data / "pw4.log.gz", data / "pw16.log.gz"]
    kept = sweep(read_runs(paths, None, str))
    consumed = sweep(read_runs(paths, None, str), consume=True)
    assert sweep_dict(consumed) == sweep_dict(kept)
    row = next(r for r in consumed.rows if r.run and r.run.name == str(both))
    assert row.run.session.number == 2 and len(row.run.session.partitions) == 0
    assert any("both.log: 2 daemon sessions; session 2" in n for n in consumed.notes)


def test_a_sweep_of_runs_given_twice_or_as_a_tuple_is_the_same_sweep() -> None:
    """The command and the window give a list of distinct runs; the function takes any."""
    from viewer.export.sweep import sweep_dict
    from viewer.whatif.sweep import sweep

    names = ["base1", "pw4", "pw16"]
    kept = sweep_dict(sweep(_runs("h200_shared", names)))
    runs = _runs("h200_shared", names)
    assert sweep_dict(sweep(tuple(runs), consume=True)) == kept
    two = _runs("../../../sample_logs", ["damaged"])
    twice = [two[0], two[0]]
    assert sweep_dict(sweep(twice, values=[3.0], consume=True)) == sweep_dict(
        sweep(_runs("../../../sample_logs", ["damaged"]) * 2, values=[3.0])
    )


def test_a_taken_log_without_its_unchanged_replay_plays_changed_knobs_only() -> None:
    from viewer.whatif.predict import play, take

    given = [open_log(SAMPLES / "phase8_pw10_5sectors.log").sessions[0]]
    t = take(given.pop(), consume=True, keep_base=False)
    assert t.base is None and t.baseline.run is None  # its figures kept, its schedule not
    assert play(t, Knobs(gw=1)).scenario.s_per_proof is not None
    with pytest.raises(ValueError, match="no knob changed"):
        play(t, Knobs())
