"""Layers of the same partitions hold their keys and rows once (issue 27, item 9: the
window on 1.5 M one-call jobs), and the lanes draw what they drew with a copy each."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.hostile.dense import dense_jobs
from viewer.io import open_log
from viewer.lanes import lod
from viewer.lanes.data import build_lanes
from viewer.ui.palette import Theme
from viewer.ui.view.lanes import LaneGroupItem

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _held(lanes) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {
        f"{g.name}/{name}": (stack.data.level(0).key, stack.data.row)
        for g in lanes.groups
        for name, stack in g.stacks().items()
    }


def test_a_workers_pickups_and_calls_and_a_rows_waits_share_their_keys_and_rows(
    tmp_path,
) -> None:
    timeline = open_log(dense_jobs(tmp_path / "dense.log", 3000, varied=True))
    held = _held(build_lanes(timeline.sessions[0]))
    # A job a partition, in order: a job's key is its row, and the four arrays one.
    for layers in (("GPU 0/bar", "GPU 0/pickup"), ("synthesis/synth", "synthesis/queue")):
        arrays = {id(a) for name in layers for a in held[name]}
        assert len(arrays) == 1, layers
    key, row = held["GPU 0/busy"]
    assert key.strides == (0,) and row.strides == (0,)  # one value each, held once
    assert (key == 0).all() and (row == -1).all() and len(key) > 1000


@pytest.mark.parametrize("name", ["phase8_pw20.log", "two_gpus.log", "damaged.log"])
def test_the_lanes_draw_the_same_shared_or_not(qapp, name, monkeypatch) -> None:
    session = open_log(SAMPLES / name).sessions[0]
    theme = Theme.from_palette(qapp.palette())

    def drawn() -> list:
        lanes = build_lanes(session)
        out = []
        x0, x1 = lanes.x_min, lanes.x_max
        for px in ((x1 - x0) / 1400, (x1 - x0) / 40_000):
            for group in lanes.groups:
                if group.is_counters:
                    continue
                item = LaneGroupItem(group, x0, x1, theme, lanes.kernel_parts)
                item.prepare(x0, x0 + (x1 - x0) / 3, px)
                runs = [(b.color().rgba(), f, c) for b, f, c in item._batch.runs]
                out.append((item._batch.buffer.copy(), runs, item.part_count()))
        return out

    shared = drawn()
    monkeypatch.setattr(lod.Stack, "share", lambda self, others: None)
    apart = drawn()
    assert len(shared) == len(apart)
    for (a, ra, pa), (b, rb, pb) in zip(shared, apart, strict=True):
        assert np.array_equal(a, b) and ra == rb and pa == pb


def test_jobs_of_many_partitions_share_their_layers_keys_and_rows_apart() -> None:
    held = _held(build_lanes(open_log(SAMPLES / "phase8_pw20.log").sessions[0]))
    bar, pickup, kernel = held["GPU 0/bar"], held["GPU 0/pickup"], held["GPU 0/kernel"]
    assert bar[0] is not bar[1] and not np.array_equal(bar[0], bar[1])
    assert pickup[0] is bar[0] and pickup[1] is bar[1]
    assert kernel[0] is bar[0] and kernel[1] is bar[1]
