"""The restart detector's rolling-maximum prefilter must not change what it finds."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

from viewer.io.sessions import (
    NEXT_WINDOW,
    PREV_WINDOW,
    RESTART_DROP_MS,
    SessionSplit,
    _restarts,
    split_sessions,
)


def _first_restart(o: np.ndarray, w: np.ndarray | None = None) -> int | None:
    hits = _restarts(o, w)
    return hits[0] if hits else None


def reference(o: np.ndarray) -> int | None:
    """The definition: medians of the window before and of the event and the next ones."""
    n = len(o)
    if n < 2:
        return None
    before = np.concatenate([np.full(PREV_WINDOW, o[0]), o])
    prev = np.median(sliding_window_view(before, PREV_WINDOW)[:n], axis=1)
    after = np.concatenate([o, np.full(NEXT_WINDOW - 1, o[-1])])
    nxt = np.median(sliding_window_view(after, NEXT_WINDOW)[:n], axis=1)
    cond = (o < prev - RESTART_DROP_MS) & (nxt < prev - RESTART_DROP_MS)
    cond[0] = False
    hits = np.flatnonzero(cond)
    return int(hits[0]) if hits.size else None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-1500, 1500), max_size=60), st.booleans())
def test_prefilter_finds_what_the_definition_finds(steps, walk):
    o = np.array(steps, dtype=np.float64)
    if walk:
        o = np.cumsum(o)
    assert _first_restart(o) == reference(o)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-1500, 1500), st.integers(1, 12)), max_size=40),
    st.booleans(),
)
def test_folded_copies_find_what_the_repeated_events_find(runs, walk):
    """Events with exact copies folded into them (``w`` times in a row) split where the
    events written out in full split, and never at a copy."""
    o = np.array([v for v, _ in runs], dtype=np.float64)
    if walk:
        o = np.cumsum(o)
    w = np.array([k for _, k in runs], dtype=np.int64)
    hit = reference(np.repeat(o, w))
    heads = np.concatenate([[0], np.cumsum(w)[:-1]]).tolist()
    assert hit is None or hit in heads
    assert _first_restart(o, w) == (None if hit is None else heads.index(hit))


def whole_split(seq, offset, daemon_starts, copies) -> list[int]:
    """The split as first written: each run between daemon starts searched whole."""
    n = len(seq)
    starts = np.zeros(n, dtype=bool)
    edges = sorted({0, *(int(i) for i in np.searchsorted(seq, daemon_starts) if i < n), n})
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        i = a
        while i < b:
            starts[i] = True
            hit = _first_restart(offset[i:b].astype(np.float64), copies[i:b] + 1)
            if hit is None:
                break
            i += hit
    return (np.cumsum(starts) - 1).tolist()


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(-300, 600),  # step of the offset, or the offset a restart falls to
            st.sampled_from("....rg"),  # a step, a restart, a glitch (one offset low)
            st.sampled_from([0, 0, 0, 2]),  # copies folded into the event
            st.sampled_from([False] * 9 + [True]),  # a daemon start line before the event
        ),
        min_size=1,
        max_size=50,
    ),
    st.lists(st.integers(0, 50), max_size=6),
    st.booleans(),
)
def test_split_in_pieces_is_the_split_of_the_whole(rows, cuts, start_after):
    """Read in pieces cut anywhere (a restart among a piece's last events, confirmed by
    the next piece's first; a daemon start between pieces), the sessions are those of the
    whole log, and those of the split as first written."""
    at, offsets = 0, []
    for step, kind, _, _ in rows:
        at = abs(step) if kind == "r" else at + step
        offsets.append(abs(step) if kind == "g" else at)
    offset = np.array(offsets, np.int64)
    copies = np.array([c for _, _, c, _ in rows], np.int64)
    seq = np.arange(len(rows), dtype=np.int64) * 10 + 10
    daemon = [int(q) - 5 for q, (*_, d) in zip(seq, rows, strict=True) if d]
    if start_after:  # a daemon start after the last event starts nothing
        daemon.append(int(seq[-1]) + 5)
    daemon = np.array(daemon, np.int64)
    want = whole_split(seq, offset, daemon, copies)
    assert split_sessions(seq, offset, daemon, copies).tolist() == want
    split = SessionSplit()
    got: list[int] = []
    n = len(rows)
    edges = sorted({0, n, *(min(c, n) for c in cuts)})
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        ahead = (seq[b : b + NEXT_WINDOW - 1], offset[b:], copies[b:])
        got += split.feed(seq[a:b], offset[a:b], daemon, copies[a:b], ahead).tolist()
    assert got == want


def test_many_daemon_runs_are_built_in_one_pass(tmp_path, monkeypatch):
    """300 daemon runs in one log: the calls are paired and the tables built once for all
    of them (3000 runs took 26 s, one pandas build per run; a block builder per run took
    1 s more than one for all), and each run is what it is when read alone."""
    from io_logs import cuzk_block, daemon_start, partition_lines, worker_started

    from viewer.io import assemble, open_log

    def run(r: int) -> list[str]:
        lines = [daemon_start(), worker_started(0, 0), worker_started(1, r % 2)]
        for p in range(3):
            call = partition_lines(f"job-{r % 7}", p, 10 + 600 * p, worker=p % 2)
            lines += [*call[:5], *cuzk_block(10 + p, 5), call[5]]
        return lines

    calls = {"result": 0, "session_tables": 0}
    for owner, name in ((assemble.Pairing, "result"), (assemble, "session_tables")):
        real = getattr(owner, name)

        def counted(*a, _real=real, _name=name, **k):
            calls[_name] += 1
            return _real(*a, **k)

        monkeypatch.setattr(owner, name, counted)
    path = tmp_path / "restarts.log"
    path.write_text("\n".join(line for r in range(300) for line in run(r)) + "\n")
    tl = open_log(path)
    assert len(tl.sessions) == 300 and calls == {"result": 1, "session_tables": 1}
    for r in (0, 1, 299):
        alone = tmp_path / f"run{r}.log"
        alone.write_text("\n".join(run(r)) + "\n")
        (want,) = open_log(alone).sessions
        got = tl.sessions[r]
        assert got.index == r and want.index == 0
        for table in ("partitions", "jobs", "workers"):
            assert getattr(got, table).equals(getattr(want, table)), table
        assert (got.skipped, got.notes, got.events, got.start_ms, got.end_ms) == (
            want.skipped, want.notes, want.events, want.start_ms, want.end_ms,
        )  # fmt: skip


def test_split_at_every_cut_is_the_split_of_the_whole():
    """Logs of rises, restarts, one-event glitches and slow falls, cut at every place in
    two and three pieces: a restart confirmed or refuted by the next piece's first events,
    a window reaching back into the piece before."""
    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(2, 30))
        kind = rng.choice(list("..rgf"), n)
        at, offsets = int(rng.integers(0, 3000)), []
        for k in kind:
            at = {"r": int(rng.integers(0, 500)), "f": at - 700}.get(
                k, at + int(rng.integers(-50, 400))
            )
            offsets.append(int(rng.integers(0, 500)) if k == "g" else at)
        offset = np.array(offsets, np.int64)
        copies = rng.choice([0, 0, 0, 1, 4], n).astype(np.int64)
        seq = np.arange(n, dtype=np.int64) * 10 + 10
        daemon = seq[rng.random(n) < 0.05] - 5  # between two events
        daemon = np.sort(np.concatenate([daemon, seq[rng.random(n) < 0.03]]))  # at one
        want = whole_split(seq, offset, daemon, copies)
        for cut in range(1, n):
            for cut2 in sorted({cut, min(n, cut + 1), min(n, cut + 3)}):
                split, got = SessionSplit(), []
                for a, b in ((0, cut), (cut, cut2), (cut2, n)):
                    ahead = (seq[b : b + NEXT_WINDOW - 1], offset[b:], copies[b:])
                    got += split.feed(seq[a:b], offset[a:b], daemon, copies[a:b], ahead).tolist()
                assert got == want, (offset.tolist(), copies.tolist(), cut, cut2)


def test_many_restarts_in_one_piece_are_found_in_one_pass(monkeypatch):
    """2000 runs told apart by their offsets alone (no daemon start line), in one piece:
    one search over the piece finds them all (a search over the rest of the piece per
    restart made 30 000 restarts quadratic), and where the split as first written does."""
    from viewer.io import sessions

    run = np.array([10, 400, 900, 1500, 2600, 3100, 4200, 5000, 5001, 5900], np.int64)
    offset = np.tile(run, 2000)
    offset[::7] += 3  # not every run alike
    seq = np.arange(len(offset), dtype=np.int64)
    copies = np.zeros(len(offset), np.int64)
    seen = []
    real = sessions._restarts
    monkeypatch.setattr(sessions, "_restarts", lambda o, *a: seen.append(len(o)) or real(o, *a))
    got = split_sessions(seq, offset, np.zeros(0, np.int64), copies)
    assert seen == [len(offset)]
    assert got.tolist() == [i // len(run) for i in range(len(offset))]
    monkeypatch.setattr(sessions, "_restarts", real)
    assert whole_split(seq[:300], offset[:300], np.zeros(0), copies[:300]) == got[:300].tolist()
