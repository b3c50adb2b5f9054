"""View > Theme and File > Export > Export palette (issue 28 item 8): the window light or
dark whatever the desktop, and images in either palette whatever the window's."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from tests.ui.conftest import load_and_wait
from tests.ui.test_main_window import PHASE8
from viewer.ui.windows.main_window import MainWindow
from viewer.ui.writeups.image_export import render_image


@pytest.fixture
def settings(tmp_path):
    return QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)


@pytest.fixture
def restore_app():
    app = QtWidgets.QApplication.instance()
    palette, style = QtGui.QPalette(app.palette()), app.style().name()
    yield
    app.setStyle(style)
    app.setPalette(palette)


def make_window(qtbot, settings) -> MainWindow:
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    return win


def darkness(image: QtGui.QImage) -> float:
    """The mean lightness of a grid of the image's pixels (0 black, 1 white)."""
    points = [
        image.pixelColor(x, y).lightnessF()
        for x in range(0, image.width(), max(image.width() // 40, 1))
        for y in range(0, image.height(), max(image.height() // 40, 1))
    ]
    return sum(points) / len(points)


def test_the_theme_menu_draws_the_window_light_or_dark_and_is_kept(
    qtbot, settings, restore_app
) -> None:
    app = QtWidgets.QApplication.instance()
    system = QtGui.QPalette(app.palette())
    win = make_window(qtbot, settings)
    menu = win.view_menu.findChildren(QtWidgets.QMenu)
    assert any(m.title() == "&Theme" for m in menu)
    assert win.themes.theme() == "system"
    win.themes.theme_actions["dark"].trigger()
    base = app.palette().color(QtGui.QPalette.ColorRole.Base)
    assert base.lightnessF() < 0.3
    qtbot.waitUntil(lambda: win.view.theme.dark)  # the lanes follow the palette
    assert settings.value("view/theme") == "dark"
    win.themes.theme_actions["light"].trigger()
    assert app.palette().color(QtGui.QPalette.ColorRole.Base).lightnessF() > 0.9
    qtbot.waitUntil(lambda: not win.view.theme.dark)
    # A new start keeps the choice.
    win.themes.theme_actions["dark"].trigger()
    win.close()
    again = make_window(qtbot, settings)
    assert again.themes.theme() == "dark"
    qtbot.waitUntil(lambda: again.view.theme.dark)
    # System gives back what the desktop gave.
    again.themes.theme_actions["system"].trigger()
    assert app.palette().color(QtGui.QPalette.ColorRole.Base) == system.color(
        QtGui.QPalette.ColorRole.Base
    )
    assert settings.value("view/theme") == "system"


def test_a_saved_theme_that_is_no_theme_starts_on_the_system_one(
    qtbot, settings, restore_app
) -> None:
    settings.setValue("view/theme", "neon\x1b[31m")
    settings.setValue("export/palette", 3)
    win = make_window(qtbot, settings)
    assert win.themes.theme() == "system"
    assert win.themes.export_palette() == "window"


def test_exports_in_either_palette_whatever_the_window(qtbot, settings, restore_app) -> None:
    win = make_window(qtbot, settings)
    win.themes.theme_actions["light"].trigger()
    qtbot.waitUntil(lambda: not win.view.theme.dark)
    load_and_wait(qtbot, win, PHASE8)
    ups = win.write_ups
    assert darkness(render_image(win.view, **ups.image_options())) > 0.7
    win.themes.export_actions["dark"].trigger()
    assert settings.value("export/palette") == "dark"
    dark = render_image(win.view, **ups.image_options())
    assert darkness(dark) < 0.35
    assert not win.view.theme.dark  # the window is as it was
    win.themes.theme_actions["dark"].trigger()
    qtbot.waitUntil(lambda: win.view.theme.dark)
    win.themes.export_actions["light"].trigger()
    assert darkness(render_image(win.view, **ups.image_options())) > 0.7
    assert win.view.theme.dark
    win.themes.export_actions["window"].trigger()
    assert darkness(render_image(win.view, **ups.image_options())) < 0.35


@pytest.mark.parametrize("name", ["light", "dark"])
def test_a_disabled_action_reads_as_disabled_in_either_theme(qtbot, name) -> None:
    """One colour for every colour group drew "Undo annotation" with nothing to undo as
    dark as "Ruler" in the light theme (the README's screenshots showed it)."""
    from viewer.ui.palette import dark_palette, light_palette

    palette = {"light": light_palette, "dark": dark_palette}[name]()
    group, role = QtGui.QPalette.ColorGroup, QtGui.QPalette.ColorRole
    for text, ground in ((role.WindowText, role.Window), (role.ButtonText, role.Button)):
        on = palette.color(group.Active, text)
        off = palette.color(group.Disabled, text)
        back = palette.color(group.Active, ground)
        assert abs(on.lightnessF() - back.lightnessF()) > 0.6
        assert (
            0.15
            < abs(off.lightnessF() - back.lightnessF())
            < 0.6 * abs(on.lightnessF() - back.lightnessF())
        )
    bar = QtWidgets.QToolBar()
    qtbot.addWidget(bar)
    bar.setPalette(palette)
    for text, enabled in (("Ruler", True), ("Undo annotation", False)):
        bar.addAction(text).setEnabled(enabled)
    bar.resize(bar.sizeHint())
    image = bar.grab().toImage()
    back = palette.color(group.Active, role.Button).lightnessF()

    def ink(action_index: int) -> float:
        """The strongest contrast of the action's text with the bar's background."""
        button = bar.widgetForAction(bar.actions()[action_index])
        r = button.geometry()
        return max(
            abs(image.pixelColor(x, y).lightnessF() - back)
            for x in range(r.left(), r.right())
            for y in range(r.top(), r.bottom())
        )

    assert ink(1) < 0.7 * ink(0)
