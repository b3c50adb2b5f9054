"""Every figure of a GPU call from its CUZK_TIMING lines, attributed as the daemon writes them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from io_logs import partition_lines

from viewer.io import open_log
from viewer.io.batch import CuzkLines
from viewer.io.grammar import CUZK_FORMS, CUZK_MALFORMED
from viewer.io.timing import VALUES, BlockBuilder, _next_owners, _owners, build_blocks

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
#: The figures a call gets from its CUZK_TIMING lines (all but kernel_start).
FIGURES = list(VALUES)


def lines(*rows: tuple[int, int, float, float]) -> CuzkLines:
    """CuzkLines from (seq, kind, a, b) rows."""
    seq, kind, a, b = zip(*rows, strict=True)
    return CuzkLines(np.array(seq), np.array(kind, np.int8), np.array(a), np.array(b))


def test_two_workers_interleaved_on_one_gpu():
    """gw=2 as the daemon writes it: B's prep before A's region ends, A's b_g2 after B's
    acquire, B's mutex_held before C's acquire.  Codes: 0 acquire, 1 ntt, 2 batch, 3 tail,
    4 prep, 5 barrier, 6 mutex_held, 7 b_g2."""
    nan = np.nan
    got, skipped = build_blocks(
        lines(
            (1, 4, 10, nan),  # prep A
            (2, 0, 11, 1),  # acquire A
            (3, 4, 20, nan),  # prep B, during A's region
            (4, 1, 100, nan),
            (5, 5, 0, nan),
            (6, 2, 101, nan),
            (7, 3, 102, 303),
            (8, 6, 304, 400),  # mutex_held A
            (9, 0, 22, 280),  # acquire B
            (10, 7, 50, 1),  # b_g2 A, after B's acquire
            (11, 4, 30, nan),  # prep C
            (12, 1, 110, nan),
            (13, 5, 1, nan),
            (14, 2, 111, nan),
            (15, 3, 112, 323),
            (16, 6, 324, 700),  # mutex_held B
            (17, 0, 33, 300),  # acquire C
            (18, 7, 60, 2),  # b_g2 B
            (19, 3, 122, 343),  # C's region: tail only
            (20, 0, 44, 0),  # acquire D: its prep and everything else lost
            (21, 7, 70, 3),  # b_g2 C
        ),
        single_gpu=True,
    )
    v = pd.DataFrame(got.values)
    assert v["prep_msm_ms"].tolist()[:3] == [10, 20, 30] and np.isnan(v["prep_msm_ms"][3])
    assert v["pre_lock_cpu_ms"].tolist() == [11, 22, 33, 44]
    assert v["mutex_wait_ms"].tolist() == [1, 280, 300, 0]
    assert got.lock_ms.tolist() == [12, 302, 333, 44]
    assert v["kernel_ms"].tolist()[:3] == [303, 323, 343]
    assert v["barrier_wait_ms"].tolist()[:2] == [0, 1]
    assert v["mutex_held_ms"].tolist()[:2] == [304, 324] and v["mutex_held_ms"][2:].isna().all()
    assert v["total_start_fn_ms"].tolist()[:2] == [400, 700]
    assert v["b_g2_msm_ms"].tolist()[:3] == [50, 60, 70] and np.isnan(v["b_g2_msm_ms"][3])
    assert v["num_circuits"].tolist()[:3] == [1, 2, 3]
    assert skipped == {}


def test_mutex_held_after_the_next_acquire_in_the_same_millisecond():
    """The release and the next acquire happen in one millisecond: the simulator writes
    the next acquire line first.  mutex_held follows its own block's tail line."""
    got, skipped = build_blocks(
        lines((1, 0, 1, 0), (2, 3, 5, 100), (3, 0, 2, 99), (4, 6, 101, 150), (5, 3, 6, 90)),
        single_gpu=True,
    )
    assert got.values["mutex_held_ms"][0] == 101 and np.isnan(got.values["mutex_held_ms"][1])
    assert skipped == {}


def test_orphans_are_counted():
    """A prep with no block after it, a b_g2 or mutex_held before any block."""
    got, skipped = build_blocks(
        lines((1, 7, 5, 1), (2, 6, 9, 9), (3, 0, 1, 0), (4, 3, 5, 100), (5, 4, 7, 0)),
        single_gpu=True,
    )
    assert skipped == {"orphan_cuzk_timing": 3}
    assert np.isnan(got.values["prep_msm_ms"]).all() and np.isnan(got.values["b_g2_msm_ms"]).all()


