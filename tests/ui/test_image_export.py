"""Images of the view: PNG at 2x with probed pixels, SVG with text as text, clipboard."""

from __future__ import annotations

import os
import re

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from tests.hostile.files import drained_fifo
from tests.ui.test_annotate import COLD_GAP, WORKER0, log, open_log, window  # noqa: F401
from tests.ui.test_timeline_view import lane_y
from viewer.ui.writeups.annotate import Ink
from viewer.ui.writeups.image_export import copy_image, offscreen_view, render_image, render_svg


def pixel(image: QtGui.QImage, view, t_ms: float, y: float) -> QtGui.QColor:
    """The colour the 2x image has at view point (t ms, y px)."""
    scene = view.view_box().mapViewToScene(QtCore.QPointF(t_ms, y))
    at = view.plot.mapFromScene(scene)
    return image.pixelColor(round(at.x() * 2), round(at.y() * 2))


def block_mean(image: QtGui.QImage, view, t_ms: float, y: float, r: int = 8) -> tuple:
    scene = view.view_box().mapViewToScene(QtCore.QPointF(t_ms, y))
    at = view.plot.mapFromScene(scene) * 2
    px = [image.pixelColor(at.x() + dx, at.y() + dy) for dx in range(-r, r) for dy in range(-r, r)]
    return tuple(sum(getattr(c, k)() for c in px) / len(px) for k in ("red", "green", "blue"))


def _header_y(view, group: str) -> float:  # noqa: ANN001
    """The middle of a lane group's header strip (view y)."""
    g = next(g for g in view.lanes().groups if g.name == group)
    first = g.lanes[0].top if g.lanes else g.bottom
    return (g.top + first) / 2


@pytest.fixture
def annotated(qtbot, window, log):  # noqa: F811
    open_log(qtbot, window, log)
    view, ctl = window.view, window.write_ups.controller
    view.set_x_range(64000, 84000)
    ctl.add("range", *COLD_GAP, text="GPU waits for sector 1")
    ctl.add("note", 66000.0, lane="GPU 0 · worker 1", text="<b>cold</b> start")
    ctl.add("ruler", *COLD_GAP, lane=WORKER0)
    return window


def test_png_is_2x_with_shades_highlight_and_note(annotated) -> None:
    view, ctl = annotated.view, annotated.write_ups.controller
    plain = render_image(view, caption=True)
    port = view.plot.viewport()
    assert plain.devicePixelRatio() == 2
    assert plain.width() == 2 * port.width() and plain.height() > 2 * port.height()
    assert "37.4 s/proof" not in plain.text("Description")  # one job completes in 64-84 s
    # The session passes 2 min, so its times are on m:ss everywhere, as on the axis.
    assert "range 1:04.000 → 1:24.000 (20.0 s)" in plain.text("Description")

    bg = view.theme.background
    # Cold start (0 -> first GPU_START) is hatched over the worker lanes: grey, not background.
    view.fit()
    whole = render_image(view)
    r, g, b = block_mean(whole, view, 12000, lane_y(view, WORKER0))
    assert max(r, g, b) - min(r, g, b) < 12 and r < bg.red() - 8
    view.set_x_range(64000, 84000)

    # The range highlight tints empty space yellow; without annotations it is neutral.
    ids = [a.id for a in ctl.annotations]
    image = render_image(view)
    empty_y = _header_y(view, "synthesis")  # a group's header strip: no bars anywhere
    tint = pixel(image, view, 72000, empty_y)
    assert tint.red() > 200 and tint.blue() < tint.green() - 40
    for id_ in ids:
        ctl.delete(id_)
    plain = render_image(view)
    assert pixel(plain, view, 72000, empty_y) == pixel(plain, view, 66000, empty_y)
    for _ in ids:
        ctl.undo()

    # The note's label box is pale paper with dark ink.
    note = next(s for s in ctl.overlay._shapes if s.ann.kind == "note")
    x0, mpp, y0, _, _ = ctl.overlay._frame
    inside = (x0 + (note.label.left() + 3) * mpp, y0 + note.label.center().y())
    assert pixel(image, view, *inside) == Ink.of(view.theme).paper


