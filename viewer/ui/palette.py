"""Colours of the timeline: a stable job palette and a theme derived from the widget's QPalette.

Job colours are mid-lightness hues that read on white and on near-black, and
keep clear of red and amber, which mean "idle" in the GPU busy lanes.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6 import QtGui

from viewer.lanes.lod import MIXED

#: Sector (job) colours, cycled by job index: consecutive jobs always differ.
JOB_COLORS: tuple[str, ...] = (
    "#4c78a8",  # blue
    "#54a24b",  # green
    "#b279a2",  # purple
    "#2ca6a4",  # teal
    "#9d755d",  # brown
    "#7f7fd5",  # periwinkle
    "#8ca252",  # olive
    "#d6689c",  # rose
)


#: ntt_msm_h, batch_add, tail_msm: pale hues that hold dark text, clear of red and amber.
KERNEL_PART_COLORS = ("#a6cee3", "#cab2d6", "#b2df8a")


def job_color(job: int) -> QtGui.QColor:
    """The colour of job ``job`` (row of ``Session.jobs``), the same in every lane and panel."""
    if job < 0:
        return QtGui.QColor("#888888")
    return QtGui.QColor(JOB_COLORS[job % len(JOB_COLORS)])


def mix(a: QtGui.QColor, b: QtGui.QColor, t: float) -> QtGui.QColor:
    """``a`` moved a fraction ``t`` towards ``b``."""
    return QtGui.QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        1.0,
    )


def with_alpha(color: QtGui.QColor, alpha: float) -> QtGui.QColor:
    out = QtGui.QColor(color)
    out.setAlphaF(alpha)
    return out


@dataclass(frozen=True)
class Theme:
    """Every colour the lanes paint, for one QPalette."""

    dark: bool
    background: QtGui.QColor
    foreground: QtGui.QColor
    band: QtGui.QColor  # group header strip
    separator: QtGui.QColor
    mixed: QtGui.QColor  # merged run of several jobs
    busy: QtGui.QColor
    wait: QtGui.QColor  # pickup / queue waits
    highlight: QtGui.QColor  # outline of the selected job
    gap: tuple[QtGui.QColor, ...]  # indexed by lanes.data.GAP_* kinds
    cross_band: QtGui.QColor  # cross-sector gap seen through the worker lanes
    cold: QtGui.QColor
    cold_hatch: QtGui.QColor
    marker: QtGui.QColor  # transition lines
    label_bg: QtGui.QColor
    selection: QtGui.QColor
    counter: QtGui.QColor  # a counter track: every value the pixel column surely holds
    counter_range: QtGui.QColor  # up to the column's max
    match: QtGui.QColor  # search matches
    flow: QtGui.QColor  # flow arrows of the selected partition

    @classmethod
    def from_palette(cls, palette: QtGui.QPalette) -> Theme:
        bg = palette.color(QtGui.QPalette.ColorRole.Base)
        fg = palette.color(QtGui.QPalette.ColorRole.Text)
        dark = bg.lightnessF() < 0.5
        red = QtGui.QColor("#ff5a4e" if dark else "#d62728")
        amber = QtGui.QColor("#ffb000" if dark else "#e69500")
        return cls(
            dark=dark,
            background=bg,
            foreground=fg,
            band=mix(bg, fg, 0.08),
            separator=mix(bg, fg, 0.18),
            mixed=mix(bg, fg, 0.45),
            busy=mix(bg, fg, 0.32),
            wait=mix(bg, fg, 0.6),
            highlight=QtGui.QColor("#ffd400" if dark else "#1a1a1a"),
            gap=(
                amber,
                red,
                amber.darker(125) if not dark else amber.lighter(115),
                red.darker(130) if not dark else red.lighter(115),
            ),
            cross_band=with_alpha(red, 0.16),
            cold=with_alpha(fg, 0.06),
            cold_hatch=with_alpha(fg, 0.22),
            marker=mix(bg, fg, 0.75),
            label_bg=with_alpha(bg, 0.85),
            selection=with_alpha(palette.color(QtGui.QPalette.ColorRole.Highlight), 0.22),
            counter=mix(bg, QtGui.QColor("#4c8ee8" if dark else "#2f6db5"), 0.85),
            counter_range=mix(bg, QtGui.QColor("#4c8ee8" if dark else "#2f6db5"), 0.4),
            match=QtGui.QColor("#ff4fd8" if dark else "#c2188f"),
            flow=QtGui.QColor("#f2f2f2" if dark else "#202020"),
        )

    def job(self, key: int) -> QtGui.QColor:
        return self.mixed if key == MIXED else job_color(key)

    def kernel(self, key: int) -> QtGui.QColor:
        """The CUDA-kernel band inside a bar: a deeper shade of the bar's colour."""
        base = self.job(key)
        return base.darker(175) if not self.dark else base.darker(165)

    def kernel_part(self, part: int) -> QtGui.QColor:
        """ntt_msm_h, batch_add, tail_msm (``lanes.data.KERNEL_PARTS`` order) inside the CUDA
        region: light blue, lavender and light green, whatever the sector's colour."""
        return QtGui.QColor(KERNEL_PART_COLORS[part])


