"""Torn lines must not steer a verdict (issue 27 items 4 and 5): a CUZK_TIMING figure that
cannot fit its call is not believed (two numbers glued by a torn write, a huge mutex wait or
prep), and an offset that breaks the order of its own partition, or lies far outside its
session, is skipped and counted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viewer.analysis import summarize
from viewer.analysis.floors import floors
from viewer.io import open_log, pairing
from viewer.whatif import what_if

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


def _damaged(tmp_path: Path, old: str, new: str) -> Path:
    """The Phase 8 sample with the middle line holding ``old`` changed to hold ``new``."""
    lines = SAMPLE.read_text().splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if old in line]
    i = hits[len(hits) // 2]
    lines[i] = lines[i].replace(old, new, 1)
    path = tmp_path / "torn.log"
    path.write_text("".join(lines))
    return path


def _with(tmp_path: Path, line_no: int, new_offset: str) -> Path:
    lines = SAMPLE.read_text().splitlines(keepends=True)
    parts = lines[line_no - 1].split(",", 2)
    assert parts[0] == "TIMELINE"
    lines[line_no - 1] = ",".join([parts[0], new_offset, parts[2]])
    path = tmp_path / "torn.log"
    path.write_text("".join(lines))
    return path


@pytest.fixture(scope="module")
def clean():
    return summarize(open_log(SAMPLE).sessions[0])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("gpu_total_ms=3", "gpu_total_ms=3746374"),  # two figures glued: 3746 and 3746...
        ("mutex_wait_ms=0", "mutex_wait_ms=90000000"),
        ("pre_lock_cpu_ms=1", "pre_lock_cpu_ms=2499720001"),
    ],
)
def test_a_figure_that_cannot_fit_its_call_is_not_believed(tmp_path, clean, old, new) -> None:  # noqa: ANN001
    session = open_log(_damaged(tmp_path, old, new)).sessions[0]
    sm = summarize(session)
    assert sm.kernel.mean_ms == pytest.approx(clean.kernel.mean_ms, rel=0.01)
    assert sm.verdict.kind == clean.verdict.kind == "gpu-bound"
    f = floors(session)
    assert all(v >= 0 for v in f.values().values() if v is not None and np.isfinite(v))
    assert f.worker_s == pytest.approx(floors(clean.session).worker_s, rel=0.05)
    # The damaged block, and at most the one it was swapped with while the blocks of two
    # workers were put in the order they reached the mutex.
    assert 1 <= session.skipped.get("cuzk_timing_misfit", 0) <= 2
    assert any("did not fit" in n for n in session.notes)
    w = what_if(session)
    assert w.baseline.s_per_proof == pytest.approx(clean.throughput.measured_s_per_proof, rel=0.05)


def test_every_block_of_the_bundled_logs_fits_its_call() -> None:
    root = SAMPLE.parent
    for path in sorted(root.glob("*.log")):
        for s in open_log(path).sessions:
            assert s.skipped.get("cuzk_timing_misfit", 0) == 0, path.name


def _same_story(sm, clean) -> None:  # noqa: ANN001
    assert sm.verdict.kind == clean.verdict.kind
    f, g = floors(sm.session), floors(clean.session)
    assert f.synthesis_s == pytest.approx(g.synthesis_s, rel=0.03)
    assert f.arrival_s == pytest.approx(g.arrival_s, rel=0.03)
    assert sm.session.end_ms == pytest.approx(clean.session.end_ms, abs=1000)
    assert sm.throughput.measured_s_per_proof == pytest.approx(
        clean.throughput.measured_s_per_proof, rel=0.01
    )


def test_a_synth_start_past_its_end_is_skipped(tmp_path, clean) -> None:  # noqa: ANN001
    """SYNTH_START of job 2's partition 0 torn to 4 042 075 s: the synthesis lasted
    -4 042 075 s and the verdict changed."""
    s = open_log(_with(tmp_path, 189, "4042151000")).sessions[0]
    assert s.skipped.get("offset_out_of_order") == 1
    _same_story(summarize(s), clean)


def test_an_offset_of_ten_to_the_fourteen_is_skipped(tmp_path, clean) -> None:  # noqa: ANN001
    """One GPU_QUEUE line at 10^14 ms: the arrival floor bound at 2 * 10^11 s/proof."""
    s = open_log(_with(tmp_path, 335, "100000000000000")).sessions[0]
    assert s.skipped.get("offset_out_of_order", 0) + s.skipped.get("offset_outside_session", 0) == 1
    _same_story(summarize(s), clean)


def test_a_synth_start_torn_far_out_is_skipped(tmp_path, clean) -> None:  # noqa: ANN001
    s = open_log(_with(tmp_path, 68, "100000000000000")).sessions[0]
    assert s.skipped.get("offset_out_of_order", 0) + s.skipped.get("offset_outside_session", 0) == 1
    _same_story(summarize(s), clean)


def test_the_bundled_logs_have_no_such_offsets() -> None:
    for path in sorted(SAMPLE.parent.glob("*.log")):
        for s in open_log(path).sessions:
            for reason in ("offset_out_of_order", "offset_outside_session"):
                assert s.skipped.get(reason, 0) == 0, (path.name, reason)


def _late_by_one_table(times: list[np.ndarray], ok: np.ndarray) -> np.ndarray:
    """The calls with an event below the running max of those before it, as the calls x 6
    table and its running max found them (18 MB on a 10^6-event log): the reference."""
    t = np.stack(times, axis=1)
    t[~ok] = np.nan
    before = np.fmax.accumulate(np.where(np.isnan(t), -np.inf, t), axis=1)
    return np.flatnonzero((t[:, 1:] + pairing.DISORDER_MS < before[:, :-1]).any(axis=1))


@pytest.mark.parametrize("seed", range(8))
def test_calls_out_of_order_are_found_as_the_whole_table_found_them(seed) -> None:
    """Calls in order, a few with an event torn far off or a little late, NaN where an event
    was not seen, some calls torn whole: the same calls go to the pairwise count as the
    calls x 6 table sent there, and the times given are not written."""
    rng = np.random.default_rng(seed)
    n = 3000
    times = [np.cumsum(rng.uniform(0, 400, (n, 6)), axis=1)[:, k].copy() for k in range(6)]
    for col in times:
        col[rng.random(n) < 0.2] = np.nan
        bad = rng.random(n) < 0.02
        col[bad] += rng.choice([-1e7, -5e3, -900.0, 1e9], int(bad.sum()))
    ok = rng.random(n) > 0.05
    given = [c.copy() for c in times]
    got = pairing._late(times, ok)
    want = _late_by_one_table([c.copy() for c in times], ok)
    assert len(want) > 50 and got.tolist() == want.tolist()
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(times, given, strict=True))