def owners_loop(acq: list[int], seq: list[int], before: bool) -> list[int]:
    """The rules ``_owners`` (several GPUs) and ``_next_owners`` implement, one line at a
    time: FIFO over the blocks opened before a line (``before``) or after it."""
    taken: set[int] = set()
    out = []
    for s in seq:
        free = [k for k in range(len(acq)) if k not in taken]
        if before:  # the oldest block not given this kind yet, if it opened before the line
            k = free[0] if free and acq[free[0]] < s else -1
        else:  # the oldest block opening after the line that no earlier line took
            k = min((k for k in free if acq[k] > s), default=-1)
        if k >= 0:
            taken.add(k)
        out.append(k)
    return out


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3)), max_size=40))
def test_closed_forms_follow_the_rules(marks):
    """Blocks and lines in file order (True: a block's acquire line)."""
    acq = [i for i, (is_block, _) in enumerate(marks) if is_block]
    seq = [i for i, (is_block, _) in enumerate(marks) if not is_block]
    a, s = np.array(acq, np.int64), np.array(seq, np.int64)
    assert _owners(a, s, single_gpu=False).tolist() == owners_loop(acq, seq, before=True)
    assert _next_owners(a, s).tolist() == owners_loop(acq, seq, before=False)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([*range(len(CUZK_FORMS)), CUZK_MALFORMED]),
            st.sampled_from([False] * 6 + [True]),  # a new session from this line on
        ),
        max_size=80,
    ),
    st.lists(st.integers(0, 80), max_size=6),
    st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_blocks_fed_in_pieces_are_the_blocks_of_each_session(drawn, cuts, one_gpu):
    """The lines of several sessions read in pieces cut anywhere are grouped as each
    session's lines alone: a block's lines in the piece after its acquire, a prep line
    before the piece that opens its block or before its session's end, a tail before
    the piece of its mutex_held line; one session grouped as on one GPU, the next not."""
    n = len(drawn)
    session = np.cumsum([new for _, new in drawn], dtype=np.int64)
    session = np.minimum(session, 11)
    whole = CuzkLines(
        np.arange(n, dtype=np.int64) * 7,
        np.array([k for k, _ in drawn], np.int8),
        np.arange(n, dtype=np.float64) + 0.5,
        np.arange(n, dtype=np.float64) + 1000.25,
    )
    builder = BlockBuilder()
    edges = sorted({0, n, *(min(c, n) for c in cuts)})
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        part = CuzkLines(whole.seq[a:b], whole.kind[a:b], whole.a[a:b], whole.b[a:b])
        builder.feed(part, session=session[a:b])
    sessions = int(session[-1]) + 1 if n else 0
    got, got_skipped, with_lines = builder.result(np.array(one_gpu[:sessions], bool))
    assert with_lines == sorted(set(session.tolist()))
    for s in range(sessions):
        mine = session == s
        lines_s = CuzkLines(whole.seq[mine], whole.kind[mine], whole.a[mine], whole.b[mine])
        want, want_skipped = build_blocks(lines_s, one_gpu[s])
        rows = got.session == s
        assert got_skipped[s] == want_skipped, s
        assert got.seq[rows].tolist() == want.seq.tolist()
        np.testing.assert_array_equal(got.lock_ms[rows], want.lock_ms)
        for name in VALUES:
            np.testing.assert_array_equal(got.values[name][rows], want.values[name], err_msg=name)


def schedule_figures(made) -> pd.DataFrame:
    """What the simulator wrote for every call, by (job_id, partition)."""
    s = made[0]
    d = s.draws
    return pd.DataFrame(
        {
            "job_id": [d.job_ids[j] for j in d.job.tolist()],
            "partition": d.part,
            "prep_msm_ms": d.prep,
            "pre_lock_cpu_ms": s.prelock,
            "mutex_wait_ms": s.wait,
            "ntt_msm_h_ms": s.ntt,
            "barrier_wait_ms": d.barrier,
            "batch_add_ms": d.batch,
            "tail_msm_ms": d.tail,
            "kernel_ms": s.kernel,
            "mutex_held_ms": s.release - s.acquire,
            "total_start_fn_ms": s.release - s.start,
            "b_g2_msm_ms": d.b_g2,
            "num_circuits": d.circuits,
        }
    ).set_index(["job_id", "partition"])


def done_calls(name: str) -> pd.DataFrame:
    """The completed calls of a one-session sample log, by (job_id, partition)."""
    (s,) = open_log(SAMPLES / name).sessions
    assert s.skipped == {}
    parts = s.partitions.assign(job_id=s.job_ids()).to_pandas().set_index(["job_id", "partition"])
    done = parts[~parts["gpu_open"]]
    assert len(done) == len(parts) > 0 and done[FIGURES].notna().all().all()
    return done


