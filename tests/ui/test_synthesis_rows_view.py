"""Many synthesis rows at once (issue 27, item 11): the rows hold no lane each until one
is asked for, and the view prepares the rows near what it shows, not all of them."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from tests.hostile.shapes import deep_synthesis
from viewer.analysis.stages import synthesis_rows
from viewer.io import open_log
from viewer.lanes.data import LANE_HEIGHT, LANE_SPACING, Lane, Rows, build_lanes
from viewer.ui.view.timeline_view import TimelineView

ROWS = 5000


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    path = deep_synthesis(tmp_path_factory.mktemp("deep") / "run.log", ROWS)
    return open_log(path)


def _rows_group(lanes):
    (group,) = [g for g in lanes.groups if isinstance(g.lanes, Rows)]
    return group


def test_rows_are_made_when_asked_for_and_stay_while_held(deep) -> None:
    lanes = build_lanes(deep.sessions[0])
    group = _rows_group(lanes)
    rows = group.lanes
    assert len(rows) == ROWS and len(rows._made) == 0  # no lane made by the build
    pitch = LANE_HEIGHT["synth"] + LANE_SPACING["synth"]
    a = rows[7]
    assert a is rows[7] and a is rows[7 - ROWS]  # the same object while held
    assert a.top == rows.top + 7 * pitch and a.height == LANE_HEIGHT["synth"]
    assert [lane.name for lane in rows[:2]] == ["synthesis", ""]
    with pytest.raises(IndexError):
        rows[ROWS]
    # Its layers are the row's own: what the packing put in row 7.
    sr = synthesis_rows(deep.sessions[0])
    assert a.layers["synth"].row.tolist() == sr.rows[sr.row_of == 7].tolist()
    # The lane at its height is that lane; a lane let go is not kept.
    assert lanes.lane_at(a.top + 1) is a and lanes.lane_at(a.top + a.height + 0.5) is None
    del a
    gc.collect()
    assert 7 not in rows._made
    # A lane held moves with the rows when the layout does (a group above collapses).
    b = rows[ROWS - 1]
    before = b.top
    lanes.groups[0].collapsed = True
    lanes.layout()
    assert b.top < before and b.top == rows.top + (ROWS - 1) * rows.pitch
    assert lanes.lane_at(b.top + 1) is b
    group.collapsed = True
    lanes.layout()
    assert b.height == 0 and lanes.lane_at(b.top) is None


def test_the_row_holding_a_partition_is_found_without_a_lane_per_row(deep) -> None:
    session = deep.sessions[0]
    lanes = build_lanes(session)
    rows = _rows_group(lanes).lanes
    sr = synthesis_rows(session)
    for k in (0, ROWS // 3, ROWS - 1):
        row = int(sr.rows[k])
        lane = lanes.lane_holding(row, ("synth", "open"))
        assert isinstance(lane, Lane) and lane is rows[int(sr.row_of[k])]
        assert row in lane.layers["synth"].row.tolist()
    assert len(rows._made) <= 3


def test_the_view_prepares_the_rows_near_it_and_more_as_it_scrolls(qtbot, deep) -> None:
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    view.set_timeline(deep, 0)
    lanes = view.lanes()
    (item,) = [i for i in view.group_items() if isinstance(i.group.lanes, Rows)]
    rows = item.group.lanes
    shown = view.view_box().height()
    near = 3 * shown / rows.pitch + 2  # a view's height above, in view, and below
    assert 0 < item.rect_count() <= 2 * near  # the synthesis and its wait, per row
    assert item.rect_count() < ROWS / 5

    def drawn_tops() -> np.ndarray:
        return item._batch.buffer[:, 1]

    assert drawn_tops().min() <= rows.top + rows.pitch  # the first rows, from the top
    view._scroll_by(lanes.height)  # to the bottom
    y0, y1 = view.view_box().viewRange()[1]
    tops = drawn_tops()
    assert item.rect_count() <= 2 * near
    assert tops.max() >= rows.top + (ROWS - 1) * rows.pitch  # the last row is drawn
    assert tops.min() >= y0 - shown - rows.pitch and tops.max() <= y1
    # No lane was made for the rows drawn; of the rows' layers only the one drawn by detail
    # (the waits) measured its typical length.
    assert len(rows._made) == 0
    made = {name for name, s in item.group.stacks().items() if "typical" in vars(s.data)}
    assert made == {"queue"}


def test_a_stack_measures_its_typical_lengths_when_first_asked(deep) -> None:
    lanes = build_lanes(deep.sessions[0])
    for group in lanes.groups:
        for stack in group.stacks().values():
            assert "typical" not in vars(stack.data)
    synth = _rows_group(lanes).stacks()["synth"].data
    typical = synth.typical
    level = synth.level(0)
    assert len(typical) == ROWS and synth.typical is typical
    assert np.array_equal(typical, level.le - level.ls)  # a synthesis a row: its length


def test_a_view_far_above_the_rows_prepares_none_and_draws_them_when_it_gets_there(
    qtbot, deep
) -> None:
    """The rows come after every GPU group: a short view at the top is more than its
    height above them, near none (the saving held; a negative end once took every row)."""
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(900, 200)
    view.show()
    view.set_timeline(deep, 0)
    (item,) = [i for i in view.group_items() if isinstance(i.group.lanes, Rows)]
    rows = item.group.lanes
    y0, y1 = view.view_box().viewRange()[1]
    assert rows.top > y1 + (y1 - y0)  # the case: the rows begin beyond the margin
    assert item.rect_count() == 0
    view._scroll_by(rows.top - y0 + 5 * rows.pitch)  # the first rows come into view
    y0, y1 = view.view_box().viewRange()[1]
    tops = item._batch.buffer[:, 1]
    assert 0 < item.rect_count() <= 2 * (3 * (y1 - y0) / rows.pitch + 2)
    assert tops.min() <= y0 and tops.max() >= y1 - rows.pitch


def test_snapping_in_a_row_then_between_rows_reads_every_edge_again(qtbot, deep) -> None:
    """A row's lane is made when asked for and let go after: a snap between rows (no lane)
    after one in a row snaps to every lane's edges, not to the dead row's."""
    from viewer.ui.writeups.annotate import AnnotationController

    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view.set_timeline(deep, 0)
    controller = AnnotationController(view)
    lanes = view.lanes()
    rows = _rows_group(lanes).lanes
    in_row = rows.top + 3 * rows.pitch + 2
    between = rows.top + 3 * rows.pitch + rows.height + 0.5
    assert lanes.lane_at(between) is None

    def edges(*ys) -> int:
        controller._edges = ((), np.zeros(0))
        for y in ys:
            controller.snap(0.0, y)
            gc.collect()
        return len(controller._edges[1])

    every, one = edges(None), edges(in_row)
    assert one < every
    assert edges(in_row, between) == every
    assert edges(in_row, None) == every
    assert edges(None, in_row) == one
