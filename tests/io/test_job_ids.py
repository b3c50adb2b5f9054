"""``records.JobIds``: job ids numbered in order of first appearance, as a dict of the ids as
text numbers them, held in arrays (issue 27 item 9: a dict's 1.5 M str keys left the
interpreter's small-object arenas half empty after the read, ~55 MB of a window's peak)."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.io import records
from viewer.io.reader import scan_log
from viewer.io.records import JobIds, job_codes, job_names
from viewer.model.keys import TEXT

#: Ids as the scanners hand them on: bytes, UTF-8 or not, a few of them short and alike.
IDS = st.lists(
    st.one_of(
        st.sampled_from([b"a", b"b", b"job-1", b"job-2", "\u00e9t\u00e9".encode(), b"\xff\xfe"]),
        st.binary(min_size=0, max_size=12),
        st.binary(min_size=13, max_size=40),  # (numpy holds these out of line)
    ),
    max_size=30,
)


def dict_codes(ids: list[bytes], held: dict[str, int]) -> list[int]:
    """The reference: the dict of the ids as text that ``JobIds`` stands for."""
    return [held.setdefault(j.decode("utf-8", "surrogateescape"), len(held)) for j in ids]


def dict_names(held: dict[str, int]) -> list[str]:
    return [j.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for j in held]


def _both(pieces: list[list[bytes]]) -> tuple[list[list[int]], list[list[int]], JobIds, dict]:
    ids, held = JobIds(), {}
    got = [job_codes(p, ids) for p in pieces]
    want = [dict_codes(p, held) for p in pieces]
    return got, want, ids, held


def _assert_like_a_dict(pieces: list[list[bytes]]) -> None:
    got, want, ids, held = _both(pieces)
    assert got == want
    assert len(ids) == len(held) and list(ids) == list(held)  # the exact text, in code order
    names = job_names(ids)
    assert names.dtype == TEXT and names.tolist() == dict_names(held)


@settings(max_examples=300, deadline=None)
@given(st.lists(IDS, max_size=8))
def test_codes_and_names_are_a_dicts(pieces: list[list[bytes]]) -> None:
    _assert_like_a_dict(pieces)


@settings(max_examples=300, deadline=None)
@given(st.lists(IDS, max_size=8), st.integers(1, 4))
def test_ids_whose_hashes_collide_are_told_apart_by_their_text(
    pieces: list[list[bytes]], buckets: int
) -> None:
    """A hash of a few values (every id collides with others): the same codes."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(records, "_hash", lambda text: len(text) % buckets)
        _assert_like_a_dict(pieces)


def test_a_collision_found_in_a_later_piece_keeps_both_ids_apart(monkeypatch) -> None:
    monkeypatch.setattr(records, "_hash", lambda text: 7)
    _assert_like_a_dict([[b"x", b"y"], [b"z", b"x"], [b"y", b"w", b"z"], [b"w"]])


def test_many_ids_hold_no_object_each() -> None:
    """200 000 ids numbered: the interpreter's small objects grow by far fewer than the ids
    (a dict held a str and an entry each)."""
    ids = JobIds()
    pieces = [
        [f"{i:08d}-5d1e-4c3b-8a2f-0e9d8c7b6a5f".encode() for i in range(a, a + 20_000)]
        for a in range(0, 200_000, 20_000)
    ]
    gc.collect()
    before = sys.getallocatedblocks()
    for piece in pieces:
        job_codes(piece, ids)
    del piece
    gc.collect()
    assert sys.getallocatedblocks() - before < 2_000
    assert len(ids) == 200_000
    assert job_names(ids)[123_456] == "00123456-5d1e-4c3b-8a2f-0e9d8c7b6a5f"


def test_the_reader_numbers_jobs_in_arrays(tmp_path) -> None:  # noqa: ANN001
    """A scan's ids are a ``JobIds``, numbered in order of first appearance (the sessions
    number their jobs again: the scan's own order is the one to check)."""
    log = tmp_path / "ids.log"
    lines = []
    for t, job in enumerate([b"job-c", b"job-a", b"job-b"]):
        lines.append(b"TIMELINE,%d,SYNTH_START,%s,kind=window-post" % (10 * t, job))
        lines.append(b"TIMELINE,%d,SYNTH_END,%s,synth_ms=5" % (10 * t + 5, job))
    log.write_bytes(b"\n".join(lines) + b"\n")
    scan = scan_log(log)
    assert isinstance(scan.jobs, JobIds)
    assert list(scan.jobs) == ["job-c", "job-a", "job-b"]
    assert job_names(scan.jobs).tolist() == ["job-c", "job-a", "job-b"]


def test_ids_a_few_at_a_time_are_held_in_few_arrays() -> None:
    """A followed log brings an id a poll: ids gather as text before they become an array
    (an array each held 470 bytes an id), and a poll's names stay one array."""
    ids, held = JobIds(), {}
    for i in range(3 * records.CHUNK + 5):
        one = [f"job-{i}".encode()]
        assert job_codes(one, ids) == dict_codes(one, held)
    assert len(ids._chunks) == 3 and len(ids._pending) == 5
    assert job_names(ids).tolist() == dict_names(held)


def test_a_collision_does_not_number_every_later_id_alone(monkeypatch) -> None:  # noqa: ANN001
    """Two ids of one hash in every piece: the pieces' other new ids still go to the index
    a piece at a time and to arrays of CHUNK (one at a time, an array and a run each, 20
    pieces of 5000 ids took 3.3 s and 100 000 arrays)."""
    monkeypatch.setattr(records, "_hash", lambda text: 1 if text in ("p", "q") else hash(text))
    ids, held = JobIds(), {}
    for piece in range(20):
        ids_ = [b"p", b"q", *(b"%d-%d" % (piece, i) for i in range(5000))]
        assert job_codes(ids_, ids) == dict_codes(ids_, held)
    assert len(ids._chunks) <= len(held) // records.CHUNK + 1
    assert len(ids._index.runs) <= 20
    assert list(ids) == list(held)


@pytest.mark.parametrize("n", [0, 1])
def test_no_or_one_id(n: int) -> None:
    ids = JobIds()
    assert job_codes([b"only"] * n, ids) == [0] * n
    assert job_names(ids).tolist() == ["only"] * n and isinstance(job_names(ids), np.ndarray)
