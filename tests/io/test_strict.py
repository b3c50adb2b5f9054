"""The strict numpy parser must give exactly what the exact regex parser gives, on any damage."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from io_logs import cuzk_block, simple_log
from test_damage import apply, damage

from viewer.io import strict
from viewer.io.exact import parse_cuzk, parse_exact
from viewer.io.grammar import CUZK_FORMS
from viewer.io.parse import CZ_SKIP, TL_SKIP, parse_records
from viewer.io.records import SCAN_RE, SEQ_SHIFT, JobIds, RawBatch, find_records

#: CUZK_TIMING lines upstream writes that carry none of a call's figures.
UPSTREAM_IGNORED = [
    "CUZK_TIMING: async_dealloc_ms=12",
    "CUZK_TIMING: split_vectors_ms=40 setup_to_split_ms=3",
    "CUZK_TIMING: set pool release threshold to MAX on gpu 0",
    "CUZK_TIMING: d_a_cache allocated 4096 MiB on gpu 1",
]
LINES = simple_log(jobs=2, parts=3)
LINES[8:8] = cuzk_block(5, 7)
EXTRA = [
    "TIMELINE,5,GPU_START,j,partition=2,worker=1,extra=x",
    "TIMELINE,1,SYNTH_START,post,kind=window-post",
    "TIMELINE,3,GPU_QUEUE,post,monolithic",
    "TIMELINE,8,GPU_END,j,worker=0,partition=0,gpu_ms=401,",
    "CUZK_TIMING:  gpu_tid=0\tntt_msm_h_ms=5",
    "CUZK_TIMING: pre_lock_cpu_ms=oops",
    "TIMELINE,9,SYNTH_START,post2,kind=xTIMELINE,monolithic",
    "TIMELINE,10,GPU_START,jobCUZK_TIMING: ntt_msm_h_ms=4,worker=1,partition=1",
    "TIMELINE,11,GPU_END,j,worker=0,partition=0,gpu_ms=1234567890123",
    "TIMELINE,12,GPU_PICKUP,j,partition=0,worker=0",
    "TIMELINE,0012,SYNTH_END,j,partition=007,synth_ms=0\r",
    "TIMELINE,13,GPU_END,j,worker=1,worker=2,partition=3",
    "CUZK_TIMING: gpu_tid=1 tail_msm_ms=3 gpu_total_ms=9 ",
    "CUZK_TIMING: gpu_tid=x batch_add_ms=3",
    "CUZK_TIMING: prep_msm_ms=7 \x1b[0mbatch_add_ms=2",
    "CUZK_TIMING: prep_msm_ms=1234567890123",
    "CUZK_TIMING: gpu_tid=0 barrier_wait_ms=1 extra",
    "CUZK_TIMING: mutex_held_ms=5",
    "CUZK_TIMING: mutex_held_ms=5 total_start_fn_ms=6\t",
    "CUZK_TIMING: b_g2_msm_ms=3 num_circuits=x",
    "CUZK_TIMING: gpu_tid=2 b_g2_msm_ms=3  num_circuits=1",
    *UPSTREAM_IGNORED,
    "TIMELINE,14,GPU_START,j,worker=4294967296,partition=0",
    "TIMELINE,15,GPU_START,j,worker=2147483647,partition=2147483648",
    "TIMELINE,1234567890123456,GPU_START,j,worker=0,partition=0",
]


def both(data: bytes):
    raw = RawBatch()
    find_records(data, 0, len(data), raw)
    fast = parse_records(raw, JobIds())
    seq = [i << SEQ_SHIFT for i in range(len(raw.items))]
    tl = [i for i, it in enumerate(raw.items) if it.startswith(b"TIMELINE,")]
    cz = [i for i, it in enumerate(raw.items) if not it.startswith(b"TIMELINE,")]
    slow = parse_exact([raw.items[i][TL_SKIP:] for i in tl], [seq[i] for i in tl], JobIds())
    order = np.argsort(slow.seq, kind="stable")
    for col in ("seq", "offset", "event", "partition", "worker", "mono", "synth_ms", "gpu_ms"):
        setattr(slow, col, getattr(slow, col)[order])
    slow_cz = parse_cuzk([raw.items[i][CZ_SKIP:] for i in cz], [seq[i] for i in cz])
    return fast, slow, slow_cz


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(damage, max_size=6), st.booleans())
def test_fast_path_matches_exact_path(ops, extra):
    data = apply(ops) + ("\n".join(EXTRA) + "\n").encode() * extra
    fast, slow, slow_cz = both(data)
    for col in ("seq", "offset", "event", "partition", "worker", "mono"):
        np.testing.assert_array_equal(getattr(fast, col), getattr(slow, col), err_msg=col)
    for col in ("synth_ms", "gpu_ms"):
        np.testing.assert_array_equal(getattr(fast, col), getattr(slow, col), err_msg=col)
    assert list(fast.skipped_seq) == list(slow.skipped_seq)
    assert fast.skipped_reason == slow.skipped_reason
    assert [k for _, _, k in fast.kinds] == [k for _, _, k in sorted(slow.kinds)]
    for col in ("seq", "kind", "a", "b"):
        np.testing.assert_array_equal(getattr(fast.cuzk, col), getattr(slow_cz, col))


def test_daemon_lines_all_take_the_fast_path():
    fp = strict
    raw = RawBatch()
    data = ("\n".join(LINES) + "\n").encode()
    find_records(data, 0, len(data), raw)
    f = fp.flatten(raw.items)
    is_tl = np.array([it.startswith(b"TIMELINE,") for it in raw.items])
    assert fp.parse_events(f, np.flatnonzero(is_tl), TL_SKIP).ok.all()
    kind, _, _ = fp.parse_cuzk(f, np.flatnonzero(~is_tl), CZ_SKIP)
    assert sorted(kind[kind >= 0].tolist()) == list(range(len(CUZK_FORMS)))


def test_every_cuzk_timing_line_is_found():
    """Every CUZK_TIMING line reaches the parser (none is skipped by the scan)."""
    data = apply([]) + ("\n".join(EXTRA) + "\n").encode()
    found = [m for m in SCAN_RE.findall(data) if m.startswith(b"TIMING:")]
    assert len(found) == sum(line.startswith(b"CUZK_TIMING:") for line in data.split(b"\n"))


def test_job_hash_collisions_fall_back_to_exact_codes(monkeypatch):
    fp = strict
    ids = [b"job-a", b"job-bb", b"job-a", b"j", b"job-bb"]
    f = fp.flatten(ids)
    ok = np.ones(len(ids), bool)
    zeros = np.zeros_like(fp._mix())
    monkeypatch.setattr(fp, "_mix", lambda: zeros)  # every id hashes alike
    codes, uniques = fp._job_codes(f.u, f.start, f.end, ok)
    assert codes.tolist() == [0, 1, 0, 2, 1] and uniques == [b"job-a", b"job-bb", b"j"]
