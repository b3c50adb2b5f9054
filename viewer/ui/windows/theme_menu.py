"""View > Theme: the window in the desktop's palette, or light or dark whatever the desktop;
and File > Export > Export palette: images drawn as the window is, or light or dark for a
write-up whose page is the other colour.  Both choices are kept in the settings."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.ui.palette import EXPORT_PALETTES, dark_palette, light_palette

THEME_SETTING = "view/theme"
EXPORT_SETTING = "export/palette"
THEMES = ("system", "light", "dark")
#: Menu texts of the themes and of the export palettes.
THEME_TEXT = {"system": "&System", "light": "&Light", "dark": "&Dark"}
EXPORT_TEXT = {"window": "As the &window", "light": "&Light", "dark": "&Dark"}


def _choice(value: object, allowed: tuple[str, ...]) -> str:
    """A saved choice, or the first allowed one when the settings hold anything else."""
    text = str(value or "")
    return text if text in allowed else allowed[0]


#: The palette and style the desktop gave the application, read once before any theme.
_SYSTEM: tuple[QtGui.QPalette, str] | None = None


def _system() -> tuple[QtGui.QPalette, str]:
    global _SYSTEM
    if _SYSTEM is None:
        app = QtWidgets.QApplication.instance()
        _SYSTEM = (QtGui.QPalette(app.palette()), app.style().name())
    return _SYSTEM


class ThemeChoice(QtCore.QObject):
    """The two radio groups of ``window`` and what they apply."""

    def __init__(self, window: QtWidgets.QMainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._system_palette, self._system_style = _system()
        self.theme_actions = self._group(
            window.view_menu.addMenu("&Theme"), THEME_TEXT, THEME_SETTING, self.set_theme
        )
        export_menu = window.export_menu.addMenu("Export &palette")
        self.export_actions = self._group(
            export_menu, EXPORT_TEXT, EXPORT_SETTING, self._save_export
        )
        for key, action in self.export_actions.items():
            action.setStatusTip(
                "Images and copies drawn as the window is"
                if key == "window"
                else f"Images and copies drawn {key}, whatever the window's theme"
            )
        theme = _choice(window.settings.value(THEME_SETTING), THEMES)
        if theme == "system":
            self.theme_actions[theme].setChecked(True)  # the desktop's, as the app started
        else:
            self.set_theme(theme, save=False)
        chosen = _choice(window.settings.value(EXPORT_SETTING), EXPORT_PALETTES)
        self.export_actions[chosen].setChecked(True)

    def _group(self, menu: QtWidgets.QMenu, texts: dict, setting: str, slot) -> dict:
        group = QtGui.QActionGroup(menu)
        group.setExclusive(True)
        actions = {}
        for key, text in texts.items():
            action = QtGui.QAction(text, menu)
            action.setObjectName(f"action_{setting.replace('/', '_')}_{key}")
            action.setCheckable(True)
            action.setData(key)
            group.addAction(action)
            menu.addAction(action)
            actions[key] = action
        group.triggered.connect(lambda action: slot(str(action.data())))
        return actions

    def theme(self) -> str:
        return next(k for k, a in self.theme_actions.items() if a.isChecked())

    def set_theme(self, name: str, save: bool = True) -> None:
        """Draw the whole application in ``name``'s palette ("system": the desktop's)."""
        name = _choice(name, THEMES)
        app = QtWidgets.QApplication.instance()
        if name == "system":
            if app.style().name() != self._system_style:
                app.setStyle(self._system_style)
            app.setPalette(self._system_palette)
        else:
            # Fusion draws every widget from the palette (a desktop style may not).
            if app.style().name().lower() != "fusion":
                app.setStyle("Fusion")
            app.setPalette(light_palette() if name == "light" else dark_palette())
        self.theme_actions[name].setChecked(True)
        if save:
            self.window.settings.setValue(THEME_SETTING, name)

    def export_palette(self) -> str:
        return next(k for k, a in self.export_actions.items() if a.isChecked())

    def _save_export(self, name: str) -> None:
        self.window.settings.setValue(EXPORT_SETTING, name)


def install(window: QtWidgets.QMainWindow) -> ThemeChoice:
    """Add View > Theme and File > Export > Export palette (kept as ``window.themes``)."""
    choice = ThemeChoice(window)
    window.themes = choice
    return choice