def test_every_figure_of_every_call_of_the_phase8_run():
    """The simulator writes all eight lines of every call (gw=2, blocks interleaved): every
    completed call gets every figure, and each is the one written for that call."""
    from viewer.sim import samples

    done = done_calls("phase8_pw10_5sectors.log")
    want = schedule_figures(samples.phase8()).loc[done.index, FIGURES].astype(np.float64)
    pd.testing.assert_frame_equal(done[FIGURES], want, check_index_type=False)
    assert (done["mutex_held_ms"] == done["kernel_ms"] + 1).all()
    assert (done["prep_msm_ms"] <= done["pre_lock_cpu_ms"]).all()
    np.testing.assert_array_equal(
        done["kernel_start"], done["gpu_start"] + done["pre_lock_cpu_ms"] + done["mutex_wait_ms"]
    )


def test_mixed_proof_kinds_swap_only_b_g2_figures():
    """A short proof's b_g2 line can come before that of the longer call released just
    before it: the FIFO rule then swaps the two b_g2 figures (their total stays exact);
    every other figure is the call's own."""
    from viewer.sim import samples

    done = done_calls("monolithic_mixed.log")
    want = schedule_figures(samples.monolithic_mixed()).loc[done.index].astype(np.float64)
    after = ["b_g2_msm_ms", "num_circuits"]
    own = [f for f in FIGURES if f not in after]
    pd.testing.assert_frame_equal(done[own], want[own], check_index_type=False)
    np.testing.assert_array_equal(done[after].sum(), want[after].sum())


def test_every_figure_on_two_gpus_with_exact_totals():
    """Several GPUs: blocks are matched by best effort, but every call gets every figure
    and the totals over the log are exact."""
    from viewer.sim import samples

    (s,) = open_log(SAMPLES / "two_gpus.log").sessions
    parts = s.partitions
    assert np.isfinite(parts[FIGURES].to_numpy()).all() and s.skipped == {}
    want = schedule_figures(samples.two_gpus())
    np.testing.assert_array_equal(parts[FIGURES].to_numpy().sum(axis=0), want[FIGURES].sum())
    assert (parts["mutex_held_ms"] == parts["kernel_ms"] + 1).all()  # in-region lines


def test_a_log_without_the_new_lines_reads_as_before(tmp_path):
    """Only the acquire and kernel lines (an older daemon): the other figures are NaN."""
    a = partition_lines("j", 0, 100, 0)
    block = [
        "CUZK_TIMING: pre_lock_cpu_ms=5 mutex_wait_ms=7",
        "CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=3117",
        "CUZK_TIMING: gpu_tid=0 batch_add_ms=640",
        "CUZK_TIMING: gpu_tid=0 tail_msm_ms=125 gpu_total_ms=374",
    ]
    path = tmp_path / "old.log"
    path.write_text("\n".join([*a[:5], *block, a[5]]) + "\n")
    (s,) = open_log(path).sessions
    row = s.partitions.row(0)
    assert (row["kernel_ms"], row["kernel_start"], row["pre_lock_cpu_ms"]) == (374, 215, 5)
    for name in ("prep_msm_ms", "barrier_wait_ms", "mutex_held_ms", "b_g2_msm_ms"):
        assert np.isnan(row[name]), name


DATA = Path(__file__).with_name("data")


def test_a_block_no_call_takes_still_counts_in_the_kernel_total():
    """Two GPUs, the GPU_START line of j1's partition 2 lost: its CUZK_TIMING block matches no
    call, yet its kernel time is the session's (the total is exact by definition), placed
    where its lines stand; the session says how many blocks were read, ambiguous and
    unattributed."""
    from viewer.analysis.kernels import kernel_stats

    (s,) = open_log(DATA / "two_gpus_block_without_its_gpu_start.log").sessions
    assert (s.kernel_blocks, s.ambiguous_blocks, s.unattributed_blocks) == (8, 0, 1)
    assert s.unattributed_kernel_ms == 202
    assert s.unattributed["kernel_start"].tolist() == [1402]  # its GPU_PICKUP, just before
    assert np.nansum(s.partitions["kernel_ms"]) == 2 * 806 - 202
    whole = kernel_stats(s)
    assert (whole.total_ms, whole.unattributed_ms) == (2 * 806, 202)
    assert whole.breakdown_ms["tail_msm"] == 8 * 125
    assert any("1 of 8 CUZK_TIMING blocks matched no GPU call" in n for n in s.notes)
    p = s.partitions
    ks = p["kernel_start"]
    ke = ks + p["kernel_ms"]
    attributed = np.nansum(np.clip(ke, 1500, 1700) - np.clip(ks, 1500, 1700))
    assert kernel_stats(s, (1500, 1700)).total_ms == attributed + (1604 - 1500)


