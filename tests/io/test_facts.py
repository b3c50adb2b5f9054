"""What a log's head states: a harness's settings, a budget-gated daemon's budget and the
concurrency it logged, read with and without ANSI codes, and never a number past belief."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.real_runs import REAL as REAL_RUNS
from viewer.io.facts import Facts, facts, from_text

REAL = REAL_RUNS  # ../shared/real_h200, copied into the tests' data
T = "2026-02-19T01:00:00.000640Z  INFO cuzk_core::engine: "
BUDGET = T + "memory budget initialized total_budget_gib=251\n"
WORKERS = (
    T + "initializing GPU workers num_gpus=2 gpu_workers_per_device=2 total_workers=4 gpus=[0, 1]\n"
)
PIPELINE = (
    T + "starting pipeline: synthesis task + GPU workers (budget-gated) configured_lookahead=1 "
    "max_partitions_in_budget=17 effective_lookahead=17 synth_worker_count=17 num_gpus=4\n"
)
START = T + "cuzk-daemon starting\n"
EVENT = "TIMELINE,40,SYNTH_START,e2c9089f-1a1b-437a-a129-c94346a6e428,partition=1\n"


def ansi(line: str) -> str:
    """``line`` as tracing writes it with colours: each field name italic, ``=`` dimmed."""
    head, _, fields = line.partition(") ") if "(budget-gated)" in line else ("", "", line)
    out = []
    for tok in fields.rstrip("\n").split(" "):
        name, eq, value = tok.partition("=")
        out.append(f"\x1b[3m{name}\x1b[0m\x1b[2m=\x1b[0m{value}" if eq else tok)
    return (head + ") " if head else "") + " ".join(out) + "\n"


def test_a_budget_gated_head_plain_and_coloured() -> None:
    for text in (START + BUDGET + WORKERS + PIPELINE, ansi(START + BUDGET + WORKERS + PIPELINE)):
        f = from_text(text.encode())
        assert f.budget_gated
        assert f.total_budget_gib == 251
        assert f.max_partitions_in_budget == 17
        assert f.effective_lookahead == 17
        assert f.synth_worker_count == 17
        assert f.num_gpus == 2  # from "initializing GPU workers", not the pipeline line's 4
        assert f.gpu_workers_per_device == 2
        assert f.pw is None and f.gw is None


def test_colour_codes_around_every_field_are_read() -> None:
    line = ansi(BUDGET).replace("memory budget initialized", "\x1b[1mmemory budget initialized")
    assert "\x1b[3mtotal_budget_gib\x1b[0m" in line
    assert from_text(line.encode()).total_budget_gib == 251


def test_a_harness_config_line() -> None:
    line = T + "realpipe config pw=8 gw=2 jobs=12 parts=8 kernel_steps=110 kernel_scale=0.5 cpus=16"
    f = from_text(line.encode())
    assert (f.pw, f.gw, f.kernel_scale, f.cpus) == (8, 2, 0.5, 16)
    assert not f.budget_gated and f.total_budget_gib is None


def test_the_real_runs_state_their_settings() -> None:
    assert facts(REAL / "base1.log.gz") == Facts(cpus=16, pw=8, gw=2, kernel_scale=1.0)
    assert facts(REAL / "k05.log.gz").kernel_scale == 0.5
    assert facts(REAL / "pw32.log.gz").pw == 32


@pytest.mark.parametrize(
    "value",
    [
        "1000000000000000000000000000000",  # 10^30
        "99999999999999999999999999999999999999999999999999",
        "-200",
        "NaN",
        "nan",
        "inf",
        "2.5e3",
        "1_000",
        "0",
        "",
        "0x100",
    ],
)
def test_a_budget_past_belief_is_not_believed(value: str) -> None:
    f = from_text((START + T + f"memory budget initialized total_budget_gib={value}\n").encode())
    assert f.total_budget_gib is None
    assert f.budget_gated  # the line says the daemon is budget-gated, not how big


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-1.0", "1e400", "0", "abc"])
def test_a_kernel_scale_past_belief_is_not_believed(value: str) -> None:
    f = from_text(f"realpipe config pw=8 kernel_scale={value} cpus=16\n".encode())
    assert f.kernel_scale is None
    assert f.pw == 8 and f.cpus == 16


def test_worker_counts_past_belief_are_not_believed() -> None:
    line = PIPELINE.replace("synth_worker_count=17", "synth_worker_count=4294967297")
    line = line.replace("max_partitions_in_budget=17", "max_partitions_in_budget=-3")
    f = from_text(line.encode())
    assert f.synth_worker_count is None and f.max_partitions_in_budget is None
    assert f.effective_lookahead == 17


def test_only_the_first_daemon_runs_head_is_read() -> None:
    # A budget line in a later session only: the first run was not budget-gated.
    later = START + T + "realpipe config pw=8 cpus=16\n" + EVENT + START + BUDGET + PIPELINE
    f = from_text(later.encode())
    assert f.total_budget_gib is None and not f.budget_gated
    assert f.pw == 8 and f.cpus == 16
    # A second daemon start before any TIMELINE line (the first run did no work).
    f = from_text((START + BUDGET + START + BUDGET.replace("251", "64")).encode())
    assert f.total_budget_gib == 251
    f = from_text((START + START + BUDGET).encode())
    assert f.total_budget_gib is None


def test_the_first_value_stated_wins_and_journald_prefixes_are_read() -> None:
    j = "Feb 19 01:00:00 host cuzk-daemon[4242]: "
    text = j + START + j + BUDGET + j + BUDGET.replace("251", "64") + j + EVENT
    assert from_text(text.encode()).total_budget_gib == 251


def test_a_file_read_compressed(tmp_path: Path) -> None:
    p = tmp_path / "gated.log.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(ansi(START + BUDGET + WORKERS + PIPELINE) + EVENT)
    assert facts(p).total_budget_gib == 251
    assert facts(tmp_path / "missing.log") == Facts()


def _run(budget: str, offset: int = 0) -> str:
    """A daemon run's head and two GPU calls of one job."""
    job = "e2c9089f-1a1b-437a-a129-c94346a6e428"
    calls = []
    for p in (0, 1):
        t = offset + 40 + p
        calls += [
            f"TIMELINE,{t},SYNTH_START,{job},partition={p}",
            f"TIMELINE,{t + 100},SYNTH_END,{job},partition={p},synth_ms=100",
            f"TIMELINE,{t + 101},GPU_QUEUE,{job},partition={p}",
            f"TIMELINE,{t + 300 * p + 102},GPU_START,{job},worker=0,partition={p}",
            f"TIMELINE,{t + 300 * p + 390},GPU_END,{job},worker=0,partition={p},gpu_ms=288",
        ]
    return START + BUDGET.replace("251", budget) + PIPELINE + "\n".join(calls) + "\n"


