"""Images of the timeline for write-ups: PNG at 2x device pixels, SVG with text as text.

A page is the lanes as shown (with their annotations; never the hover tooltip,
and the range selection only when asked), the legend, and optionally a
caption block with the range and the key figures of ``viewer.analysis.summarize``
formatted as the report formats them.  Works on the window's view or on a
TimelineView built offscreen (the headless ``export`` command).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from viewer.analysis import SessionSummary, summarize
from viewer.analysis.units import SESSION_CLOCK, Clock
from viewer.annotations import AnnotationSet
from viewer.export.files import resolve_output, write_output
from viewer.export.format import display_path, ms, sec
from viewer.export.report import metric_rows
from viewer.heap import release_free_memory
from viewer.ui.palette import Theme, dark_palette
from viewer.ui.view.lane_legend import ENTRIES, SWATCH, legend_rows
from viewer.ui.view.timeline_view import TimelineView
from viewer.ui.writeups.annotate import AnnotationController

Qt = QtCore.Qt
PNG_SCALE = 2.0
MARGIN = 10.0
#: Report rows the caption repeats (the reference figures), by the start of their label.
CAPTION_ROWS = (
    "mean ",
    "serial ",
    "on ",
    "measured throughput",
    "theoretical / measured",
    "cross-sector GPU idle gaps",
    "GPU idle gaps",
    "cold start",
)


def _in_caption(label: str) -> bool:
    return label.startswith(CAPTION_ROWS) or label.endswith("efficiency (merged intervals)")


@dataclass(frozen=True)
class Caption:
    """The caption block: a title, label / value pairs and the verdict sentence."""

    title: str
    figures: list[tuple[str, str]]
    verdict: str

    def text(self) -> str:
        lines = [self.title, *(f"{k}: {v}" for k, v in self.figures), self.verdict]
        return "\n".join(line for line in lines if line)


def caption_for(
    summary: SessionSummary, source: str | Path, rng_ms=None, clock: Clock = SESSION_CLOCK
) -> Caption:
    """The caption of an image of ``summary``'s session in ``rng_ms`` (None: whole session),
    its times on ``clock`` (the window's)."""
    where = "whole session" if rng_ms is None else f"range {clock.span(*rng_ms)}"
    title = f"{Path(str(source)).name} \u00b7 session {summary.session.number} \u00b7 {where}"
    k = summary.kernel
    what = "GPU call time (upper bound)" if k.upper_bound else "CUDA kernel time"
    total = ms(k.total_ms) if k.total_ms < 10_000 else sec(k.total_ms / 1000)
    figures = [(f"{what} in range" if rng_ms else f"{what} total", total)]
    # A caption gives figures; a report value's explanation after ": " stays in the report
    # ("37750 ms: 33260 ms to the first GPU call + ...").
    figures += [
        (str(label), str(value).split(": ", 1)[0])
        for label, value in metric_rows(summary)
        if _in_caption(str(label))
    ]
    return Caption(title, figures, f"Verdict: {summary.verdict.sentence}")


def page_range(view: TimelineView) -> tuple[float, float] | None:
    """The visible range clipped to the session; None when it shows the whole session."""
    session = view.session()
    if session is None:
        return None
    x0, x1 = view.x_range()
    a, b = max(x0, session.start_ms), min(x1, session.end_ms)
    if a <= session.start_ms and b >= session.end_ms:
        return None
    return (a, b) if b > a else None


def view_caption(view: TimelineView) -> Caption | None:
    """The caption of the view as shown now (figures of the visible range)."""
    session, timeline = view.session(), view.timeline()
    if session is None or timeline is None:
        return None
    rng = page_range(view)
    return caption_for(summarize(session, rng), timeline.source, rng, view.clock())


# ---- layout ---------------------------------------------------------------------------------


class Page:
    """Sizes of the parts of one exported image (logical pixels)."""

    def __init__(self, width: float, plot_height: float, caption: Caption | None) -> None:
        self.width = width
        self.plot_height = plot_height
        self.caption = caption
        self.font = QtGui.QFont()
        self.bold = QtGui.QFont(self.font)
        self.bold.setBold(True)
        self.metrics = QtGui.QFontMetricsF(self.font)
        self.line = math.ceil(self.metrics.height()) + 2
        self.legend_rows = legend_rows(width, self.metrics, MARGIN)
        self.legend_height = len(self.legend_rows) * self.line + 6
        self.caption_height = self._caption_height()

    @classmethod
    def fitting(cls, width: float, height: float, caption: Caption | None) -> Page:
        """The page of ``width`` x ``height`` whose plot takes what legend and caption leave."""
        probe = cls(width, 0.0, caption)
        return cls(width, max(height - probe.legend_height - probe.caption_height, 60.0), caption)

    @property
    def height(self) -> float:
        return self.plot_height + self.legend_height + self.caption_height

    def _columns(self) -> int:
        return max(1, min(3, int((self.width - 2 * MARGIN) // 380)))

    def _verdict_rect(self) -> QtCore.QRectF:
        flags = int(Qt.TextFlag.TextWordWrap)
        box = QtCore.QRectF(0, 0, self.width - 2 * MARGIN, 1e4)
        return self.metrics.boundingRect(box, flags, self.caption.verdict if self.caption else "")

    def _caption_height(self) -> float:
        if self.caption is None:
            return 0.0
        rows = math.ceil(len(self.caption.figures) / self._columns())
        return math.ceil(self.line * (1 + rows) + self._verdict_rect().height() + 3 * 6)

    # ---- painting -------------------------------------------------------------------------

    def paint(self, painter: QtGui.QPainter, view: TimelineView) -> None:
        theme = view.theme
        painter.fillRect(QtCore.QRectF(0, 0, self.width, self.height), theme.background)
        plot = view.plot
        source = plot.viewport().rect()
        plot.render(painter, QtCore.QRectF(0, 0, self.width, self.plot_height), source)
        painter.setFont(self.font)
        self._paint_legend(painter, theme, self.plot_height)
        if self.caption is not None:
            self._paint_caption(painter, theme, self.plot_height + self.legend_height)

    def _paint_legend(self, p: QtGui.QPainter, theme: Theme, top: float) -> None:
        for r, row in enumerate(self.legend_rows):
            y = top + 3 + r * self.line
            for x, i in row:
                name, swatch = ENTRIES[i]
                sw = QtCore.QRectF(x, y + (self.line - SWATCH.height()) / 2, *SWATCH.toTuple())
                p.save()
                swatch(p, sw, theme)
                p.restore()
                p.setPen(theme.foreground)
                label = QtCore.QRectF(sw.right() + 4, y, self.width, self.line)
                p.drawText(label, int(Qt.AlignmentFlag.AlignVCenter), name)

    def _paint_caption(self, p: QtGui.QPainter, theme: Theme, top: float) -> None:
        cap = self.caption
        p.setPen(theme.separator)
        p.drawLine(QtCore.QPointF(MARGIN, top + 2), QtCore.QPointF(self.width - MARGIN, top + 2))
        p.setPen(theme.foreground)
        p.setFont(self.bold)
        y = top + 6
        p.drawText(QtCore.QRectF(MARGIN, y, self.width - 2 * MARGIN, self.line), 0, cap.title)
        y += self.line + 3
        cols = self._columns()
        col_w = (self.width - 2 * MARGIN) / cols
        rows = math.ceil(len(cap.figures) / cols)
        label_w = [0.0] * cols
        for n, (label, _) in enumerate(cap.figures):
            c = n // rows
            label_w[c] = max(label_w[c], self.metrics.horizontalAdvance(label) + 10)
        for n, (label, value) in enumerate(cap.figures):
            c, r = divmod(n, rows)
            x = MARGIN + c * col_w
            p.setFont(self.font)
            p.drawText(QtCore.QRectF(x, y + r * self.line, label_w[c], self.line), 0, label)
            p.setFont(self.bold)
            cell = QtCore.QRectF(x + label_w[c], y + r * self.line, col_w - label_w[c], self.line)
            p.drawText(cell, 0, value)
        y += rows * self.line + 3
        p.setFont(self.font)
        box = QtCore.QRectF(MARGIN, y, self.width - 2 * MARGIN, self._verdict_rect().height())
        p.drawText(box, int(Qt.TextFlag.TextWordWrap), cap.verdict)


# ---- rendering ------------------------------------------------------------------------------


@contextmanager
def _framed(
    view: TimelineView,
    rng: tuple[float, float] | None,
    selection: bool,
    palette: QtGui.QPalette | None = None,
) -> Iterator[None]:
    """Show ``rng`` (if given) without tooltip or selection, in ``palette`` (None: the
    view's) while painting; restore after."""
    before = view.x_range()
    # The view's own palette if it was given one, else an empty one: it inherits again.
    own = None
    if palette is not None:
        mine = view.testAttribute(Qt.WidgetAttribute.WA_SetPalette)
        own = QtGui.QPalette(view.palette()) if mine else QtGui.QPalette()
        view.setPalette(palette)
    if rng is not None:
        view.set_x_range(*rng)
    # Overlays that mark an interactive state (a selected annotation) drop it while painting.
    marked = [i for i in view.view_box().childGroup.childItems() if hasattr(i, "set_exporting")]
    for item in marked:
        item.set_exporting(True)
    try:
        with view.hidden_for_export(selection=selection):
            yield
    finally:
        for item in marked:
            item.set_exporting(False)
        if own is not None:
            view.setPalette(own)
        if rng is not None:
            view.set_x_range(*before)


def _page(view: TimelineView, caption: bool | Caption | None) -> Page:
    if caption is True:
        caption = view_caption(view)
    plot = view.plot.viewport()
    return Page(float(plot.width()), float(plot.height()), caption or None)


def render_image(
    view: TimelineView,
    *,
    rng: tuple[float, float] | None = None,
    caption: bool | Caption | None = False,
    selection: bool = False,
    scale: float = PNG_SCALE,
    palette: QtGui.QPalette | None = None,
) -> QtGui.QImage:
    """The page as an image of ``scale`` device pixels per logical pixel, in ``palette``
    (None: the view's)."""
    with _framed(view, rng, selection, palette):
        page = _page(view, caption)
        size = QtCore.QSize(round(page.width * scale), round(page.height * scale))
        image = QtGui.QImage(size, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(scale)
        image.fill(view.theme.background)
        painter = QtGui.QPainter(image)
        painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
        page.paint(painter, view)
        painter.end()
    if page.caption is not None:
        image.setText("Description", page.caption.text())
    return image


def render_svg(
    view: TimelineView,
    *,
    rng: tuple[float, float] | None = None,
    caption: bool | Caption | None = False,
    selection: bool = False,
    palette: QtGui.QPalette | None = None,
) -> bytes:
    """The page as SVG: rectangles and lines as vectors, every label as <text>; in
    ``palette`` (None: the view's)."""
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    with _framed(view, rng, selection, palette):
        page = _page(view, caption)
        # SVG 1.1, not Qt's default Tiny 1.2: Tiny has no clip paths, so every bar the view
        # clips to its plot area (pyqtgraph's ViewBox) bled under the lane labels.
        generator = QtSvg.QSvgGenerator(QtSvg.QSvgGenerator.SvgVersion.Svg11)
        generator.setOutputDevice(buffer)
        generator.setSize(QtCore.QSize(round(page.width), round(page.height)))
        generator.setViewBox(QtCore.QRectF(0, 0, page.width, page.height))
        # pyqtgraph's axes replay QPictures, which rescale to the device's dpi: match the view.
        generator.setResolution(view.logicalDpiX())
        generator.setTitle("cuzk timeline")
        if page.caption is not None:
            generator.setDescription(page.caption.text())
        painter = QtGui.QPainter(generator)
        page.paint(painter, view)
        painter.end()
    return bytes(buffer.data())


def png_bytes(image: QtGui.QImage) -> bytes:
    """``image`` encoded as PNG (its text entries, such as the caption, included)."""
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError(f"could not encode a {image.width()} x {image.height()} PNG")
    return bytes(buffer.data())


def image_bytes(view: TimelineView, path: str | Path, **options) -> bytes:
    """The PNG or SVG (by ``path``'s suffix) of the view; ``options`` as for
    ``render_image``.  ValueError for another suffix."""
    suffix = Path(path).suffix.lower()
    if suffix == ".svg":
        options.pop("scale", None)
        return render_svg(view, **options)
    if suffix == ".png":
        return png_bytes(render_image(view, **options))
    raise ValueError(f"{display_path(Path(path).name)}: an image is .png or .svg")


def write_image(
    view: TimelineView, path: str | Path, *, inputs: Iterable[str | Path | None] = (), **options
) -> Path:
    """Write a .png or .svg of the view (``options`` as for ``render_image``) through
    ``write_output``: never over one of ``inputs``, never into a non-regular file."""
    inputs = list(inputs)
    resolve_output(path, inputs)  # before the rendering, which takes a while
    return write_output(path, image_bytes(view, path, **options), inputs)


def copy_image(view: TimelineView, **options) -> QtCore.QMimeData:
    """Put the view on the clipboard as an image (2x) and as SVG; returns the mime data."""
    mime = QtCore.QMimeData()
    image = render_image(view, **options)
    mime.setImageData(image)
    options.pop("scale", None)
    mime.setData("image/svg+xml", QtCore.QByteArray(render_svg(view, **options)))
    QtWidgets.QApplication.clipboard().setMimeData(mime)
    return mime


# ---- offscreen (headless export) ------------------------------------------------------------


def offscreen_view(
    timeline,
    session: int,
    *,
    width: int,
    height: int | None = None,
    rng: tuple[float, float] | None = None,
    annotations: AnnotationSet | None = None,
    caption: bool = False,
    dark: bool = False,
    max_height: int | None = None,
) -> tuple[TimelineView, Caption | None]:
    """A TimelineView never shown on screen whose page is ``width`` x ``height`` logical
    pixels (``height`` None: tall enough for every lane, but at most ``max_height``:
    ``full_plot_height`` then says how much was cut), with its caption."""
    view = TimelineView()
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    # Never painted but through ``render``: shown (its layout settles only so), it would
    # still paint itself into a backing store and a background cache of its size (12 MB
    # of a 1600 x 900 page's export; the image is the same without them).
    view.setUpdatesEnabled(False)
    if dark:
        view.setPalette(dark_palette())
    view.legend.hide()  # the page draws its own, wrapped to the width
    view.resize(width, 600)
    view.show()
    view.set_timeline(timeline, session)
    controller = AnnotationController(view)
    if annotations is not None:
        controller.set_annotations(annotations)
    _settle(view, width, 600)
    if rng is not None:
        view.set_x_range(*rng)
    cap = view_caption(view) if caption else None
    if height is None:
        plot_height = full_plot_height(view)
        if max_height is not None:
            plot_height = min(plot_height, Page.fitting(width, max_height, cap).plot_height)
    else:
        plot_height = Page.fitting(width, height, cap).plot_height
    _settle(view, width, round(plot_height))
    if rng is not None:
        view.set_x_range(*rng)
    # What making the view freed goes back before its page is rendered (20 MB of a PNG
    # export of 200 000 syntheses at once: its peak is the view and the image together).
    release_free_memory()
    return view, cap


def full_plot_height(view: TimelineView) -> float:
    """The plot height (logical px) that shows every lane of ``view``."""
    lanes = view.lanes()
    axis = view.plot.viewport().height() - view.view_box().height()
    return (lanes.height if lanes is not None else 300.0) + axis + 4


def _settle(view: TimelineView, width: int, height: int) -> None:
    """Resize ``view`` until its plot is exactly ``width`` x ``height`` (a scroll bar may
    take part of the width)."""
    for _ in range(3):
        viewport = view.plot.viewport()
        dw, dh = width - viewport.width(), height - viewport.height()
        if not dw and not dh:
            return
        view.resize(view.width() + dw, view.height() + dh)
        view.layout().activate()
        QtWidgets.QApplication.sendPostedEvents()
