"""Sessions for the UI tests, made with ``build_session`` (no log files needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from viewer.model import Session, Timeline, build_session


def phase8_calls(
    jobs: int = 5,
    partitions: int = 10,
    workers_per_gpu: int = 2,
    gpus: int = 1,
    pw: int = 10,
    synth_ms: float = 36000.0,
    kernel_ms: float = 3746.0,
    prep_ms: float = 1700.0,
    post_ms: float = 400.0,
    seed: int = 1,
    job_prefix: str = "job",
) -> pd.DataFrame:
    """A Phase-8-like run: ``pw`` synthesis slots feed GPU workers whose kernels share a mutex."""
    rng = np.random.default_rng(seed)
    n = jobs * partitions
    slots = np.zeros(pw)
    synth_start, synth_end = np.empty(n), np.empty(n)
    for i in range(n):
        k = int(np.argmin(slots))
        synth_start[i] = slots[k] + 5
        synth_end[i] = synth_start[i] + synth_ms * rng.uniform(0.95, 1.05)
        slots[k] = synth_end[i]
    queued = synth_end + 1
    worker_free = np.zeros(gpus * workers_per_gpu)
    mutex_free = np.zeros(gpus)
    rows = []
    for i in np.argsort(queued, kind="stable"):
        w = int(np.argmin(np.maximum(worker_free, queued[i])))
        g = w // workers_per_gpu
        pickup = max(worker_free[w], queued[i]) + rng.uniform(0, 3)
        start = pickup + 1
        k0 = max(start + prep_ms * rng.uniform(0.9, 1.1), mutex_free[g])
        kern = kernel_ms * rng.uniform(0.98, 1.02)
        end = k0 + kern + post_ms
        mutex_free[g], worker_free[w] = k0 + kern, end
        rows.append(
            {
                "job_id": f"{job_prefix}-{i // partitions}",
                "partition": i % partitions,
                "synth_start": synth_start[i],
                "synth_end": synth_end[i],
                "synth_ms": synth_end[i] - synth_start[i],
                "queued": queued[i],
                "pickup": pickup,
                "gpu_start": start,
                "gpu_end": end,
                "gpu_ms": end - start,
                "worker": w,
                "gpu": g,
                "kernel_start": k0,
                "kernel_ms": kern,
                "ntt_msm_h_ms": kern * 0.83,
                "batch_add_ms": kern * 0.14,
                "tail_msm_ms": kern * 0.03,
            }
        )
    return pd.DataFrame(rows)


def timeline_of(*sessions: Session) -> Timeline:
    from pathlib import Path

    return Timeline(source=Path("synthetic.log"), sessions=list(sessions))


@pytest.fixture
def phase8_session() -> Session:
    return build_session(phase8_calls())


@pytest.fixture
def phase8_timeline() -> Timeline:
    """Two sessions: the Phase 8 run, then a short two-GPU run with an open (crashed) call."""
    second = phase8_calls(jobs=3, gpus=2, seed=7, job_prefix="<b>crash")
    second.loc[len(second) - 1, ["gpu_end", "gpu_ms"]] = np.nan
    return timeline_of(
        build_session(phase8_calls()),
        build_session(second, index=1, end_ms=float(second["gpu_start"].max() + 5000)),
    )


@pytest.fixture
def gw1_timeline() -> Timeline:
    """One GPU worker per GPU (Phase 7): the GPU idles between partitions."""
    return timeline_of(build_session(phase8_calls(workers_per_gpu=1)))


@pytest.fixture(autouse=True, scope="session")
def _empty_clipboard_before_exit(qapp):
    """Take the tests' mime data off the clipboard while Python is still running.

    Under the offscreen platform the clipboard's content is held by a Qt global static
    that the C++ exit handlers delete after Python has finalized: a QMimeData made in
    Python (``copy_image``) still there then calls into the finalized interpreter, a
    segfault at exit after every test passed (when an image copy was the last to set it).
    """
    yield
    qapp.clipboard().clear()


@pytest.fixture(autouse=True)
def _collect_widgets_between_tests(qapp):
    """Delete each test's windows before the next test starts.

    Without this, Python's collector frees a finished test's pyqtgraph items at a random
    point of a later test, possibly while that test's scene is painting (seen as rare
    segfaults in ``GraphicsWidget.boundingRect``). Collecting here, with no event loop
    running, makes the order deterministic.
    """
    import gc

    yield
    import shiboken6
    from PySide6 import QtCore

    # A test's own unparented windows (an offscreen export view) are deleted by Qt,
    # children before parents, while their Python shells are still alive: the collector
    # below then frees only shells. Left to the collector, such a tree is torn down in
    # the collector's order, and a wrapper of a layout item (a QSpacerItem of pyqtgraph's
    # plot menu) cleared before its window takes ownership and deletes its item while the
    # layout still lists it. Only widgets Python owns: the other top-level widgets are
    # Qt's (each QGraphicsGridLayout's style info holds a hidden QWidget and deletes it
    # itself; deleting it here was a double free).
    for widget in qapp.topLevelWidgets():
        widget.close()
        if shiboken6.ownedByPython(widget):
            widget.deleteLater()
    qapp.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    qapp.processEvents()
    gc.unfreeze()  # the main window pins what is alive after a load (gc.freeze)
    gc.collect()
    qapp.processEvents()


def load_and_wait(qtbot, win, path) -> Timeline:
    """Open ``path`` in main window ``win`` and wait until it is shown with its panels
    filled: both signals are watched before the load starts, so a summary that comes
    right after the timeline is never missed."""
    with qtbot.waitSignals([win.timeline_loaded, win.summary_ready], timeout=15000):
        win.open_paths([path])
    return win.timeline()