# ---- whole palettes: the View > Theme choices and the exports' -------------------------


#: How far a disabled control's text fades towards its background (Qt's Fusion: about half).
DISABLED_FADE = 0.55


def palette_of(colours: dict[str, str]) -> QtGui.QPalette:
    """A QPalette with ``colours`` (ColorRole name -> colour) over Qt's defaults, and the
    text of disabled controls faded towards their background (one colour for every group
    made a disabled action read as an enabled one)."""
    palette = QtGui.QPalette()
    role = QtGui.QPalette.ColorRole
    for name, colour in colours.items():
        palette.setColor(getattr(role, name), QtGui.QColor(colour))
    disabled = QtGui.QPalette.ColorGroup.Disabled
    for text, ground in (
        (role.WindowText, role.Window),
        (role.Text, role.Base),
        (role.ButtonText, role.Button),
    ):
        faded = mix(palette.color(text), palette.color(ground), DISABLED_FADE)
        palette.setColor(disabled, text, faded)
    return palette


def dark_palette() -> QtGui.QPalette:
    """A plain dark palette for exports meant for dark slides."""
    return palette_of(
        {
            "Window": "#202124",
            "WindowText": "#e8eaed",
            "Base": "#17181a",
            "AlternateBase": "#232427",  # Qt's default is light: striped tables unreadable
            "Text": "#e8eaed",
            "Button": "#2b2c30",
            "ButtonText": "#e8eaed",
            "ToolTipBase": "#2b2c30",
            "ToolTipText": "#e8eaed",
            "PlaceholderText": "#9aa0a6",
            "Highlight": "#4c8ee8",
            "HighlightedText": "#ffffff",
        }
    )


def light_palette() -> QtGui.QPalette:
    """A plain light palette, for a light window or export on a dark desktop."""
    return palette_of(
        {
            "Window": "#f4f4f4",
            "WindowText": "#1a1a1a",
            "Base": "#ffffff",
            "AlternateBase": "#f2f2f2",
            "Text": "#1a1a1a",
            "Button": "#ececec",
            "ButtonText": "#1a1a1a",
            "ToolTipBase": "#ffffdc",
            "ToolTipText": "#1a1a1a",
            "PlaceholderText": "#6b6b6b",
            "Highlight": "#3074d0",
            "HighlightedText": "#ffffff",
        }
    )


#: The palettes an export can be drawn in, whatever the window's: "window" keeps it.
EXPORT_PALETTES = ("window", "light", "dark")


def export_palette(name: str) -> QtGui.QPalette | None:
    """The palette an export named ``name`` ("window", "light", "dark") is drawn in; None:
    the window's own."""
    return {"light": light_palette, "dark": dark_palette}.get(name, lambda: None)()
