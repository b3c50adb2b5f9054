"""The written lines: formats, causal file order, CUZK_TIMING blocks, format options."""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.sim.logparse import TIMELINE, parse
from viewer.sim.model import Schedule, SimConfig, simulate
from viewer.sim.writer import WriteOptions, render

MIXED = (("porep-c2", 2.0), ("snap-update", 1.0), ("window-post", 1.0), ("winning-post", 1.0))
ORDER = ["SYNTH_START", "SYNTH_END", "GPU_QUEUE", "GPU_PICKUP", "GPU_START", "GPU_END"]
JOURNAL = re.compile(r"^[A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d host cuzk-daemon\[\d+\]: ")


@pytest.fixture(scope="module")
def mixed() -> tuple[Schedule, str]:
    s = simulate(SimConfig(sectors=8, kinds=MIXED, seed=11, gw=2, gpus=1, interval_ms=4000.0))
    return s, render(s, WriteOptions(noise=0.5, disorder_ms=3, seed=11))


def test_every_call_has_its_events_in_causal_file_order(mixed: tuple[Schedule, str]) -> None:
    s, text = mixed
    seen: dict[tuple[str, int], list[tuple[str, int, dict[str, int], str]]] = defaultdict(list)
    for t, ev, job, kv, detail in parse(text).events:
        seen[job, kv.get("partition", -1)].append((ev, t, kv, detail))
    assert len(seen) == len(s.draws.job)
    for (job, part), evs in seen.items():
        assert [e[0] for e in evs] == ORDER
        times = [e[1] for e in evs]
        assert times == sorted(times)
        assert evs[1][2]["synth_ms"] == times[1] - times[0]
        assert evs[5][2]["gpu_ms"] == times[5] - times[4]
        kind = s.draws.job_kind[s.draws.job_ids.index(job)]
        if part < 0:
            assert [e[3] for e in evs[:3]] == [
                f"kind={kind}",
                f"synth_ms={times[1] - times[0]}",
                "monolithic",
            ]
            assert re.fullmatch(r"worker=\d+,gpu_ms=\d+", evs[5][3])
        else:
            assert kind == "porep-c2"
            assert re.fullmatch(r"worker=\d+,partition=\d+,gpu_ms=\d+", evs[5][3])


def test_lines_trail_by_at_most_the_disorder(mixed: tuple[Schedule, str]) -> None:
    offsets = np.array([e[0] for e in parse(mixed[1]).events])
    assert (np.maximum.accumulate(offsets) - offsets).max() <= 3


def test_cuzk_blocks_match_calls_in_lock_order(mixed: tuple[Schedule, str]) -> None:
    s, text = mixed
    lines = [ln for ln in text.splitlines() if ln.startswith("CUZK_TIMING")]
    for key in (
        "prep_msm_ms",
        "pre_lock_cpu_ms",
        "ntt_msm_h_ms",
        "barrier_wait_ms",
        "batch_add_ms",
        "gpu_total_ms",
        "mutex_held_ms",
        "b_g2_msm_ms",
    ):
        assert sum(f" {key}=" in ln for ln in lines) == len(s.draws.job)
    # One GPU: the k-th mutex acquisition in the file is the k-th call to take the lock.
    by_lock = np.argsort(s.acquire, kind="stable")
    locks = [re.findall(r"\d+", ln) for ln in lines if "pre_lock_cpu_ms" in ln]
    totals = [int(re.search(r"gpu_total_ms=(\d+)", ln)[1]) for ln in lines if "gpu_total" in ln]
    for k, i in enumerate(by_lock):
        pre, wait = map(int, locks[k])
        assert s.start[i] + pre + wait == s.acquire[i]
        assert totals[k] == s.kernel[i]


def test_startup_tracing_lines() -> None:
    s = simulate(SimConfig(sectors=1, gw=2, gpus=2))
    text = render(s, WriteOptions())
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines()
    assert "cuzk-daemon starting" in plain[0]
    started = [ln for ln in plain if "pipeline GPU worker started" in ln]
    assert [re.findall(r"=(\d+)", ln) for ln in started] == [
        ["0", "0", "0"],
        ["1", "0", "1"],
        ["2", "1", "0"],
        ["3", "1", "1"],
    ]
    assert "\x1b[3mworker_id\x1b[0m\x1b[2m=\x1b[0m1" in text


