"""A sweep lines up runs of one machine by the knob they differ in (``viewer.whatif.sweep``).

The runs are real: a cuzk-shaped pipeline on two H200 hosts (``shared/real_h200``, and the
second host's five runs bundled in ``data/h200_second``), so the best region asserted is
what those machines measured.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from tests.real_runs import REAL as REAL_RUNS
from viewer.io import open_log
from viewer.io.facts import facts
from viewer.sim.model import SimConfig, simulate
from viewer.sim.writer import WriteOptions, write
from viewer.whatif.sweep import (
    MAX_RUNS,
    MAX_VALUES,
    REGION,
    Run,
    SweepError,
    check_value,
    choose_knob,
    default_values,
    knob_values,
    sweep,
)

SECOND = Path(__file__).resolve().parent / "data" / "h200_second"
REAL = REAL_RUNS  # ../shared/real_h200, copied into the tests' data


def _run(path: Path, stated: dict | None = None) -> Run:
    session = open_log(path).sessions[0]
    f = facts(path)
    said = (
        stated
        if stated is not None
        else {"pw": getattr(f, "pw", None), "gw": getattr(f, "gw", None)}
    )
    return Run(path.name, session, knob_values(session, said), cpus=f.cpus)


@pytest.fixture(scope="module")
def second() -> list[Run]:
    return [_run(p) for p in sorted(SECOND.glob("*.log.gz"))]


def test_the_second_hosts_runs_sweep_partition_workers(second) -> None:  # noqa: ANN001
    s = sweep(second)
    assert s.knob == "pw"
    assert [r.name for r, _ in s.apart] == ["gw3.log.gz"]
    assert "gw 3" in s.apart[0][1]
    assert s.base.name == "base8.log.gz"  # the middle of pw 6, 8, 12, 24
    measured = {r.value: r.s_per_proof for r in s.rows if r.run}
    assert sorted(measured) == [6, 8, 12, 24]
    assert s.basis == "measured"
    assert s.best.value == min(measured, key=measured.get) == 12
    lo, hi = s.region
    assert (lo, hi) == (8, 12)
    assert all(measured[v] <= measured[12] * (1 + REGION) for v in (8, 12))
    # Half-way values are predicted only, between the runs' values.
    predicted_only = [r.value for r in s.rows if r.run is None]
    assert predicted_only and all(6 < v < 24 for v in predicted_only)
    # The base run predicted at its own value is its replay: its measured figure.
    base = next(r for r in s.rows if r.run is s.base)
    assert base.predicted == pytest.approx(base.s_per_proof, rel=0.01)
    # Memory grows with the partitions held at once.
    uppers = [r.memory_gib[1] for r in s.rows]
    assert uppers == sorted(uppers)


def test_the_first_hosts_runs_name_pw_8_to_16_best() -> None:
    """issue 26: `sweep` over shared/real_h200 names pw 8-16 as the region of the best
    s/proof on that machine (measured: 2.48 at pw 8, 2.57 at pw 16, 2.66 at pw 32)."""
    runs = [_run(p) for p in sorted(REAL.glob("*.log.gz"))]
    s = sweep(runs)
    assert s.knob == "pw"
    assert {r.name for r, _ in s.apart} == {"gw1.log.gz", "k05.log.gz"}
    assert s.best.value == 8
    assert s.region == (8, 16)


def test_the_ram_limit_picks_the_best_that_fits(second) -> None:  # noqa: ANN001
    free = sweep(second)
    best_hi = free.best.memory_gib[1]
    s = sweep(second, ram_gib=best_hi - 1)
    fits = s.best_within_ram
    assert fits is not None and fits.memory_gib[1] <= best_hi - 1
    assert fits.value < s.best.value
    assert sweep(second, ram_gib=1.0).best_within_ram is None
    assert free.best_within_ram is None  # no RAM given


def test_values_past_the_runs_are_predicted_and_marked_beyond(second) -> None:  # noqa: ANN001
    s = sweep(second, values=[4, 48])
    far = {r.value: r for r in s.rows if r.run is None}
    assert set(far) == {4, 48}
    assert far[48].beyond and far[4].beyond
    assert far[48].band is not None and far[48].band[0] < far[48].band[1]


def test_a_chosen_knob_sets_apart_runs_that_differ_in_another(second) -> None:  # noqa: ANN001
    with pytest.raises(SweepError, match="do not differ in GPU workers"):
        sweep([r for r in second if r.name != "gw3.log.gz"], knob="gw")
    s = sweep(second, knob="gw", values=[1, 2, 3])
    assert {r.name for r, _ in s.apart} == {"pw6.log.gz", "pw12.log.gz", "pw24.log.gz"}


def test_one_log_needs_values(second) -> None:  # noqa: ANN001
    with pytest.raises(SweepError, match="one log only"):
        sweep(second[:1])
    s = sweep(second[:1], values=[4, 16])
    assert [r.value for r in s.rows] == [4, 8, 16]  # the log's own value is measured
    assert [r.run is s.base for r in s.rows] == [False, True, False]
    assert s.rows[0].beyond and s.rows[2].beyond


def test_logs_of_different_machines_are_refused(second) -> None:  # noqa: ANN001
    other = replace(second[1], cpus=64, name="other.log")
    with pytest.raises(SweepError, match="different machines.*cpus=64"):
        sweep([second[0], other])


def test_runs_that_differ_in_nothing_are_refused(second) -> None:  # noqa: ANN001
    twin = replace(second[0], name="twin.log")
    with pytest.raises(SweepError, match="do not differ"):
        sweep([second[0], twin])


@pytest.mark.parametrize("bad", [math.nan, math.inf, 1e300, 0, -4, 2.5, 1 << 40])
def test_bad_values_are_refused_with_the_range(bad) -> None:  # noqa: ANN001
    with pytest.raises(SweepError, match="--values: pw must be a whole number from 1"):
        check_value("pw", bad)


def test_too_many_values_are_refused(second) -> None:  # noqa: ANN001
    with pytest.raises(SweepError, match=f"at most {MAX_VALUES}"):
        sweep(second, values=list(range(1, MAX_VALUES + 2)))


def test_default_values_fill_between_the_runs() -> None:
    assert default_values("pw", [4, 8, 32]) == [4, 6, 8, 16, 32]
    assert default_values("gw", [1, 2]) == [1, 2]  # nothing whole half-way
    assert default_values("kernel", [1000.0, 2000.0]) == [1000.0, 1500.0, 2000.0]


def test_simulated_runs_without_stated_settings_are_read_from_what_they_show(tmp_path) -> None:  # noqa: ANN001
    """No config line: pw is the most syntheses at once, gw the workers per GPU."""
    runs = []
    for pw in (4, 8):
        path = tmp_path / f"pw{pw}.log"
        cfg = SimConfig(
            sectors=4, partitions=8, pw=pw, gw=2, synth_ms=4000, kernel_ms=500, prep_ms=200
        )
        write(simulate(cfg), path, WriteOptions())
        runs.append(_run(path, stated={}))
    assert [r.values["pw"] for r in runs] == [4, 8]
    assert all(r.values["gw"] == 2 for r in runs)
    assert choose_knob(runs) == "pw"
    s = sweep(runs)
    assert {r.value for r in s.rows} >= {4, 8}


def test_budget_gated_runs_sweep_the_budget_and_their_workers_follow_it(tmp_path) -> None:  # noqa: ANN001
    """Runs of a budget-gated daemon differ in the budget and, through it, in the synthesis
    workers: the sweep is over the budget (the workers are not a second knob)."""
    from viewer.cli import main
    from viewer.io import open_log as read
    from viewer.whatif.sweep import run_of

    runs = []
    for b in (160, 200, 260, 330):
        path = tmp_path / f"b{b}.log"
        assert (
            main(
                [
                    "simulate",
                    "--budget-gib",
                    str(b),
                    "--sectors",
                    "6",
                    "--seed",
                    "3",
                    "-o",
                    str(path),
                ]
            )
            == 0
        )
        runs.append(run_of(path.name, read(path)))
    assert len({r.values["pw"] for r in runs}) == 4  # the workers follow the budget
    s = sweep(runs, ram_gib=300)
    assert s.knob == "budget" and not s.apart
    for r in s.rows:
        if r.s_per_proof is not None:
            assert r.predicted == pytest.approx(r.s_per_proof, rel=0.05), r.value
    assert s.best.value in (260, 330)
    assert s.best_within_ram is not None and s.best_within_ram.memory_gib[1] <= 300


def test_runs_of_one_setting_with_values_predict_as_one_log_does(second) -> None:  # noqa: ANN001
    twin = replace(second[0], name="twin.log")
    s = sweep([second[0], twin], values=[4, 16])
    assert s.knob == "pw"
    assert {r.value for r in s.rows} == {4, 8, 16}


def test_many_runs_of_one_setting_are_named_in_one_short_line(second) -> None:  # noqa: ANN001
    twins = [replace(second[0], name=f"r{i}.log") for i in range(40)]
    with pytest.raises(SweepError) as exc:
        sweep(twins)
    msg = str(exc.value)
    assert "r0.log, r1.log" in msg and "and 34 more (pw 8, gw 2" in msg
    assert msg.count("pw 8") == 1 and len(msg) < 400


def test_too_many_runs_are_refused(second) -> None:  # noqa: ANN001
    twins = [replace(second[0], name=f"r{i}.log") for i in range(MAX_RUNS + 1)]
    with pytest.raises(SweepError, match=f"{MAX_RUNS + 1} logs: a sweep takes at most {MAX_RUNS}"):
        sweep(twins, values=[4, 16])


def test_no_run_left_says_which_runs_were_set_apart_and_why(second) -> None:  # noqa: ANN001
    """Runs that each differ in two knobs, or a knob none of them states: the message names
    the runs set apart, not only 'all pw 8' or 'no run is left'."""
    pw6, base8 = (next(r for r in second if r.name == n) for n in ("pw6.log.gz", "base8.log.gz"))
    other = replace(pw6, values={**pw6.values, "gw": 3.0})
    with pytest.raises(SweepError, match=r"set apart: pw6\.log\.gz: differs in gw 3"):
        sweep([base8, other], knob="pw")
    with pytest.raises(SweepError, match="no run is left.*set apart: .*budget is neither stated"):
        sweep(second, knob="budget")
