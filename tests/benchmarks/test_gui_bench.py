"""GUI benchmarks: redraw time with 10^6 (and 10^7) intervals, GUI stalls while a big log
loads and the panels recompute, and the time until ``python -m viewer`` (what ``make run``
starts) shows the sample log with its panels filled.

Figures only (printed in the ``make bench`` table), never timed assertions. Each is
compared with a reference measured in the same run: Qt drawing every rectangle with one
``drawRects`` call, and a bare Qt start-up.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from biglog import ROOT, big_log
from first_frame import watch_open
from table import add_row

pytestmark = pytest.mark.bench
WIDTH, HEIGHT = 1600, 900
FRAMES = 31


def synthetic_timeline(n_calls: int):
    """One GPU, two workers, ``n_calls`` back-to-back calls with CUDA regions and their
    kernels, a few gaps (the view draws the counter tracks of them too)."""
    from viewer.model import Timeline, build_session

    rng = np.random.default_rng(1)
    per_worker = n_calls // 2
    dur = rng.uniform(3000, 4000, size=(2, per_worker))
    idle = np.where(rng.random((2, per_worker)) < 0.01, rng.uniform(20, 400, (2, per_worker)), 3)
    start = np.cumsum(dur + idle, axis=1) - dur
    start[1] += 1800  # the interlock: worker 1 half a call behind
    end = start + dur
    gpu_start, gpu_end = start.ravel(), end.ravel()
    n = len(gpu_start)
    job = (np.argsort(np.argsort(gpu_start)) // 10).astype(np.int64)
    calls = {
        "job_id": np.char.add("job-", job.astype(str)).astype(object),
        "partition": (np.arange(n) % 10).astype(np.int32),
        "synth_start": gpu_start - 40_000,
        "synth_end": gpu_start - 2_000,
        "queued": gpu_start - 1_990,
        "pickup": gpu_start - 2,
        "gpu_start": gpu_start,
        "gpu_end": gpu_end,
        "gpu_ms": gpu_end - gpu_start,
        "worker": np.repeat([0, 1], per_worker).astype(np.int32),
        "gpu": np.zeros(n, dtype=np.int32),
        "kernel_start": gpu_start + 1700,
        "kernel_ms": np.full(n, 1500.0),
        # The kernels inside it, drawn as sub-slices once zoomed in (the "50 ms" view).
        "ntt_msm_h_ms": np.full(n, 1200.0),
        "batch_add_ms": np.full(n, 240.0),
        "tail_msm_ms": np.full(n, 60.0),
    }
    import pandas as pd

    session = build_session(pd.DataFrame(calls), workers={0: 0, 1: 0})
    return Timeline(source=Path(f"synthetic-{n}.log"), sessions=[session])


def _naive_draw_ms(qapp, n: int, width: float = 0.5, height: float = 20.0) -> float:
    """Reference: Qt drawing ``n`` rectangles of ``width`` x ``height`` pixels at random x
    in one ``drawRects`` call from a buffer (best of 3)."""
    import shiboken6
    from PySide6 import QtCore, QtGui

    rng = np.random.default_rng(2)
    rects = np.zeros((n, 4))
    rects[:, 0] = rng.uniform(0, WIDTH, n)
    rects[:, 1], rects[:, 2], rects[:, 3] = 10.0, width, height
    if width == 1.0 and height == 1.0:
        # One-pixel rectangles as integer QRects (x1, y1, x2, y2): Qt's cheapest drawRects.
        rects = np.floor(rects).astype(np.int32)
        rects[:, 2], rects[:, 3] = rects[:, 0], rects[:, 1]
        first = shiboken6.wrapInstance(rects.ctypes.data, QtCore.QRect)
    else:
        first = shiboken6.wrapInstance(rects.ctypes.data, QtCore.QRectF)
    image = QtGui.QImage(WIDTH, HEIGHT, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    painter = QtGui.QPainter(image)
    painter.setPen(QtCore.Qt.PenStyle.NoPen)
    painter.setBrush(QtGui.QColor("#4c78a8"))
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        painter.drawRects(first, n)
        best = min(best, time.perf_counter() - t)
    painter.end()
    return best * 1000


def _frame_ms(qapp, view, start: float, end: float) -> tuple[float, float, float, float]:
    """Median, best and worst wall time of a full redraw of the plot at this zoom while
    panning (prepare + paint), and the median CPU time of the GUI thread (steadier where
    the machine is shared)."""
    view.set_x_range(start, end)
    qapp.processEvents()
    times, cpu = [], []
    for i in range(FRAMES):
        shift = (end - start) * 0.001 * (i + 1)
        t, c = time.perf_counter(), time.thread_time()
        view.set_x_range(start + shift, end + shift)  # a pan: rects are prepared anew
        view.plot.viewport().repaint()
        times.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
    ms = 1000.0
    return (
        float(np.median(times)) * ms,
        min(times) * ms,
        max(times) * ms,
        float(np.median(cpu)) * ms,
    )


@pytest.mark.parametrize("n_calls", [10**6, 10**7])
def test_bench_redraw(qapp, n_calls: int) -> None:
    if n_calls > 10**6 and not os.environ.get("BENCH_10E7"):
        pytest.skip("10^7 intervals: set BENCH_10E7=1 (needs ~7 GB and a few minutes)")
    from viewer.ui import TimelineView

    timeline = synthetic_timeline(n_calls)
    view = TimelineView()
    view.resize(WIDTH, HEIGHT)
    view.show()
    view.set_timeline(timeline)
    qapp.processEvents()
    # As the window does after a load (MainWindow._on_loaded): 10^7 rows of job ids in object
    # arrays would make every full collection during a pan walk them (a 117 ms frame seen).
    gc.collect()
    gc.freeze()
    lo, hi = view.x_range()
    mid = (lo + hi) / 2  # zoomed views in the middle of the data, never in the fit's margin
    zooms = {
        "fit": (lo, hi),
        "1/10": (mid, mid + (hi - lo) / 10),
        "1/1000": (mid, mid + (hi - lo) / 1000),
        "50 ms": (mid, mid + 50),
    }
    frames = {name: _frame_ms(qapp, view, *span) for name, span in zooms.items()}
    # The reference, "Qt needs ~34 ms to draw 10^6 rects", matches one-pixel
    # rectangles; lane-sized bars (0.5 x 20 px) cost Qt several times more.
    pixels = _naive_draw_ms(qapp, 10**6, width=1.0, height=1.0)
    bars = _naive_draw_ms(qapp, 10**6)
    target_ms = 8.0  # issue 15, item 5: at 10^6 and at 10^7 intervals
    worst = max(median for median, *_ in frames.values())
    worst_cpu = max(c for *_, c in frames.values())
    detail = ", ".join(f"{k} {m:.1f}/{b:.1f}" for k, (m, b, _, _) in frames.items())
    add_row(
        f"redraw, 10^{int(np.log10(n_calls))} intervals (worst zoom; median/best)",
        f"{worst:.1f} ms, cpu {worst_cpu:.1f} ms (target {target_ms:g} ms; {detail})",
        f"drawRects of 10^6 rects: 1 px {pixels:.1f} ms, 0.5x20 px {bars:.1f} ms",
        worst / pixels,
        target_ms / 34.0,  # the figures: <= 8 ms where Qt needs ~34 ms
    )
    slowest = max(w for _, _, w, _ in frames.values())
    add_row(
        f"slowest frame while panning, 10^{int(np.log10(n_calls))} intervals",
        f"{slowest:.1f} ms (any zoom, {FRAMES} pans each)",
        "a 60 Hz frame (16.7 ms)",
        slowest / (1000 / 60),
        16.0 / (1000 / 60),
    )
    view.close()
    gc.unfreeze()


def test_bench_gui_stall_while_loading(qapp, tmp_path) -> None:
    """Longest time the event loop was blocked while a big log loads and panels compute."""
    from PySide6 import QtCore

    from viewer.ui import MainWindow

    stall_log = os.environ.get("BENCH_STALL_LOG")
    path = Path(stall_log) if stall_log else big_log()
    # The redraw benchmarks leave 10^6-10^7 rows of garbage in this process: a new app
    # would not start with a collector pass over them (193 ms seen here), so free it now.
    gc.unfreeze()
    gc.collect()
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    win.resize(WIDTH, HEIGHT)
    win.show()
    ticks: list[float] = []
    timer = QtCore.QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    done: list[int] = []
    win.summary_ready.connect(lambda *_: done.append(1))
    timer.start()
    t0 = time.perf_counter()
    win.open_paths([path])
    while not done and time.perf_counter() - t0 < 600:
        qapp.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 50)
    load_s = time.perf_counter() - t0
    # Then a range drag storm: the panels recompute in the background.
    session = win.session()
    a, b = session.start_ms, session.end_ms
    for i in range(20):
        win.view.set_selection(a + (b - a) * i / 40, b - (b - a) * i / 40)
        qapp.processEvents()
    t1 = time.perf_counter()
    while time.perf_counter() - t1 < 3:
        qapp.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 50)
    timer.stop()
    gaps = np.diff(np.array(ticks)) * 1000
    worst = float(gaps.max()) if len(gaps) else float("nan")
    add_row(
        "GUI stall while loading + recomputing",
        f"{worst:.0f} ms worst (load {load_s:.1f} s, {len(ticks)} ticks)",
        "100 ms",
        worst / 100.0,
        1.0,
    )
    win.runner.wait()
    win.close()


SHOW_PROBE = """
import runpy, sys, time
t0 = float(sys.argv[1])