def test_selection_and_tooltip_are_left_out_unless_asked(qtbot, annotated) -> None:
    view = annotated.view
    with qtbot.waitSignal(annotated.summary_ready, timeout=15000):  # no summary left running
        view.set_selection(76000, 80000)
    y = _header_y(view, "synthesis")
    without = render_image(view)
    with_sel = render_image(view, selection=True)
    assert pixel(without, view, 78000, y) == pixel(without, view, 66000, y)
    assert pixel(with_sel, view, 78000, y) != pixel(without, view, 78000, y)
    assert view.selection() == (76000, 80000)  # the view is left as it was


def test_svg_text_is_text_with_caption_figures(annotated) -> None:
    view = annotated.view
    view.fit()
    svg = render_svg(view, caption=True).decode("utf-8")
    assert svg.startswith("<?xml") and "<text" in svg
    texts = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", svg))
    for figure in ("37.4 s/proof", "3746 ms", "37.5 s", "100.0 %", "GPU-bound"):
        assert figure in texts
    assert "phase8_pw10_5sectors.log" in texts and "whole session" in texts
    assert "&lt;b&gt;cold&lt;/b&gt; start" in svg  # plain text, never markup
    assert "Δ 4 490" in texts  # Qt may split a run of text at spaces
    assert 'stroke="#0064c8"' not in svg  # the selected annotation is not outlined
    # The lane names too: their pixmap cache (for pans) went into the SVG as an image.
    assert "GPU 0 · worker 0" in texts and "synthesis (18 rows)" in texts
    cache = QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache
    assert view._header.cacheMode() == cache  # back on for the window's pans


def test_selected_range_export_frames_it_and_restores_the_view(annotated) -> None:
    view = annotated.view
    before = view.x_range()
    svg = render_svg(view, rng=COLD_GAP, caption=True).decode("utf-8")
    assert "range 1:11.252 → 1:15.742" in svg
    assert view.x_range() == pytest.approx(before)


def test_window_export_and_clipboard(annotated, tmp_path) -> None:
    ups = annotated.write_ups
    png = ups.export_image(tmp_path / "shot.png")
    svg = ups.export_image(tmp_path / "shot.svg")
    assert QtGui.QImage(str(png)).width() == 2 * annotated.view.plot.viewport().width()
    assert b"<svg" in svg.read_bytes()
    assert ups.export_image(tmp_path / "shot.gif") is None
    assert annotated.banner.isVisible()
    mime = copy_image(annotated.view)
    assert mime.hasImage() and mime.hasFormat("image/svg+xml")
    ups.copy_image()
    assert not QtWidgets.QApplication.clipboard().image().isNull()


def test_offscreen_view_sizes_and_dark_palette(qtbot, log) -> None:  # noqa: F811
    from viewer.io import open_log as read

    timeline = read(log)
    view, caption = offscreen_view(timeline, 0, width=900, height=500, caption=True, dark=True)
    image = render_image(view, caption=caption)
    assert (image.width(), image.height()) == (1800, 1000)
    assert view.theme.dark
    assert caption is not None and "37.4 s/proof" in caption.text()
    view.close()


@pytest.fixture
def loaded(qtbot, window, log):  # noqa: F811
    open_log(qtbot, window, log)
    return window


def _save_paths(win, monkeypatch):
    """Every way the window saves a file, each as a function of the path to save to."""
    ups = win.write_ups

    def report(path):
        monkeypatch.setattr(
            QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), "")
        )
        win.export_report_markdown()

    return {
        "png": lambda p: ups.export_image(p.with_suffix(".png")),
        "svg": lambda p: ups.export_image(p.with_suffix(".svg")),
        "csv": lambda p: ups.export_table("gaps_panel", p.with_suffix(".csv")),
        "table markdown": lambda p: ups.export_table("jobs_panel", p.with_suffix(".md")),
        "report markdown": lambda p: report(p.with_suffix(".md")),
        "trace": lambda p: ups.export_trace(p.with_suffix(".json")),
    }


SAVES = ("png", "svg", "csv", "table markdown", "report markdown", "trace")


