"""Property tests: random damage to a valid log never makes the reader raise or invent."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from io_logs import cuzk_block, simple_log

from viewer.io import LogError, open_log

LINES = simple_log(jobs=3, parts=4)
LINES[10:10] = cuzk_block(5, 7)
# A whole line: one cut inside its detail ("partition=") is torn, not readable.
VALID = re.compile(rb"TIMELINE,\d+,[A-Z_]+,[!-+\--~]+(?:,[a-z_]+=\w+)+\r?(?:\n|$)")

damage = st.one_of(
    st.tuples(st.just("truncate"), st.integers(0, 4000)),
    st.tuples(st.just("junk"), st.integers(0, 4000), st.binary(min_size=1, max_size=20)),
    st.tuples(st.just("duplicate"), st.integers(0, len(LINES) - 1)),
    st.tuples(st.just("swap"), st.integers(0, len(LINES) - 2)),
    st.tuples(st.just("crlf"), st.integers(0, len(LINES) - 1)),
    st.tuples(st.just("drop_newline"), st.integers(0, len(LINES) - 1)),
    st.tuples(st.just("cr_only"), st.integers(0, len(LINES) - 1)),
)


def apply(ops: list[tuple]) -> bytes:
    lines = [line.encode() for line in LINES]
    for op in ops:
        kind, at = op[0], op[1]
        if kind == "duplicate":
            lines.insert(at % len(lines), lines[at % len(lines)])
        elif kind == "swap" and len(lines) > 1:
            i = at % (len(lines) - 1)
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif kind == "crlf":
            lines[at % len(lines)] += b"\r"
        elif kind in ("drop_newline", "cr_only") and len(lines) > 1:
            i = at % (len(lines) - 1)
            lines[i : i + 2] = [lines[i] + b"\r" * (kind == "cr_only") + lines[i + 1]]
    data = b"\n".join(lines) + b"\n"
    for op in ops:
        if op[0] == "junk":
            at = op[1] % (len(data) + 1)
            data = data[:at] + op[2] + data[at:]
    for op in ops:
        if op[0] == "truncate":
            data = data[: max(len(data) - op[1], 0)]
    return data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(damage, max_size=8))
def test_damage_never_raises_or_invents(ops):
    data = apply(ops)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "damaged.log"
        path.write_bytes(data)
        try:
            timeline = open_log(path)
        except LogError:
            assert not VALID.search(data), "a readable TIMELINE line was rejected"
            return
    assert timeline.events <= data.count(b"TIMELINE,")
    for session in timeline.sessions:
        assert session.events == int(
            np.isfinite(
                session.partitions[
                    ["synth_start", "synth_end", "queued", "pickup", "gpu_start", "gpu_end"]
                ].to_numpy()
            ).sum()
        )
        for job in session.jobs["job_id"]:
            assert job.encode() in data
