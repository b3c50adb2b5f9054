"""Level of detail: a zoomed-out view draws a few rectangles per pixel column and every idle gap."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ui.lod_reference import coalesce
from viewer.lanes.data import GAP_STARVED, Lane, LaneGroup
from viewer.lanes.lod import MIXED, Intervals
from viewer.ui.palette import Theme
from viewer.ui.view.lanes import LaneGroupItem

WIDTH_PX = 1400


def back_to_back(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` touching-or-nearly intervals of 10 jobs in turn, 50-150 ms long."""
    rng = np.random.default_rng(seed)
    length = rng.uniform(50, 150, n)
    pause = rng.uniform(0, 3, n)
    start = np.cumsum(length + pause) - length
    return start, start + length, (np.arange(n) // 10 % 8).astype(np.int32)


def per_column(start: np.ndarray, x0: float, px: float) -> int:
    column = np.floor((start - x0) / px).astype(np.int64)
    return int(np.bincount(column - column.min()).max())


@pytest.mark.parametrize("n", [10**5, 10**6])
def test_zoomed_out_view_draws_a_few_rects_per_pixel_column(n: int) -> None:
    start, end, key = back_to_back(n)
    iv = Intervals.make(start, end, key)
    x0, x1 = start[0], end[-1]
    px = (x1 - x0) / WIDTH_PX
    s, e, k = coalesce(iv.start, iv.end, iv.key, px)
    assert len(s) <= 3 * WIDTH_PX
    assert per_column(s, x0, px) <= 3
    assert (e - s >= px * 0.999).all()
    # Merged runs spanning several jobs say so instead of borrowing one job's colour.
    assert (k == MIXED).any()


def test_coalesce_keeps_wide_bars_and_holes_of_a_pixel() -> None:
    start = np.array([0.0, 100.0, 200.0, 202.0, 204.0, 300.0])
    end = np.array([90.0, 190.0, 201.0, 203.0, 206.0, 400.0])
    key = np.array([0, 1, 2, 2, 3, 4], dtype=np.int32)
    s, e, k = coalesce(start, end, key, px=5.0)
    assert s.tolist() == [0.0, 100.0, 200.0, 300.0]
    assert e.tolist() == [90.0, 190.0, 206.0, 400.0]
    assert k.tolist() == [0, 1, MIXED, 4]


def test_visible_cuts_with_searchsorted() -> None:
    start, end, key = back_to_back(1000)
    iv = Intervals.make(start, end, key)
    sl = iv.visible(start[100] + 1, start[200] - 1)
    assert sl.start in (99, 100)
    assert sl.stop == 200
    assert iv.at((start[5] + end[5]) / 2) == 5
    assert iv.at(-100.0) == -1


def busy_group(n: int, gap_px: float = 2.0) -> tuple[LaneGroup, float, float, float, float]:
    """A GPU group of two workers with ``n`` calls and one idle gap of ``gap_px`` pixels."""
    start, end, key = back_to_back(n)
    x0, x1 = float(start[0]), float(end[-1])
    px = (x1 - x0) / WIDTH_PX
    gap_at = float(start[n // 2])
    shift = gap_px * px
    start = np.where(start >= gap_at, start + shift, start)
    end = np.where(start >= gap_at, end + shift, end)
    x1 += shift
    rows = np.arange(n)
    workers = [
        Lane(
            f"GPU 0 · worker {w}",
            "worker",
            {
                "bar": Intervals.make(start[w::2], end[w::2], key[w::2], rows[w::2]),
                "kernel": Intervals.make(start[w::2] + 10, end[w::2] - 10, key[w::2], rows[w::2]),
            },
            gpu=0,
        )
        for w in (0, 1)
    ]
    busy = Lane(
        "GPU 0 · busy",
        "busy",
        {
            "busy": Intervals.make(start, end, np.zeros(n, np.int32)),
            "gap": Intervals.make([gap_at + shift - shift], [gap_at + shift], [GAP_STARVED]),
        },
        gpu=0,
    )
    group = LaneGroup("GPU 0", [*workers, busy])
    y = 20.0
    for lane in group.lanes:
        lane.top, lane.height = y, 20.0
        y += 24.0
    group.top, group.bottom = 0.0, y
    return group, x0, x1, px, gap_at


@pytest.mark.parametrize("n", [10**5, 10**6])
def test_group_item_prepares_few_rects_and_keeps_a_two_pixel_gap(qapp, n: int) -> None:
    group, x0, x1, px, gap_at = busy_group(n)
    theme = Theme.from_palette(qapp.palette())
    item = LaneGroupItem(group, x0, x1, theme)
    item.prepare(x0, x1, px)
    lanes_drawn = 5  # two bar layers, two kernel layers, one busy layer (plus the gap)
    assert item.rect_count() <= 3 * WIDTH_PX * lanes_drawn + 10
    rects = item._batch.buffer
    starved = theme.gap[GAP_STARVED].rgba()
    gap_rects = np.concatenate(
        [
            rects[first : first + count]
            for brush, first, count in item._batch.runs
            if brush.color().rgba() == starved
        ]
    )
    assert len(gap_rects) == 1
    x, _, w, _ = gap_rects[0]
    assert x == pytest.approx(gap_at) and w == pytest.approx(2 * px)