@pytest.mark.parametrize("save", SAVES)
def test_window_saves_never_write_over_the_log(loaded, tmp_path, monkeypatch, save) -> None:
    source = loaded.timeline().source
    before = source.read_bytes()
    link = tmp_path / "alias"
    _save_paths(loaded, monkeypatch)[save](link)  # a name of its own, the log's inode
    written = [p for p in tmp_path.iterdir() if p.name.startswith("alias")]
    assert len(written) == 1 and written[0].stat().st_size > 0  # a normal save works
    written[0].unlink()
    os.link(source, written[0])
    _save_paths(loaded, monkeypatch)[save](link)
    assert source.read_bytes() == before
    assert loaded.banner.isVisible()
    assert f"refusing to write over the input {source}" in loaded.banner.label.text()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("save", SAVES)
def test_window_saves_refuse_a_fifo(loaded, tmp_path, monkeypatch, save) -> None:
    saves = _save_paths(loaded, monkeypatch)
    saves[save](tmp_path / "probe")
    target = next(p for p in tmp_path.iterdir() if p.name.startswith("probe"))
    target.unlink()
    with drained_fifo(target) as received:
        saves[save](tmp_path / "probe")
    assert received == [] and "FIFO" in loaded.banner.label.text()


def test_svg_clips_the_lanes_to_the_plot_area(annotated) -> None:
    """Issue 16, item 1: bars that start left of the view bled under the lane labels in the
    SVG (Qt writes SVG Tiny, which has no clip paths, unless asked for SVG 1.1)."""
    import xml.etree.ElementTree as ET

    view = annotated.view
    view.set_x_range(66000, 80000)  # calls and syntheses cross the left edge
    svg = render_svg(view)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("baseProfile") != "tiny"
    clips = {}
    for clip in root.iter(f"{ns}clipPath"):
        (path,) = list(clip)
        xs = [float(x) for x in re.findall(r"[ML](-?[\d.]+),", path.get("d"))]
        clips[clip.get("id")] = min(xs)
    left = view.plot.mapFromScene(view.view_box().sceneBoundingRect().topLeft()).x()
    assert left > 50  # the lane labels take the left of the page

    def walk(node, clip_left: float | None, found: list) -> None:
        ref = node.get("clip-path")
        if ref:
            clip_left = clips[ref.removeprefix("url(#").removesuffix(")")]
        # Shapes in the lanes' coordinates (ms on x: a tiny x scale) are data.
        m = re.match(r"matrix\(([-\d.e]+),", node.get("transform") or "")
        if m and float(m.group(1)) < 0.5 and len(node):
            found.append(clip_left)
        for child in node:
            walk(child, clip_left, found)

    data_groups: list = []
    walk(root, None, data_groups)
    assert len(data_groups) > 5
    assert all(c is not None and c >= left - 1 for c in data_groups), data_groups


def test_export_dialogs_open_where_the_last_export_went(loaded, tmp_path, monkeypatch) -> None:
    """Issue 16, item 11: every export dialog started next to the log, whatever folder the
    last export was saved in."""
    asked: list[str] = []
    out = tmp_path / "write-up"
    out.mkdir()

    def dialog(parent, title, start, filters):
        asked.append(start)
        return str(out / f"file{len(asked)}{'.png' if 'image' in title else '.csv'}"), ""

    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", dialog)
    ups = loaded.write_ups
    log_dir = str(loaded.timeline().source.parent)
    ups.export_image_dialog(False)
    assert asked[0].startswith(log_dir)  # nothing exported yet: next to the log
    ups.export_table_dialog("gaps_panel")
    ups.export_trace_dialog()
    for start in asked[1:]:
        assert start.startswith(str(out)), start  # where the last export went
    assert (out / "file1.png").exists() and (out / "file2.csv").exists()


def test_svg_transition_markers_are_drawn_in_page_pixels(annotated) -> None:
    """issue 28 item 3: markers drawn with a cosmetic pen in ms-scaled coordinates were
    nearly invisible in librsvg (no non-scaling strokes): its 1 px width was scaled by the
    ms-to-pixel factor. They are drawn in page pixels now."""
    import re

    svg = render_svg(annotated.view).decode("utf-8")
    marker = annotated.view.theme.marker.name()
    groups = [
        g.group(1) for g in re.finditer(r"<g ([^>]*)>", svg) if f'stroke="{marker}"' in g.group(1)
    ]
    assert groups, "no transition marker in the SVG"
    for attrs in groups:
        scale = re.search(r'transform="matrix\(([-\d.e]+),', attrs)
        assert scale is not None and float(scale.group(1)) == 1.0, attrs
