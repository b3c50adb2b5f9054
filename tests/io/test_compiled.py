"""The compiled scanner must give exactly what the pure-Python scanner gives, on any damage,
and however the file is cut into pieces; both follow the one grammar (``grammar.py``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from io_logs import cuzk_block, daemon_start, simple_log, use_python, worker_started
from test_damage import apply, damage

from viewer.io import grammar, open_log, pure, scanner
from viewer.io.batch import EVENT_COLUMNS, fold_copies, merge_batches
from viewer.io.parse import parse_records
from viewer.io.reader import scan_log
from viewer.io.records import JobIds, Ordinals, RawBatch, find_records
from viewer.io.source import MAX_LINE

compiled = pytest.importorskip("viewer.io.compiled", reason="compiled scanner not built")
_cscan = compiled._cscan
pytestmark = pytest.mark.skipif(not scanner.compiled(), reason="CUZK_PURE_PYTHON=1")

#: Lines that take every branch of the compiled scanner: markers inside and after our
#: lines, glued lines, near misses of the needles, skipped CUZK forms, odd bytes.
ODD = [
    daemon_start() + " TIMELINE,1,SYNTH_START,d,partition=0",
    "TIMELINE,2,SYNTH_END,d,partition=0,synth_ms=5 GPU worker started worker_id=0 gpu=0",
    worker_started(1, 0) + " " + worker_started(2, 0),
    "TIMEOUT waiting; TIMELINE,3,GPU_QUEUE,d,partition=0",
    "CUZK_TIMING: prep_msm_ms=12",
    "CUZK_TIMING: prep_msm_ms=12\r",
    "CUZK_TIMING: gpu_tid=0 barrier_wait_ms=1",
    "CUZK_TIMING: mutex_held_ms=1 total_start_fn_ms=2 TIMELINE,4,GPU_PICKUP,d,partition=0,worker=0",
    "CUZK_TIMING: b_g2_msm_ms=3 num_circuits=10",
    "CUZK_TIMING: num_circuits=10",
    "CUZK_TIMING: b_g2_msm_ms=3",
    "CUZK_TIMING: b_g2_msm_ms=3 num_circuits=1234567890123",
    "CUZK_TIMING: gpu_tid=1 mutex_held_ms=4 total_start_fn_ms=9",
    "CUZK_TIMING: mutex_held_ms=4 total_start_fn_ms=9 ",
    "CUZK_TIMING: prep_msm_ms=",
    "CUZK_TIMING: prep_msm_msx=5",
    "CUZK_TIMING: gpu_tid=0 barrier_wait_ms=0\r",
    "CUZK_TIMING: async_dealloc_ms=12",
    "CUZK_TIMING: split_vectors_ms=40 setup_to_split_ms=3",
    "CUZK_TIMING: d_a_cache allocated 4096 MiB on gpu 1",
    "CUZK_TIMING: gpu_tid=3 ntt_msm_h_ms=1234567890123",
    "xCUZK_TIMING: tail_msm_ms=1 gpu_total_ms=2",
    "TIMING: batch_add_ms=3",
    "TIMELINE,5,GPU_START,d,partition=0,worker=0,kind=snap,monolithic",
    "TIMELINE,6,GPU_START,d,worker=0,partition=0,gpu_ms=1,synth_ms=2",
    "TIMELINE,7,GPU_END,d,partition=0,worker=0,",
    "TIMELINE,8,GPU_END,d",
    "TIMELINE,9,GPU_END,a-very-long-job-id-" + "x" * 60 + ",partition=0,worker=0",
    "TIMELINE,10,SYNTH_START,w,kind=" + "k" * 33,
    "TIMELINE,11,SYNTH_START,w,kind=window post",
    "TIMELINE,12,SYNTH_START,w,kind=winning-post",
    "TIMELINE,13,GPU_END,d,partition=0,worker=0\r\r",
    "TIMELINE,14,GPU_END,d,partition=0,worker=0\t",
    "TIMELINE,1234567890123456,GPU_END,d,partition=0,worker=0",
    "TIMELINE,15,GPU_DONE,d,partition=0,worker=0",
    "TIMELINE,16,GPU_END,d d,partition=0,worker=0",
    "\x1b[2mTIMELINE,17,GPU_END,d,partition=0,worker=0\x1b[0m",
    "TIMELINE,18,GPU_END,dé,partition=0,worker=0",
    "TIMELINE,19,CHAN_SEND,d,partition=1",
    "TIMELINE,",
    "TIM",
    "TIMELINE,100,CHAN_SEND,j,monolithic,x",
    "TIMELINE,101,GPU_END,j,monolithic,worker=5",
    "TIMELINE,102,SYNTH_END,j,synth_ms=5,monolithic,partition=3",
    "TIMELINE,103,SYNTH_START,j,monolithic,kind=x",
    "TIMELINE,104,GPU_END,j,",
    "TIMELINE,105,GPU_END,j,,worker=1,partition=0",
    "TIMELINE,106,GPU_START,j,worker=4294967296,partition=0",
    "TIMELINE,107,GPU_START,j,worker=1,partition=2147483648",
    "TIMELINE,108,GPU_START,j,partition=2147483647,worker=2147483647",
    "TIMELINE,109,GPU_START,j,worker=0000000001,partition=0",
    "TIMELINE,12345678901234567,GPU_END,j,partition=0,worker=0",
    "TIMELINE,110,GPU_END,j,worker=0,partition=0,gpu_ms=12345678901234",
    "CUZK_TIMING: gpu_tid=99999999999 ntt_msm_h_ms=5",
]
LINES = simple_log(jobs=2, parts=3)
LINES[4:4] = cuzk_block(5, 7)


def python_scan(data: bytes, jobs: JobIds):
    raw = RawBatch()
    find_records(data, 0, len(data), raw)
    return fold_copies(parse_records(raw, jobs)), len(raw.items)


def assert_same(a, a_jobs, b, b_jobs) -> None:
    """Two EventBatches hold the same events (job codes compared by their ids)."""
    a_ids, b_ids = list(a_jobs), list(b_jobs)
    for col in EVENT_COLUMNS:
        x, y = getattr(a, col), getattr(b, col)
        if col == "job":
            x, y = [a_ids[j] for j in x], [b_ids[j] for j in y]
        np.testing.assert_array_equal(x, y, err_msg=col)
        assert np.asarray(x).dtype == np.asarray(y).dtype or col == "job", col
    assert a.copy_seq.tolist() == b.copy_seq.tolist() and a.copy_n.tolist() == b.copy_n.tolist()
    assert a.skipped_seq.tolist() == b.skipped_seq.tolist()
    assert a.skipped_reason == b.skipped_reason
    assert [(s, a_ids[j], k) for s, j, k in a.kinds] == [(s, b_ids[j], k) for s, j, k in b.kinds]
    for col in ("seq", "kind", "a", "b"):
        np.testing.assert_array_equal(getattr(a.cuzk, col), getattr(b.cuzk, col), err_msg=col)
    assert a.markers == b.markers


def merged(batches):
    return merge_batches(batches)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(damage, max_size=6), st.lists(st.sampled_from(ODD), max_size=8), st.integers(0, 60))
def test_compiled_scan_matches_python_scan(ops, odd, at):
    data = apply(ops)
    cut = min(at * 37, len(data))
    data = data[:cut] + ("\n".join(odd) + "\n").encode() * bool(odd) + data[cut:]
    py_jobs = JobIds()
    want, found = python_scan(data, py_jobs)
    c_jobs = JobIds()
    ords = Ordinals()
    got = list(compiled.iter_chunks([(data, 0, len(data))], ords, c_jobs))
    assert ords.base == found
    assert_same(merged(got), c_jobs, want, py_jobs)


@pytest.mark.parametrize("piece", [1, 7, 100, 1 << 20])
def test_pieces_of_a_file_give_the_same_events(tmp_path, monkeypatch, piece):
    lines = [*LINES, *ODD, *LINES]
    data = ("\n".join(lines)).encode()  # the last line has no newline
    path = tmp_path / "run.log"
    path.write_bytes(data)
    want_jobs = JobIds()
    want, found = python_scan(data, want_jobs)
    monkeypatch.setattr(compiled, "PIECE_BYTES", piece)
    jobs = JobIds()
    ords = Ordinals()
    steps: list[int] = []
    with open(path, "rb") as f:
        got = list(compiled.iter_range(f.fileno(), 0, len(data), ords, jobs, steps.append))
    assert ords.base == found
    assert_same(merged(got), jobs, want, want_jobs)
    assert steps[-1] == len(data) and steps == sorted(steps)
    assert piece > len(data) or len(steps) > 3


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(damage, max_size=6),
    st.lists(st.sampled_from(ODD), max_size=4),
    st.integers(30, 400),
    st.sampled_from([1, 100, 1 << 20]),
    st.booleans(),
    st.sampled_from([7, 64, 1 << 20]),
    st.sampled_from([1, 40, 4 << 20]),
)
# Lines skipped at one place (two oversized, then the cut last line) keep their order.
@example([("truncate", 73)], ["CUZK_TIMING: prep_msm_ms="], 45, 1 << 20, True, 1 << 20, 4 << 20)
def test_lines_are_cut_and_skipped_alike(ops, odd, max_line, piece, shrunk, block, carry):
    """Lines of MAX_LINE bytes or more are skipped whole, and a file that shrinks loses its
    cut last line, the same way in both scanners, however the file is cut into pieces, and
    however the pure-Python one reads it (``block`` bytes at a time; a line's start held
    from ``carry`` bytes on as one growing buffer)."""
    from unittest import mock

    from viewer.io import source

    data = ("\n".join(odd) + "\n").encode() * bool(odd) + apply(ops)
    hi = len(data) + 50 * shrunk  # the file ends before the range: it shrank
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.object(source, "MAX_LINE", max_line),
        mock.patch.object(pure, "READ_BYTES", block),
        mock.patch.object(source, "LONG_CARRY", carry),
    ):
        path = Path(tmp) / "run.log"
        path.write_bytes(data)
        with open(path, "rb") as f, mock.patch.object(compiled, "PIECE_BYTES", piece):
            ords, jobs = Ordinals(), JobIds()
            got = merged(list(compiled.iter_range(f.fileno(), 0, hi, ords, jobs)))
            py_ords, py_jobs = Ordinals(), JobIds()
            want = merged(list(pure.iter_range(f.fileno(), 0, hi, py_ords, py_jobs)))
    assert ords.base == py_ords.base
    assert_same(got, jobs, want, py_jobs)


def test_open_log_is_the_same_with_either_scanner(tmp_path, monkeypatch):
    path = tmp_path / "run.log"
    path.write_text("\n".join([*LINES, *ODD, daemon_start(), *LINES]) + "\n")
    fast, fast_read = open_log(path), scan_log(path).consumed
    use_python(monkeypatch)
    assert not scanner.compiled()
    slow, slow_read = open_log(path), scan_log(path).consumed
    assert len(fast.sessions) == len(slow.sessions) == 3  # ODD starts a daemon too
    for a, b in zip(fast.sessions, slow.sessions, strict=True):
        assert a.partitions.equals(b.partitions)
        assert a.skipped == b.skipped
    assert fast_read == slow_read == path.stat().st_size


def test_cancel_stops_between_pieces(tmp_path, monkeypatch):
    from viewer.io import LoadCancelled

    path = tmp_path / "run.log"
    path.write_text("\n".join(LINES * 50) + "\n")
    monkeypatch.setattr(compiled, "PIECE_BYTES", 256)
    calls = iter(range(1000))
    with pytest.raises(LoadCancelled):
        open_log(path, cancel=lambda: next(calls) >= 3)


def test_a_read_error_names_the_file(tmp_path, monkeypatch):
    from viewer.io import LogError

    path = tmp_path / "run.log"
    path.write_text("\n".join(LINES) + "\n")

    def broken(*_):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(_cscan, "scan_file", broken)
    with pytest.raises(LogError, match=r"run\.log: cannot be read \(Input/output error\)"):
        open_log(path)


def test_the_built_scanner_follows_the_grammar():
    """One grammar: the tables the built module was compiled with (from _grammar.h) are
    those of grammar.py (a stale build fails here)."""
    assert grammar.tables() == _cscan.GRAMMAR


def test_scan_refuses_a_range_outside_the_buffer():
    with pytest.raises(ValueError):
        _cscan.scan(b"abc", 0, 4)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "x"
        p.write_bytes(b"x")
        fd = os.open(p, os.O_RDONLY)
        try:
            with pytest.raises(ValueError):
                _cscan.scan_file(fd, 5, 1, MAX_LINE)
            with pytest.raises(ValueError):
                _cscan.scan_file(fd, 0, 1, 0)
        finally:
            os.close(fd)


SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.fixture(scope="module")
def three_gpus(tmp_path_factory) -> Path:
    """A simulated 3-GPU log: blocks interleave, the multi-GPU matching has work to do."""
    from viewer.cli import main

    path = tmp_path_factory.mktemp("sim") / "three.log"
    args = ["simulate", "-o", str(path), "--events", "30000", "--gpus", "3", "--seed", "3"]
    assert main(args) in (0, None)
    return path


@pytest.mark.parametrize("name", [*sorted(p.name for p in SAMPLES.glob("*.log")), "three_gpus"])
def test_every_sample_reads_the_same_with_either_scanner(request, monkeypatch, name):
    """Scanner and kernel attribution (``compiled.match_blocks`` vs ``pure.match_blocks``)."""
    path = request.getfixturevalue("three_gpus") if name == "three_gpus" else SAMPLES / name
    fast = open_log(path)
    use_python(monkeypatch)
    slow = open_log(path)
    assert len(fast.sessions) == len(slow.sessions)
    for a, b in zip(fast.sessions, slow.sessions, strict=True):
        assert a.partitions.equals(b.partitions)
        assert a.skipped == b.skipped and a.notes == b.notes
    if name == "three_gpus":
        assert "3 GPUs" in " ".join(fast.sessions[0].notes)


@pytest.mark.parametrize("tail", [b"", b"TIMELINE,9,SYNTH_END,j,partition=0,synth_ms=12"])
def test_a_file_that_shrinks_while_read_loses_only_its_cut_line(tmp_path, either, tail):
    """Truncated under us (copytruncate): the partial last line is dropped, never parsed
    with cut numbers; the last line of a file that simply ends without a newline counts."""
    whole = ("\n".join(LINES) + "\n").encode()
    path = tmp_path / "run.log"
    path.write_bytes(whole + tail)
    want, found = python_scan(whole, JobIds())
    with open(path, "rb") as f:
        ords = Ordinals()
        shrunk = merged(
            list(scanner.iter_range(f.fileno(), 0, len(whole + tail) + 100, ords, JobIds()))
        )
        assert ords.base == found and shrunk.seq.tolist() == want.seq.tolist()
        ords = Ordinals()
        ended = merged(list(scanner.iter_range(f.fileno(), 0, len(whole + tail), ords, JobIds())))
    assert len(ended.seq) == len(want.seq) + (1 if tail else 0)
    if tail:
        assert ended.synth_ms[-1] == 12


def test_a_file_without_newlines_is_scanned_once(tmp_path):
    """Binary junk with no line end: every byte is looked at a bounded number of times
    (the last-line-end search covers only new bytes), and nothing is invented."""
    path = tmp_path / "junk.bin"
    junk = bytes(range(256)).replace(b"\n", b"").replace(b"\r", b"")
    path.write_bytes(junk * 40_000)  # 10 MB, one "line"
    with open(path, "rb") as f:
        res = _cscan.scan_file(f.fileno(), 0, path.stat().st_size, MAX_LINE)
    assert res["matches"] == 0 and res["tl_ord"] == b""


def test_every_odd_line_at_once_matches_python():
    data = ("\n".join([*LINES, *ODD]) + "\n").encode()
    py_jobs = JobIds()
    want, found = python_scan(data, py_jobs)
    c_jobs = JobIds()
    ords = Ordinals()
    got = merged(list(compiled.iter_chunks([(data, 0, len(data))], ords, c_jobs)))
    assert ords.base == found
    assert_same(got, c_jobs, want, py_jobs)


def test_an_empty_range_scans_nothing(tmp_path, either):
    path = tmp_path / "run.log"
    path.write_text("\n".join(LINES) + "\n")
    with open(path, "rb") as f:
        ords = Ordinals(7)
        got = list(scanner.iter_range(f.fileno(), 50, 50, ords, JobIds()))
    assert ords.base == 7 and sum(len(b.seq) for b in got) == 0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 60), st.one_of(st.integers(0, 30), st.just(-1))),
        max_size=60,
    )
)
def test_row_packing_is_the_same_in_c_and_python(spans):
    """``compiled.pack_sorted`` (the synthesis lanes' and the trace's row packing) gives the
    rows of ``pure.pack_sorted``: ties, back-to-back and zero-length intervals, and ends
    that never free their row (-1: inf)."""
    from viewer.io import compiled

    start = np.array([s for s, _ in spans], dtype=np.float64)
    end = np.array([np.inf if d < 0 else s + d for s, d in spans], dtype=np.float64)
    order = np.lexsort((end, start))
    s, e = start[order], end[order]
    got = compiled.pack_sorted(s, e)
    assert got.dtype == np.int32
    assert got.tolist() == pure.pack_sorted(s, e).tolist()


def test_row_packing_refuses_columns_of_two_lengths():
    from viewer.io import _cscan

    with pytest.raises(ValueError, match="differ in length"):
        _cscan.pack_sorted(np.zeros(3).tobytes(), np.zeros(2).tobytes())


@pytest.mark.parametrize("lines", [2_000, 60_000, 200_000])
def test_a_piece_weighs_a_small_share_of_the_file(tmp_path, lines):
    """The pieces a file is cut into weigh at most 1/PIECE_SHARE of it (but
    SMALL_PIECE_BYTES): the ~5 in flight and held stay a small part of a small log's
    memory; they cover it exactly, each cut at a line start."""
    path = tmp_path / "run.log"
    line = b"TIMELINE,1,SYNTH_START,job,partition=0 and some words after it\n"
    path.write_bytes(line * lines)
    size = path.stat().st_size
    with open(path, "rb") as f:
        pieces = compiled._Pieces(f.fileno(), 0, size)
        cut = []
        for a, b in pieces:
            cut.append((a, b))
            pieces.scanned(b - a, (b - a) // len(line))
    most = max(compiled.SMALL_PIECE_BYTES, size // compiled.PIECE_SHARE)
    assert max(b - a for a, b in cut) <= most + len(line)
    assert cut[0][0] == 0 and cut[-1][1] == size
    assert all(b == c for (_, b), (c, _) in zip(cut, cut[1:], strict=False))
    assert all(a % len(line) == 0 for a, _ in cut)
    if size > compiled.SMALL_PIECE_BYTES * compiled.PIECE_SHARE:
        assert len(cut) >= compiled.PIECE_SHARE - 1