def test_the_reader_gives_the_first_session_its_facts(tmp_path: Path) -> None:
    from viewer.io import open_log

    one = tmp_path / "one.log"
    one.write_text(ansi(_run("251")))
    assert open_log(one).sessions[0].facts.total_budget_gib == 251
    # Two daemon runs: only the first's head is read, and only the first session holds it.
    two = tmp_path / "two.log"
    two.write_text(_run("251") + _run("64"))
    sessions = open_log(two).sessions
    assert len(sessions) == 2
    assert sessions[0].facts.total_budget_gib == 251
    assert sessions[0].facts.synth_worker_count == 17
    assert sessions[1].facts == Facts()


def test_a_followed_log_gives_its_first_session_its_facts(tmp_path: Path) -> None:
    from viewer.io.follow import LogFollower

    path = tmp_path / "growing.log"
    path.write_text(_run("251"))
    f = LogFollower(path)
    try:
        timeline = f.poll()
        assert timeline is not None
        assert timeline.sessions[0].facts.total_budget_gib == 251
    finally:
        f.close()


def test_every_run_of_a_file_has_its_machines_threads_and_only_the_first_its_settings(
    tmp_path: Path,
) -> None:
    """One host writes every run of a file: a restarted daemon's session has the head's CPU
    threads (the load model's machine: the dock, the verdict and ``whatif`` read them from
    the session), not the head run's settings, which the restart may have changed."""
    from viewer.analysis.headroom import own_load
    from viewer.io import open_log
    from viewer.io.follow import LogFollower

    sample = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"
    run = sample.read_text()
    head, _, rest = run.partition("\n")  # the daemon's start line, then its run
    text = f"{head}\n{T}realpipe config pw=10 gw=2 cpus=16\n{rest}"
    twice = tmp_path / "twice.log"
    twice.write_text(text + run)  # restarted: the second run's head states no settings
    timeline = open_log(twice)
    assert len(timeline.sessions) == 2
    first, second = timeline.sessions
    assert first.facts == Facts(cpus=16, pw=10, gw=2)
    assert second.facts == Facts(cpus=16)
    assert own_load(second)[0].contention.cores == own_load(first)[0].contention.cores == 16
    follower = LogFollower(twice)
    try:
        followed = follower.poll()
    finally:
        follower.close()
    assert followed is not None
    assert [s.facts for s in followed.sessions] == [first.facts, second.facts]
