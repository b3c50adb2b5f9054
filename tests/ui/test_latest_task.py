"""background.LatestTask, the one primitive of the window's background work: the newest
request wins, stale ones are never signalled (and pending ones never run), progress of any
size, cancel and stop."""

from __future__ import annotations

import threading
from pathlib import Path

from viewer.ui.background import LatestTask
from viewer.ui.windows import loader

PHASE8 = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


def test_the_newest_request_wins_and_pending_ones_collapse(qtbot) -> None:
    task = LatestTask(name="test")
    gate = threading.Event()
    ran: list[str] = []

    def work(name: str) -> str:
        if name == "first":
            gate.wait(5)
        ran.append(name)
        return name.upper()

    outcomes: list[tuple] = []
    task.ready.connect(lambda ctx, result: outcomes.append((ctx, result)))
    task.request("a", work, "first")  # runs, blocked on the gate
    task.request("b", work, "second")  # pending
    task.request("c", work, "third")  # replaces "second", which never runs
    assert task.busy
    gate.set()
    qtbot.waitUntil(lambda: bool(outcomes) and not task.busy, timeout=5000)
    assert ran == ["first", "third"]
    assert outcomes == [("c", "THIRD")]  # "first" finished superseded: not signalled


def test_errors_are_messages_for_the_newest_request_only(qtbot) -> None:
    task = LatestTask(name="test")
    failures: list[tuple] = []
    task.failed.connect(lambda ctx, message: failures.append((ctx, message)))

    def boom() -> None:
        raise ValueError("no such thing")

    with qtbot.waitSignal(task.failed, timeout=5000):
        task.request("x", boom)
    assert failures == [("x", "ValueError: no such thing")]


def test_cancel_silences_and_stop_asks_the_work_to_stop(qtbot) -> None:
    task = LatestTask(name="test")
    started = threading.Event()
    seen: list[tuple] = []
    task.ready.connect(lambda ctx, result: seen.append((ctx, result)))

    def patient(*, progress, cancelled) -> str:
        started.set()
        for _ in range(500):
            if cancelled():
                return "stopped early"
            threading.Event().wait(0.01)
        return "ran to the end"

    task.request("one", patient, hooks=True)
    assert started.wait(5)
    task.stop()  # asked to stop; how it ended is still told
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    assert seen == [("one", "stopped early")]

    started.clear()
    task.request("two", patient, hooks=True)
    assert started.wait(5)
    task.cancel()  # silenced: stops early and says nothing
    assert task.wait(5000)
    qtbot.wait(50)
    assert seen == [("one", "stopped early")]


def test_progress_of_a_file_over_2_gib_is_not_wrapped(qtbot) -> None:
    """A Qt int signal carries 32 bits: a 3 GB file's bytes read came out negative."""
    task = LatestTask(name="test")
    steps: list[tuple] = []
    task.progressed.connect(lambda ctx, done, total: steps.append((ctx, done, total)))

    def big(*, progress, cancelled) -> None:
        progress(3_000_000_000, 5_000_000_000)

    with qtbot.waitSignal(task.ready, timeout=5000):
        task.request("big", big, hooks=True)
    assert steps == [("big", 3_000_000_000, 5_000_000_000)]


def test_load_job_reports_big_progress_and_cancels(qtbot, monkeypatch) -> None:
    real = loader.open_log

    def slow_open_log(path, *, progress, cancel, **kw):
        progress(3_000_000_000, 4_000_000_000)
        qtbot_wait = threading.Event()
        while not cancel():
            qtbot_wait.wait(0.01)
        return real(path, progress=progress, cancel=cancel, **kw)  # raises LoadCancelled

    monkeypatch.setattr(loader, "open_log", slow_open_log)
    job = loader.LoadJob(PHASE8)
    progress: list[tuple] = []
    job.progress_changed.connect(lambda done, total: progress.append((done, total)))
    with qtbot.waitSignal(job.progress_changed, timeout=5000):
        job.start()
    assert job.isRunning()
    with qtbot.waitSignals([job.cancelled, job.finished], timeout=5000):
        job.cancel()
    assert progress[0] == (3_000_000_000, 4_000_000_000)
    assert not job.isRunning()