def test_format_options() -> None:
    s = simulate(SimConfig(sectors=2, seed=5))
    base = render(s, WriteOptions())
    j = render(s, WriteOptions(journald=True, noise=0.3))
    assert all(JOURNAL.match(ln) for ln in j.splitlines())
    crlf = render(s, WriteOptions(crlf=True, noise=0.3))
    assert crlf.count("\r\n") == crlf.count("\n")
    old = render(s, WriteOptions(era="old"))
    assert "GPU_QUEUE" not in old and old.count(",CHAN_SEND,") == base.count(",GPU_QUEUE,")
    assert "CUZK_TIMING" not in render(s, WriteOptions(cuzk_timing=False))
    bare = render(s, WriteOptions(tracing=False, noise=0.5))
    assert "\x1b" not in bare
    assert len(TIMELINE.findall(bare)) == len(TIMELINE.findall(base))


def test_noise_is_the_asked_fraction_of_bytes() -> None:
    s = simulate(SimConfig(sectors=20, seed=1))
    clean = len(render(s, WriteOptions()))
    noisy = len(render(s, WriteOptions(noise=0.9)))
    assert 1 - clean / noisy == pytest.approx(0.9, abs=0.02)


def test_a_crash_cuts_the_log() -> None:
    s = simulate(SimConfig(sectors=2, seed=5))
    cut = int(s.start[np.argsort(s.start)[5]]) + 100
    events = parse(render(s, WriteOptions(until_ms=cut, disorder_ms=0))).events
    assert max(e[0] for e in events) <= cut
    starts = sum(e[1] == "GPU_START" for e in events)
    assert starts - sum(e[1] == "GPU_END" for e in events) == 2


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    gw=st.integers(1, 3),
    gpus=st.integers(1, 3),
    disorder=st.integers(0, 5),
    journald=st.booleans(),
    old=st.booleans(),
)
def test_any_run_writes_complete_causal_calls(
    seed: int, gw: int, gpus: int, disorder: int, journald: bool, old: bool
) -> None:
    s = simulate(SimConfig(sectors=3, kinds=MIXED, seed=seed, gw=gw, gpus=gpus, pw=12))
    o = WriteOptions(
        noise=0.4, disorder_ms=disorder, journald=journald, era="old" if old else "new"
    )
    order = [("CHAN_SEND" if old else "GPU_QUEUE") if e == "GPU_QUEUE" else e for e in ORDER]
    seen: dict[tuple[str, int], list[str]] = defaultdict(list)
    offsets = []
    for t, ev, job, kv, _ in parse(render(s, o)).events:
        seen[job, kv.get("partition", -1)].append(ev)
        offsets.append(t)
    assert len(seen) == len(s.draws.job)
    assert all(evs == order for evs in seen.values())
    lag = np.maximum.accumulate(offsets) - np.array(offsets)
    assert lag.max() <= disorder


STREAMED = [
    WriteOptions(),
    WriteOptions(era="old", cuzk_timing=False),
    WriteOptions(tracing=False),
    WriteOptions(journald=True, crlf=True, seed=3),
    WriteOptions(until_ms=90_000),
    WriteOptions(until_ms=-1),
    WriteOptions(disorder_ms=0),
    WriteOptions(disorder_ms=5000, seed=7),
]


@pytest.mark.parametrize("slice_lines", [1024, 7, 1])
@pytest.mark.parametrize("o", STREAMED, ids=range(len(STREAMED)))
def test_a_log_written_as_its_lines_are_made_is_the_log(
    o: WriteOptions, slice_lines: int, monkeypatch
) -> None:
    """Without noise, ``write_stream`` makes the lines a slice of time at a time (issue 27
    item 9: a what-if's --out log of 1.5 M calls made 21 M lines of text at once): the same
    bytes as the log rendered whole, ties in one millisecond and all."""
    import io

    from viewer.sim import lines
    from viewer.sim.writer import write_stream

    monkeypatch.setattr(lines, "SLICE_LINES", slice_lines)
    for s in (
        simulate(SimConfig(sectors=8, kinds=MIXED, seed=11, gw=2, gpus=2, interval_ms=4000.0)),
        simulate(SimConfig(sectors=3, seed=4, gw=3, warmup_ms=900.0)),
    ):
        out = io.BytesIO()
        write_stream(s, out, o)
        assert out.getvalue() == render(s, o).encode()
