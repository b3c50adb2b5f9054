"""Annotations and exports for write-ups, plugged into the main window by ``install``.

``install(window)`` adds the annotation tools (menu, toolbar, Ctrl+Z / Ctrl+Shift+Z),
the image exports (PNG / SVG / clipboard) and the table exports to the window's
menus, and keeps each log's annotations in its sidecar.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.export.files import resolve_output, write_output
from viewer.export.format import display_path
from viewer.export.tables import table_csv, table_markdown
from viewer.ui.actions import make_action
from viewer.ui.dialogs import ask_save_path
from viewer.ui.palette import export_palette
from viewer.ui.writeups.annotate import TOOL_NAMES, TOOLS, AnnotationController
from viewer.ui.writeups.image_export import copy_image, image_bytes

#: Side-panel tables that export, by window attribute.
TABLE_PANELS = {
    "transitions_panel": "Sector transitions",
    "gaps_panel": "Idle gaps",
    "jobs_panel": "Jobs",
}
IMAGE_FILTERS = "PNG image, 2x (*.png);;SVG vector image (*.svg)"
TABLE_FILTERS = "CSV (*.csv);;Markdown table (*.md)"
TRACE_FILTERS = "Chrome trace for Perfetto (*.json)"


class WriteUps(QtCore.QObject):
    """The window's annotation controller and the actions ``install`` added."""

    def __init__(self, window: QtWidgets.QMainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.controller = AnnotationController(window.view, self)
        self.controller.warning.connect(lambda text: window.banner.show_message(text, error=True))
        window.timeline_loaded.connect(self._on_timeline_loaded)
        window.installEventFilter(self)
        self.actions: dict[str, QtGui.QAction] = {}
        self._build_actions()

    # ---------------------------------------------------------- actions
    def _action(self, key, text, slot, shortcut=None, tip=None) -> QtGui.QAction:
        action = make_action(self.window, text, slot, shortcut, tip)
        self.actions[key] = action
        return action

    def _build_actions(self) -> None:
        w, ctl = self.window, self.controller
        Std = QtGui.QKeySequence.StandardKey
        caption = self._action("caption", "Caption with key figures", lambda: None)
        caption.setCheckable(True)
        caption.setChecked(str(w.settings.value("export/caption", "true")) == "true")
        caption.toggled.connect(lambda on: w.settings.setValue("export/caption", str(on).lower()))
        exports = [
            self._action(
                "export_image",
                "Export image…",
                lambda: self.export_image_dialog(False),
                None,
                "Save the view with its annotations as PNG (2x) or SVG",
            ),
            self._action(
                "export_selection",
                "Export image of selected range…",
                lambda: self.export_image_dialog(True),
                None,
                "Save the selected time range, framed, as PNG (2x) or SVG",
            ),
            self._action(
                "copy_image",
                "Copy image",
                self.copy_image,
                None,
                "Copy the view with its annotations to the clipboard (image and SVG)",
            ),
            caption,
            self._action(
                "export_trace",
                "Export Chrome trace (Perfetto)…",
                self.export_trace_dialog,
                None,
                "Save the session (or the selected range) as a trace for ui.perfetto.dev",
            ),
        ]
        w.export_menu.addSeparator()
        for action in exports:
            w.export_menu.addAction(action)
        tables = w.export_menu.addMenu("Export table (CSV / Markdown)")
        for attr, title in TABLE_PANELS.items():
            tables.addAction(
                self._action(
                    f"table_{attr}",
                    f"{title}…",
                    lambda _=False, a=attr: self.export_table_dialog(a),
                )
            )

        group = QtGui.QActionGroup(self)
        group.setExclusionPolicy(QtGui.QActionGroup.ExclusionPolicy.ExclusiveOptional)
        tips = {
            "note": "Click in the view to pin a note there (right-click: more)",
            "range": "Drag in the view to highlight a time range with a label",
            "arrow": "Drag in the view to draw a labelled arrow",
            "ruler": "Drag between two times to measure them (snaps to events)",
        }
        tools = []
        for tool in TOOLS:
            action = self._action(
                f"tool_{tool}",
                TOOL_NAMES[tool],
                lambda on, t=tool: ctl.set_tool(t if on else ""),
                None,
                tips[tool],
            )
            action.setCheckable(True)
            group.addAction(action)
            tools.append(action)
        ctl.tool_changed.connect(self._on_tool_changed)
        undo = self._action("undo", "Undo annotation", ctl.undo, Std.Undo)
        redo = self._action("redo", "Redo annotation", ctl.redo, "Ctrl+Shift+Z")
        delete = self._action("delete", "Delete annotation", lambda: ctl.delete(), Std.Delete)
        # Delete only while the view has the focus: tables keep their own Delete key.
        delete.setShortcutContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        w.view.addAction(delete)
        ctl.changed.connect(self._update_undo)
        self._update_undo()

        menu = w.view_menu.addMenu("&Annotate")
        menu.setObjectName("menu_annotate")
        for action in (*tools, None, undo, redo, delete):
            menu.addSeparator() if action is None else menu.addAction(action)
        w.toolbar.addSeparator()
        for action in (*tools, undo, redo):
            w.toolbar.addAction(action)

    def _on_tool_changed(self, tool: str) -> None:
        for name in TOOLS:
            self.actions[f"tool_{name}"].setChecked(name == tool)

    def _update_undo(self) -> None:
        s = self.controller.annotations
        for key, label in (("undo", s.undo_label), ("redo", s.redo_label)):
            action = self.actions[key]
            action.setEnabled(label is not None)
            action.setText(
                f"{key.title()} {label.lower()}" if label else f"{key.title()} annotation"
            )

    # -------------------------------------------------------- sidecar
    def _on_timeline_loaded(self, timeline) -> None:
        self.controller.open_log(timeline.source)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if watched is self.window and event.type() == QtCore.QEvent.Type.Close:
            self.controller.flush()
        return False

    # ------------------------------------------------------- saving
    def inputs(self) -> list[Path]:
        """What the window has read from disk and a save must never write over: the log
        on screen and its annotations sidecar."""
        timeline = self.window.timeline()
        if timeline is None:
            return []
        return [Path(timeline.source), *self.controller.sidecar_paths()]

    def write_file(
        self, path: str | Path, data: bytes | str | Callable[[], bytes | str], what: str
    ) -> Path | None:
        """Save ``data`` (or what calling it returns) to ``path`` through ``write_output``;
        a refusal or failure is shown in the banner (None), success in the status bar."""
        try:
            resolve_output(path, self.inputs())  # before the work of making the data
            out = write_output(path, data() if callable(data) else data, self.inputs())
        except OSError as exc:
            if exc.strerror is None:  # a refusal: its message names the files
                text = f"Could not save the {what}: {exc}"
            else:
                text = f"{display_path(path)}: could not write the {what} ({exc.strerror})"
            self.window.banner.show_message(text, error=True)
            return None
        except ValueError as exc:
            self.window.banner.show_message(f"Could not save the {what}: {exc}", error=True)
            return None
        self.window.statusBar().showMessage(
            f"{what.capitalize()} written to {display_path(out)}", 5000
        )
        return out

    # --------------------------------------------------------- images
    def image_options(self, selected_range: bool = False) -> dict:
        """``render_image`` options for the window as it is now."""
        rng = self.window.view.selection() if selected_range else None
        themes = getattr(self.window, "themes", None)
        palette = export_palette(themes.export_palette()) if themes is not None else None
        return {"rng": rng, "caption": self.actions["caption"].isChecked(), "palette": palette}

    def export_image(self, path: str | Path, selected_range: bool = False) -> Path | None:
        options = self.image_options(selected_range)
        return self.write_file(
            path, lambda: image_bytes(self.window.view, path, **options), "image"
        )

    def export_image_dialog(self, selected_range: bool) -> None:
        timeline = self.window.timeline()
        if timeline is None:
            return
        if selected_range and self.window.view.selection() is None:
            self.window.statusBar().showMessage("Select a range first (Ctrl-drag, or V).", 5000)
            return
        default = str(Path(timeline.source).with_suffix(".png"))
        path, chosen = ask_save_path(
            self.window, self.window.settings, "Export image", default, IMAGE_FILTERS
        )
        if path:
            if Path(path).suffix.lower() not in (".png", ".svg"):
                path += ".svg" if "svg" in chosen.lower() else ".png"
            self.export_image(path, selected_range)

    def copy_image(self) -> None:
        if self.window.timeline() is None:
            return
        copy_image(self.window.view, **self.image_options())
        self.window.statusBar().showMessage("Image copied to the clipboard", 5000)

    # --------------------------------------------------------- tables
    def export_table(self, attr: str, path: str | Path) -> Path | None:
        """Write the table shown in panel ``attr`` as CSV, or Markdown for a .md path."""
        frame = getattr(self.window, attr).frame()
        markdown = Path(path).suffix.lower() in (".md", ".markdown")
        return self.write_file(
            path, table_markdown(frame) if markdown else table_csv(frame), "table"
        )

    def export_table_dialog(self, attr: str) -> None:
        timeline = self.window.timeline()
        if timeline is None:
            return
        stem = Path(timeline.source).with_suffix("")
        default = f"{stem}.{attr.removesuffix('_panel')}.csv"
        title = f"Export {TABLE_PANELS[attr].lower()}"
        path, chosen = ask_save_path(
            self.window, self.window.settings, title, default, TABLE_FILTERS
        )
        if path:
            if Path(path).suffix.lower() not in (".csv", ".md", ".markdown"):
                path += ".md" if "markdown" in chosen.lower() else ".csv"
            self.export_table(attr, path)

    # ---------------------------------------------------------- trace
    def export_trace(self, path: str | Path) -> Path | None:
        """Write the shown session, clipped to the selected range, as a Chrome trace."""
        from viewer.export.format import json_bytes
        from viewer.export.trace import trace_events

        timeline, session = self.window.timeline(), self.window.session()
        if timeline is None or session is None:
            return None
        rng = self.window.view.selection()
        return self.write_file(
            path,
            lambda: json_bytes(trace_events(timeline, session.index, rng), newline=False),
            "trace",
        )

    def export_trace_dialog(self) -> None:
        timeline = self.window.timeline()
        if timeline is None:
            return
        default = str(Path(timeline.source).with_suffix(".trace.json"))
        path, _ = ask_save_path(
            self.window, self.window.settings, "Export Chrome trace", default, TRACE_FILTERS
        )
        if path:
            self.export_trace(path if path.lower().endswith(".json") else path + ".json")


def install(window: QtWidgets.QMainWindow) -> WriteUps:
    """Add annotations and write-up exports to ``window`` (call once, at the end of
    ``MainWindow.__init__``); the result is also kept as ``window.write_ups``."""
    existing = getattr(window, "write_ups", None)
    if isinstance(existing, WriteUps):
        return existing
    write_ups = WriteUps(window)
    window.write_ups = write_ups
    return write_ups
