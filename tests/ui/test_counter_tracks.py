"""Counter tracks under the GPU lanes and the kernels inside the CUDA regions, both ways:
session -> what is drawn, and zoom -> what is prepared (O(pixels))."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ui.conftest import phase8_calls, timeline_of
from tests.ui.test_timeline_view import scene_point, view  # noqa: F401
from viewer.analysis.counters import COUNTERS, counters
from viewer.lanes.data import KERNEL_PARTS
from viewer.model import build_session
from viewer.ui.view.lanes import KERNEL_BAND
from viewer.ui.view.timeline_view import TimelineView


def near(got, want, tol: int = 3) -> None:
    """Colours equal but for the grab's rounding."""
    assert (
        max(abs(a - b) for a, b in zip(got.getRgb()[:3], want.getRgb()[:3], strict=True)) <= tol
    ), (
        got.name(),
        want.name(),
    )


def counter_lane(view: TimelineView, key: str):  # noqa: F811
    return next(lane for lane in view.lanes().lanes() if lane.counter == key)


def test_counter_lanes_sit_under_the_gpu_lanes(view: TimelineView) -> None:  # noqa: F811
    groups = view.lanes().groups
    assert [g.name for g in groups] == ["GPU 0", "counters", "synthesis"]
    names = [lane.name for lane in groups[1].lanes]
    assert names == [
        "queue depth\nup to " + str(counters(view.session())["queue"].peak),
        "syntheses in flight\nup to 10",
        "GPU calls in flight\nup to 2",
        "memory, GiB (est.)\nup to " + str(counters(view.session())["memory"].peak),
    ]
    item = view.counter_item()
    assert item is not None and item.column_count() > 0
    # One min / max per pixel column and counter, whatever the data.
    assert item.column_count() <= len(COUNTERS) * (view._vb.width() + 2)


def test_a_count_is_drawn_to_its_height(qtbot, view: TimelineView) -> None:  # noqa: F811
    p = view.session().partitions
    # Both workers busy: GPU calls in flight = 2, the peak, so the track is full there.
    both = float(p["gpu_start"][30]) + 50
    assert counters(view.session())["gpu"].at(both) == 2
    view.set_x_range(both - 2000, both + 2000)
    qtbot.wait(20)
    lane = counter_lane(view, "gpu")
    image = view.plot.grab().toImage()
    top = scene_point(view, both, lane.top + 2)
    near(image.pixelColor(top), view.theme.counter)
    text = view.tooltip_text_at(both, lane.top + lane.height / 2)
    assert text.startswith("GPU calls in flight 2 at ")
    # The column there holds 2 from its min up: the image is full to the lane's top.
    track = next(t for t in view.counter_item().tracks() if t.key == "gpu")
    column = int((both - track.start) // track.px)
    assert track.lo[column] == track.hi[column] == 2
    assert (track.pixels[:, column] == view.theme.counter.rgba()).all()


def test_counter_columns_stay_per_pixel_on_a_big_session(qtbot) -> None:
    from PySide6 import QtWidgets

    host = QtWidgets.QWidget()
    qtbot.addWidget(host)
    big = TimelineView(host)
    big.resize(900, 500)
    host.resize(900, 500)
    host.show()
    big.set_timeline(timeline_of(build_session(phase8_calls(jobs=3000, pw=20))))  # 30 000 calls
    item = big.counter_item()
    width = big._vb.width()
    for factor in (1.0, 0.1, 0.001):
        x0, x1 = big.x_range()
        big.set_x_range(x0, x0 + (x1 - x0) * factor)
        assert item.column_count() <= len(COUNTERS) * (width + 2)


def test_kernels_show_inside_the_cuda_region_when_zoomed_in(qtbot, view) -> None:  # noqa: F811
    worker = view.group_items()[0]
    assert worker.part_count() == 0  # the whole run: too small to show
    session = view.session()
    p = session.partitions
    row = 20
    view.frame_partition(row)
    assert worker.part_count() >= 3
    k0 = float(p["kernel_start"][row])
    k1 = k0 + float(p["kernel_ms"][row])
    parts = worker._parts.buffer
    mine = parts[(parts[:, 0] >= k0 - 1e-6) & (parts[:, 0] < k1)]
    assert len(mine) == len(KERNEL_PARTS)
    assert (mine[:, 0] + mine[:, 2] <= k1 + 1e-6).all()  # inside the region
    ntt = mine[0]
    assert ntt[2] == pytest.approx(float(p["ntt_msm_h_ms"][row]), rel=1e-6)
    lane = next(lane for lane in view.lanes().lanes() if lane.kind == "worker")
    assert np.allclose(mine[:, 3], (KERNEL_BAND[1] - KERNEL_BAND[0]) * lane.height)
    texts = [text.text() for _, text, _ in worker._part_labels]
    assert any(t.startswith("ntt_msm_h ") and t.endswith(" ms") for t in texts)
    qtbot.wait(20)
    image = view.plot.grab().toImage()
    at = scene_point(view, k0 + ntt[2] / 2, ntt[1] + ntt[3] / 2)
    near(image.pixelColor(at), view.theme.kernel_part(0))


def test_no_count_is_drawn_past_the_logs_end(qtbot, view: TimelineView) -> None:  # noqa: F811
    """The memory estimate never falls back to 0: its last level ran on past the log's last
    event to the view's edge (and into an exported image's margin)."""
    steps = counters(view.session())["memory"]
    end = view.lanes().x_max
    assert steps.at(end) > 0  # still held at the log's end
    view.set_x_range(end - 20_000, end + 20_000)
    qtbot.wait(20)
    track = next(t for t in view.counter_item().tracks() if t.key == "memory")
    columns = track.start + np.arange(len(track.lo)) * track.px
    assert track.hi[columns + track.px <= end].max() > 0  # drawn up to the end
    assert not track.hi[columns >= end].any() and not track.lo[columns >= end].any()
    lane = counter_lane(view, "memory")
    image = view.plot.grab().toImage()
    after = scene_point(view, end + 10_000, lane.top + lane.height - 2)
    near(image.pixelColor(after), view.theme.background)
    assert view.tooltip_text_at(end + 10_000, lane.top + lane.height / 2) == ""  # not known
    assert view.tooltip_text_at(end - 10_000, lane.top + lane.height / 2).startswith(
        "memory, GiB (est.) "
    )