class Hook:
    # Instruments the window class once the app imports it: importing PySide6 here, before
    # the app does, would change what the start-up costs (see viewer/commands/gui.py).
    def find_spec(self, name, path, target=None):
        if name != "viewer.ui.windows.main_window":
            return None
        sys.meta_path.remove(self)
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            instrument(module.MainWindow)

        spec.loader.exec_module = exec_module
        return spec


def instrument(cls):
    from PySide6 import QtCore, QtWidgets

    class Probe(QtCore.QObject):
        painted = None  # the window's first paint
        drawn = None  # the plot's first paint with the log in it

        def eventFilter(self, obj, event):
            if event.type() == QtCore.QEvent.Type.Paint:
                if self.painted is None:
                    self.painted = time.time() - t0
                if self.drawn is None and obj is not self.window:
                    self.drawn = time.time() - t0
            return False

        def loaded(self, *_):
            self.window.view.plot.viewport().installEventFilter(self)

        def filled(self, *_):
            print(self.painted, self.drawn, time.time() - t0, flush=True)
            QtWidgets.QApplication.quit()

    probe = Probe()
    show = cls.show

    def timed_show(window):
        probe.window = window
        window.timeline_loaded.connect(probe.loaded)
        window.summary_ready.connect(probe.filled)
        window.installEventFilter(probe)
        show(window)

    cls.show = timed_show


