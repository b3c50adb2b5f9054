"""Pairing events into calls, vectorized over every session at once, against the rules
written out one event at a time (docs/CONTRACTS.md, "Pairing")."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.io.grammar import GPU_END, GPU_PICKUP, GPU_START, SYNTH_END
from viewer.io.pairing import TIME_COLUMNS, Pairing, pair_events

GPU_EVENTS = (GPU_PICKUP, GPU_START, GPU_END)


def reference(rows, sessions):
    """(calls by (session, job, partition), skipped, accepted, bounds) per the rules."""
    calls: dict[tuple, dict] = {}
    skipped = [dict() for _ in range(sessions)]
    kept = []
    for s in range(sessions):
        mine = [r for r in rows if r["session"] == s]
        partitioned = {r["job"] for r in mine if r["partition"] >= 0}
        seen = set()
        for r in mine:
            if r["partition"] < 0 and r["job"] in partitioned:
                skipped[s]["malformed_timeline"] = skipped[s].get("malformed_timeline", 0) + 1
                continue
            key = (s, r["job"], r["partition"], r["event"])
            if key in seen:
                skipped[s]["duplicate_event"] = skipped[s].get("duplicate_event", 0) + 1
                continue
            seen.add(key)
            kept.append(r)
            calls.setdefault((s, r["job"], r["partition"]), {})[r["event"]] = r
    for (s, *_), events in calls.items():
        start, end = events.get(GPU_START), events.get(GPU_END)
        if start and end and end["offset"] < start["offset"]:
            del events[GPU_END]
            kept.remove(end)
            skipped[s]["gpu_end_before_start"] = skipped[s].get("gpu_end_before_start", 0) + 1
    accepted = [sum(r["session"] == s for r in kept) for s in range(sessions)]
    bounds = [
        (min(o), max(o)) if (o := [r["offset"] for r in kept if r["session"] == s]) else (0, 0)
        for s in range(sessions)
    ]
    return calls, skipped, accepted, bounds


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),  # session
            st.integers(0, 3),  # job
            st.integers(-1, 3),  # partition
            st.integers(0, 5),  # event
            st.integers(0, 2),  # worker
            st.integers(0, 50),  # offset
            st.sampled_from([0, 0, 0, 1, 3]),  # exact copies folded into the row
        ),
        max_size=60,
    ),
    st.lists(st.integers(0, 60), max_size=5),
)
def test_pairing_follows_the_rules(drawn, cuts):
    """Whole, and read in pieces cut anywhere (``cuts``): a call going on in the next
    piece, its repeats or its torn events there, a session starting mid-piece."""
    drawn = sorted(drawn, key=lambda r: r[0])  # events come grouped by session
    rows = [
        dict(
            session=s, job=j, partition=p, event=e, offset=o, seq=k << 20,
            worker=w if e in GPU_EVENTS else -1, synth_ms=float(o % 7), gpu_ms=float(o % 5),
            copies=c,
        )
        for k, (s, j, p, e, w, o, c) in enumerate(drawn)
    ]  # fmt: skip
    sessions = max((r["session"] for r in rows), default=0) + 1
    ev = {
        "job": np.array([r["job"] for r in rows], np.int32),
        "partition": np.array([r["partition"] for r in rows], np.int32),
        "event": np.array([r["event"] for r in rows], np.int8),
        "offset": np.array([r["offset"] for r in rows], np.int64),
        "worker": np.array([r["worker"] for r in rows], np.int32),
        "seq": np.array([r["seq"] for r in rows], np.int64),
        "synth_ms": np.array([r["synth_ms"] for r in rows]),
        "gpu_ms": np.array([r["gpu_ms"] for r in rows]),
        "copies": np.array([r["copies"] for r in rows], np.int64),
    }
    session = np.array([r["session"] for r in rows], np.int32)
    want, skipped, accepted, bounds = reference(
        [r for r in rows for _ in range(1 + r["copies"])], sessions
    )
    check(pair_events(ev, session, sessions), want, skipped, accepted, bounds)
    pairing = Pairing()
    edges = sorted({0, len(rows), *(min(c, len(rows)) for c in cuts)})
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        pairing.feed({k: v[a:b] for k, v in ev.items()}, session[a:b])
    check(pairing.result(sessions), want, skipped, accepted, bounds)


def check(got, want, skipped, accepted, bounds) -> None:
    c = got.calls
    columns = (c["session"].tolist(), c["job"].tolist(), c["partition"].tolist())
    keys = list(zip(*columns, strict=True))
    assert keys == list(want)  # one call each, in order of first appearance
    for i, key in enumerate(keys):
        events = want[key]
        for code, name in TIME_COLUMNS.items():
            value = events[code]["offset"] if code in events else math.nan
            assert c[name][i] == value or (math.isnan(c[name][i]) and math.isnan(value))
        synth = events[SYNTH_END]["synth_ms"] if SYNTH_END in events else math.nan
        gpu = events[GPU_END]["gpu_ms"] if GPU_END in events else math.nan
        assert np.array_equal([c["synth_ms"][i], c["gpu_ms"][i]], [synth, gpu], equal_nan=True)
        order = (GPU_START, GPU_PICKUP, GPU_END)  # whose worker wins
        worker = next((events[e]["worker"] for e in order if e in events), -1)
        assert c["worker"][i] == worker
        assert c["start_seq"][i] == events.get(GPU_START, {"seq": -1})["seq"]
        assert c["end_seq"][i] == events.get(GPU_END, {"seq": -1})["seq"]
    assert [dict(x) for x in got.skipped] == skipped
    assert got.accepted.tolist() == accepted
    assert list(zip(got.start_ms.tolist(), got.end_ms.tolist(), strict=True)) == bounds