def test_ambiguous_blocks_are_counted_on_the_session():
    (s,) = open_log(SAMPLES / "two_gpus.log").sessions
    assert (s.kernel_blocks, s.ambiguous_blocks, s.unattributed_blocks) == (100, 7, 0)
    (one,) = open_log(SAMPLES / "phase8_pw10_5sectors.log").sessions
    assert (one.kernel_blocks, one.ambiguous_blocks, one.unattributed_blocks) == (50, 0, 0)


def test_the_call_that_reaches_the_lock_first_takes_the_first_block(tmp_path):
    """domain.md: on one GPU the k-th block belongs to the k-th call to reach the lock.
    Worker 1 starts 100 ms after worker 0 but prepares in 500 ms, not 1000: it takes the
    mutex first.  Given to the oldest open call, its kernel (1000 ms from 1600) went to
    worker 0, and worker 0's (1200 ms from 2600) ran 1000 ms past worker 1's GPU_END."""
    lines = [
        "TIMELINE,0,SYNTH_START,jobA,partition=0",
        "TIMELINE,0,SYNTH_START,jobA,partition=1",
        "TIMELINE,990,SYNTH_END,jobA,partition=0,synth_ms=990",
        "TIMELINE,990,GPU_QUEUE,jobA,partition=0",
        "TIMELINE,995,GPU_PICKUP,jobA,worker=0,partition=0",
        "TIMELINE,1000,GPU_START,jobA,worker=0,partition=0",
        "TIMELINE,1090,SYNTH_END,jobA,partition=1,synth_ms=1090",
        "TIMELINE,1090,GPU_QUEUE,jobA,partition=1",
        "TIMELINE,1095,GPU_PICKUP,jobA,worker=1,partition=1",
        "TIMELINE,1100,GPU_START,jobA,worker=1,partition=1",
        "CUZK_TIMING: pre_lock_cpu_ms=500 mutex_wait_ms=0",
        "CUZK_TIMING: gpu_tid=0 tail_msm_ms=100 gpu_total_ms=1000",
        "CUZK_TIMING: mutex_held_ms=1000 total_start_fn_ms=1500",
        "CUZK_TIMING: pre_lock_cpu_ms=1000 mutex_wait_ms=600",
        "TIMELINE,2900,GPU_END,jobA,worker=1,partition=1,gpu_ms=1800",
        "CUZK_TIMING: gpu_tid=0 tail_msm_ms=50 gpu_total_ms=1200",
        "CUZK_TIMING: mutex_held_ms=1200 total_start_fn_ms=2800",
        "TIMELINE,4100,GPU_END,jobA,worker=0,partition=0,gpu_ms=3100",
    ]
    path = tmp_path / "flip.log"
    path.write_text("\n".join(lines) + "\n")
    (s,) = open_log(path).sessions
    p = s.partitions
    assert p["worker"].tolist() == [0, 1]
    assert p["kernel_ms"].tolist() == [1200, 1000]
    assert p["kernel_start"].tolist() == [2600, 1600]
    assert p["pre_lock_cpu_ms"].tolist() == [1000, 500]
    assert p["mutex_held_ms"].tolist() == [1200, 1000]
    assert (p["kernel_start"] + p["kernel_ms"] <= p["gpu_end"]).all()


@pytest.mark.parametrize("gw", [2, 3])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_on_one_gpu_every_block_goes_to_its_own_call(tmp_path, gw, seed):
    """A simulated one-GPU run where prep times vary by 30 %: calls that started later
    often reach the mutex first.  Every completed call gets the kernel time written for it,
    and no kernel region runs past its call's GPU_END."""
    from viewer.sim.model import SimConfig, simulate
    from viewer.sim.writer import WriteOptions, write

    cfg = SimConfig(sectors=6, pw=10, gw=gw, gpus=1, jitter=0.3, synth_ms=3000, kernel_ms=1000)
    made = simulate(replace(cfg, seed=seed))
    write(made, tmp_path / "run.log", WriteOptions())
    (s,) = open_log(tmp_path / "run.log").sessions
    parts = s.partitions.assign(job_id=s.job_ids()).to_pandas().set_index(["job_id", "partition"])
    d = made.draws
    truth = pd.Series(
        made.kernel,
        index=pd.MultiIndex.from_arrays([[d.job_ids[j] for j in d.job.tolist()], d.part]),
    )
    assert len(parts) == len(truth) == 60
    np.testing.assert_array_equal(parts["kernel_ms"], truth.loc[parts.index].to_numpy())
    assert (parts["kernel_start"] + parts["kernel_ms"] <= parts["gpu_end"]).all()