sys.meta_path.insert(0, Hook())
sys.argv = ["viewer", *sys.argv[2:]]  # exactly what `make run` starts: python -m viewer LOG
runpy.run_module("viewer", run_name="__main__", alter_sys=True)
"""

BARE_PROBE = """
import sys, time
t0 = float(sys.argv[1])
from PySide6 import QtWidgets
app = QtWidgets.QApplication([])
w = QtWidgets.QMainWindow(); w.show(); app.processEvents()
print(time.time() - t0, flush=True)
"""


def _launch(script: str, *args: str, env: dict[str, str] | None = None) -> list[float]:
    """Best of 3 launches of ``script``: the figures its last line prints, in seconds."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        **(env or {}),
    }
    best: list[float] = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", script, repr(time.time()), *args],
            check=True, cwd=ROOT, capture_output=True, text=True, env=env,
        )  # fmt: skip
        figures = [float(x) for x in out.stdout.strip().splitlines()[-1].split()]
        if not best or figures[-1] < best[-1]:
            best = figures
    return best


def test_bench_window_shows_sample(tmp_path) -> None:
    """``python -m viewer SAMPLE`` as ``make run`` starts it, until the panels are filled
    (settings in a scratch XDG_CONFIG_HOME)."""
    sample = ROOT / "sample_logs" / "phase8_pw10_5sectors.log"
    painted, _, shown = _launch(SHOW_PROBE, str(sample), env={"XDG_CONFIG_HOME": str(tmp_path)})
    (bare,) = _launch(BARE_PROBE)
    add_row(
        "window shows the sample log, panels filled",
        f"{shown:.2f} s (first paint {painted:.2f} s)",
        f"bare Qt window {bare:.2f} s; target 1.5 s",
        shown / 1.5,
        1.0,
    )


def test_bench_window_opens_week_log(qapp, tmp_path) -> None:
    """A shown window opens the week's log (10^6 events, 1.46 GB): from the open request
    to the plot's first frame with the log drawn, and to the panels filled, against ``grep
    -c`` on the same file (issue 15, item 2: the first full frame under 2x grep, the panels
    after it).  Best of 3 opens."""
    from test_load_bench import _wall

    path = big_log()
    grep = _wall(f"grep -c '^TIMELINE' {path}")
    gc.unfreeze()
    gc.collect()
    opens = [_open_once(qapp, path, tmp_path / f"s{i}.ini") for i in range(3)]
    drawn, filled = min(opens)
    add_row(
        "week log: open to first full frame",
        f"{drawn:.2f} s (panels filled {filled:.2f} s)",
        f"grep {grep:.2f} s",
        drawn / grep,
        2.0,
    )


def _open_once(qapp, path: Path, ini: Path) -> tuple[float, float]:
    """Seconds from ``open_paths`` to the plot's first paint with the log, and to the
    panels filled, in a new shown window."""
    from PySide6 import QtCore

    from viewer.ui import MainWindow

    settings = QtCore.QSettings(str(ini), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    win.resize(WIDTH, HEIGHT)
    win.show()
    qapp.processEvents()
    marks, loop = watch_open(win)
    QtCore.QTimer.singleShot(600_000, loop.quit)
    t0 = time.perf_counter()
    win.open_paths([path])
    loop.exec()
    win.runner.wait()
    win.close()
    win.deleteLater()
    qapp.processEvents()
    return marks["drawn"] - t0, marks["filled"] - t0
